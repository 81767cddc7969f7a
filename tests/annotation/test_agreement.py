"""Agreement coefficients against hand computations, published examples and brute force."""

from __future__ import annotations

import itertools
import json
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
from tests.conftest import examples

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


@settings(max_examples=examples(80), deadline=None)
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


@settings(max_examples=examples(80), deadline=None)
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


# --------------------------------------------------------------------------- bootstrap intervals


def _kappa_by_hand(pairs: Sequence[tuple[int, int]]) -> float:
    """Cohen's κ = (p_o − p_e) / (1 − p_e) from its definition; nan when p_e = 1."""
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    chance = sum(
        (sum(a == c for a, _ in pairs) / n) * (sum(b == c for _, b in pairs) / n) for c in {1, 2, 3, 4}
    )
    return math.nan if chance == 1.0 else (observed - chance) / (1.0 - chance)


def _exact_percentiles(values: list[float]) -> tuple[float, float]:
    finite = [v for v in values if not math.isnan(v)]
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def test_bootstrap_of_two_items_by_hand() -> None:
    from sentret_core.annotation import agreement_bootstrap as boot

    # items (1, 1) and (2, 2): of the 2² = 4 resamples, {1st, 1st} and {2nd, 2nd} show one grade
    # only (κ undefined) and the two mixed ones agree perfectly (κ = 1): the interval is [1, 1].
    codes = np.array([[0, 0], [1, 1]])
    weights = np.concatenate(list(boot.resample_weights(2)))
    assert weights.tolist() == [[2, 0], [1, 1], [1, 1], [0, 2]]
    stat = boot.cohen_statistic(2, 1.0 - np.eye(2))
    assert boot.interval(boot.cohen_features(codes, 2), stat) == (1.0, 1.0)


def test_cohen_bootstrap_is_the_exact_bootstrap_by_brute_force() -> None:
    from sentret_core.annotation import agreement_bootstrap as boot

    pairs = [(1, 1), (2, 2), (3, 3), (3, 2)]  # κ = (3/4 − 5/16) / (1 − 5/16) = 7/11
    assert _kappa_by_hand(pairs) == pytest.approx(7 / 11)
    every = [_kappa_by_hand([pairs[i] for i in draw]) for draw in itertools.product(range(4), repeat=4)]
    assert len(every) == 256 and sum(math.isnan(v) for v in every) == 3  # all (1,1), all (2,2), all (3,3)
    codes = np.array([[a - 1, b - 1] for a, b in pairs])
    found = boot.interval(boot.cohen_features(codes, 3), boot.cohen_statistic(3, 1.0 - np.eye(3)))
    assert found == pytest.approx(_exact_percentiles(every), abs=1e-12)
    sums = np.ones(4) @ boot.cohen_features(codes, 3)
    assert boot.cohen_statistic(3, 1.0 - np.eye(3))(sums[None, :])[0] == pytest.approx(7 / 11)


def test_fleiss_and_alpha_bootstraps_are_exact_by_brute_force() -> None:
    from sentret_core.annotation import agreement_bootstrap as boot

    units = [(1, 1, 2), (2, 2, 2), (3, 1, 3), (4, 4, 3)]  # three raters, four items
    counts = np.array([[row.count(g) for g in (1, 2, 3, 4)] for row in units])
    fleiss_all, alpha_all = [], []
    for draw in itertools.product(range(4), repeat=4):
        fleiss_all.append(fleiss_kappa_counts(counts[list(draw)]))
        resampled = [units[i] for i in draw]
        try:
            alpha_all.append(krippendorff_alpha(long(resampled, "ABC"), "ordinal"))
        except SentretError:
            alpha_all.append(math.nan)
    fleiss = boot.interval(boot.fleiss_features(counts), boot.fleiss_statistic(3))
    assert fleiss == pytest.approx(_exact_percentiles(fleiss_all), abs=1e-12)
    alpha = boot.interval(boot.alpha_features(counts), boot.alpha_ordinal_statistic(4))
    assert alpha == pytest.approx(_exact_percentiles(alpha_all), abs=1e-12)


def test_the_sums_give_the_point_estimates_of_the_published_examples() -> None:
    from sentret_core.annotation import agreement_bootstrap as boot

    table = np.array(FLEISS_TABLE)
    fleiss = boot.fleiss_statistic(14)(boot.fleiss_features(table).sum(axis=0)[None, :])[0]
    assert round(float(fleiss), 3) == 0.210
    per_unit = np.array([[sum(v == c for v in unit if v is not None) for c in range(1, 6)]
                         for unit in KRIPPENDORFF_UNITS])
    per_unit = per_unit[per_unit.sum(axis=1) >= 2]
    alpha = boot.alpha_ordinal_statistic(5)(boot.alpha_features(per_unit).sum(axis=0)[None, :])[0]
    assert round(float(alpha), 3) == 0.815


def test_monte_carlo_bootstrap_agrees_with_scipy() -> None:
    from scipy.stats import bootstrap

    from sentret_core.annotation import agreement_bootstrap as boot

    rng = np.random.default_rng(7)
    a = rng.integers(1, 5, size=40)
    b = np.where(rng.random(40) < 0.6, a, rng.integers(1, 5, size=40))  # 60 % copied: κ about 0.5
    codes = np.column_stack([a - 1, b - 1])
    ours = boot.interval(boot.cohen_features(codes, 4), boot.cohen_statistic(4, 1.0 - np.eye(4)), resamples=20_000)
    reference = bootstrap(
        (a, b), lambda x, y: _kappa_by_hand(list(zip(x.tolist(), y.tolist()))), paired=True, vectorized=False,
        n_resamples=20_000, method="percentile", random_state=np.random.default_rng(1),
    ).confidence_interval
    assert ours is not None
    assert ours[0] == pytest.approx(reference.low, abs=0.02) and ours[1] == pytest.approx(reference.high, abs=0.02)
    again = boot.interval(boot.cohen_features(codes, 4), boot.cohen_statistic(4, 1.0 - np.eye(4)), resamples=20_000)
    assert again == ours  # the seed is fixed: the same interval every time


