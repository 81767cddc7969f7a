"""The class-based LM's exact top k (Momtazi & Klakow, IP&M 2015, §3), by MaxScore (Turtle & Flood 1995;
:mod:`~sentret_core.models.arrays.maxscore`) over the query terms' *class* postings.

A sentence's score is Σ_t c(t,q)·log p(t|θ_s) with p(t|θ_s) = λ·(c(t,s) + μ_w·p(t))/(n + μ_w)
+ (1−λ)·p(t|C_t)·(c(C_t,s) + μ·p(C_t))/(n + μ), n = |s|, increasing in c(t,s) and c(C_t,s). The query terms are
grouped by class (one posting list each). A candidate of length n holding no term of a set E of the query's
classes gets from each query term t of E exactly c(t,q)·log[λ·μ_w·p(t)/(n+μ_w) + (1−λ)·p(t|C_t)·μ·p(C_t)/(n+μ)],
and from any other term at most the same with c(C_t,s) at M_C(n), the largest c(C_t,s) over the sentences of
length n (:func:`class_maxima`, a K × L table kept per class map), and c(t,s) at 0 for a candidate holding no query
word, else at the smaller of M_C(n) and t's own largest count at length n. The bound of the non-essential classes
is the largest such sum over the lengths n at which one of them occurs (:class:`Bounds`).

θ, a lower bound of the k-th best score, comes first from W, the candidates holding a query word, scored exactly
where W is small beside the candidates (and λ > 0: with λ = 0, c(t,s) is not in the score and W is no better than
any candidate); a candidate outside W then holds no query word, and where every class is below θ the top k is in
W. Else the essential classes' candidates get their essential parts, and the :data:`PROBE` × k of them with the
largest upper bounds are scored exactly, raising θ (with the others' lowest possible scores, as
:func:`~sentret_core.models.arrays.maxscore.raised` does); the candidates whose upper bound stays below θ are
dropped. With no class below θ at first, the most important class alone is tried as the essential one, and again
with the classes below the raised θ; where none is, every candidate is scored.

**The cap** (``max_candidates`` = m): the scorer returns W, the candidates holding a query *word*, then the best
others by (score descending, id ascending), up to m in all; :func:`~sentret_core.models.search` takes the top k of
what it is given by the same order. Let T be the top k of all the candidates by that order.

* |W| + k ≤ m (or at most m candidates): T is the top k of the capped set. An x of T outside W has fewer than k
  candidates, so fewer than k others, before it, and the cap keeps the best m − |W| ≥ k others: x is kept. The
  capped set holds T and is within the candidates, so its top k by the same total order is T, with the same
  scores (the cap changes none). Every candidate may then be ranked, and MaxScore prunes them.
* |W| ≥ m: the capped set is W itself; its top k is the top k of W, scored alone.
* between: the cap's choice among the others matters (None: every candidate is scored, then capped).

The final candidates are scored by the scorer's own closed form (``class_likelihood`` at given ids, elementwise
the same arithmetic as at the scorer's candidates), so the top k holds its scores bit for bit.

How the exact top k fits together, with a worked example: docs/topk.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays import maxima, maxscore
from sentret_core.models.arrays.layout import collection_model, layout
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, locate, union
from sentret_core.models.core.spec import TopK

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

# candidates (the query classes' postings summed) below which every one is scored: pruning's own steps cost more
PRUNE_FROM = 0
WORDS_APART = 4  # W is scored first where |W| × this is at most the query classes' postings (summed)
PROBE = 4  # × k candidates of the essential classes scored first, for θ: those of the largest bounds
Found = tuple[np.ndarray, np.ndarray, bool]
Terms = list[tuple[int, float]]  # (term, c(t,q)) of the query terms seen in the collection, in query order


@dataclass(frozen=True)
class ClassModel:
    """The scorer's own pieces (:mod:`.scorer` hands them over: it imports this module, not the reverse)."""

    data: Callable[[Index, Any], Any]  # class_data: the ClassData of the parameters' class map
    likelihood: Callable[..., tuple[np.ndarray, np.ndarray]]  # class_likelihood(index, p, use, ids, candidates=…)
    usable: Callable[[Index, Query], Terms]  # usable_terms
    mixture: Callable[..., list[tuple[str, Any]]]  # mixture: the two components of p(t|θ_s)


