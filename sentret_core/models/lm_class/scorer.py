"""The class-based language model (Momtazi & Klakow, IP&M 2015, §3, eq. 5-6).

score(s) = Σ_{t∈q} c(t,q) · log p(t|θ_s), with

    p(t|θ_s) = λ · (c(t,s) + μ_w·p(t)) / (|s| + μ_w)  +  (1−λ) · p(t|C_t) · p(C_t|s)
    p(t|C)   = c(t,C_coll) / c(C,C_coll)                 (emission, from the whole collection)
    p(C|s)   = (c(C,s) + μ·p(C)) / (|s| + μ),  p(C) = c(C,C_coll) / |C_coll|

C_t is the word class of t (:mod:`.wordclasses`: the exchange algorithm on the corpus's own
bigrams), c(C,s) the number of terms of s in class C. With λ = 0 (the default) this is the
paper's class model: a sentence is scored by how often the *classes* of the query terms occur
in it, so "tuesday" in a sentence counts for the query term "saturday" when both share a class.
λ > 0 interpolates the word unigram Dirichlet model (exact matches), an option the paper did
not use for the class model alone (it did for the trigger model, §5.2, and for its final
class + trigger + unigram combination); ``lm-class.v2`` (end of this file) is this formula with
λ > 0 by default.

Readings:

* Momtazi & Klakow's eq. 6 estimates p(C|S) by maximum likelihood and says all its experiments used
  Dirichlet smoothing; we smooth with the collection's class distribution p(C) (docs/spec.md);
* p(t|C) is the paper's "emission probability" P(q_i|C_{q_i}, S); we estimate it from the
  collection, not per sentence (docs/spec.md), so it is the same for every sentence — with λ = 0 it does
  not change the ranking of one query but keeps p(·|θ_s) a distribution over the vocabulary;
* the maximum-likelihood model of an empty sentence is the collection's (μ = 0 and |s| = 0 give
  p(C|s) = p(C)); a query term unseen in the collection (cf = 0) is skipped (docs/spec.md);
* the class map is a named artefact of the index (parameter ``classes``, default ``"classes"``),
  written by :func:`~sentret_core.models.training.classes.train_classes` or ``sentret train
  classes INDEX`` — on the index's own bigrams, or with other corpora as ``sources``, as the paper
  trained on AQUAINT. Scoring never trains: a missing map is an error that says how to train it.
  Explain's notes show how the map was trained (K, min_count, iterations, seed).

**Candidates**: every sentence holding a term of a query term's class (which includes every
sentence holding the query term itself) — the point of the model is that a sentence with no query
word can score. A class covers many sentences, so at most ``max_candidates`` are returned: all
the sentences that contain a query term, then the best-scoring others (ties by sentence id).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sentret_core.models.arrays.layout import collection_model, layout, sentence_row
from sentret_core.models.arrays.postings import Postings, postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, gather, scatter, union
from sentret_core.models.core.papers import MOMTAZI_KLAKOW_2015
from sentret_core.models.core.params import Params, Preset, grid_range, param
from sentret_core.models.core.query import Query
from sentret_core.models.core.registry import register
from sentret_core.models.core.spec import Explained
from sentret_core.models.lm.params import MU_GRID, MU_MIN
from sentret_core.models.lm_class.pruning import ClassModel, class_top_k
from sentret_core.models.training.classes import DEFAULT_NAME, KIND, ClassMap, load_classes

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

# μ = 0 leaves p(C|s) = 0 for a class the sentence lacks and its log-likelihood -inf: refused
_MU: Preset = Preset(symbol=r"\mu", min=MU_MIN, max=1e6, step=1.0, grid=MU_GRID)
LAM_GRID = grid_range(0.1, 0.9, 0.1)


_HELP = {
    "mu": "Dirichlet prior of the class model: pseudo-count of the collection's class distribution p(C)",
    "lam": "weight of the word unigram Dirichlet model (0: the paper's pure class model)",
    "mu_word": "Dirichlet prior of the word unigram model (used when λ > 0)",
    "classes": "name of the trained word-class artefact of the index (sentret train classes INDEX --name …)",
    "max_candidates": "most sentences returned: those with a query term, then the best others",
}


@dataclass(frozen=True)
class ClassParams(Params):
    mu: float = param(100.0, _HELP["mu"], **_MU)
    lam: float = param(0.0, _HELP["lam"], symbol=r"\lambda", min=0.0, max=1.0, step=0.05, grid=LAM_GRID)
    mu_word: float = param(
        100.0, _HELP["mu_word"], symbol=r"\mu_w", min=MU_MIN, max=1e6, step=1.0, grid=MU_GRID
    )
    classes: str = param(DEFAULT_NAME, _HELP["classes"], artefact=KIND)
    max_candidates: int = param(10000, _HELP["max_candidates"], min=1, max=1_000_000, step=1)


@dataclass(frozen=True)
class ClassData:
    """Everything the scorer needs from one class map of one index."""

    cmap: ClassMap
    cls: np.ndarray  # (V,) int64: C(t)
    p_t_class: np.ndarray  # (V,) p(t|C_t) = cf(t)/cf(C_t)
    p_class: np.ndarray  # (K,) p(C) = cf(C)/|C|
    post: Postings  # c(C,s): the sentence postings of every class


def class_data(index: Index, p: ClassParams) -> ClassData:
    cmap = load_classes(index, p.classes)

    def build() -> ClassData:
        cls = cmap.classes.astype(np.int64)
        K = int(cmap.n_classes)
        cf = np.asarray(index.cf, dtype=np.float64)
        cf_class = np.bincount(cls, weights=cf, minlength=K)
        p_t_class = np.zeros(index.V)
        np.divide(cf, cf_class[cls], out=p_t_class, where=cf_class[cls] > 0)
        p_class = cf_class / max(index.total_terms, 1)
        onehot = sp.csr_matrix((np.ones(index.V), (np.arange(index.V), cls)), shape=(index.V, K))
        return ClassData(cmap, cls, p_t_class, p_class, Postings.of(index.X @ onehot))

    return index.cache.get(f"models.class.data/{cmap.key}", build)


# --- the mixture: one definition for explain and the distribution ------------------------------------


def mixture(
    p: ClassParams, c_t: Any, c_C: Any, n_s: Any, p_t: Any, p_t_C: Any, p_C: Any
) -> list[tuple[str, Any]]:
    """The two components of p(t|θ_s) (arrays broadcast together)."""
    den_w = n_s + p.mu_word
    word = np.where(den_w > 0, (c_t + p.mu_word * p_t) / np.where(den_w > 0, den_w, 1.0), p_t)
    den = n_s + p.mu
    p_Cs = np.where(den > 0, (c_C + p.mu * p_C) / np.where(den > 0, den, 1.0), p_C)
    return [("λ·p_w(t|s)", p.lam * word), ("(1-λ)·p(t|C)·p(C|s)", (1 - p.lam) * p_t_C * p_Cs)]


def cap_candidates(
    cand: np.ndarray, total: np.ndarray, word_hit: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """At most ``limit`` candidates: every word match, then the best others (ties by id)."""
    if len(cand) <= limit:
        return cand, total
    keep = word_hit.copy()
    room = limit - int(keep.sum())
    if room > 0:
        others = np.flatnonzero(~keep)
        order = np.lexsort((cand[others], -total[others]))[:room]
        keep[others[order]] = True
    return cand[keep], total[keep]


# --- explain and the distribution (from the sentence's own row) -------------------------------------


def distribution_class(index: Index, sentence: int, p: ClassParams) -> np.ndarray:
    """p(t|θ_s) over the whole vocabulary (sums to 1)."""
    data = class_data(index, p)
    cols, counts = sentence_row(index, sentence)
    c_s = np.zeros(index.V)
    np.add.at(c_s, cols, counts)
    c_C = np.bincount(data.cls, weights=c_s, minlength=len(data.p_class))
    n_s = float(c_s.sum())
    p_t = collection_model(index)
    comps = mixture(p, c_s, c_C[data.cls], n_s, p_t, data.p_t_class, data.p_class[data.cls])
    return np.asarray(comps[0][1] + comps[1][1], dtype=np.float64)


def explain_class(index: Index, q: Query, sentence: int, p: ClassParams) -> Explained:
    data = class_data(index, p)
    p_t_all = collection_model(index)
    cols, counts = sentence_row(index, sentence)
    n_s = float(counts.sum())
    vocab = index.vocab
    rows = []
    for term, t, qf in zip(q.unique, q.ids, q.qtf):
        t = int(t)
        if p_t_all[t] <= 0:
            continue  # unseen in the collection: skipped
        c = int(data.cls[t])
        same = data.cls[cols] == c
        c_C = float(counts[same].sum())
        c_t = float(counts[cols == t].sum())
        comps = mixture(p, c_t, c_C, n_s, float(p_t_all[t]), float(data.p_t_class[t]), float(data.p_class[c]))
        prob = float(comps[0][1] + comps[1][1])
        shown = ", ".join(f"{vocab[int(u)]}×{int(k)}" for u, k in zip(cols[same], counts[same]))
        den = n_s + p.mu
        row: dict[str, Any] = {
            "term": term,
            "c(t,q)": float(qf),
            "class": f"C{c}: " + ", ".join(data.cmap.members(index, c, 6)),
            "class terms in s": shown or "—",
            "c(t,s)": c_t,
            "c(C,s)": c_C,
            "|s|": n_s,
            "p(t|C)": float(data.p_t_class[t]),
            "p(C)": float(data.p_class[c]),
            "p(C|s)": (c_C + p.mu * float(data.p_class[c])) / den if den > 0 else float(data.p_class[c]),
        }
        for name, value in comps:
            row[name] = float(value)
        row["p(t|θ)"] = prob
        row["log p(t|θ)"] = math.log(prob) if prob > 0 else -math.inf
        row["contribution"] = float(qf) * row["log p(t|θ)"]
        rows.append(row)
    stats = data.cmap.params
    notes = {
        "|s|": n_s,
        "classes": float(data.cmap.n_classes),
        "K": float(stats.get("classes", 0)),
        "min_count": float(stats.get("min_count", 0)),
        "iterations": float(stats.get("iterations", 0)),
        "seed": float(stats.get("seed", 0)),
        "training sources": float(len(data.cmap.sources)),
        "training seconds": float(data.cmap.stats.get("seconds", 0.0)),
    }
    columns = tuple(rows[0]) if rows else ("term", "contribution")
    return Explained(columns, rows, {}, notes)


# --- the scoring path: the scorer's candidates, or any sentences of a closed candidate set ------------


def usable_terms(index: Index, q: Query) -> list[tuple[int, float]]:
    """(term, c(t,q)) of the query terms seen in the collection (the others are skipped)."""
    p_t_all = collection_model(index)
    return [(int(t), float(qf)) for t, qf in zip(q.ids, q.qtf) if p_t_all[t] > 0]


def class_likelihood(
    index: Index, p: ClassParams, use: list[tuple[int, float]], cand: np.ndarray, *, candidates: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Σ c(t,q)·log p(t|θ_s) at ``cand`` and whether each holds a query term (``candidates``: ``cand``
    is the sorted union of the query classes' postings, the scorer's; else any sentence ids)."""
    data = class_data(index, p)
    p_t_all = collection_model(index)
    word_post = postings(index)
    cpost = [data.post(int(data.cls[t])) for t, _ in use]
    n_s = layout(index).sent_len.take(cand)
    den_c = n_s + p.mu
    inv_c = np.zeros(len(cand))
    np.divide(1.0, den_c, out=inv_c, where=den_c > 0)
    den_w = n_s + p.mu_word
    inv_w = np.zeros(len(cand))
    np.divide(1.0, den_w, out=inv_w, where=den_w > 0)
    total = np.zeros(len(cand))
    word_hit = np.zeros(len(cand), dtype=bool)
    with np.errstate(divide="ignore"):
        for (t, qf), (rows, counts) in zip(use, cpost):
            c = int(data.cls[t])
            pC = float(data.p_class[c])
            c_C = scatter(cand, rows, counts) if candidates else gather(rows, counts, cand)
            p_Cs = np.where(den_c > 0, (c_C + p.mu * pC) * inv_c, pC)
            prob = (1 - p.lam) * float(data.p_t_class[t]) * p_Cs
            r, v = word_post(t)
            if candidates:
                pos = np.searchsorted(cand, r)
                word_hit[pos] = True
            if p.lam > 0:
                pt = float(p_t_all[t])
                if candidates:
                    c_t = np.zeros(len(cand))
                    c_t[pos] = v
                else:
                    c_t = gather(r, v, cand)
                prob += p.lam * np.where(den_w > 0, (c_t + p.mu_word * pt) * inv_w, pt)
            total += qf * np.log(prob)
    return total, word_hit


