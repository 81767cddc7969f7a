"""Inter-annotator agreement on graded judgments: Cohen's κ, Fleiss' κ, Krippendorff's α.

Every function takes *ratings* in long form: a DataFrame with the columns ``item``,
``annotator`` and ``grade``, or an iterable of ``(item, annotator, grade)`` tuples. An
annotator rates an item at most once; missing ratings are simply absent rows.

Which items each coefficient uses:

* :func:`cohen_kappa` — the items both annotators graded (Cohen 1960; weighted κ, Cohen 1968).
* :func:`fleiss_kappa` — the items graded by *every* annotator in the data. Fleiss' κ needs the
  same number of ratings per item (Fleiss 1971); keeping only complete items is the choice that
  also keeps the raters the same across items, so the value does not depend on which
  subset of annotators happened to grade which item.
* :func:`krippendorff_alpha` — every item with at least two ratings: α handles missing data
  natively (Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011).

Undefined coefficients (no variation at all, so expected disagreement is zero) are ``nan``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from sentret_core.defaults import RELEVANT_GRADE
from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.annotation.records import Judgment

COLUMNS = ("item", "annotator", "grade")
Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
Weights = Literal["linear", "quadratic"] | None
Ratings = pd.DataFrame | Iterable[tuple[Hashable, Hashable, object]]


# --------------------------------------------------------------------------- input


def ratings_frame(data: Ratings) -> pd.DataFrame:
    """Long ratings as a DataFrame ``item, annotator, grade``; rows without a grade dropped."""
    if isinstance(data, pd.DataFrame):
        missing = [column for column in COLUMNS if column not in data.columns]
        if missing:
            raise SentretError(f"ratings need the columns {COLUMNS}; missing {missing}")
        frame = data.loc[:, list(COLUMNS)].copy()
    else:
        rows = [tuple(row) for row in data]
        if any(len(row) != 3 for row in rows):
            raise SentretError("each rating must be an (item, annotator, grade) triple")
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame = frame[frame["grade"].notna()].reset_index(drop=True)
    repeated = frame.duplicated(["item", "annotator"])
    if repeated.any():
        first = frame[repeated].iloc[0]
        raise SentretError(
            f"annotator {first['annotator']!r} rates item {first['item']!r} more than once"
        )
    return frame


def ratings_from_judgments(judgments: Iterable[Judgment]) -> pd.DataFrame:
    """Ratings from store judgments; an item is the (topic id, sentence id) pair."""
    rows = [((j.topic_id, j.sentence_id), j.annotator, j.grade) for j in judgments]
    return ratings_frame(rows)


def binarize(data: Ratings, threshold: int = RELEVANT_GRADE) -> pd.DataFrame:
    """Grades as relevance: 1 if grade ≥ ``threshold`` (3: relevant, Blanco & Zaragoza §4)."""
    frame = ratings_frame(data)
    frame["grade"] = (frame["grade"] >= threshold).astype(int)
    return frame


def _matrix(data: Ratings) -> pd.DataFrame:
    """Items × annotators, NaN where an annotator did not grade an item."""
    frame = ratings_frame(data)
    if frame.empty:
        raise SentretError("there are no ratings to compare")
    return frame.pivot(index="item", columns="annotator", values="grade")


def category_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values and each value's index among them."""
    try:
        categories, codes = np.unique(values, return_inverse=True)
    except TypeError:
        raise SentretError("grades must be mutually comparable (all numbers or all text)") from None
    return categories, codes.reshape(values.shape)


# --------------------------------------------------------------------------- Cohen


def cohen_kappa(data: Ratings, a: Hashable, b: Hashable, *, weights: Weights = None) -> float:
    """Cohen's κ between annotators ``a`` and ``b`` on the items both graded.

    ``weights``: None (nominal κ), ``"linear"`` or ``"quadratic"`` (weighted κ, with
    disagreement |x−y| or (x−y)² between the grade values).
    """
    matrix = _matrix(data)
    for who in (a, b):
        if who not in matrix.columns:
            raise SentretError(f"no ratings by annotator {who!r}")
    both = matrix[[a, b]].dropna()
    if both.empty:
        raise SentretError(f"annotators {a!r} and {b!r} have no graded item in common")
    categories, codes = category_codes(both.to_numpy())
    k = len(categories)
    observed = np.zeros((k, k))
    np.add.at(observed, (codes[:, 0], codes[:, 1]), 1.0)
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    disagreement = _kappa_weights(categories, weights)
    chance = float((disagreement * expected).sum())
    if chance == 0.0:
        return float("nan")
    return 1.0 - float((disagreement * observed).sum()) / chance


def _kappa_weights(categories: np.ndarray, weights: Weights) -> np.ndarray:
    if weights is None:
        return 1.0 - np.eye(len(categories))
    if weights not in ("linear", "quadratic"):
        raise SentretError(f"weights must be None, 'linear' or 'quadratic'; got {weights!r}")
    values = _numeric(categories)
    distance = np.abs(values[:, None] - values[None, :])
    return distance if weights == "linear" else distance**2


