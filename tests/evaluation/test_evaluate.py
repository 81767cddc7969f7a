"""Tests of sentret_core.evaluation: TREC I/O, tie-aware metrics, significance, tuning, coverage.

Sources of the expected numbers: hand computations written out below, brute-force
enumeration of every ordering of tied items (itertools.permutations), ir_measures with the
pytrec_eval (trec_eval) backend, and scipy.stats called directly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_measures import AP, RR, P, Rprec, nDCG
from scipy import stats

from sentret_core.errors import SentretError
from sentret_core.evaluation.coverage import coverage_curve, coverage_fraction
from sentret_core.evaluation.crossval import cross_validate, train_test
from sentret_core.evaluation.measures import Metric, binary_gain, evaluate, graded_gain, parse_metric, resolve_scale
from sentret_core.evaluation.metrics import (
    Mode,
    average_precision,
    dcg_at_k,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    reciprocal_rank,
)
from sentret_core.evaluation.significance import compare, paired_t_test, wilcoxon_test
from sentret_core.evaluation.trec_io import (
    Qrels,
    QrelsLine,
    Run,
    format_qrels,
    format_run,
    iter_qrels,
    parse_qrels,
    parse_run,
    read_qrels,
    read_run,
    split_topic_id,
    topic_id,
    write_qrels,
    write_run,
)
from sentret_core.evaluation.tuning import coordinate_ascent, grid_search
from tests.conftest import examples

L2 = math.log2

# --------------------------------------------------------------------------------------------
# Reference metrics on one fixed ordering (definitions, no ties), and brute force over ties
# --------------------------------------------------------------------------------------------


def ref_rr(rel: Sequence[bool]) -> float:
    return next((1 / i for i, r in enumerate(rel, 1) if r), 0.0)


def ref_p(rel: Sequence[bool], k: int) -> float:
    return sum(rel[:k]) / k


def ref_ap(rel: Sequence[bool], n_rel: int) -> float:
    hits, total = 0, 0.0
    for i, r in enumerate(rel, 1):
        if r:
            hits += 1
            total += hits / i
    return total / n_rel if n_rel else 0.0


def ref_rprec(rel: Sequence[bool], n_rel: int) -> float:
    return ref_p(rel, n_rel) if n_rel else 0.0


def ref_dcg(gains: Sequence[float], k: int | None) -> float:
    return sum(g / L2(i + 1) for i, g in enumerate(gains[:k], 1))


def ref_ndcg(gains: Sequence[float], k: int | None, ideal: Sequence[float]) -> float:
    best = ref_dcg(sorted(ideal, reverse=True), k)
    return ref_dcg(gains, k) / best if best > 0 else 0.0


def tie_orderings(scores: Sequence[float]) -> Iterator[list[int]]:
    """Every ordering of the items consistent with the scores (all permutations of ties)."""
    groups = [[i for i in range(len(scores)) if scores[i] == s] for s in sorted(set(scores), reverse=True)]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [i for group in combo for i in group]


items_strategy = st.lists(
    st.tuples(st.sampled_from([0.0, 1.0, 2.0]), st.integers(0, 4)), min_size=0, max_size=7
)


@settings(max_examples=examples(150), deadline=None)
@given(
    items=items_strategy,
    threshold=st.integers(1, 4),
    k=st.integers(1, 8),
    unretrieved=st.lists(st.integers(0, 4), max_size=3),
)
def test_tie_aware_equals_mean_over_all_tie_orderings(
    items: list[tuple[float, int]], threshold: int, k: int, unretrieved: list[int]
) -> None:
    scores = [s for s, _ in items]
    grades = [g for _, g in items]
    rel = [g >= threshold for g in grades]
    gains = [graded_gain(g) for g in grades]
    n_rel = sum(rel) + sum(g >= threshold for g in unretrieved)
    ideal = gains + [graded_gain(g) for g in unretrieved]

    reference = {
        "rr": lambda r, _g: ref_rr(r),
        "p@k": lambda r, _g: ref_p(r, k),
        "ap": lambda r, _g: ref_ap(r, n_rel),
        "rprec": lambda r, _g: ref_rprec(r, n_rel),
        "dcg@k": lambda _r, g: ref_dcg(g, k),
        "ndcg@k": lambda _r, g: ref_ndcg(g, k, ideal),
        "ndcg": lambda _r, g: ref_ndcg(g, None, ideal),
    }
    values: dict[str, list[float]] = {name: [] for name in reference}
    for order in tie_orderings(scores):
        r = [rel[i] for i in order]
        g = [gains[i] for i in order]
        for name, metric in reference.items():
            values[name].append(metric(r, g))

    def ours(mode: Mode) -> dict[str, float]:
        return {
            "rr": reciprocal_rank(scores, rel, mode=mode),
            "p@k": precision_at_k(scores, rel, k, mode=mode),
            "ap": average_precision(scores, rel, n_rel, mode=mode),
            "rprec": r_precision(scores, rel, n_rel, mode=mode),
            "dcg@k": dcg_at_k(scores, gains, k, mode=mode),
            "ndcg@k": ndcg_at_k(scores, gains, k, ideal, mode=mode),
            "ndcg": ndcg_at_k(scores, gains, None, ideal, mode=mode),
        }

    aware, low, high = ours("tie-aware"), ours("pessimistic"), ours("optimistic")
    for name, observed in values.items():
        assert aware[name] == pytest.approx(sum(observed) / len(observed), abs=1e-12), name
        # pessimistic / optimistic are exactly the worst / best tie ordering
        assert low[name] == pytest.approx(min(observed), abs=1e-12), name
        assert high[name] == pytest.approx(max(observed), abs=1e-12), name
        assert low[name] <= aware[name] + 1e-12 <= high[name] + 2e-12, name


@settings(max_examples=examples(40), deadline=None)
@given(
    topics=st.dictionaries(
        st.sampled_from(["q1", "q2", "q3"]),
        st.lists(st.tuples(st.sampled_from([0.0, 1.0]), st.integers(0, 4)), min_size=1, max_size=6),
        min_size=1,
    )
)
def test_evaluate_modes_are_ordered(topics: dict[str, list[tuple[float, int]]]) -> None:
    qrels = {t: {f"d{i}": g for i, (_, g) in enumerate(items)} for t, items in topics.items()}
    qrels["always"] = {"x": 4}
    run = {t: {f"d{i}": s for i, (s, _) in enumerate(items)} for t, items in topics.items()}
    frames = {m: evaluate(qrels, run, mode=m) for m in ("pessimistic", "tie-aware", "optimistic")}
    assert (frames["pessimistic"] <= frames["tie-aware"] + 1e-12).all().all()
    assert (frames["tie-aware"] <= frames["optimistic"] + 1e-12).all().all()


# --------------------------------------------------------------------------------------------
# Hand-computed examples
# --------------------------------------------------------------------------------------------


def test_hand_computed_binary_ranking_without_ties() -> None:
    # Ranking (by score) d1 N, d2 R, d3 unjudged, d4 R, d5 N; d9 relevant but not retrieved: R = 3.
    qrels = {
        "q1": {"d1": 0, "d2": 1, "d4": 1, "d5": 0, "d9": 1},
        "q2": {"d1": 0},  # no relevant item: skipped
        "q3": {"d7": 1},  # relevant items but absent from the run: 0 everywhere
    }
    run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d4": 0.6, "d5": 0.5}, "q9": {"x": 1.0}}
    frame = evaluate(qrels, run, ["map", "mrr", "p@1", "p@5", "r-prec", "ndcg@5"])
    assert list(frame.index) == ["q1", "q3"]
    assert frame.attrs["skipped_topics"] == ("q2",)
    q1 = frame.loc["q1"]
    assert q1["map"] == pytest.approx((1 / 2 + 2 / 4) / 3)  # P@2 and P@4 over R = 3
    assert q1["mrr"] == pytest.approx(1 / 2)
    assert q1["p@1"] == 0.0
    assert q1["p@5"] == pytest.approx(2 / 5)
    assert q1["r-prec"] == pytest.approx(1 / 3)  # P@3
    dcg = 1 / L2(3) + 1 / L2(5)  # binary gains 1 at ranks 2 and 4
    idcg = 1 + 1 / L2(3) + 1 / L2(4)  # three relevant judged items
    assert q1["ndcg@5"] == pytest.approx(dcg / idcg)
    assert (frame.loc["q3"] == 0.0).all()
    assert frame.mean()["mrr"] == pytest.approx((1 / 2 + 0) / 2)

    zero = evaluate(qrels, run, ["map"], empty_topics="zero")
    assert list(zero.index) == ["q1", "q2", "q3"] and zero.loc["q2", "map"] == 0.0


def test_hand_computed_graded_ndcg_with_0_1_3_7_gains() -> None:
    # Grades 1-4 -> gains 0, 1, 3, 7; relevant iff grade >= 3 (graded scale, detected).
    qrels = {"q": {"a": 2, "b": 4, "c": 1, "d": 3, "e": 1}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}}  # grades 2, 4, 1, 3 -> gains 1, 7, 0, 3
    frame = evaluate(qrels, run, ["ndcg@3", "ndcg@4", "map", "mrr", "p@1", "r-prec"])
    row = frame.loc["q"]
    idcg3 = 7 + 3 / L2(3) + 1 / L2(4)  # judged gains sorted: 7, 3, 1, 0, 0
    assert row["ndcg@3"] == pytest.approx((1 + 7 / L2(3) + 0 / L2(4)) / idcg3)
    assert row["ndcg@4"] == pytest.approx((1 + 7 / L2(3) + 3 / L2(5)) / (idcg3 + 0 / L2(5)))
    assert row["map"] == pytest.approx((1 / 2 + 2 / 4) / 2)  # relevant: b at 2, d at 4
    assert row["mrr"] == pytest.approx(1 / 2)
    assert row["p@1"] == 0.0
    assert row["r-prec"] == pytest.approx(1 / 2)  # P@2
    assert graded_gain(1) == 0 and graded_gain(4) == 7 and binary_gain(1) == 1


def test_hand_computed_ties() -> None:
    # One relevant among three tied at the top: E[RR] = (1 + 1/2 + 1/3) / 3.
    s3, r3 = [1.0, 1.0, 1.0], [False, True, False]
    assert reciprocal_rank(s3, r3) == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert reciprocal_rank(s3, r3, mode="pessimistic") == pytest.approx(1 / 3)
    assert reciprocal_rank(s3, r3, mode="optimistic") == 1.0
    assert average_precision(s3, r3) == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)  # R = 1
    assert precision_at_k(s3, r3, 1) == pytest.approx(1 / 3)

    # Two relevant among four tied, R = 2; the 6 distinct arrangements have AP
    # RRNN 1, RNRN 5/6, RNNR 3/4, NRRN 7/12, NRNR 1/2, NNRR 5/12.
    s4, r4 = [2.0] * 4, [True, False, True, False]
    assert average_precision(s4, r4) == pytest.approx((1 + 5 / 6 + 3 / 4 + 7 / 12 + 1 / 2 + 5 / 12) / 6)
    assert precision_at_k(s4, r4, 2) == pytest.approx(2 * (2 / 4) / 2)
    assert r_precision(s4, r4) == pytest.approx(1 / 2)

    # A relevant item alone on top, then one relevant and one not tied: R = 2,
    # AP = (1 + (P@2 + P@3)/2) / 2 = (1 + (1 + 2/3)/2) / 2.
    assert average_precision([3.0, 2.0, 2.0], [1, 0, 1]) == pytest.approx((1 + (1 + 2 / 3) / 2) / 2)

    # Grades 4 and 2 tied (gains 7 and 1): each rank holds the mean gain 4.
    dcg = 4 / L2(2) + 4 / L2(3)
    idcg = 7 + 1 / L2(3)
    assert ndcg_at_k([1.0, 1.0], [7.0, 1.0], 2) == pytest.approx(dcg / idcg)
    assert ndcg_at_k([1.0, 1.0], [7.0, 1.0], 2, mode="pessimistic") == pytest.approx(
        (1 + 7 / L2(3)) / idcg
    )


def test_evaluate_tie_modes_on_a_run() -> None:
    qrels = {"q": {"a": 0, "b": 1, "c": 0}}
    run = {"q": {"a": 0.5, "b": 0.5, "c": 0.5}}
    expect: dict[Mode, float] = {
        "tie-aware": (1 + 1 / 2 + 1 / 3) / 3,
        "pessimistic": 1 / 3,
        "optimistic": 1.0,
    }
    for mode, value in expect.items():
        assert evaluate(qrels, run, "mrr", mode=mode).loc["q", "mrr"] == pytest.approx(value)


def test_scales_thresholds_and_gains() -> None:
    run = {"q": {"a": 2.0, "b": 1.0}}
    binary = {"q": {"a": 0, "b": 1}}
    assert resolve_scale(binary) == "binary"
    assert evaluate(binary, run, "mrr").loc["q", "mrr"] == pytest.approx(1 / 2)
    graded = {"q": {"a": 2, "b": 3}}
    assert resolve_scale(graded) == "graded"
    row = evaluate(graded, run, ["mrr", "ndcg@2"]).loc["q"]
    assert row["mrr"] == pytest.approx(1 / 2)  # grade 2 is below the threshold 3
    assert row["ndcg@2"] == pytest.approx((1 + 3 / L2(3)) / (3 + 1 / L2(3)))  # gains 1, 3
    lenient = evaluate(graded, run, "mrr", relevance_threshold=2)
    assert lenient.loc["q", "mrr"] == 1.0
    custom = evaluate(graded, run, "ndcg@2", gains={2: 10.0, 3: 1.0})
    assert custom.loc["q", "ndcg@2"] == 1.0
    functional = evaluate(graded, run, "ndcg@2", gains=lambda g: g)  # raw grades
    assert functional.loc["q", "ndcg@2"] == pytest.approx((2 + 3 / L2(3)) / (3 + 2 / L2(3)))
    with pytest.raises(SentretError, match="no gain given for grade 3"):
        evaluate(graded, run, "ndcg@2", gains={2: 1.0})
    with pytest.raises(SentretError, match="relevance_threshold"):
        evaluate(graded, run, "mrr", relevance_threshold=0)
    with pytest.raises(SentretError, match="tie mode"):
        evaluate(graded, run, "mrr", mode="random")  # type: ignore[arg-type]
    with pytest.raises(SentretError, match="empty"):
        evaluate({}, run)


def test_metric_names() -> None:
    assert parse_metric("P@5") == Metric("p", 5, "p@5")
    assert parse_metric("NDCG@10").name == "ndcg@10"
    assert parse_metric("ap").name == "map"
    assert parse_metric("rr").name == "mrr"
    assert parse_metric("ndcg") == Metric("ndcg", None, "ndcg")
    for bad in ("foo", "p@0", "p@", "ndcg@x"):
        with pytest.raises(SentretError, match=r"allowed: map, mrr, r-prec, p@<k>"):
            parse_metric(bad)
    frame = evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["MAP", "map", "P@1"])
    assert list(frame.columns) == ["map", "p@1"]


def test_helper_input_errors() -> None:
    with pytest.raises(SentretError, match="booleans or 0/1"):
        reciprocal_rank([1.0, 2.0], [0, 3])
    with pytest.raises(SentretError, match="NaN"):
        precision_at_k([math.nan], [1], 1)
    with pytest.raises(SentretError, match="positive integer"):
        precision_at_k([1.0], [1], 0)
    with pytest.raises(SentretError, match="smaller than"):
        average_precision([1.0, 2.0], [1, 1], 1)
    assert average_precision([], [], 3) == 0.0
    with pytest.raises(SentretError, match="document 'a' is not a number"):
        evaluate({"q": {"a": 1}}, {"q": {"a": math.nan}})
    assert ndcg_at_k([1.0], [0.0], 5) == 0.0


# --------------------------------------------------------------------------------------------
# Against trec_eval (ir_measures, pytrec_eval backend), distinct scores only
# --------------------------------------------------------------------------------------------


def random_collection(seed: int, top_grade: int) -> tuple[Qrels, Run]:
    """Topics with distinct scores, unjudged retrieved items and unretrieved judged ones."""
    rng = np.random.default_rng([seed, top_grade])
    qrels: Qrels = {}
    run: Run = {}
    low = 0 if top_grade == 1 else 1
    for t in range(40):
        n_docs = int(rng.integers(3, 30))
        docs = [f"d{i}" for i in range(n_docs)]
        judged = [d for d in docs if rng.random() < 0.8]
        qrels[f"t{t}"] = {d: int(rng.integers(low, top_grade + 1)) for d in judged}
        retrieved = [d for d in docs if rng.random() < 0.85] or docs[:1]
        scores = rng.permutation(len(retrieved)) + rng.random()  # distinct
        run[f"t{t}"] = {d: float(s) for d, s in zip(retrieved, scores, strict=True)}
    return qrels, run


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scale", ["binary", "graded"])
def test_equals_trec_eval_without_ties(seed: int, scale: str) -> None:
    # Conditions: distinct scores (trec_eval's docid tie-breaking never applies), every topic
    # compared is in the run, and nDCG gets the same gains: trec_eval uses the raw grade as the
    # gain, so ir_measures maps grades 1-4 to 0, 1, 3, 7 (graded) and 0/1 labels to themselves.
    qrels, run = random_collection(seed, 1 if scale == "binary" else 4)
    t = 1 if scale == "binary" else 3
    gain_map = {0: 0, 1: 1} if scale == "binary" else {0: 0, 1: 0, 2: 1, 3: 3, 4: 7}
    measures = {
        "map": AP(rel=t),
        "mrr": RR(rel=t),
        "p@1": P(rel=t) @ 1,
        "p@10": P(rel=t) @ 10,
        "r-prec": Rprec(rel=t),
        "ndcg@10": nDCG(gains=gain_map) @ 10,
    }
    ours = evaluate(qrels, run, list(measures), scale=scale)  # type: ignore[arg-type]
    assert len(ours) >= 20
    topics = set(ours.index)
    theirs = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc(list(measures.values()), qrels, run)
        if m.query_id in topics
    }
    for topic in ours.index:
        for name, measure in measures.items():
            assert ours.loc[topic, name] == pytest.approx(theirs[(topic, str(measure))], abs=1e-9)
    kept_qrels = {q: qrels[q] for q in topics}
    kept_run = {q: run[q] for q in topics}
    aggregate = ir_measures.calc_aggregate(list(measures.values()), kept_qrels, kept_run)
    means = ours.mean()
    for name, measure in measures.items():
        assert means[name] == pytest.approx(aggregate[measure], abs=1e-9)


# --------------------------------------------------------------------------------------------
# Formats and topic ids
# --------------------------------------------------------------------------------------------


def test_qrels_and_run_round_trip(tmp_path: Path) -> None:
    tid = topic_id("q 1", "New York: City")
    qrels = {tid: {"s1": 4, "s2": 0, "s3": -1}, "plain": {"x": 1}}
    run = {tid: {"s1": 0.1 + 0.2, "s2": -math.inf, "s3": 1e-300, "s4": 0.1 + 0.2}, "plain": {}}
    write_qrels(qrels, tmp_path / "q.txt")
    write_run(run, tmp_path / "r.txt", tag="bm25")
    assert read_qrels(tmp_path / "q.txt") == qrels
    # a topic with no items has no line; s2, unscored (-inf), is left out
    assert read_run(tmp_path / "r.txt") == {tid: {"s1": 0.1 + 0.2, "s3": 1e-300, "s4": 0.1 + 0.2}}
    lines = (tmp_path / "r.txt").read_text().splitlines()
    assert lines[0] == f"{tid} Q0 s1 1 {0.1 + 0.2!r} bm25"  # ties written in docid order
    assert [line.split()[3] for line in lines] == ["1", "2", "3"]


def test_a_run_file_never_holds_inf_or_nan(tmp_path: Path) -> None:
    """Unscored items (-inf) are left out of a run file: trec_eval and ir_measures would count them as
    retrieved, and Java's parsers reject the text. NaN or +inf is a bug upstream: refused."""
    run = {"q1": {"a": -math.inf, "b": 2.5, "c": -math.inf, "d": -1e308}, "q2": {"x": -math.inf}}
    write_run(run, tmp_path / "r.txt", tag="lm")
    text = (tmp_path / "r.txt").read_text()
    assert "inf" not in text.lower() and "nan" not in text.lower()
    assert text.splitlines() == ["q1 Q0 b 1 2.5 lm", "q1 Q0 d 2 -1e+308 lm"]  # q2 has nothing scored: no line
    for bad in (math.nan, math.inf):
        with pytest.raises(SentretError, match=r"score of q1 a is .*a run file holds finite scores"):
            format_run({"q1": {"a": bad}})


