"""Agreement of a session's annotators in one record: Cohen's κ per pair, Fleiss' κ, Krippendorff's α."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from sentret_core.annotation.records import Judgment


@dataclass(frozen=True)
class AgreementSummary:
    """Agreement on the items graded by more than one annotator (see :mod:`sentret_core.agreement`)."""

    annotators: tuple[str, ...]
    items: int  # items with at least one grade
    shared: int  # items with at least two grades
    complete: int  # items graded by every annotator
    cohen: pd.DataFrame  # annotator × annotator Cohen's κ (NaN: no shared item)
    pairs: tuple[tuple[str, str, int, float | None], ...]  # (a, b, shared items, κ)
    fleiss: float | None
    alpha: float | None  # Krippendorff's α, ordinal
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "annotators": list(self.annotators),
            "items": self.items,
            "shared_items": self.shared,
            "complete_items": self.complete,
            "cohen_kappa": [
                {"a": a, "b": b, "shared_items": n, "kappa": kappa} for a, b, n, kappa in self.pairs
            ],
            "fleiss_kappa": self.fleiss,
            "krippendorff_alpha_ordinal": self.alpha,
            "notes": list(self.notes),
        }


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def agreement_summary(judgments: Iterable[Judgment]) -> AgreementSummary:
    """Cohen's κ per pair, Fleiss' κ (on items graded by all) and ordinal Krippendorff's α (items with
    ≥ 2 grades)."""
    from sentret_core.annotation.agreement import (
        fleiss_kappa,
        krippendorff_alpha,
        pairwise_cohen_kappa,
        ratings_from_judgments,
    )

    ratings = ratings_from_judgments(judgments)
    if ratings.empty:
        empty = pd.DataFrame()
        return AgreementSummary((), 0, 0, 0, empty, (), None, None, ("no judgments yet",))
    matrix = ratings.pivot(index="item", columns="annotator", values="grade")
    names = tuple(str(c) for c in matrix.columns)
    counts = matrix.notna().sum(axis=1)
    shared, complete = int((counts >= 2).sum()), int((counts == len(names)).sum())
    notes: list[str] = []
    cohen = pairwise_cohen_kappa(ratings) if len(names) >= 2 else pd.DataFrame()
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            n = int(matrix[[a, b]].dropna().shape[0])
            kappa: Any = cohen.loc[a, b] if n else math.nan
            pairs.append((a, b, n, _finite(float(kappa)) if n else None))
    fleiss = alpha = None
    if len(names) < 2:
        notes.append("agreement needs at least two annotators")
    else:
        if complete:
            fleiss = _finite(fleiss_kappa(ratings))
        else:
            notes.append(f"Fleiss' κ: no item was graded by all {len(names)} annotators")
        if shared:
            alpha = _finite(krippendorff_alpha(ratings, "ordinal"))
        else:
            notes.append("Krippendorff's α: no item was graded by two annotators")
    if any(kappa is None and n for _, _, n, kappa in pairs) or (shared and alpha is None):
        notes.append("undefined (None) where the grades show no variation at all")
    return AgreementSummary(names, len(matrix), shared, complete, cohen, tuple(pairs), fleiss, alpha,
                            tuple(notes))  # fmt: skip
