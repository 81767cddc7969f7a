"""Bootstrap 95% intervals for Cohen's κ, Fleiss' κ and Krippendorff's α (items resampled).

Each coefficient is a function of sums over items: Cohen's κ of the pair's confusion counts, Fleiss'
κ of the category counts and of Σ n_ic(n_ic − 1), Krippendorff's α of the coincidence matrix. A
bootstrap resample draws n items with replacement — a row of multiplicities w (Σ w = n) — and its
coefficient is the same function of the weighted sums w · F, with F the items × features matrix; so
every resample costs one matrix product. The interval is the percentile interval (2.5 % and 97.5 %
quantiles, numpy's linear interpolation) of the coefficients of the resamples where it is defined
(a resample without variation has none). With n^n ≤ ``resamples`` every resample is enumerated
once (the exact bootstrap distribution); otherwise ``resamples`` rows of n item indices are drawn
with ``numpy.random.default_rng(seed).integers`` (Efron & Tibshirani 1993, ch. 13).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import numpy as np

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95
_CHUNK = 2_000_000  # multiplicities held at once


def resample_weights(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> Iterator[np.ndarray]:
    """Chunks (rows × n) of resample multiplicities; every resample once when n^n ≤ ``resamples``."""
    if n < 1:
        return
    if n <= 8 and n**n <= resamples:
        rows = [np.bincount(draw, minlength=n) for draw in itertools.product(range(n), repeat=n)]
        yield np.array(rows, dtype=float)
        return
    rng = np.random.default_rng(seed)
    per_chunk = max(1, _CHUNK // n)
    left = resamples
    while left > 0:
        size = min(per_chunk, left)
        draws = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
        yield np.bincount(draws.ravel(), minlength=size * n).reshape(size, n).astype(float)
        left -= size


def interval(
    features: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> tuple[float, float] | None:
    """The percentile interval of ``statistic`` (rows of summed features → values) over resamples of
    the rows of ``features``; None when no resample has a defined value."""
    values = np.concatenate(
        [statistic(w @ features) for w in resample_weights(len(features), resamples, seed)] or [np.array([])]
    )
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


# --------------------------------------------------------------------------- features and statistics


def cohen_features(codes: np.ndarray, k: int) -> np.ndarray:
    """Items × k² one-hot of each item's (grade of a, grade of b) cell; ``codes`` is items × 2."""
    features = np.zeros((len(codes), k * k))
    features[np.arange(len(codes)), codes[:, 0] * k + codes[:, 1]] = 1.0
    return features


def cohen_statistic(k: int, disagreement: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """κ = 1 − Σ w·p_obs / Σ w·p_exp from summed confusion counts (Cohen 1960, 1968)."""

    def kappa(sums: np.ndarray) -> np.ndarray:
        observed = sums.reshape(-1, k, k)
        observed = observed / observed.sum(axis=(1, 2), keepdims=True)
        expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :]
        chance = (disagreement * expected).sum(axis=(1, 2))
        seen = (disagreement * observed).sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(chance > 0, 1.0 - seen / np.where(chance > 0, chance, 1.0), np.nan)

    return kappa


def fleiss_features(counts: np.ndarray) -> np.ndarray:
    """Items × (k + 1): each category's count, then Σ_c n_ic (n_ic − 1)."""
    counts = np.asarray(counts, dtype=float)
    return np.column_stack([counts, (counts * (counts - 1.0)).sum(axis=1)])


def fleiss_statistic(m: int) -> Callable[[np.ndarray], np.ndarray]:
    """κ = (P̄ − P̄_e) / (1 − P̄_e) with m ratings per item (Fleiss 1971)."""

    def kappa(sums: np.ndarray) -> np.ndarray:
        counts, pairs = sums[:, :-1], sums[:, -1]
        total = counts.sum(axis=1)
        observed = pairs / (total * (m - 1.0))
        chance = ((counts / total[:, None]) ** 2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(chance < 1.0, (observed - chance) / (1.0 - chance), np.nan)

    return kappa


def alpha_features(per_unit: np.ndarray) -> np.ndarray:
    """Items × k²: each item's coincidences (n_uc n_uk − [c = k] n_uc) / (m_u − 1)."""
    per_unit = np.asarray(per_unit, dtype=float)
    m = per_unit.sum(axis=1)
    outer = per_unit[:, :, None] * per_unit[:, None, :]
    own = np.einsum("uc,ck->uck", per_unit, np.eye(per_unit.shape[1]))
    return ((outer - own) / (m - 1.0)[:, None, None]).reshape(len(per_unit), -1)


def alpha_ordinal_statistic(k: int) -> Callable[[np.ndarray], np.ndarray]:
    """Ordinal α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck, δ the mid-rank distance (Krippendorff 2011)."""

    def alpha(sums: np.ndarray) -> np.ndarray:
        coincidence = sums.reshape(-1, k, k)
        totals = coincidence.sum(axis=2)
        midrank = np.cumsum(totals, axis=1) - totals / 2.0
        delta = (midrank[:, :, None] - midrank[:, None, :]) ** 2
        n = totals.sum(axis=1)
        expected = (totals[:, :, None] * totals[:, None, :] * delta).sum(axis=(1, 2))
        seen = (coincidence * delta).sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(expected > 0, 1.0 - (n - 1.0) * seen / np.where(expected > 0, expected, 1.0), np.nan)

    return alpha