def class_top_k(model: ClassModel) -> TopK:
    """The registered ``top_k`` of the class-based LMs: (ids ascending, their exact scores, True) holding the top k
    of ``top_k(score(...))``, or None where the cap's choice matters (the scorer's path then runs)."""

    def top_k(index: Index, q: Query, p: Any, k: int) -> Found | None:
        use = model.usable(index, q)
        if not use or k == 0:
            return None  # the scorer's path is as fast, and says why nothing matched
        data = model.data(index, p)
        classes = np.array([int(data.cls[t]) for t, _ in use], dtype=np.int64)
        words = union([postings(index)(t)[0] for t, _ in use])  # W: every candidate holding a query word
        limit = int(p.max_candidates)
        if len(words) >= limit:  # the capped set is W (or every candidate is in W)
            return words, model.likelihood(index, p, use, words, candidates=False)[0], True
        groups = np.unique(classes)
        if len(words) + k <= limit or sum(data.post.size(int(c)) for c in groups) <= limit \
                or len(union([data.post(int(c))[0] for c in groups])) <= limit:
            return pruned(index, p, model, data, use, classes, words, k)
        return None  # some others are kept, and which depends on the scores of them all

    return top_k


def pruned(index: Index, p: Any, model: ClassModel, data: Any, use: Terms, classes: np.ndarray, words: np.ndarray,
           k: int) -> Found:
    """Every candidate's top k (see the module's docstring): W scored exactly gives θ (λ > 0), and where the bound
    of all the classes is below it, the top k is in W; else the candidates of the essential classes outside W are cut to
    those that may reach θ, raised first by their lowest possible scores and the exact scores of the most promising
    (:func:`_cut`). With no class below θ at first, the most important class alone is tried as the essential one."""
    groups = np.unique(classes)  # the query's classes, ascending; each query term in one
    if sum(data.post.size(int(c)) for c in groups) < PRUNE_FROM:
        return _every(index, p, model, data, use, groups)
    # W apart: scored first, its candidates bounded with c(t,s) = 0; not where c(t,s) is not in the score (λ = 0)
    # or W is not small beside the candidates (then c(t,s) is bounded by the term's largest count at |s|)
    apart = p.lam > 0 and len(words) * WORDS_APART <= sum(data.post.size(int(c)) for c in groups)
    words = words if apart else EMPTY_IDS
    in_words = model.likelihood(index, p, use, words, candidates=False)[0]
    bounds = Bounds(index, p, model, data, use, classes, groups, with_words=not apart and p.lam > 0)
    theta = float(np.partition(in_words, len(words) - k)[len(words) - k]) if len(words) >= k else -np.inf
    rest = bounds.rest_below(theta)
    if len(rest) == len(groups):  # every candidate outside W scores below θ
        return *maxscore.reaching(words, in_words, theta), True
    if len(groups) == 1:
        return _every(index, p, model, data, use, groups)
    tried = rest if len(rest) else np.sort(bounds.order[:-1])
    found, theta = _cut(index, p, model, data, use, classes, groups, tried, bounds, words, in_words, theta, k)
    if found is None:  # θ is higher now: fewer classes may be non-essential, or all of them
        rest = bounds.rest_below(theta)
        if len(rest) == len(groups):
            return *maxscore.reaching(words, in_words, theta), True
        if len(rest) and len(rest) < len(tried):
            found = _cut(index, p, model, data, use, classes, groups, rest, bounds, words, in_words, theta, k)[0]
    return _every(index, p, model, data, use, groups) if found is None else found


def _cut(index: Index, p: Any, model: ClassModel, data: Any, use: Terms, classes: np.ndarray, groups: np.ndarray,
         rest: np.ndarray, bounds: Bounds, words: np.ndarray, in_words: np.ndarray, theta: float,
         k: int) -> tuple[Found | None, float]:
    """The candidates of the classes outside ``rest`` that may reach θ, and W, with their exact scores, and θ; or
    None when θ — raised by the lowest possible scores of those candidates and the exact scores of the
    :data:`PROBE` × k most promising — leaves the bound of ``rest`` above it."""
    essential = set(groups.tolist()) - set(groups[rest].tolist())
    ess_use = [term for term, c in zip(use, classes.tolist()) if c in essential]
    cand = union([data.post(int(c))[0] for c in sorted(essential)])
    part = model.likelihood(index, p, ess_use, cand, candidates=True)[0]  # cand: their classes' postings
    outside = ~locate(words, cand)[0]  # W is scored already
    cand, part = cand[outside], part[outside]
    lengths = layout(index).sent_len.take(cand).astype(np.intp)
    upper = part + bounds.present[rest].sum(axis=0).take(lengths)
    lower = maxscore.lowered(part + bounds.absent[rest].sum(axis=0).take(lengths))
    probe = np.zeros(len(cand), dtype=bool)
    if len(cand) > PROBE * k:
        probe[np.argpartition(-upper, PROBE * k)[: PROBE * k]] = True
    else:
        probe[:] = True
    probed = model.likelihood(index, p, use, cand[probe], candidates=False)[0]
    lower[probe] = probed
    theta = maxscore.raised(theta, np.concatenate([in_words, lower]), k)
    if bounds.bound(rest) >= theta:
        return None, theta
    more = ~probe & (upper + maxscore.SLACK * np.abs(upper) >= theta)  # the others cannot reach θ
    ids = np.concatenate([words, cand[probe], cand[more]])
    scores = np.concatenate([in_words, probed, model.likelihood(index, p, use, cand[more], candidates=False)[0]])
    order = np.argsort(ids, kind="stable")
    return (*maxscore.reaching(ids.take(order), scores.take(order), theta), True), theta