@settings(max_examples=examples(60), deadline=None)
@given(
    st.dictionaries(
        st.text(min_size=1).map(lambda s: topic_id(s, "e")),
        st.dictionaries(
            st.from_regex(r"[A-Za-z0-9_.:-]+", fullmatch=True),
            st.floats(allow_nan=False).filter(lambda x: x != math.inf),
            max_size=5,
        ),
        max_size=4,
    )
)
def test_run_round_trip_any_scores(run: dict[str, dict[str, float]]) -> None:
    parsed = parse_run(format_run(run))
    scored = {t: {d: v for d, v in docs.items() if v > -math.inf} for t, docs in run.items()}
    assert parsed == {t: docs for t, docs in scored.items() if docs}


def test_malformed_files_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\n\nq1 0 d2\n")
    with pytest.raises(SentretError, match=r"qrels\.txt:3: a qrels line has 4 fields"):
        read_qrels(path)
    with pytest.raises(SentretError, match=r"<qrels>:2: grade 'high' is not an integer"):
        parse_qrels("q 0 a 1\nq 0 b high\n")
    with pytest.raises(SentretError, match=r"<qrels>:2: document 'a' is judged twice"):
        parse_qrels("q 0 a 1\nq 0 a 2\n")
    with pytest.raises(SentretError, match=r"<run>:1: score 'x' is not a number"):
        parse_run("q Q0 a 1 x tag\n")
    with pytest.raises(SentretError, match=r"<run>:1: a run line has 6 fields"):
        parse_run("q Q0 a 1 0.5\n")
    with pytest.raises(SentretError, match=r"<run>:1: score is NaN"):
        parse_run("q Q0 a 1 nan t\n")
    with pytest.raises(SentretError, match="cannot read qrels file"):
        read_qrels(tmp_path / "missing.txt")
    with pytest.raises(SentretError, match="without whitespace"):
        format_qrels({"q 1": {"a": 1}})
    with pytest.raises(SentretError, match="without whitespace"):
        format_run({"q": {"a": 1.0}}, tag="my run")


