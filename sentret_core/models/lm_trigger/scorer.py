"""The trained trigger language model (Momtazi & Klakow, IP&M 2015, §5-6, eq. 9-12).

score(s) = Σ_{q∈Q} c(q,Q) · log p(q|θ_s), with (eq. 12)

    p(q|θ_s) = Σ_t λ_t · p_t(q|s)  +  (1 − Σ_t λ_t) · (c(q,s) + μ·p(q)) / (|s| + μ)
    p_t(q|s)   = (1/|s|) · Σ_{j=1}^{|s|} p_t(q|s_j)                     (eq. 10)
    p_t(q|s_j) = f_t(q, s_j) / Σ_w f_t(w, s_j)                            (eq. 9)

over the triggerings t (each weight a parameter):

* ``self``    — every word triggers itself only: p_self(q|s) = c(q,s)/|s|, the unsmoothed
  sentence model (§6.1); it needs no table;
* ``inside``  — f(w→w') = times w and w' occur in one sentence of the corpus (§6.2);
* ``across``  — f(w→w') = times w occurs in a sentence and w' in the *next* sentence of the same
  document (§6.3);
* ``qa``      — f(w→w') = times w occurs in a question and w' in one of its correct answer
  sentences (§6.4);
* ``ne``      — f(w→L) = times w occurs in a question and a term of its answer sentence lies in
  a named entity of label L (spaCy NER); a sentence's targets are then the NER labels of its
  terms (a term outside every entity has none) (§6.5).

Counting (as Momtazi & Klakow §4.1 count co-occurrence: every instance): inside-sentence counts
c(w,s)·c(w',s) pairs of *other* positions (a word twice in a sentence triggers itself once each
way); QA counts c(w,Q)·c(w',A). Tables are term×term (term×label for ``ne``) scipy CSR matrices
over the index's vocabulary, pruned below ``min_count`` (``qa_min_count`` for the QA tables).

**Training** is an explicit step: :func:`~sentret_core.models.training.triggers.train_triggers`
(or ``sentret train triggers INDEX [--qa-pairs FILE] [--name NAME]``) counts the corpus tables on
the index (plus any ``sources``, other indexes matched by term string — the paper trained on
AQUAINT) and, given a file of question/answer-sentence pairs, the QA and NE tables, and writes
them as a named artefact of the index. The model reads the artefact named by its parameter
``tables`` (default ``"triggers"``) and never trains; a missing artefact is an error saying how to
train it. To use WikiQA's training questions::

    sentret train triggers data/indexes/demo --qa-pairs ../shared/data/wikiqa/WikiQA-train.tsv

(rows with Label 1; a plain two-column ``question<TAB>answer`` file works too).

Readings where the paper is silent:

* eq. 9 normalises over the *triggers* of a fixed target s_j (its denominator sums over q_i),
  as docs/spec.md reads it; so p_t(·|s_j) is a distribution over the vocabulary;
* a target with no trigger mass in a table (never triggered, or pruned away), an unlabelled term
  for ``ne``, and the empty sentence back off to the collection model p(q) — the same convention
  as the other LMs' maximum-likelihood model of an empty text — so every p_t(·|s) and p(·|θ_s)
  sums to 1 over the vocabulary. A table that was never trained (no QA file) therefore gives
  p_t(q|s) = p(q) for every sentence: a constant, which changes no ranking;
* |s| in eq. 10 is the number of terms (after stop-word removal), repeats included;
* question words are normalised like every query (docs/spec.md): spaCy's stop words are
  removed, which includes the wh-words ("when", "who", "where", "how", "many"). ``normalise()``
  keeps them as markers (``?when`` …) that ``prepare()`` sets apart as ``Query.asks``; v1 ignores
  them (so it learns "born → DATE", "high → QUANTITY" but not the paper's "when → DATE"), v2 scores
  them (below);
* the NE table counts answer *terms* inside entities (a four-term DATE counts four), matching how
  a candidate sentence's labels are counted per term in eq. 10.

**Candidates**: the sentences with a query term or with a target of an active table (λ_t > 0)
that a query term triggers; at most ``max_candidates`` are returned: all sentences with a query
term, then the best-scoring others (ties by sentence id).

**lm-trigger.v2**: the question words, which the paper's NE triggering needs ("when →
DATE", §6.5), take part. Training counts each question's markers as triggers of its answer's terms
and NER labels (:mod:`~sentret_core.models.training.qa_triggers`); a query's markers ``Q.asks``
add one factor each (a marker is a question word: c(a,Q) = 1)::

    score_v2(s) = score_v1(s) + Σ_{a∈asks(Q)} log p(a|θ_s)
    p(a|θ_s)    = λ_qa·p_qa(a|s) + λ_ne·p_ne(a|s) + (1 − λ_qa − λ_ne)·p(a)
    p_t(a|s)    = (1/|s|)·Σ_j f_t(a, s_j) / Σ_{a'} f_t(a', s_j)         (eqs. 10, 9 over markers)
    p(a)        = n(a) / Σ_{a'} n(a'),  n(a) = training questions asking a

Readings: the markers are their own event space (the four of ``query.ANSWER_TYPES``): eq. 9
normalises a target's question-word triggers over the markers, so p_t(·|s) and p(·|θ_s) are
distributions over them, and the term rows — hence every query term's p(q|θ_s) — are exactly v1's.
A marker never occurs in a sentence, so the components with no question-word rows (self, inside,
across, the word unigram) carry no evidence for it and give its prior p(a), as a massless target
does. A marker no training question asked (n(a) = 0, e.g. tables without QA pairs), and every
marker when λ_qa = λ_ne = 0, is skipped (a constant: no ranking changes), as an unseen query term
is. Markers re-weight candidates, they never add one (a question word matches no sentence).
v2's defaults differ from v1's: grids include 0 for every λ, and the defaults are the values
tuned on WikiQA train (see :class:`TriggerParamsV2`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sentret_core.models.arrays.layout import collection_model, layout
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, gather, union
from sentret_core.models.core.papers import MOMTAZI_KLAKOW_2015
from sentret_core.models.core.query import Query
from sentret_core.models.core.registry import register
from sentret_core.models.lm_class.scorer import cap_candidates
from sentret_core.models.lm_trigger.data import ask_data, trigger_data
from sentret_core.models.lm_trigger.explain import (
    active_asks,
    distribution_trigger,
    explain_trigger,
    explain_trigger_v2,
)
from sentret_core.models.lm_trigger.params import TriggerParams, TriggerParamsV2
from sentret_core.models.training.triggers import ASK_TABLES, TABLES

if TYPE_CHECKING:
    from sentret_core.index.reader import Index


def closed_trigger(index: Index, q: Query, p: TriggerParams, ids: np.ndarray) -> np.ndarray:
    """v1's score at any sentences (a closed candidate set): one with no query term and no triggered
    target scores Σ c(q,Q)·log[(λ_self·e(s) + Σ_t λ_t·b_t(s))·p(q) + (1−Σλ)·μ·p(q)/(|s|+μ)], with
    e(s) = 1 for the empty sentence and b_t(s) its share of targets without mass (the backoff)."""
    ids = np.asarray(ids, dtype=np.int64)
    evidence = _evidence(index, q, p)
    if evidence is None or len(ids) == 0:
        return np.zeros(len(ids))
    return _likelihood(index, q, p, evidence, ids, candidates=False)[0]


def closed_trigger_v2(index: Index, q: Query, p: TriggerParams, ids: np.ndarray) -> np.ndarray:
    """v2's score at any sentences: v1's plus the question words' factors."""
    total = closed_trigger(index, q, p, ids)
    asks = ask_scores(index, q, np.asarray(ids, dtype=np.int64), p)
    return total if asks is None else total + asks