def closed_class(index: Index, q: Query, p: ClassParams, ids: np.ndarray) -> np.ndarray:
    """The score of any sentences (a closed candidate set): one holding no term of a query term's
    class scores Σ c(t,q)·log[λ·μ_w·p(t)/(|s|+μ_w) + (1−λ)·p(t|C_t)·μ·p(C_t)/(|s|+μ)], finite as μ > 0."""
    use = usable_terms(index, q)
    ids = np.asarray(ids, dtype=np.int64)
    if not use or len(ids) == 0:
        return np.zeros(len(ids))
    return class_likelihood(index, p, use, ids, candidates=False)[0]


_FORMULA = (
    r"\sum_{t\in q}c(t,q)\log\left[\lambda\frac{c(t,s)+\mu_w p(t)}{|s|+\mu_w}"
    r"+(1-\lambda)\,p(t|C_t)\,\frac{c(C_t,s)+\mu\,p(C_t)}{|s|+\mu}\right],\;"
    r"p(t|C)=\frac{c(t,C_{coll})}{c(C,C_{coll})}"
)
# search()'s exact top k, by MaxScore over the query terms' classes (pruning.py)
_TOP_K = class_top_k(ClassModel(class_data, class_likelihood, usable_terms, mixture))

@register(
    "lm-class.v1",
    display_name="LM, class-based (word clusters)",
    family="lm",
    params=ClassParams,
    explainer=explain_class,
    formula=_FORMULA,
    paper=f"{MOMTAZI_KLAKOW_2015} §3 eq. 5-7",
    description=(
        "query likelihood over word classes learned from the corpus's bigrams (exchange algorithm): "
        "a sentence scores for words of the same class as the query's, even with no query word"
    ),
    distribution=distribution_class,
    closed=closed_class,
    top_k=_TOP_K,
)
def score_class(index: Index, q: Query, p: ClassParams) -> tuple[np.ndarray, np.ndarray]:
    use = usable_terms(index, q)
    if not use:
        return EMPTY_IDS, EMPTY_SCORES
    data = class_data(index, p)
    cand = union([data.post(int(data.cls[t]))[0] for t, _ in use])
    if len(cand) == 0:
        return EMPTY_IDS, EMPTY_SCORES
    total, word_hit = class_likelihood(index, p, use, cand, candidates=True)
    return cap_candidates(cand, total, word_hit, p.max_candidates)