def _numeric(values: np.ndarray) -> np.ndarray:
    try:
        return values.astype(float)
    except (TypeError, ValueError):
        raise SentretError("weighted coefficients need numeric grades") from None


def pairwise_cohen_kappa(data: Ratings, *, weights: Weights = None) -> pd.DataFrame:
    """Cohen's κ for every pair of annotators (NaN on the diagonal and for disjoint pairs)."""
    matrix = _matrix(data)
    names = list(matrix.columns)
    table = pd.DataFrame(np.nan, index=names, columns=names)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if matrix[[a, b]].dropna().empty:
                continue
            value = cohen_kappa(data, a, b, weights=weights)
            table.loc[a, b] = table.loc[b, a] = value
    return table


# --------------------------------------------------------------------------- Fleiss


def fleiss_kappa(data: Ratings) -> float:
    """Fleiss' κ over all annotators, on the items that every annotator graded."""
    matrix = _matrix(data)
    if matrix.shape[1] < 2:
        raise SentretError("Fleiss' kappa needs at least two annotators")
    complete = matrix.dropna()
    if complete.empty:
        raise SentretError(f"no item was graded by all {matrix.shape[1]} annotators")
    categories, codes = category_codes(complete.to_numpy())
    counts = np.stack([(codes == c).sum(axis=1) for c in range(len(categories))], axis=1)
    return fleiss_kappa_counts(counts)


def fleiss_kappa_counts(table: object) -> float:
    """Fleiss' κ from an items × categories table of how many raters chose each category."""
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or counts.shape[0] == 0:
        raise SentretError("the Fleiss table must be items × categories with at least one item")
    raters = counts.sum(axis=1)
    if np.any(raters != raters[0]) or raters[0] < 2:
        raise SentretError("Fleiss' kappa needs the same number (≥ 2) of ratings for every item")
    m = raters[0]
    share = counts.sum(axis=0) / counts.sum()
    per_item = (counts * (counts - 1)).sum(axis=1) / (m * (m - 1))
    observed, chance = float(per_item.mean()), float((share**2).sum())
    if chance == 1.0:
        return float("nan")
    return (observed - chance) / (1.0 - chance)


# --------------------------------------------------------------------------- Krippendorff


def krippendorff_alpha(data: Ratings, level: Level = "ordinal") -> float:
    """Krippendorff's α on every item with at least two ratings.

    α = 1 − (n − 1) · Σ o_ck δ²_ck / Σ n_c n_k δ²_ck, with o the coincidence matrix
    (each pair of values within an item counts 1/(m_u − 1)) and δ² the ``level`` metric.
    """
    if level not in LEVELS:
        raise SentretError(f"level must be one of {LEVELS}; got {level!r}")
    matrix = _matrix(data)
    values = matrix.to_numpy(dtype=object)
    present = pd.notna(matrix).to_numpy()
    pairable = present.sum(axis=1) >= 2
    if not pairable.any():
        raise SentretError("Krippendorff's alpha needs an item graded by at least two annotators")
    categories, codes = category_codes(values[pairable][present[pairable]])
    units = np.repeat(np.arange(int(pairable.sum())), present[pairable].sum(axis=1))
    per_unit = np.zeros((int(pairable.sum()), len(categories)))
    np.add.at(per_unit, (units, codes), 1.0)
    coincidence = _coincidences(per_unit)
    totals = coincidence.sum(axis=1)
    delta = _alpha_metric(categories, totals, level)
    n = totals.sum()
    expected = float((np.outer(totals, totals) * delta).sum())
    if expected == 0.0:
        return float("nan")
    return 1.0 - (n - 1.0) * float((coincidence * delta).sum()) / expected


def _coincidences(per_unit: np.ndarray) -> np.ndarray:
    """o_ck = Σ_u (n_uc n_uk − [c = k] n_uc) / (m_u − 1)."""
    weight = 1.0 / (per_unit.sum(axis=1) - 1.0)
    weighted = per_unit * weight[:, None]
    return weighted.T @ per_unit - np.diag(weighted.sum(axis=0))


def _alpha_metric(categories: np.ndarray, totals: np.ndarray, level: str) -> np.ndarray:
    """δ²_ck for the level of measurement (Krippendorff 2011, §§ on difference functions)."""
    k = len(categories)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "ordinal":
        # rank distance: n_c/2 + Σ_{c<g<k} n_g + n_k/2 = difference of the values' mid-ranks
        midrank = np.cumsum(totals) - totals / 2.0
        return (midrank[:, None] - midrank[None, :]) ** 2
    values = _numeric(categories)
    diff = values[:, None] - values[None, :]
    if level == "interval":
        return diff**2
    total = values[:, None] + values[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(total == 0, 0.0, diff / np.where(total == 0, 1.0, total))
    return ratio**2
