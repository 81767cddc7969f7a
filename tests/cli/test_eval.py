"""``sentret eval`` end to end on small files written here, its errors, and tuning by folds."""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from sentret_core.cli import eval as cli_eval
from sentret_core.cli import main as cli
from sentret_core.evaluation.benchmarks import benchmark_names
from sentret_core.evaluation.benchmarks.wikiqa import load_wikiqa
from sentret_core.evaluation.measures import DEFAULT_METRICS, evaluate
from sentret_core.evaluation.runs import Evaluator
from sentret_core.evaluation.trec_io import read_qrels, read_run
from tests.evaluation.test_benchmarks import WIKIQA_ROWS, wikiqa_rows, write_squad, write_trecqa, write_wikiqa

Main = Callable[[Sequence[str]], int]

PICASSO = ("D3", "Pablo Picasso", ["Pablo Picasso was born in Malaga.", "He moved to Paris in 1904.",
           "Picasso died in France in 1973."])
# Three more questions on a third document, so cross-validation has topics to split.
EXTRA_ROWS = [
    *wikiqa_rows("Q4", "Where was Picasso born?", PICASSO, [1, 0, 0]),
    *wikiqa_rows("Q5", "When did Picasso move to Paris?", PICASSO, [0, 1, 0]),
    *wikiqa_rows("Q6", "Where did Picasso die?", PICASSO, [0, 0, 1]),
]


def _commands() -> set[str]:
    parser = cli._parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


@pytest.fixture
def sentret(monkeypatch: pytest.MonkeyPatch) -> Main:
    """``cli.main`` with the eval command registered (added to ``cli.COMMANDS`` here if it is not there yet)."""
    if "eval" not in _commands():
        monkeypatch.setattr(cli, "COMMANDS", [*cli.COMMANDS, cli_eval.register])
    return cli.main


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("eval-files")
    return {
        "wikiqa": write_wikiqa(root / "tiny.tsv"),
        "wikiqa6": write_wikiqa(root / "six.tsv", [*WIKIQA_ROWS, *EXTRA_ROWS]),
        "squad": write_squad(root / "tiny.json"),
        "trecqa": write_trecqa(root / "tiny.xml"),
        "cache": root / "cache",
    }