# --- lm-class.v2: interpolated with the word model by default ------------------------------------------


@dataclass(frozen=True)
class ClassParamsV2(ClassParams):
    """v1's formula with the word unigram model interpolated by default (λ > 0; the grid stays
    0.1-0.9, so tuning never drops either model), as Momtazi & Klakow combine their models with the word
    unigram (§5.2, eq. 12; its final class + trigger + unigram interpolation, §7). The defaults
    are the values tuned on WikiQA train (MAP, coordinate ascent over the grids, K = 100 classes
    from the bigrams of WikiQA train + dev; ``benchmarks/vocab_gap_crossfit.py``)."""

    mu: float = param(50.0, _HELP["mu"], **_MU)
    lam: float = param(
        0.4, "weight of the word unigram Dirichlet model (exact matches)", symbol=r"\lambda", min=0.0, max=1.0,
        step=0.05, grid=LAM_GRID,
    )
    mu_word: float = param(
        100.0, _HELP["mu_word"], symbol=r"\mu_w", min=MU_MIN, max=1e6, step=1.0, grid=MU_GRID
    )


@register(
    "lm-class.v2",
    display_name="LM, class-based + word unigram",
    family="lm",
    params=ClassParamsV2,
    explainer=explain_class,
    formula=_FORMULA,
    paper=f"{MOMTAZI_KLAKOW_2015} §3 eq. 5-7, interpolated as in §5.2 eq. 12",
    description=(
        "the class-based LM mixed with the word unigram Dirichlet model by default (λ tuned): exact "
        "matches count first, words of the query terms' classes add to them"
    ),
    distribution=distribution_class,
    closed=closed_class,
    top_k=_TOP_K,
)
def score_class_v2(index: Index, q: Query, p: ClassParams) -> tuple[np.ndarray, np.ndarray]:
    return score_class(index, q, p)