def _every(index: Index, p: Any, model: ClassModel, data: Any, use: Terms, groups: np.ndarray) -> Found:
    """Every candidate with its score: what pruning gives when it cannot help (no cap to sort by)."""
    cand = union([data.post(int(c))[0] for c in groups])
    return cand, model.likelihood(index, p, use, cand, candidates=True)[0], True


def class_maxima(index: Index, data: Any) -> np.ndarray:
    """M_C(n): per class C (rows) and sentence length n (0 … the longest), the largest c(C,s) over the sentences
    s of length n, 0 where none holds a term of C (float64), kept per class map."""

    def build() -> np.ndarray:
        post = data.post
        n_classes, n_lengths = len(post.indptr) - 1, maxima.lengths(index)
        cls = np.repeat(np.arange(n_classes, dtype=np.int64), np.diff(post.indptr))
        key = cls * n_lengths + layout(index).sent_len.take(post.rows).astype(np.int64)
        order = np.lexsort((post.vals, key))  # by key, then count: each key's largest count comes last
        key = key.take(order)
        last = np.flatnonzero(np.append(key[1:] != key[:-1], True)) if len(key) else key
        table = np.zeros(n_classes * n_lengths)
        table[key.take(last)] = post.vals.take(order.take(last))
        return table.reshape(n_classes, n_lengths)

    return index.cache.get(f"models.class.maxima/{data.cmap.key}", build)


class Bounds:
    """Per query class g (rows, ``groups`` ascending) and sentence length n (columns), for a candidate holding no
    query word (or any, ``with_words``): ``absent``, Σ over the query terms t of g of c(t,q)·log p(t|θ_s) when s
    holds no term of g; ``present``, the most it can be (c(C,s) = M_C(n), and c(t,s) = 0, or ``with_words`` the
    smaller of M_C(n) and t's largest count at length n); ``held``, whether a sentence of length n holds a term of g."""

    def __init__(self, index: Index, p: Any, model: ClassModel, data: Any, use: Terms, classes: np.ndarray,
                 groups: np.ndarray, with_words: bool = False) -> None:
        table = class_maxima(index, data)
        terms = np.array([t for t, _ in use], dtype=np.int64)
        qf = np.array([f for _, f in use])[:, None]
        n = np.arange(table.shape[1], dtype=np.float64)
        none, most = np.zeros((len(terms), len(n))), table[classes]
        c_t = 0.0 if not with_words else np.stack(
            [none, np.minimum(most, np.stack([maxima.largest_by_length(index, t) for t in terms.tolist()]))])
        comps = model.mixture(p, c_t, np.stack([none, most]), n, collection_model(index)[terms][:, None],
                              data.p_t_class[terms][:, None], data.p_class[classes][:, None])
        with np.errstate(divide="ignore"):
            logs = qf * np.log(comps[0][1] + comps[1][1])  # (absent, present) × terms × lengths
        row = np.searchsorted(groups, classes)
        self.absent, self.present = np.zeros((len(groups), len(n))), np.zeros((len(groups), len(n)))
        np.add.at(self.absent, row, logs[0])
        np.add.at(self.present, row, logs[1])
        self.held = table[groups] > 0
        self.gain = self.present - self.absent
        # the most each class can add to a score, over the lengths it occurs at: the least important first
        self.order = np.argsort(np.where(self.held, self.gain, -np.inf).max(axis=1, initial=0.0), kind="stable")

    def bound(self, rest: np.ndarray) -> float:
        """The largest score (raised by the margin) of a candidate holding no query word and no class but those at
        ``rest``: at the lengths where one of them occurs (-inf where none does: no such candidate)."""
        occurs = self.held[rest].any(axis=0)
        if not occurs.any():
            return -np.inf
        total = self.absent.sum(axis=0) + self.gain[rest].sum(axis=0)
        return maxscore.margin(float(total[occurs].max()))

    def rest_below(self, theta: float) -> np.ndarray:
        """The positions (ascending) of the longest run of the least important classes whose bound is below θ:
        a candidate holding no query word and none of the other classes cannot reach θ (possibly every class)."""
        n_rest = 0
        while n_rest < len(self.order) and self.bound(self.order[: n_rest + 1]) < theta:
            n_rest += 1
        return np.sort(self.order[:n_rest])
