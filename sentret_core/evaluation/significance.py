"""Paired significance tests of per-topic values against a baseline (Blanco & Zaragoza, SIGIR 2010, §5).

Two-tailed paired t-test and Wilcoxon signed-rank test (``scipy.stats``), as in Table 2 of
Blanco & Zaragoza, SIGIR 2010, with Holm's step-down correction (Holm, Scand. J. Statistics 1979)
for several models tested against one baseline.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from sentret_core.errors import SentretError

CORRECTIONS = ("none", "holm")  # for several models tested against one baseline


def _paired(model: npt.ArrayLike, baseline: npt.ArrayLike) -> npt.NDArray[np.float64]:
    x = np.asarray(model, dtype=np.float64)
    y = np.asarray(baseline, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise SentretError(f"paired tests need equal-length vectors, got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise SentretError("paired tests got NaN per-topic values")
    return x - y


def paired_t_test(model: npt.ArrayLike, baseline: npt.ArrayLike) -> float:
    """Two-tailed p-value of the paired t-test (``scipy.stats.ttest_rel``).

    All differences zero -> 1.0; fewer than two topics -> NaN (the test is undefined).
    """
    diff = _paired(model, baseline)
    if not diff.any():
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_rel(np.asarray(model, float), np.asarray(baseline, float))
    return float(result.pvalue)


def wilcoxon_test(model: npt.ArrayLike, baseline: npt.ArrayLike) -> float:
    """Two-tailed p-value of the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, zero
    differences dropped as in Wilcoxon's original method). All differences zero -> 1.0."""
    diff = _paired(model, baseline)
    if not diff.any():
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.wilcoxon(diff)
    return float(result.pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given: with the m finite p-values sorted
    ascending, p'_(i) = max_{j≤i} min(1, (m − j + 1)·p_(j)). NaN stays NaN and does not count in m."""
    finite = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    adjusted = [math.nan] * len(p_values)
    running, m = 0.0, len(finite)
    for rank, (p, i) in enumerate(finite):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def compare(per_topic: Mapping[str, pd.DataFrame], baseline: str, *, alpha: float = 0.05) -> pd.DataFrame:
    """Compare each model's per-topic values with ``baseline``'s, metric by metric.

    Every frame must hold the baseline's topics (rows) and metrics (columns). Returns one row
    per (model, metric), baseline included: ``mean``, ``diff`` (mean - baseline mean),
    ``p_ttest``, ``p_wilcoxon`` (both two-tailed, paired) and ``significant`` (both p < alpha).
    """
    if baseline not in per_topic:
        raise SentretError(f"baseline {baseline!r} is not among the models {sorted(per_topic)}")
    base = per_topic[baseline]
    topics = set(base.index)
    records = []
    for model, frame in per_topic.items():
        if set(frame.index) != topics:
            raise SentretError(f"model {model!r} is evaluated on other topics than the baseline {baseline!r}")
        missing = [m for m in base.columns if m not in frame.columns]
        if missing:
            raise SentretError(f"model {model!r} lacks the metrics {missing}")
        aligned = frame.loc[base.index]
        for metric in base.columns:
            x = aligned[metric].to_numpy(dtype=np.float64)
            y = base[metric].to_numpy(dtype=np.float64)
            p_t, p_w = paired_t_test(x, y), wilcoxon_test(x, y)
            records.append(
                {
                    "model": model,
                    "metric": metric,
                    "mean": float(x.mean()) if x.size else math.nan,
                    "diff": float((x - y).mean()) if x.size else math.nan,
                    "p_ttest": p_t,
                    "p_wilcoxon": p_w,
                    "significant": bool(p_t < alpha and p_w < alpha),
                }
            )
    frame = pd.DataFrame.from_records(
        records,
        columns=["model", "metric", "mean", "diff", "p_ttest", "p_wilcoxon", "significant"],
    )
    for column in ("p_ttest", "p_wilcoxon"):  # adjusted over the models tested against the baseline, per metric
        frame[f"{column}_holm"] = math.nan
        for _, rows in frame[frame["model"] != baseline].groupby("metric", sort=False):
            frame.loc[rows.index, f"{column}_holm"] = holm(rows[column].tolist())
    return frame