def _json(sentret: Main, capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert sentret(argv) == 0, capsys.readouterr().err
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_eval_wikiqa_json_runs_and_qrels(
    sentret: Main, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", "wikiqa", "--data", str(files["wikiqa"]), "--models", "tfisf.v1,bm25.v1",
            "--param", "bm25.v1.k1=0.9", "--cache", str(files["cache"]), "--json",
            "--run-out", str(tmp_path / "runs.trec"), "--qrels-out", str(tmp_path / "qrels.txt")]
    result = _json(sentret, capsys, argv)
    assert result["benchmark"] == "wikiqa" and result["data"] == str(files["wikiqa"])
    assert result["topics"] == 2 and result["baseline"] == "doc-order"
    assert list(result["models"]) == ["doc-order", "random", "tfisf.v1", "bm25.v1"]
    assert result["metrics"] == ["map", "mrr", "p@1", "p@10", "r-prec", "ndcg@10"]
    bm25 = result["models"]["bm25.v1"]
    assert bm25["params"]["k1"] == 0.9 and bm25["params"]["b"] == 0.75
    assert set(bm25["mean"]) == {*result["metrics"], "map-pessimistic", "map-optimistic"}
    assert set(bm25["significance"]["map"]) == {"diff", "p_wilcoxon", "p_ttest", "p_wilcoxon_holm", "p_ttest_holm",
                                                "significant"}
    assert result["models"]["doc-order"]["significance"] == {}
    assert result["models"]["random"]["mean"]["map"] == pytest.approx((11 / 18 + 29 / 36) / 2)
    # the written files reproduce the reported means
    qrels = read_qrels(tmp_path / "qrels.txt")
    assert qrels == {"Q1": {"D1-0": 0, "D1-1": 1, "D1-2": 0}, "Q3": {"D2-0": 1, "D2-1": 0, "D2-2": 1}}
    for model, entry in result["models"].items():
        run = read_run(tmp_path / f"runs.{model}.trec")
        means = evaluate(qrels, run, result["metrics"]).mean()
        if model == "random":  # one seeded permutation: its numbers are the file's, not the expectation's
            assert means.to_dict() == pytest.approx({m: entry["as_exported"][m] for m in result["metrics"]})
            assert all(len(set(ranked.values())) == len(ranked) for ranked in run.values())  # no ties
            first = (tmp_path / "runs.random.trec").read_text().split("\n", 1)[0].split()
            assert first[5] == "random.seed0.ties-docorder"
            continue
        assert means.to_dict() == pytest.approx({m: entry["mean"][m] for m in result["metrics"]})


def test_eval_text_table(sentret: Main, files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "wikiqa", "--data", str(files["wikiqa6"]), "--models", "bm25f.v1",
            "--metrics", "mrr,ndcg,map,p@1", "--cache", str(files["cache"])]
    assert sentret(argv) == 0
    out = capsys.readouterr().out
    assert "5 topics" in out and "* = Wilcoxon signed-rank p < 0.05 against doc-order" in out
    header = next(line for line in out.splitlines() if line.startswith("model"))
    assert header.split() == ["model", "MRR", "NDCG", "MAP", "P@1", "MAP-pess", "MAP-opt"]
    assert any(line.startswith("random") for line in out.splitlines())
    assert "p-values against doc-order (Wilcoxon / paired t-test):" in out
    assert "bm25f.v1: k1=0.26, b=0.15" in out


def test_eval_squad_and_trecqa(
    sentret: Main, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cache = str(files["cache"])
    squad = _json(sentret, capsys, ["eval", "squad-support", "--data", str(files["squad"]), "--models",
                                    "bm25.v1,sum-kld,position", "--cache", cache, "--json",
                                    "--min-candidates", "1", "--ranker", "bm25.v1"])
    assert squad["topics"] == 6 and squad["questions"] == 7
    assert list(squad["models"]) == ["doc-order", "random", "bm25.v1", "sum-kld", "position"]
    assert squad["settings"]["ranker"] == "bm25.v1" and squad["settings"]["k"] == 1000
    trec = _json(sentret, capsys, ["eval", "trecqa", "--data", str(files["trecqa"]), "--models", "tfisf.v1",
                                   "--cache", cache, "--json"])
    assert trec["topics"] == 2 and trec["baseline"] == "random"
    assert trec["models"]["doc-order"]["mean"] == trec["models"]["random"]["mean"]


def _error(sentret: Main, capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert sentret(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sentret: error: "), captured.err
    assert "Traceback" not in captured.err and captured.out == ""
    return lines[0]


def test_eval_bad_input_exits_2_with_one_message(
    sentret: Main, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    missing = _error(sentret, capsys, ["eval", "wikiqa", "--data", str(tmp_path / "nope.tsv"),
                                       "--cache", str(cache)])
    assert "nope.tsv: no such file" in missing
    bad = tmp_path / "bad.tsv"
    bad.write_text(files["wikiqa"].read_text() + "Q9\tWhy?\tD9\tT\tD9-0\tonly six fields\n")
    message = _error(sentret, capsys, ["eval", "wikiqa", "--data", str(bad), "--cache", str(cache)])
    assert f"{bad}:11: expected 7 tab-separated fields" in message
    unknown = _error(sentret, capsys, ["eval", "wikiqa", "--data", str(files["wikiqa"]), "--models",
                                       "bm25.v1,nosuch.v1", "--cache", str(cache)])
    assert "unknown model 'nosuch.v1'" in unknown
    assert not cache.exists()  # names are checked before any index is built
    argv = [
        "eval",
        "wikiqa",
        "--data",
        str(files["wikiqa"]),
        "--param",
        "bm25.v1.k9=1",
        "--models",
        "bm25.v1",
    ]
    bad_param = _error(sentret, capsys, [*argv, "--cache", str(cache)])
    assert "bm25.v1 has no parameter 'k9'" in bad_param
    wrong = _error(sentret, capsys, ["eval", "trecqa", "--data", str(files["wikiqa"]), "--cache", str(cache)])
    assert "expected the TrecQA header" in wrong
    entity = _error(
        sentret, capsys, ["eval", "wikiqa", "--data", str(files["wikiqa"]), "--models", "sum-kld"]
    )
    assert "squad-support only" in entity
    with pytest.raises(SystemExit) as exit_info:  # argparse: --folds and --tune-on exclude each other
        sentret(["eval", "wikiqa", "--data", "x.tsv", "--folds", "2", "--tune-on", "y.tsv"])
    assert exit_info.value.code == 2


def test_eval_folds_tune_on_training_topics_only(
    sentret: Main, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", "wikiqa", "--data", str(files["wikiqa6"]), "--models", "bm25.v1,tfisf.v1",
            "--folds", "2", "--seed", "1", "--tune-metric", "mrr", "--max-rounds", "2",
            "--cache", str(files["cache"]), "--json"]
    result = _json(sentret, capsys, argv)
    assert result["tuning"] == {"method": "cross-validation", "folds": 2, "seed": 1, "metric": "mrr"}
    bm25 = result["models"]["bm25.v1"]
    assert bm25["params"] is None and len(bm25["folds"]) == 2
    assert "folds" not in result["models"]["tfisf.v1"]  # nothing to tune
    bench = load_wikiqa(files["wikiqa6"], cache=files["cache"])
    topics = {t.id for t in bench.topics}
    tested: list[str] = []
    evaluator = Evaluator(bench)
    for fold in bm25["folds"]:
        train, test = set(fold["train_topics"]), set(fold["test_topics"])
        assert train and test and not train & test and train | test == topics
        tested += fold["test_topics"]
        # the fold's parameters are exactly what tuning on its training topics alone finds
        found = evaluator.tune("bm25.v1", fold["train_topics"], "mrr", max_rounds=2)
        assert fold["params"] == found.params and fold["train_score"] == pytest.approx(found.score)
    assert sorted(tested) == sorted(topics)


def test_eval_tune_on_another_file(
    sentret: Main, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", "wikiqa", "--data", str(files["wikiqa"]), "--tune-on", str(files["wikiqa6"]),
            "--models", "lm-dir.v1", "--max-rounds", "1", "--cache", str(files["cache"]),
            "--json"]
    result = _json(sentret, capsys, argv)
    assert result["tuning"]["method"] == "train-test" and result["tuning"]["train_topics"] == 5
    (fold,) = result["models"]["lm-dir.v1"]["folds"]
    assert fold["train_topics"] == ["Q1", "Q3", "Q4", "Q5", "Q6"] and fold["test_topics"] == ["Q1", "Q3"]
    train = Evaluator(load_wikiqa(files["wikiqa6"], cache=files["cache"]))
    assert fold["params"] == train.tune("lm-dir.v1", fold["train_topics"], "map", max_rounds=1).params


def test_eval_cli_choices_match_the_library() -> None:
    """The CLI keeps its argparse choices import-light; they must be the library's own."""
    sub = argparse.ArgumentParser().add_subparsers()
    cli_eval.register(sub)
    (benchmark,) = [action for action in sub.choices["eval"]._actions if action.dest == "benchmark"]
    assert list(benchmark.choices or ()) == list(benchmark_names())
    (metrics,) = [action for action in sub.choices["eval"]._actions if action.dest == "metrics"]
    assert metrics.default.split(",") == list(DEFAULT_METRICS)


def test_as_exported_is_what_ir_measures_gives_on_the_written_runs(
    sentret: Main, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Export → ir_measures (trec_eval's own code) → exactly the reported "as exported" means."""
    import ir_measures
    from ir_measures import AP, RR, P, Rprec, nDCG

    measures = {"map": AP, "mrr": RR, "p@1": P @ 1, "p@10": P @ 10, "r-prec": Rprec, "ndcg@10": nDCG @ 10}
    argv = ["eval", "wikiqa", "--data", str(files["wikiqa6"]), "--models", "tfisf.v1,lm-dir.v1,bm25.v1",
            "--cache", str(files["cache"]), "--json", "--run-out", str(tmp_path / "runs.trec"),
            "--qrels-out", str(tmp_path / "qrels.txt")]
    result = _json(sentret, capsys, argv)
    assert result["as_exported"].startswith("as exported: what trec_eval -l 1")
    qrels = read_qrels(tmp_path / "qrels.txt")
    ties = 0
    for model, entry in result["models"].items():
        run = read_run(tmp_path / f"runs.{model}.trec")
        theirs = ir_measures.calc_aggregate(list(measures.values()), qrels, run)
        for metric, measure in measures.items():
            assert entry["as_exported"][metric] == pytest.approx(theirs[measure], abs=1e-12), (model, metric)
        # tied scores are listed in document order (ids D<doc>-<position>), not by id
        lines = [line.split() for line in (tmp_path / f"runs.{model}.trec").read_text("utf-8").splitlines()]
        for one, two in itertools.pairwise(lines):
            if one[0] == two[0] and one[4] == two[4]:
                ties += 1
                assert int(one[2].split("-")[1]) < int(two[2].split("-")[1]), (model, one, two)
    assert ties > 0  # tfisf.v1 and bm25.v1 tie on these short sentences
