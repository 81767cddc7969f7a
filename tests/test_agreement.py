"""Agreement coefficients against hand computations, published examples and brute force."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core.annotation.agreement import (
    binarize,
    cohen_kappa,
    fleiss_kappa,
    fleiss_kappa_counts,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    ratings_frame,
    ratings_from_judgments,
)
from sentret_core.annotation.records import Judgment
from sentret_core.errors import SentretError

# Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011): 4 observers × 12 units,
# None = missing. Published: nominal α = 0.743, ordinal α = 0.815, interval α = 0.849.
KRIPPENDORFF_UNITS = [
    (1, 1, None, 1),
    (2, 2, 3, 2),
    (3, 3, 3, 3),
    (3, 3, 3, 3),
    (2, 2, 2, 2),
    (1, 2, 3, 4),
    (4, 4, 4, 4),
    (1, 1, 2, 1),
    (2, 2, 2, 2),
    (None, 5, 5, 5),
    (None, None, 1, 1),
    (None, None, 3, None),
]

# Fleiss (1971) / Wikipedia worked example: 10 subjects × 5 categories, 14 raters each; κ = 0.210.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def long(
    units: Sequence[Sequence[int | None]], coders: str = "ABCD"
) -> list[tuple[int, str, int]]:
    return [
        (unit, coders[c], value)
        for unit, values in enumerate(units)
        for c, value in enumerate(values)
        if value is not None
    ]


# --------------------------------------------------------------------------- published examples


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_alpha_reproduces_krippendorff_2011(level: str, published: float) -> None:
    alpha = krippendorff_alpha(long(KRIPPENDORFF_UNITS), level)  # type: ignore[arg-type]
    assert round(alpha, 3) == published


def test_krippendorff_nominal_exact_value() -> None:
    # By hand from the coincidence matrix: n = 40 pairable values, n_c = (9, 13, 10, 5, 3) for
    # values 1..5, off-diagonal coincidences Σ_{c≠k} o_ck = 8, Σ_{c≠k} n_c·n_k = 40² − Σn_c² = 1216:
    # α = 1 − (n − 1)·8/1216 = 1 − 39·8/1216 = 113/152 = 0.7434 (published: 0.743).
    assert krippendorff_alpha(long(KRIPPENDORFF_UNITS), "nominal") == pytest.approx(113 / 152)


def test_fleiss_kappa_reproduces_the_worked_example() -> None:
    assert round(fleiss_kappa_counts(FLEISS_TABLE), 3) == 0.210


def test_fleiss_kappa_from_long_ratings_matches_the_table() -> None:
    rows = []
    for item, counts in enumerate(FLEISS_TABLE):
        grades = [g for g, n in enumerate(counts, start=1) for _ in range(n)]
        rows += [(item, f"r{r}", grade) for r, grade in enumerate(grades)]
    assert fleiss_kappa(rows) == pytest.approx(fleiss_kappa_counts(FLEISS_TABLE))


# --------------------------------------------------------------------------- hand computations


def test_cohen_kappa_textbook_two_by_two() -> None:
    # 50 items: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no.
    # p_o = 35/50 = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5)/(1 − 0.5) = 0.4.
    pairs = [(1, 1)] * 20 + [(1, 0)] * 5 + [(0, 1)] * 10 + [(0, 0)] * 15
    rows = [(i, "a", x) for i, (x, _) in enumerate(pairs)] + [
        (i, "b", y) for i, (_, y) in enumerate(pairs)
    ]
    assert cohen_kappa(rows, "a", "b") == pytest.approx(0.4)


def test_cohen_kappa_weighted_by_hand() -> None:
    # a = (1, 2, 3), b = (1, 3, 3).  Joint: (1,1), (2,3), (3,3), each 1/3.
    # Unweighted: p_o = 2/3, p_e = 1/3·1/3 + 1/3·0 + 1/3·2/3 = 1/3 → κ = (1/3)/(2/3) = 0.5.
    # Linear:   observed Σp·|x−y| = 1/3; expected = (4/3 + 1 + 2/3)/3 = 1 → κ = 2/3.
    # Quadratic: observed 1/3; expected = (8/3 + 1 + 4/3)/3 = 5/3 → κ = 1 − 1/5 = 0.8.
    rows = [(0, "a", 1), (1, "a", 2), (2, "a", 3), (0, "b", 1), (1, "b", 3), (2, "b", 3)]
    rows.append((3, "a", 4))  # graded by one annotator only: ignored
    assert cohen_kappa(rows, "a", "b") == pytest.approx(0.5)
    assert cohen_kappa(rows, "a", "b", weights="linear") == pytest.approx(2 / 3)
    assert cohen_kappa(rows, "a", "b", weights="quadratic") == pytest.approx(0.8)


def test_fleiss_kappa_by_hand_uses_only_items_every_annotator_graded() -> None:
    # Items graded by x, y, z: [3, 0], [2, 1], [0, 3] (counts of grades 1 and 2).
    # P_i = 1, 1/3, 1 → P̄ = 7/9;  p = (5/9, 4/9) → P̄e = 41/81;  κ = (7/9 − 41/81)/(40/81) = 0.55.
    rows = [(0, "x", 1), (0, "y", 1), (0, "z", 1)]
    rows += [(1, "x", 1), (1, "y", 1), (1, "z", 2)]
    rows += [(2, "x", 2), (2, "y", 2), (2, "z", 2)]
    rows += [(3, "x", 1), (3, "y", 2)]  # not graded by z: left out
    assert fleiss_kappa(rows) == pytest.approx(0.55)


def test_krippendorff_alpha_by_hand_with_missing_data() -> None:
    # u0 (1,1): o11 += 2.  u1 (1,2): o12 += 1, o21 += 1.  u2 (2,2): o22 += 2.
    # u3 (1,1,2), m = 3: ordered pairs (1,1)×2, (1,2)×2, (2,1)×2, each /2 → o11 += 1, o12 += 1, o21 += 1.
    # u4 has a single rating: not pairable.
    # o = [[3, 2], [2, 2]], n1 = 5, n2 = 4, n = 9.
    # nominal: α = 1 − (n−1)·(o12+o21)/(2·n1·n2) = 1 − 8·4/40 = 0.2.
    units: list[tuple[int | None, ...]] = [
        (1, 1, None), (1, 2, None), (2, 2, None), (1, 1, 2), (None, None, 2)
    ]
    rows = long(units, "ABC")
    assert krippendorff_alpha(rows, "nominal") == pytest.approx(0.2)
    # With two values every metric is proportional to c ≠ k, so α is the same.
    for level in ("ordinal", "interval", "ratio"):
        assert krippendorff_alpha(rows, level) == pytest.approx(0.2)


def test_perfect_and_constant_agreement() -> None:
    rows = [(i, who, i % 4 + 1) for i in range(8) for who in "abc"]
    assert cohen_kappa(rows, "a", "b") == pytest.approx(1.0)
    assert fleiss_kappa(rows) == pytest.approx(1.0)
    assert krippendorff_alpha(rows) == pytest.approx(1.0)
    constant = [(i, who, 3) for i in range(5) for who in "ab"]
    assert math.isnan(cohen_kappa(constant, "a", "b"))
    assert math.isnan(fleiss_kappa(constant))
    assert math.isnan(krippendorff_alpha(constant))


# --------------------------------------------------------------------------- brute force


def brute_alpha(units: list[list[float]], level: str) -> float:
    """α from its definition over pairs of pairable values (Krippendorff 2011, eq. for D_o, D_e)."""
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    counts = {v: values.count(v) for v in set(values)}

    def delta(c: float, k: float) -> float:
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (c - k) ** 2
        if level == "ratio":
            return ((c - k) / (c + k)) ** 2 if c + k else 0.0
        lo, hi = min(c, k), max(c, k)
        between = sum(m for g, m in counts.items() if lo <= g <= hi)
        return (between - (counts[c] + counts[k]) / 2) ** 2

    observed = sum(
        sum(delta(a, b) for a, b in itertools.permutations(u, 2)) / (len(u) - 1) for u in units
    ) / n
    expected = sum(delta(a, b) for a, b in itertools.permutations(values, 2)) / (n * (n - 1))
    return float("nan") if expected == 0 else 1 - observed / expected


units_strategy = st.lists(
    st.lists(st.integers(1, 4), min_size=1, max_size=4), min_size=2, max_size=12
)


@settings(max_examples=80, deadline=None)
@given(units=units_strategy, level=st.sampled_from(["nominal", "ordinal", "interval", "ratio"]))
def test_krippendorff_alpha_matches_brute_force(units: list[list[int]], level: str) -> None:
    rows = [(u, f"c{c}", v) for u, values in enumerate(units) for c, v in enumerate(values)]
    if not any(len(u) >= 2 for u in units):
        with pytest.raises(SentretError):
            krippendorff_alpha(rows, level)  # type: ignore[arg-type]
        return
    expected = brute_alpha([[float(v) for v in u] for u in units], level)
    got = krippendorff_alpha(rows, level)  # type: ignore[arg-type]
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4)), min_size=1, max_size=30))
def test_cohen_kappa_matches_its_definition(pairs: list[tuple[int, int]]) -> None:
    rows = [(i, "a", x) for i, (x, _) in enumerate(pairs)]
    rows += [(i, "b", y) for i, (_, y) in enumerate(pairs)]
    n = len(pairs)
    p_o = sum(x == y for x, y in pairs) / n
    p_e = sum(
        (sum(x == g for x, _ in pairs) / n) * (sum(y == g for _, y in pairs) / n)
        for g in range(1, 5)
    )
    got = cohen_kappa(rows, "a", "b")
    if p_e == 1:
        assert math.isnan(got)
    else:
        assert got == pytest.approx((p_o - p_e) / (1 - p_e))


# --------------------------------------------------------------------------- inputs


def test_inputs_long_frame_tuples_and_judgments_agree() -> None:
    rows = long(KRIPPENDORFF_UNITS)
    frame = pd.DataFrame(rows, columns=["item", "annotator", "grade"]).assign(extra=1)
    assert krippendorff_alpha(frame) == pytest.approx(krippendorff_alpha(rows))
    judgments = [
        Judgment("s", f"q:e{item}", "q", f"e{item}", 7, 0, "", "", who, "person", grade, None, "", "")
        for item, who, grade in rows
    ]
    assert krippendorff_alpha(ratings_from_judgments(judgments)) == pytest.approx(
        krippendorff_alpha(rows)
    )


def test_pairwise_and_binarize() -> None:
    rows = long(KRIPPENDORFF_UNITS)
    table = pairwise_cohen_kappa(rows)
    values = table.to_numpy()
    assert values[1, 3] == pytest.approx(cohen_kappa(rows, "B", "D"))  # B × D
    assert values[3, 1] == values[1, 3]
    assert np.isnan(np.diag(values)).all()
    relevant = binarize([(0, "a", 2), (0, "b", 3), (1, "a", 4)])
    assert relevant["grade"].tolist() == [0, 1, 1]


def test_bad_inputs_raise_clear_errors() -> None:
    with pytest.raises(SentretError, match="more than once"):
        ratings_frame([(0, "a", 1), (0, "a", 2)])
    with pytest.raises(SentretError, match="columns"):
        ratings_frame(pd.DataFrame({"item": [1], "grade": [2]}))
    with pytest.raises(SentretError, match="triple"):
        ratings_frame([(0, "a")])  # type: ignore[list-item]
    with pytest.raises(SentretError, match="no graded item in common"):
        cohen_kappa([(0, "a", 1), (1, "b", 1)], "a", "b")
    with pytest.raises(SentretError, match="no ratings by annotator"):
        cohen_kappa([(0, "a", 1), (0, "b", 1)], "a", "z")
    with pytest.raises(SentretError, match="graded by all"):
        fleiss_kappa([(0, "a", 1), (1, "b", 1)])
    with pytest.raises(SentretError, match="same number"):
        fleiss_kappa_counts([[2, 0], [1, 0]])
    with pytest.raises(SentretError, match="level"):
        krippendorff_alpha([(0, "a", 1), (0, "b", 1)], "circular")  # type: ignore[arg-type]
    with pytest.raises(SentretError, match="no ratings"):
        krippendorff_alpha([])