_FORMULA = (
    r"\sum_{q\in Q}c(q,Q)\log\Big[\sum_t\lambda_t\frac{1}{|s|}\sum_{j=1}^{|s|}"
    r"\frac{f_t(q,s_j)}{\sum_w f_t(w,s_j)}+\Big(1-\sum_t\lambda_t\Big)\frac{c(q,s)+\mu p(q)}{|s|+\mu}\Big]"
)

@register(
    "lm-trigger.v1",
    display_name="LM, trained triggers",
    family="lm",
    params=TriggerParams,
    explainer=explain_trigger,
    formula=_FORMULA,
    paper=f"{MOMTAZI_KLAKOW_2015} §5-6 eq. 9-12",
    description=(
        "query likelihood where a query word can be generated by sentence words it triggers "
        "(same sentence, next sentence, QA pairs, answer entity labels), mixed with the Dirichlet unigram"
    ),
    distribution=distribution_trigger,
    closed=closed_trigger,
)
def score_trigger(index: Index, q: Query, p: TriggerParams) -> tuple[np.ndarray, np.ndarray]:
    cand, total, word_hit = _score_terms(index, q, p)
    return cap_candidates(cand, total, word_hit, p.max_candidates)


def _score_terms(index: Index, q: Query, p: TriggerParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every candidate, its v1 score Σ_q c(q,Q)·log p(q|θ_s), and whether it holds a query term."""
    none = (EMPTY_IDS, EMPTY_SCORES, np.zeros(0, dtype=bool))
    evidence = _evidence(index, q, p)
    if evidence is None:
        return none
    words, hits = evidence
    cand = union([r for r, _ in words] + [r for h in hits for r, _ in h.values()])
    if len(cand) == 0:
        return none
    total, word_hit = _likelihood(index, q, p, evidence, cand, candidates=True)
    return cand, total, word_hit


Evidence = tuple[list[tuple[np.ndarray, np.ndarray]], list[dict[str, tuple[np.ndarray, np.ndarray]]]]


def _evidence(index: Index, q: Query, p: TriggerParams) -> Evidence | None:
    """Per usable query term: its sentence postings, and Σ_j p_t(q|s_j) per sentence of every active
    table (None when no query term is seen in the collection)."""
    p_c = collection_model(index)
    use = [int(t) for t in q.ids if p_c[t] > 0]
    if not use:
        return None
    weights = p.weights()
    active = [name for name in TABLES if weights[name] > 0]
    data = trigger_data(index, p.tables) if active else None
    word_post = postings(index)
    hits: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
    for t in use:
        found = {}
        for name in active:
            assert data is not None
            found[name] = data.hits(name, t, word_post)
        hits.append(found)
    return [word_post(t) for t in use], hits


def _likelihood(
    index: Index, q: Query, p: TriggerParams, evidence: Evidence, cand: np.ndarray, *, candidates: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Σ_q c(q,Q)·log p(q|θ_s) at ``cand`` and whether each holds a query term (``candidates``: ``cand``
    is the sorted union of the evidence's rows, the scorer's; else any sentence ids)."""
    words, hits = evidence
    p_c = collection_model(index)
    use = [(int(t), float(qf)) for t, qf in zip(q.ids, q.qtf) if p_c[t] > 0]
    weights = p.weights()
    data = trigger_data(index, p.tables) if any(hits) else None
    lay = layout(index)
    n_s = lay.sent_len.take(cand)
    inv_s = np.zeros(len(cand))
    np.divide(1.0, n_s, out=inv_s, where=n_s > 0)
    empty_s = (n_s <= 0).astype(np.float64)
    den = n_s + p.mu
    inv_d = np.zeros(len(cand))
    np.divide(1.0, den, out=inv_d, where=den > 0)
    rest = p.rest()
    total = np.zeros(len(cand))
    word_hit = np.zeros(len(cand), dtype=bool)
    with np.errstate(divide="ignore"):
        for (t, qf), (r, v), found in zip(use, words, hits):
            pt = float(p_c[t])
            if candidates:
                pos = np.searchsorted(cand, r)
                word_hit[pos] = True
                c_t = np.zeros(len(cand))
                c_t[pos] = v
            else:
                c_t = gather(r, v, cand)
            prob = weights["self"] * (c_t * inv_s + empty_s * pt)
            for name, (rows, sums) in found.items():
                assert data is not None
                if candidates:
                    h = np.zeros(len(cand))
                    h[np.searchsorted(cand, rows)] = sums
                else:
                    h = gather(rows, sums, cand)
                prob += weights[name] * (h * inv_s + data.background[name].take(cand) * pt)
            if rest > 0:
                prob += rest * np.where(den > 0, (c_t + p.mu * pt) * inv_d, pt)
            total += qf * np.log(prob)
    return total, word_hit



# --- lm-trigger.v2: question words kept, tuned defaults --------------------------------------------------

def ask_scores(index: Index, q: Query, cand: np.ndarray, p: TriggerParams) -> np.ndarray | None:
    """Σ_{a∈asks} log p(a|θ_s) for every candidate (None when no marker is scored)."""
    asks = active_asks(index, q, p)
    if not asks or len(cand) == 0:
        return None
    data = ask_data(index, p.tables)
    weights = p.weights()
    active = [name for name in ASK_TABLES if weights[name] > 0]
    keep = [k for _, k in asks]
    inv_s = trigger_data(index, p.tables).inv_s.take(cand)
    prob = (1.0 - sum(weights[name] for name in active)) * np.tile(data.prior[keep], (len(cand), 1))
    for name in active:
        prob += weights[name] * data.probabilities(name, cand, inv_s)[:, keep]
    with np.errstate(divide="ignore"):
        return np.asarray(np.log(prob).sum(axis=1), dtype=np.float64)


_FORMULA_V2 = _FORMULA + (
    r"+\sum_{a\in asks(Q)}\log\Big[\sum_{t\in\{qa,ne\}}\lambda_t\frac{1}{|s|}\sum_j"
    r"\frac{f_t(a,s_j)}{\sum_{a'}f_t(a',s_j)}+\Big(1-\lambda_{qa}-\lambda_{ne}\Big)p(a)\Big]"
)


@register(
    "lm-trigger.v2",
    display_name="LM, trained triggers (question words)",
    family="lm",
    params=TriggerParamsV2,
    explainer=explain_trigger_v2,
    formula=_FORMULA_V2,
    paper=f"{MOMTAZI_KLAKOW_2015} §5-6 eq. 9-12 (NE triggering from question words, §6.5)",
    description=(
        "the trigger LM where the question's wh-word (who, when, where, how many, how long, how old) also triggers the "
        "answer's entity labels and terms (?when → DATE), learned from QA pairs; tuned defaults"
    ),
    distribution=distribution_trigger,
    closed=closed_trigger_v2,
)
def score_trigger_v2(index: Index, q: Query, p: TriggerParams) -> tuple[np.ndarray, np.ndarray]:
    cand, total, word_hit = _score_terms(index, q, p)
    asks = ask_scores(index, q, cand, p)
    if asks is not None:
        total = total + asks
    return cap_candidates(cand, total, word_hit, p.max_candidates)
