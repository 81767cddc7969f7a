"""Coverage curve: the fraction of topics whose first relevant item is in the top k (Blanco &
Zaragoza, SIGIR 2010, Fig. 2).

The first-hit ranks come from :func:`sentret_core.support.sets.first_hits`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from sentret_core.errors import SentretError


def coverage_fraction(
    first_hit_k: Mapping[str, float | None], ks: Sequence[float] | npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """For each k in ``ks``, the fraction of topics whose first relevant item enters the
    candidate set at a (1-based) k' <= k. ``None`` or NaN = never covered."""
    if not first_hit_k:
        raise SentretError("coverage needs at least one topic")
    hits = np.array(
        [math.inf if v is None or math.isnan(float(v)) else float(v) for v in first_hit_k.values()]
    )
    if (hits < 1).any():
        raise SentretError("first-hit ranks are 1-based: every value must be >= 1 or None")
    grid = np.asarray(ks, dtype=np.float64).reshape(-1)
    ordered = np.sort(hits)
    return np.searchsorted(ordered, grid, side="right") / float(hits.shape[0])


def coverage_curve(
    first_hits: Mapping[str, Mapping[str, float | None]], ks: Sequence[float] | npt.ArrayLike
) -> pd.DataFrame:
    """Coverage fractions of several candidate sets (e.g. ``{"S_qe": ..., "Ŝ_qe": ...}``):
    index ``k``, one column per set."""
    grid = np.asarray(ks, dtype=np.float64).reshape(-1)
    columns = {label: coverage_fraction(hits, grid) for label, hits in first_hits.items()}
    return pd.DataFrame(columns, index=pd.Index(grid, name="k"))
