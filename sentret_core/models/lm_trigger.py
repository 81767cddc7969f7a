"""The trained trigger language model (seed 001 §5-6 eq. 9-12; SPEC "Trigger LM").

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

Counting (as seed 001 §4.1 counts co-occurrence: every instance): inside-sentence counts
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
  as SPEC states; so p_t(·|s_j) is a distribution over the vocabulary;
* a target with no trigger mass in a table (never triggered, or pruned away), an unlabelled term
  for ``ne``, and the empty sentence back off to the collection model p(q) — the same convention
  as the other LMs' maximum-likelihood model of an empty text — so every p_t(·|s) and p(·|θ_s)
  sums to 1 over the vocabulary. A table that was never trained (no QA file) therefore gives
  p_t(q|s) = p(q) for every sentence: a constant, which changes no ranking;
* |s| in eq. 10 is the number of terms (after stop-word removal), repeats included;
* question words are normalised like every query (SPEC "Notation"): spaCy's stop words are
  removed, which includes the wh-words ("when", "who", "where", "how", "many"), so the paper's
  "when → DATE" cannot be learned; content words ("born → DATE", "high → QUANTITY") can;
* the NE table counts answer *terms* inside entities (a four-term DATE counts four), matching how
  a candidate sentence's labels are counted per term in eq. 10.

**Candidates**: the sentences with a query term or with a target of an active table (λ_t > 0)
that a query term triggers; at most ``max_candidates`` are returned: all sentences with a query
term, then the best-scoring others (ties by sentence id).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sentret_core.errors import SentretError
from sentret_core.models.layout import collection_model, layout, sentence_row
from sentret_core.models.lm_class import PAPER_001, _cap
from sentret_core.models.lm_params import MU_GRID, MU_MIN
from sentret_core.models.lm_trigger_data import trigger_data
from sentret_core.models.params import Params, grid_range, param
from sentret_core.models.postings import postings
from sentret_core.models.query import Query
from sentret_core.models.registry import register
from sentret_core.models.spec import Explained
from sentret_core.models.training.triggers import COMPONENTS, DEFAULT_NAME, KIND, TABLES
from sentret_core.models.vectors import EMPTY_IDS, EMPTY_SCORES, union

if TYPE_CHECKING:
    from sentret_core.index.reader import Index


_LAM = dict(min=0.0, max=1.0, step=0.05, grid=grid_range(0.1, 0.9, 0.1))


_HELP = {
    "self": "weight of self triggering: the unsmoothed sentence model c(q,s)/|s|",
    "inside": "weight of inside-sentence triggering (terms of one sentence trigger each other)",
    "across": "weight of across-sentence triggering (terms trigger the next sentence's terms)",
    "qa": "weight of QA-pair triggering (question terms trigger answer terms; see train_triggers)",
    "ne": "weight of named-entity triggering (question terms trigger answer NER labels; see train_triggers)",
    "mu": "Dirichlet prior of the word unigram model, which gets the remaining weight 1 − Σλ",
    "max_candidates": "most sentences returned: those with a query term, then the best others",
    "tables": "name of the trained trigger-table artefact of the index (sentret train triggers INDEX --name …)",
}


@dataclass(frozen=True)
class TriggerParams(Params):
    lam_self: float = param(0.0, _HELP["self"], symbol=r"\lambda_{self}", **_LAM)  # type: ignore[arg-type]
    lam_inside: float = param(0.2, _HELP["inside"], symbol=r"\lambda_{in}", **_LAM)  # type: ignore[arg-type]
    lam_across: float = param(0.0, _HELP["across"], symbol=r"\lambda_{ac}", **_LAM)  # type: ignore[arg-type]
    lam_qa: float = param(0.0, _HELP["qa"], symbol=r"\lambda_{qa}", **_LAM)  # type: ignore[arg-type]
    lam_ne: float = param(0.0, _HELP["ne"], symbol=r"\lambda_{ne}", **_LAM)  # type: ignore[arg-type]
    mu: float = param(100.0, _HELP["mu"], symbol=r"\mu", min=0.0, max=1e6, step=1.0, grid=MU_GRID, min_positive=MU_MIN)
    max_candidates: int = param(10000, _HELP["max_candidates"], min=1, max=1_000_000, step=1)
    tables: str = param(DEFAULT_NAME, _HELP["tables"], artefact=KIND)

    def check(self) -> None:
        total = sum(self.weights().values())
        if total > 1.0 + 1e-12:
            raise SentretError(
                f"the triggering weights lam_self + lam_inside + lam_across + lam_qa + lam_ne = {total:g} "
                "exceed 1; they are mixture weights and the word unigram model gets 1 minus their sum"
            )

    def weights(self) -> dict[str, float]:
        return {name: float(getattr(self, f"lam_{name}")) for name in COMPONENTS}

    def rest(self) -> float:
        return max(1.0 - sum(self.weights().values()), 0.0)


def _sentence_label_counts(index: Index, sentence: int, labels: Sequence[str]) -> np.ndarray:
    """Terms of ``sentence`` inside an entity of each label, from its mentions and term tokens."""
    out = np.zeros(len(labels))
    where = {name: i for i, name in enumerate(labels)}
    lo, hi = int(index.seq_indptr[sentence]), int(index.seq_indptr[sentence + 1])
    tokens = np.asarray(index.seq_tokens[lo:hi], dtype=np.int64)
    m_lo, m_hi = int(index.mention_indptr[sentence]), int(index.mention_indptr[sentence + 1])
    cols = index.mention_columns
    ent_labels = index.entity_labels
    for m in range(m_lo, m_hi):
        i = where.get(ent_labels[int(cols["entity"][m])], -1)
        if i >= 0:
            out[i] += int(((tokens >= cols["token_start"][m]) & (tokens < cols["token_end"][m])).sum())
    return out


def _row_of(norm: sp.csr_matrix, term: int) -> dict[int, float]:
    lo, hi = int(norm.indptr[term]), int(norm.indptr[term + 1])
    return dict(zip(norm.indices[lo:hi].tolist(), norm.data[lo:hi].tolist()))


def distribution_trigger(index: Index, sentence: int, p: TriggerParams) -> np.ndarray:
    """p(q|θ_s) over the whole vocabulary (sums to 1)."""
    p_c = collection_model(index)
    cols, counts = sentence_row(index, sentence)
    n_s = float(counts.sum())
    c_s = np.zeros(index.V)
    np.add.at(c_s, cols, counts)
    weights = p.weights()
    out = weights["self"] * (c_s / n_s if n_s > 0 else p_c)
    active = [name for name in TABLES if weights[name] > 0]
    if active:
        data = trigger_data(index, p.tables)
        y_s = _sentence_label_counts(index, sentence, data.tables.labels)
        for name in active:
            targets = y_s if name == "ne" else c_s
            if n_s > 0:
                part = np.asarray(data.norm[name] @ targets).ravel() / n_s
                unmatched = float(targets[~data.massless[name]].sum())
                part = part + (n_s - unmatched) / n_s * p_c
            else:
                part = p_c
            out = out + weights[name] * part
    den = n_s + p.mu
    out = out + p.rest() * ((c_s + p.mu * p_c) / den if den > 0 else p_c)
    return np.asarray(out, dtype=np.float64)


_SHORT = {"inside": "inside", "across": "across", "qa": "QA", "ne": "NE"}


def explain_trigger(index: Index, q: Query, sentence: int, p: TriggerParams) -> Explained:
    p_c = collection_model(index)
    cols, counts = sentence_row(index, sentence)
    n_s = float(counts.sum())
    weights = p.weights()
    active = [name for name in TABLES if weights[name] > 0]
    data = trigger_data(index, p.tables) if active else None
    y_s = _sentence_label_counts(index, sentence, data.tables.labels) if data is not None else np.zeros(0)
    vocab = index.vocab
    rows = []
    for term, t, qf in zip(q.unique, q.ids, q.qtf):
        t = int(t)
        pt = float(p_c[t])
        if pt <= 0:
            continue  # unseen in the collection: skipped
        c_t = float(counts[cols == t].sum())
        parts: dict[str, float] = {"self": c_t / n_s if n_s > 0 else pt}
        why: list[tuple[float, str]] = []
        for name in active:
            assert data is not None
            row = _row_of(data.norm[name], t)
            if name == "ne":
                targets = [(j, float(y)) for j, y in enumerate(y_s) if y > 0]
                labels = data.tables.labels
                named = [(labels[j], y, row.get(j, 0.0), bool(data.massless[name][j])) for j, y in targets]
            else:
                named = [(vocab[int(u)], float(c), row.get(int(u), 0.0), bool(data.massless[name][int(u)]))
                         for u, c in zip(cols, counts)]  # fmt: skip
            if n_s > 0:
                matched = sum(c * w for _, c, w, _ in named)
                unmatched = n_s - sum(c for _, c, _, massless in named if not massless)
                parts[name] = matched / n_s + unmatched / n_s * pt
            else:
                parts[name] = pt
            for target, c, w, _ in named:
                if w > 0:
                    value = weights[name] * w * c / n_s
                    why.append((value, f"{term}→{target}{'×' + str(int(c)) if c > 1 else ''} "
                                       f"({_SHORT[name]}, {value:.3g})"))  # fmt: skip
        den = n_s + p.mu
        word = (c_t + p.mu * pt) / den if den > 0 else pt
        why.sort(key=lambda x: -x[0])
        record: dict[str, Any] = {
            "term": term,
            "c(t,q)": float(qf),
            "c(t,s)": c_t,
            "|s|": n_s,
            "p(t)": pt,
            "top trigger pairs": "; ".join(text for _, text in why[:3]) or "—",
        }
        for name in COMPONENTS:
            record[f"λ_{name}·p_{name}(t|s)"] = weights[name] * parts.get(name, pt)
        record["(1-Σλ)·p_dir(t|s)"] = p.rest() * word
        prob = math.fsum([*(record[f"λ_{n}·p_{n}(t|s)"] for n in COMPONENTS), record["(1-Σλ)·p_dir(t|s)"]])
        record["p(t|θ)"] = prob
        record["log p(t|θ)"] = math.log(prob) if prob > 0 else -math.inf
        record["contribution"] = float(qf) * record["log p(t|θ)"]
        rows.append(record)
    notes: dict[str, float] = {"|s|": n_s}
    if data is not None:
        for name in TABLES:
            notes[f"{name} pairs"] = float(data.tables.pairs(name))
    columns = tuple(rows[0]) if rows else ("term", "contribution")
    return Explained(columns, rows, {}, notes)


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
    paper=f"{PAPER_001} §5-6 eq. 9-12",
    description=(
        "query likelihood where a query word can be generated by sentence words it triggers "
        "(same sentence, next sentence, QA pairs, answer entity labels), mixed with the Dirichlet unigram"
    ),
    distribution=distribution_trigger,
)
def score_trigger(index: Index, q: Query, p: TriggerParams) -> tuple[np.ndarray, np.ndarray]:
    p_c = collection_model(index)
    use = [(int(t), float(qf)) for t, qf in zip(q.ids, q.qtf) if p_c[t] > 0]
    if not use:
        return EMPTY_IDS, EMPTY_SCORES
    weights = p.weights()
    active = [name for name in TABLES if weights[name] > 0]
    data = trigger_data(index, p.tables) if active else None
    word_post = postings(index)
    words = [word_post(t) for t, _ in use]
    hits: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
    for t, _ in use:
        found = {}
        for name in active:
            assert data is not None
            found[name] = data.hits(name, t, word_post)
        hits.append(found)
    cand = union([r for r, _ in words] + [r for h in hits for r, _ in h.values()])
    if len(cand) == 0:
        return EMPTY_IDS, EMPTY_SCORES
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
            pos = np.searchsorted(cand, r)
            word_hit[pos] = True
            c_t = np.zeros(len(cand))
            c_t[pos] = v
            prob = weights["self"] * (c_t * inv_s + empty_s * pt)
            for name, (rows, sums) in found.items():
                assert data is not None
                h = np.zeros(len(cand))
                h[np.searchsorted(cand, rows)] = sums
                prob += weights[name] * (h * inv_s + data.background[name].take(cand) * pt)
            if rest > 0:
                prob += rest * np.where(den > 0, (c_t + p.mu * pt) * inv_d, pt)
            total += qf * np.log(prob)
    return _cap(cand, total, word_hit, p.max_candidates)


# --- explain and the distribution (from the sentence's own row) -------------------------------------