def test_iter_qrels_yields_numbered_lines_and_names_bad_ones() -> None:
    """The line-level reader parse_qrels is built on: blank lines skipped, numbers 1-based,
    the iteration column kept as written, duplicates left to the caller."""
    lines = ["q1 0 d1 3", "", "  ", "q1 Q7 d1 -1"]
    assert list(iter_qrels(lines, source="s")) == [
        QrelsLine(1, "q1", "0", "d1", 3),
        QrelsLine(4, "q1", "Q7", "d1", -1),
    ]
    with pytest.raises(SentretError, match=r"^judged\.txt:2: a qrels line has 4 fields"):
        list(iter_qrels(["q 0 d 1", "q 0 d"], source="judged.txt"))
    with pytest.raises(SentretError, match=r"^judged\.txt:1: grade '2\.5' is not an integer"):
        list(iter_qrels(["q 0 d 2.5"], source="judged.txt"))


@settings(max_examples=examples(200), deadline=None)
@given(st.text(), st.text())
def test_topic_id_round_trips_any_text(query: str, entity: str) -> None:
    tid = topic_id(query, entity)
    assert not any(char.isspace() for char in tid)
    assert tid.count(":") == 1
    assert split_topic_id(tid) == (query, entity)
    assert parse_qrels(format_qrels({tid: {"d": 1}})) == {tid: {"d": 1}}


