"""Agreement of a session's annotators in one record: Cohen's κ per pair, Fleiss' κ, Krippendorff's α,
each with the number of items it rests on and a bootstrap 95% interval (:mod:`.agreement_bootstrap`).

A coefficient on fewer than :data:`MIN_SHARED` items is not given at all: a κ of −0.333 from one
shared item says nothing, so the record says "too few shared items (n = 1 < 10)" instead. Nor is an
undefined one (grades without any variation: chance disagreement is zero): its value is None with
that reason, never NaN, in every field of the record, the pairwise matrix included.

Raw percent agreement (the share of a pair's shared items given the same grade, with that n) is
given for every pair, however few items it shares: a pilot below the κ threshold still sees it.
It is not corrected for chance, so it reads high when most grades are the same one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from sentret_core.annotation.records import Judgment

MIN_SHARED = 10
NO_VARIATION = "undefined: the grades show no variation"


class Coefficient(NamedTuple):
    """One agreement coefficient: its value (None when not given, see ``note``), the number of items
    it is computed on, and the bootstrap 95% interval."""

    value: float | None
    n: int
    low: float | None = None
    high: float | None = None
    note: str | None = None

    def text(self) -> str:
        """``0.412 (95% CI 0.201 to 0.610; n = 25)``, or the note."""
        if self.value is None:
            return f"— ({self.note})" if self.note else "—"
        if self.low is None or self.high is None:
            return f"{self.value:.3f} (n = {self.n})"
        return f"{self.value:.3f} (95% CI {self.low:.3f} to {self.high:.3f}; n = {self.n})"

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "n": self.n, "ci95": [self.low, self.high], "note": self.note}


class PercentAgreement(NamedTuple):
    """Raw agreement of two annotators: the shared items they gave the same grade, of ``n`` shared."""

    agreed: int
    n: int

    @property
    def value(self) -> float | None:
        return self.agreed / self.n if self.n else None

    def text(self) -> str:
        """``75.0% (3 of 4 shared items)``, or why there is none."""
        if self.value is None:
            return "— (no shared items)"
        return f"{100 * self.value:.1f}% ({self.agreed} of {self.n} shared item{'s' if self.n != 1 else ''})"

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "agreed": self.agreed, "n": self.n}


@dataclass(frozen=True)
class AgreementSummary:
    """Agreement on the items graded by more than one annotator (see :mod:`sentret_core.annotation.agreement`)."""

    annotators: tuple[str, ...]
    items: int  # items with at least one grade
    shared: int  # items with at least two grades
    complete: int  # items graded by every annotator
    cohen: pd.DataFrame  # annotator × annotator: the Coefficient of ``pairs`` (diagonal: value None, a note)
    pairs: tuple[tuple[str, str, Coefficient], ...]  # (a, b, Cohen's κ on their shared items)
    fleiss: Coefficient  # on the items graded by everyone
    alpha: Coefficient  # Krippendorff's α, ordinal, on the items with ≥ 2 grades
    notes: tuple[str, ...] = ()
    percent: tuple[tuple[str, str, PercentAgreement], ...] = ()  # (a, b, same grade on their shared items)

    def percent_of(self, a: str, b: str) -> PercentAgreement:
        """The raw agreement of the pair (a, b), in either order."""
        found = [p for x, y, p in self.percent if {x, y} == {a, b}]
        return found[0] if found else PercentAgreement(0, 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "annotators": list(self.annotators),
            "items": self.items,
            "shared_items": self.shared,
            "complete_items": self.complete,
            "min_shared_items": MIN_SHARED,
            "cohen_kappa": [{"a": a, "b": b, **c.to_dict()} for a, b, c in self.pairs],
            "percent_agreement": [{"a": a, "b": b, **p.to_dict()} for a, b, p in self.percent],
            "fleiss_kappa": self.fleiss.to_dict(),
            "krippendorff_alpha_ordinal": self.alpha.to_dict(),
            "notes": list(self.notes),
        }


def finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def too_few(n: int) -> str:
    return f"too few shared items (n = {n} < {MIN_SHARED})"


def _coefficient(value: float, n: int, ci: tuple[float, float] | None) -> Coefficient:
    if n < MIN_SHARED:
        return Coefficient(None, n, note=too_few(n))
    if not math.isfinite(value):
        return Coefficient(None, n, note=NO_VARIATION)
    low, high = ci if ci is not None else (None, None)
    return Coefficient(float(value), n, low, high)


def _pair_matrix(names: tuple[str, ...], pairs: list[tuple[str, str, Coefficient]]) -> pd.DataFrame:
    """Annotator × annotator Coefficients, symmetric, with a note (no NaN) on the diagonal."""
    cohen = pd.DataFrame(None, index=list(names), columns=list(names), dtype=object)
    for name in names:
        cohen.at[name, name] = Coefficient(None, 0, note="the same annotator")
    for a, b, kappa in pairs:
        cohen.at[a, b] = cohen.at[b, a] = kappa
    return cohen


def agreement_summary(judgments: Iterable[Judgment], *, resamples: int | None = None) -> AgreementSummary:
    """Cohen's κ per pair, Fleiss' κ (on items graded by all) and ordinal Krippendorff's α (items with
    ≥ 2 grades), with their item counts and bootstrap intervals (``resamples``, default 2000)."""
    from sentret_core.annotation import agreement_bootstrap as boot
    from sentret_core.annotation.agreement import (
        category_codes,
        cohen_kappa,
        fleiss_kappa,
        krippendorff_alpha,
        ratings_from_judgments,
    )

    draws = boot.RESAMPLES if resamples is None else resamples
    ratings = ratings_from_judgments(judgments)
    none = Coefficient(None, 0, note="needs at least two annotators")
    if ratings.empty:
        return AgreementSummary((), 0, 0, 0, pd.DataFrame(), (), none, none, ("no judgments yet",))
    matrix = ratings.pivot(index="item", columns="annotator", values="grade")
    names = tuple(str(c) for c in matrix.columns)
    counts = matrix.notna().sum(axis=1)
    shared, complete = int((counts >= 2).sum()), int((counts == len(names)).sum())
    if len(names) < 2:
        return AgreementSummary(names, len(matrix), 0, complete, pd.DataFrame(), (), none, none,
                                ("agreement needs at least two annotators",))
    pairs, percent = [], []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            both = matrix[[a, b]].dropna()
            n = len(both)
            percent.append((a, b, PercentAgreement(int((both[a] == both[b]).sum()), n)))
            if n < MIN_SHARED:
                pairs.append((a, b, Coefficient(None, n, note=too_few(n))))
                continue
            categories, codes = category_codes(both.to_numpy())
            k = len(categories)
            stat = boot.cohen_statistic(k, 1.0 - np.eye(k))
            ci = boot.interval(boot.cohen_features(codes, k), stat, resamples=draws)
            pairs.append((a, b, _coefficient(cohen_kappa(ratings, a, b), n, ci)))
    cohen = _pair_matrix(names, pairs)
    if complete >= MIN_SHARED:
        categories, codes = category_codes(matrix.dropna().to_numpy())
        table = np.stack([(codes == c).sum(axis=1) for c in range(len(categories))], axis=1)
        ci = boot.interval(boot.fleiss_features(table), boot.fleiss_statistic(len(names)), resamples=draws)
        fleiss = _coefficient(fleiss_kappa(ratings), complete, ci)
    else:
        fleiss = Coefficient(None, complete, note=f"{too_few(complete)}: items graded by all {len(names)} annotators")
    if shared >= MIN_SHARED:
        pairable = matrix[counts >= 2]
        present = pairable.notna().to_numpy()
        categories, codes = category_codes(pairable.to_numpy(dtype=object)[present])
        units = np.repeat(np.arange(len(pairable)), present.sum(axis=1))
        per_unit = np.zeros((len(pairable), len(categories)))
        np.add.at(per_unit, (units, codes), 1.0)
        stat = boot.alpha_ordinal_statistic(len(categories))
        ci = boot.interval(boot.alpha_features(per_unit), stat, resamples=draws)
        alpha = _coefficient(krippendorff_alpha(ratings, "ordinal"), shared, ci)
    else:
        alpha = Coefficient(None, shared, note=f"{too_few(shared)}: items graded by two or more annotators")
    notes = [] if shared >= MIN_SHARED else [f"agreement is given on {MIN_SHARED} or more shared items only"]
    return AgreementSummary(names, len(matrix), shared, complete, cohen, tuple(pairs), fleiss, alpha, tuple(notes),
                            tuple(percent))
