"""`sentret eval-run`: any run against any qrels, tie-aware and as trec_eval scores the file.

The "as exported" numbers are checked against ir_measures (pytrec_eval, i.e. trec_eval's own code) on
runs full of ties, where trec_eval's order (score, then document id descending) decides the result."""

from __future__ import annotations

import json
import random
from pathlib import Path

import ir_measures
import pytest
from ir_measures import AP, RR, P, Rprec, nDCG

from sentret_core.cli import main as cli
from sentret_core.evaluation.as_exported import as_exported, tie_aware, trec_eval_order
from sentret_core.evaluation.trec_io import format_qrels, format_run

METRICS = ["map", "mrr", "p@1", "p@10", "r-prec", "ndcg@10"]
MEASURES = [AP, RR, P @ 1, P @ 10, Rprec, nDCG @ 10]


def tied(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded qrels (0-3) and a run whose scores take only three values: ties everywhere."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for t in range(12):
        docs = [f"d{t}-{i}" for i in range(15)]
        qrels[f"q{t}"] = {d: rng.choice([0, 0, 0, 1, 2, 3]) for d in docs[:10]}
        if not any(qrels[f"q{t}"].values()):
            qrels[f"q{t}"][docs[0]] = 1
        run[f"q{t}"] = {d: float(rng.choice([0.5, 1.0, 2.0])) for d in rng.sample(docs, 12)}
    return qrels, run


@pytest.mark.parametrize("seed", range(5))
def test_as_exported_equals_trec_eval_through_ir_measures(seed: int) -> None:
    qrels, run = tied(seed)
    mine = as_exported(qrels, run, METRICS).mean()
    theirs = ir_measures.calc_aggregate(MEASURES, qrels, run)
    for metric, measure in zip(METRICS, MEASURES):
        assert mine[metric] == pytest.approx(theirs[measure], abs=1e-9), metric


def test_trec_eval_breaks_ties_by_document_id_descending() -> None:
    ordered = trec_eval_order({"q": {"a": 1.0, "c": 1.0, "b": 1.0, "z": 0.5, "y": 2.0}})
    assert sorted(ordered["q"], key=lambda d: -ordered["q"][d]) == ["y", "c", "b", "a", "z"]


def test_ties_make_the_two_numbers_differ_and_without_ties_they_agree() -> None:
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}  # trec_eval puts b (descending id) first: AP 1/2; tie-aware (1 + 1/2)/2
    assert as_exported(qrels, run, ["map"])["map"]["q"] == pytest.approx(0.5)
    assert tie_aware(qrels, run, ["map"])["map"]["q"] == pytest.approx(0.75)
    distinct = {"q": {"a": 2.0, "b": 1.0}}
    assert as_exported(qrels, distinct, ["map"])["map"]["q"] == tie_aware(qrels, distinct, ["map"])["map"]["q"] == 1.0


def test_sentret_eval_run_prints_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = tied(0)
    (tmp_path / "q.txt").write_text(format_qrels(qrels), "utf-8")
    (tmp_path / "r.trec").write_text(format_run(run), "utf-8")
    argv = ["eval-run", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.trec")]
    assert cli.main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["topics"] == 12 and report["level"] == 1
    theirs = ir_measures.calc_aggregate([AP], qrels, run)[AP]
    assert report["means"]["as exported (trec_eval -c)"]["map"] == pytest.approx(theirs, abs=1e-9)
    assert report["matched"]["run documents judged"] > 0
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "as exported (trec_eval -c)" in out and "averaged as `trec_eval -c -l 1` averages" in out
    assert cli.main([*argv, "--level", "0"]) == 2


def test_a_run_file_keeps_tied_items_in_the_runs_own_document_order() -> None:
    text = format_run({"q": {"s9": 1.0, "s10": 1.0, "s2": 3.0, "s1": 1.0}}, tag="t")
    assert [line.split()[2] for line in text.splitlines()] == ["s2", "s9", "s10", "s1"]
    assert [line.split()[3] for line in text.splitlines()] == ["1", "2", "3", "4"]


def test_a_run_that_shares_no_document_with_the_qrels_is_said_aloud(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Internal ids against docnos: MAP 0 for every topic, which must not pass in silence."""
    (tmp_path / "q.txt").write_text(format_qrels({"q": {"D1-0": 1, "D1-1": 0}}), "utf-8")
    (tmp_path / "r.trec").write_text(format_run({"q": {"17649": 2.0, "17650": 1.0}}), "utf-8")
    argv = ["eval-run", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.trec"), "--json"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert "no document of" in captured.err and "<document id>-<position>" in captured.err
    assert json.loads(captured.out)["matched"] == {"run topics": 1, "in the qrels": 1, "run documents": 2,
                                                   "run documents judged": 0}


def test_a_grade_past_any_integer_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It ended in `internal error` (OverflowError) before."""
    (tmp_path / "q.txt").write_text("q 0 a 1000000000000000000000000000000\n", "utf-8")
    (tmp_path / "r.trec").write_text(format_run({"q": {"a": 1.0}}), "utf-8")
    assert cli.main(["eval-run", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.trec")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sentret: error:") and "q.txt:1: grade" in err and "out of range" in err