def test_topic_id_examples_and_errors() -> None:
    assert topic_id("q1", "Paris") == "q1:Paris"
    assert topic_id("a b", "x:y%") == "a%20b:x%3Ay%25"
    assert split_topic_id("a%20b:x%3ay%25") == ("a b", "x:y%")
    for bad in ("nocolon", "a:b:c", "a%zz:b", "a%:b", "a:%FF"):
        with pytest.raises(SentretError, match="topic id"):
            split_topic_id(bad)


# --------------------------------------------------------------------------------------------
# Significance
# --------------------------------------------------------------------------------------------


def test_identical_values_give_p_one() -> None:
    x = [0.1, 0.5, 0.5, 0.9]
    assert paired_t_test(x, x) == 1.0
    assert wilcoxon_test(x, x) == 1.0
    frame = pd.DataFrame({"map": x}, index=["a", "b", "c", "d"])
    table = compare({"base": frame, "same": frame.copy()}, "base")
    assert (table[["p_ttest", "p_wilcoxon"]] == 1.0).all().all()
    assert (table["diff"] == 0.0).all() and not table["significant"].any()


def test_compare_matches_scipy() -> None:
    topics = ["t1", "t2", "t3", "t4", "t5", "t6"]
    base = pd.DataFrame(
        {"map": [0.4, 0.6, 0.7, 0.1, 0.85, 0.3], "mrr": [0.5, 1.0, 1.0, 0.2, 1.0, 0.25]},
        index=topics,
    )
    model = pd.DataFrame(
        {"map": [0.5, 0.6, 0.9, 0.3, 0.8, 0.45], "mrr": [1.0, 1.0, 1.0, 0.5, 1.0, 0.5]},
        index=topics,
    ).iloc[::-1]  # another row order: compare aligns by topic
    table = compare({"bm25": base, "bm25f": model}, "bm25").set_index(["model", "metric"])
    for metric in ("map", "mrr"):
        x, y = model.loc[topics, metric].to_numpy(), base[metric].to_numpy()
        row = table.loc[("bm25f", metric)]
        assert row["mean"] == pytest.approx(x.mean())
        assert row["diff"] == pytest.approx(x.mean() - y.mean())
        assert row["p_ttest"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
        assert row["p_wilcoxon"] == pytest.approx(stats.wilcoxon(x, y).pvalue)
    assert table.loc[("bm25", "map"), "p_ttest"] == 1.0
    with pytest.raises(SentretError, match="not among the models"):
        compare({"a": base}, "b")
    with pytest.raises(SentretError, match="other topics"):
        compare({"a": base, "b": base.iloc[:3]}, "a")


def test_single_topic_does_not_raise() -> None:
    assert math.isnan(paired_t_test([1.0], [0.0]))
    assert 0.0 <= wilcoxon_test([1.0], [0.0]) <= 1.0


# --------------------------------------------------------------------------------------------
# Tuning and cross-validation
# --------------------------------------------------------------------------------------------

SPACE = {"a": list(range(-5, 8)), "b": [-4, -3, -2, -1, 0, 1, 2, 3, 4]}


def concave(params: dict[str, int]) -> float:
    """Concave, maximum 0 at a = 3, b = -1."""
    return -((params["a"] - 3) ** 2) - 2 * (params["b"] + 1) ** 2


def test_grid_search_finds_the_optimum() -> None:
    result = grid_search(concave, SPACE)
    assert result.params == {"a": 3, "b": -1} and result.score == 0.0
    assert len(result.evaluations) == 13 * 9


def test_coordinate_ascent_finds_the_optimum_and_evaluates_each_point_once() -> None:
    result = coordinate_ascent(concave, SPACE, {"a": -5, "b": 4})
    assert result.params == {"a": 3, "b": -1} and result.score == 0.0
    seen = [tuple(sorted(p.items())) for p, _ in result.evaluations]
    assert len(seen) == len(set(seen)) < 13 * 9


def test_tuning_ties_are_deterministic() -> None:
    flat = grid_search(lambda p: 1.0, SPACE)
    assert flat.params == {"a": -5, "b": -4}  # first grid point
    stay = coordinate_ascent(lambda p: 1.0, SPACE, {"a": 0, "b": 2})
    assert stay.params == {"a": 0, "b": 2}  # ties keep the current value
    # two equal maxima on a: the earlier grid value wins
    twin = coordinate_ascent(lambda p: -abs(abs(p["a"]) - 2), {"a": [-3, -2, 0, 2, 3]})
    assert twin.params == {"a": -2}
    with pytest.raises(SentretError, match="not in"):
        coordinate_ascent(concave, SPACE, {"a": 99})
    with pytest.raises(SentretError, match="no values"):
        grid_search(concave, {"a": []})


def test_cross_validation_never_shows_a_test_topic_to_the_tuner() -> None:
    topics = [f"t{i:02d}" for i in range(22)]
    best_of = {t: i % 3 for i, t in enumerate(topics)}  # the parameter each topic prefers
    tuner_saw: list[list[str]] = []

    def value(topic: str, params: dict[str, int]) -> float:
        return 1.0 if params["x"] == best_of[topic] else 0.0

    def tune(train: list[str]) -> dict[str, int]:
        tuner_saw.append(list(train))
        objective = lambda p: float(np.mean([value(t, p) for t in train]))  # noqa: E731
        return grid_search(objective, {"x": [0, 1, 2]}).params

    def run_test(test: list[str], params: dict[str, int]) -> dict[str, float]:
        return {t: value(t, params) for t in test}

    result = cross_validate(topics, 4, 7, tune, run_test)
    assert len(result.folds) == 4 and len(tuner_saw) == 4
    tested: list[str] = []
    for fold, saw in zip(result.folds, tuner_saw, strict=True):
        assert set(saw) == set(fold.train)
        assert not set(saw) & set(fold.test)
        assert set(fold.train) | set(fold.test) == set(topics)
        assert fold.params["x"] in (0, 1, 2)
        tested += fold.test
    assert sorted(tested) == topics  # every topic tested exactly once
    assert sorted(result.per_topic.index) == topics
    assert list(result.per_topic.columns) == ["value"]
    again = cross_validate(reversed(topics), 4, 7, tune, run_test)
    assert [f.test for f in again.folds] == [f.test for f in result.folds]  # seeded, order-free
    other = cross_validate(topics, 4, 8, tune, run_test)
    assert [f.test for f in other.folds] != [f.test for f in result.folds]

    def cheat(test: list[str], params: dict[str, int]) -> dict[str, float]:
        return {topics[0]: 1.0, topics[1]: 1.0, topics[2]: 1.0, **run_test(test, params)}

    with pytest.raises(SentretError, match="non-test topics"):
        cross_validate(topics, 2, 0, tune, cheat)
    with pytest.raises(SentretError, match="k must be"):
        cross_validate(topics, 1, 0, tune, run_test)


def test_train_test_tunes_on_train_only() -> None:
    saw: list[str] = []

    def tune(train: list[str]) -> dict[str, int]:
        saw.extend(train)
        return {"x": len(train)}

    def run_test(test: list[str], params: dict[str, int]) -> pd.DataFrame:
        return pd.DataFrame({"map": [float(params["x"])] * len(test)}, index=test)

    result = train_test(["a", "b", "c"], ["d", "e"], tune, run_test)
    assert saw == ["a", "b", "c"]
    assert result.folds[0].params == {"x": 3}
    assert list(result.per_topic.index) == ["d", "e"]
    assert (result.per_topic["map"] == 3.0).all()
    with pytest.raises(SentretError, match="in both"):
        train_test(["a", "b"], ["b"], tune, run_test)


# --------------------------------------------------------------------------------------------
# Coverage curve
# --------------------------------------------------------------------------------------------


def test_coverage_fraction() -> None:
    first = {"a": 1, "b": 3, "c": None, "d": 10}
    # k=1: a; k=2: a; k=5: a, b; k=10: a, b, d; c is never covered.
    assert coverage_fraction(first, [1, 2, 5, 10]).tolist() == [0.25, 0.25, 0.5, 0.75]
    curve = coverage_curve({"S": first, "S_hat": {"a": 1, "b": 1, "c": 2, "d": 2}}, [1, 2])
    assert curve["S"].tolist() == [0.25, 0.25] and curve["S_hat"].tolist() == [0.5, 1.0]
    assert curve.index.name == "k"
    with pytest.raises(SentretError, match="1-based"):
        coverage_fraction({"a": 0}, [1])
    with pytest.raises(SentretError, match="at least one topic"):
        coverage_fraction({}, [1])
