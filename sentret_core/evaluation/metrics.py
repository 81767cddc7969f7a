"""Per-topic metrics on score arrays, tie-aware in closed form (McSherry & Najork, ECIR 2008).

* RR: ``1 / rank`` of the first relevant item, 0 if none is retrieved.
* P@k: relevant items among ranks 1..k, divided by k (also when fewer are retrieved).
* AP: ``(1/R) * sum over relevant retrieved items d of P@rank(d)``, where R is the number of
  relevant judged items of the topic, retrieved or not.
* R-Prec: P@R.
* NDCG@k: ``DCG@k = sum_{i<=k} gain_i / log2(1 + i)``, divided by the DCG@k of the ideal
  ranking of every judged item of the topic (``IDCG@k``); 0 when ``IDCG@k`` is 0.

**Ties** (McSherry & Najork, "Computing Information Retrieval Performance Measures
Efficiently in the Presence of Tied Scores", ECIR 2008). Items with equal scores form a tie
group; ``mode="tie-aware"`` (the default) reports the *expectation* of each metric over
every ordering of every tie group, in closed form and linear time after sorting. Let a group
hold n items at ranks a+1..a+n, r of them relevant and total gain G, with c relevant items
ranked before it. By symmetry each item of the group is at each of its ranks with
probability 1/n, so:

* P@k: every rank a+j of the group holds r/n relevant items in expectation.
* DCG@k: every rank a+j of the group holds gain G/n in expectation.
* AP: a relevant item of the group at rank a+j has ``c + 1 + (j-1)(r-1)/(n-1)`` relevant
  items at or above it in expectation (the other r-1 are spread over the other n-1 slots),
  so the group adds ``(r/n) * sum_{j=1..n} (c + 1 + (j-1)(r-1)/(n-1)) / (a+j)`` to R*AP.
* RR: only the first group with r > 0 matters; its first relevant item is at in-group
  position i with probability ``C(n-i, r-1) / C(n, r)``, so
  ``E[RR] = sum_{i=1..n-r+1} C(n-i, r-1) / C(n, r) / (a+i)``.

``mode="pessimistic"`` / ``"optimistic"`` break ties against / in favour of the relevant
(higher-gain) items, i.e. the minimum / maximum of the metric over the tie orderings, which
shows how large the effect of ties is.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from sentret_core.errors import SentretError

Mode = Literal["tie-aware", "pessimistic", "optimistic"]
MODES: tuple[str, ...] = ("tie-aware", "pessimistic", "optimistic")


class _Groups(NamedTuple):
    """Tie groups in rank order: ``start`` = items ranked before, ``size`` n, ``total`` sum."""

    start: npt.NDArray[np.int64]
    size: npt.NDArray[np.int64]
    total: npt.NDArray[np.float64]


def check_mode(mode: str) -> None:
    """Raise unless ``mode`` is one of :data:`MODES`."""
    if mode not in MODES:
        raise SentretError(f"unknown tie mode {mode!r}; choose one of {', '.join(MODES)}")


def _scores(scores: npt.ArrayLike) -> npt.NDArray[np.float64]:
    array = np.asarray(scores, dtype=np.float64)
    if array.ndim != 1:
        raise SentretError("scores must be a one-dimensional array")
    if np.isnan(array).any():
        raise SentretError("scores must not be NaN")
    return array


def _relevance(relevant: npt.ArrayLike, n: int) -> npt.NDArray[np.float64]:
    array = np.asarray(relevant)
    if array.shape != (n,):
        raise SentretError(f"expected {n} relevance values (one per score), got {array.shape}")
    if array.dtype != np.bool_ and not np.isin(array, (0, 1)).all():
        raise SentretError("relevance values must be booleans or 0/1; threshold the grades first")
    return array.astype(np.float64)


def gain_values(gains: npt.ArrayLike, n: int | None) -> npt.NDArray[np.float64]:
    """``gains`` as a float array (of length ``n`` unless None); raise unless finite and >= 0."""
    array = np.asarray(gains, dtype=np.float64)
    if array.ndim != 1 or (n is not None and array.shape[0] != n):
        raise SentretError(f"expected {n} gains (one per score), got shape {array.shape}")
    if not np.isfinite(array).all() or (array < 0).any():
        raise SentretError("gains must be finite and non-negative")
    return array


def _groups(scores: npt.NDArray[np.float64], values: npt.NDArray[np.float64], mode: str) -> _Groups:
    """Sort by score descending and split into tie groups.

    Tie-aware: groups are runs of equal scores. Pessimistic/optimistic: ties are broken by
    ``values`` ascending/descending and every item is its own group.
    """
    check_mode(mode)
    n = scores.shape[0]
    if mode == "tie-aware":
        order = np.argsort(-scores, kind="stable")
        ranked = scores[order]
        start = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]]) if n else np.zeros(0, int)
        size = np.diff(np.r_[start, n])
        total = np.add.reduceat(values[order], start) if n else np.zeros(0)
        return _Groups(start.astype(np.int64), size.astype(np.int64), total.astype(np.float64))
    key = values if mode == "pessimistic" else -values
    order = np.lexsort((key, -scores))
    return _Groups(np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64), values[order])


def _expected_by_rank(groups: _Groups) -> npt.NDArray[np.float64]:
    """Expected value at each rank: every rank of a group holds the group mean ``total / n``."""
    return np.repeat(groups.total / np.maximum(groups.size, 1), groups.size)


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise SentretError(f"cutoff k must be a positive integer, got {k!r}")
    return int(k)


def _n_relevant(n_relevant: int | None, retrieved: npt.NDArray[np.float64]) -> int:
    found = int(retrieved.sum())
    if n_relevant is None:
        return found
    if n_relevant < found:
        raise SentretError(f"n_relevant={n_relevant} is smaller than the {found} relevant items retrieved")
    return int(n_relevant)


def precision_at_k(
    scores: npt.ArrayLike, relevant: npt.ArrayLike, k: int, *, mode: Mode = "tie-aware"
) -> float:
    """P@k = |relevant items at ranks 1..k| / k; tie-aware: each rank of a group holds r/n."""
    k = _check_k(k)
    score_array = _scores(scores)
    rel = _relevance(relevant, score_array.shape[0])
    expected = _expected_by_rank(_groups(score_array, rel, mode))
    return float(expected[:k].sum() / k)


def r_precision(
    scores: npt.ArrayLike,
    relevant: npt.ArrayLike,
    n_relevant: int | None = None,
    *,
    mode: Mode = "tie-aware",
) -> float:
    """R-Prec = P@R; R = ``n_relevant`` (relevant judged items, default: those retrieved).

    0 if R = 0.
    """
    score_array = _scores(scores)
    rel = _relevance(relevant, score_array.shape[0])
    total = _n_relevant(n_relevant, rel)
    return precision_at_k(score_array, rel, total, mode=mode) if total else 0.0


def average_precision(
    scores: npt.ArrayLike,
    relevant: npt.ArrayLike,
    n_relevant: int | None = None,
    *,
    mode: Mode = "tie-aware",
) -> float:
    """AP = (1/R) sum over relevant retrieved d of P@rank(d); 0 if R = 0.

    R = ``n_relevant`` (the relevant judged items of the topic, retrieved or not; default:
    those retrieved). Tie-aware (McSherry & Najork 2008): a group at ranks a+1..a+n with r
    relevant items and c relevant items before it adds
    ``(r/n) * sum_{j=1..n} (c + 1 + (j-1)(r-1)/(n-1)) / (a+j)`` to R*AP.
    """
    score_array = _scores(scores)
    rel = _relevance(relevant, score_array.shape[0])
    total = _n_relevant(n_relevant, rel)
    if total == 0 or score_array.shape[0] == 0:
        return 0.0
    groups = _groups(score_array, rel, mode)
    r, n = groups.total, groups.size.astype(np.float64)
    before = np.cumsum(r) - r
    slope = np.where(n > 1, (r - 1) / np.maximum(n - 1, 1), 0.0)
    group_of = np.repeat(np.arange(n.shape[0]), groups.size)
    rank = np.arange(1, score_array.shape[0] + 1, dtype=np.float64)
    j = rank - groups.start[group_of]
    terms = (r / n)[group_of] * (before[group_of] + 1 + (j - 1) * slope[group_of]) / rank
    return float(terms.sum() / total)


def reciprocal_rank(scores: npt.ArrayLike, relevant: npt.ArrayLike, *, mode: Mode = "tie-aware") -> float:
    """RR = 1 / rank of the first relevant item; 0 if none is retrieved.

    Tie-aware: in the first group holding relevant items (ranks a+1..a+n, r relevant) the
    first relevant item is at position i with probability ``p_i = C(n-i, r-1) / C(n, r)``,
    computed by the recurrence ``p_1 = r/n``, ``p_{i+1} = p_i (n-i-r+1) / (n-i)``;
    ``E[RR] = sum_i p_i / (a+i)``.
    """
    score_array = _scores(scores)
    rel = _relevance(relevant, score_array.shape[0])
    groups = _groups(score_array, rel, mode)
    hits = np.flatnonzero(groups.total > 0)
    if hits.shape[0] == 0:
        return 0.0
    first = hits[0]
    a, n, r = int(groups.start[first]), int(groups.size[first]), float(groups.total[first])
    i = np.arange(1, n, dtype=np.float64)
    ratios = np.maximum((n - i - r + 1) / (n - i), 0.0)
    probability = (r / n) * np.r_[1.0, np.cumprod(ratios)]
    return float((probability / (a + np.arange(1, n + 1))).sum())


def _discounts(m: int) -> npt.NDArray[np.float64]:
    """The DCG discounts ``1 / log2(1 + rank)`` for ranks 1..m."""
    return 1.0 / np.log2(np.arange(2, m + 2, dtype=np.float64))


def dcg_at_k(
    scores: npt.ArrayLike, gains: npt.ArrayLike, k: int | None = None, *, mode: Mode = "tie-aware"
) -> float:
    """DCG@k = sum_{rank<=k} gain / log2(1 + rank) (k=None: whole ranking).

    Tie-aware: each rank of a group holds the group's mean gain.
    """
    score_array = _scores(scores)
    gain_array = gain_values(gains, score_array.shape[0])
    expected = _expected_by_rank(_groups(score_array, gain_array, mode))
    m = expected.shape[0] if k is None else min(_check_k(k), expected.shape[0])
    return float((expected[:m] * _discounts(m)).sum())


def ideal_dcg_at_k(ideal_gains: npt.ArrayLike, k: int | None = None) -> float:
    """IDCG@k: DCG@k of the judged gains sorted descending."""
    ordered = np.sort(gain_values(ideal_gains, None))[::-1]
    m = ordered.shape[0] if k is None else min(_check_k(k), ordered.shape[0])
    return float((ordered[:m] * _discounts(m)).sum())


def ndcg_at_k(
    scores: npt.ArrayLike,
    gains: npt.ArrayLike,
    k: int | None = None,
    ideal_gains: npt.ArrayLike | None = None,
    *,
    mode: Mode = "tie-aware",
) -> float:
    """NDCG@k = DCG@k / IDCG@k; ``ideal_gains`` = gains of every judged item (default:
    ``gains``); 0 when IDCG@k = 0. Tie-aware by linearity of the expectation (IDCG is fixed).
    """
    ideal = ideal_dcg_at_k(gains if ideal_gains is None else ideal_gains, k)
    if ideal <= 0:
        return 0.0
    return dcg_at_k(scores, gains, k, mode=mode) / ideal