def test_a_kappa_from_one_shared_item_is_not_given() -> None:
    from sentret_core.annotation.agreement_summary import agreement_summary

    # four annotators split 2-2 on one shared item give Fleiss' κ = −1/3:
    # P̄ = (2·1 + 2·1) / (4·3) = 1/3, P̄_e = ½² + ½² = ½, κ = (1/3 − ½) / (1 − ½) = −1/3.
    ratings = [(0, "A", 1), (0, "B", 1), (0, "C", 2), (0, "D", 2)]
    assert fleiss_kappa(ratings) == pytest.approx(-1 / 3)
    judgments = [Judgment("s", "q:e", "q", "e", 0, 0, "", "", who, "person", g, None, "", "") for _, who, g in ratings]
    summary = agreement_summary(judgments)
    assert summary.fleiss.value is None and summary.fleiss.n == 1
    assert summary.fleiss.text() == "— (too few shared items (n = 1 < 10): items graded by all 4 annotators)"
    assert all(k.value is None and k.n == 1 for _, _, k in summary.pairs)


def test_no_variance_in_the_grades_gives_reasons_not_nan() -> None:
    from sentret_core.annotation.agreement_summary import NO_VARIATION, Coefficient, agreement_summary

    # no chance disagreement: A and B give grade 3 to all 12 shared items, C gives 3 to one of them. Chance
    # disagreement is zero (p_A(3) = p_B(3) = 1, so Σ_{c≠k} p_A(c)·p_B(k) = 0): κ and α are 0/0,
    # undefined. Today the pairwise matrix of the summary held NaN (and the A×C cell a κ from one
    # item); every cell is now the pair's Coefficient, its value None with the reason.
    judgments = [
        Judgment("s", "q:e", "q", "e", item, item, "", "", who, "person", 3, None, "", "")
        for who in ("A", "B") for item in range(12)
    ]
    judgments.append(Judgment("s", "q:e", "q", "e", 0, 0, "", "", "C", "person", 3, None, "", ""))
    summary = agreement_summary(judgments, resamples=50)
    undefined = Coefficient(None, 12, note=NO_VARIATION)
    pairs = {(a, b): kappa for a, b, kappa in summary.pairs}
    assert pairs[("A", "B")] == undefined
    assert pairs[("A", "C")] == Coefficient(None, 1, note="too few shared items (n = 1 < 10)")
    assert summary.alpha == undefined and summary.alpha.text() == f"— ({NO_VARIATION})"  # 12 items ≥ 2 grades
    assert summary.cohen.at["A", "B"] == summary.cohen.at["B", "A"] == undefined
    assert summary.cohen.at["A", "C"] == pairs[("A", "C")]
    assert summary.cohen.at["A", "A"] == Coefficient(None, 0, note="the same annotator")
    cells = [summary.cohen.at[a, b] for a in summary.annotators for b in summary.annotators]
    assert all(isinstance(cell, Coefficient) and cell.value is None and cell.note for cell in cells)
    flat = json.dumps(summary.to_dict(), allow_nan=False)  # would raise on a NaN anywhere
    assert NO_VARIATION in flat


def test_raw_percent_agreement_with_n_below_the_kappa_threshold() -> None:
    from sentret_core.annotation.agreement_summary import PercentAgreement, agreement_summary

    # A and B share 4 items, graded A: 1, 2, 3, 4 and B: 1, 2, 4, 4 → the same grade on items 0, 1, 3:
    # 3 of 4 = 75.0%. A and C share items 0 and 1 (A: 1, 2; C: 2, 2) → 1 of 2 = 50.0%. B and C
    # share the same two items (B: 1, 2; C: 2, 2) → 50.0%. No pair reaches 10 shared items, so no κ.
    grades = {"A": [1, 2, 3, 4], "B": [1, 2, 4, 4], "C": [2, 2]}
    judgments = [
        Judgment("s", "q:e", "q", "e", item, item, "", "", who, "person", g, None, "", "")
        for who, given_grades in grades.items() for item, g in enumerate(given_grades)
    ]
    summary = agreement_summary(judgments, resamples=20)
    assert summary.percent == (
        ("A", "B", PercentAgreement(3, 4)), ("A", "C", PercentAgreement(1, 2)), ("B", "C", PercentAgreement(1, 2))
    )
    assert summary.percent_of("B", "A").text() == "75.0% (3 of 4 shared items)"
    assert summary.percent_of("A", "C").value == 0.5
    assert all(k.value is None for _, _, k in summary.pairs)  # κ withheld, the percent still given
    assert summary.to_dict()["percent_agreement"][0] == {"a": "A", "b": "B", "value": 0.75, "agreed": 3, "n": 4}
    assert PercentAgreement(0, 0).text() == "— (no shared items)"  # a pair that shares nothing
    # beside a κ that is undefined (no variation): 12 items all graded 3 by both → 100%, κ None
    same = [Judgment("s", "q:e", "q", "e", i, i, "", "", who, "person", 3, None, "", "")
            for who in ("A", "B") for i in range(12)]
    flat = agreement_summary(same, resamples=20)
    assert flat.pairs[0][2].value is None and flat.percent_of("A", "B") == PercentAgreement(12, 12)
    assert flat.percent_of("A", "B").text() == "100.0% (12 of 12 shared items)"
