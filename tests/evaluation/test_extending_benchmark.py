"""A toy benchmark added the way docs/extending.md's "Add a benchmark" says: step 1's code block written as a
module of the benchmarks package (in a temporary folder put on the package's ``__path__``) and found by the
package's own ``discover()``, then ``sentret eval`` and ``sentret learn`` run on it through the CLI's main
function; unregistered after.

The data (``QA``): q1 "Who painted Guernica?" with candidates "The museum opens at ten." (0) and "Picasso
painted Guernica in 1937." (1); q2 "When did the war end?" with "The war began in 1936." (0) and "It ended in
April 1939." (1); q3 has no correct sentence, so it is counted but is no topic. Terms are lower-cased words
(not lemmas: "ended" is not "end").
"""

from __future__ import annotations

import json
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sentret_core.cli import main as cli
from sentret_core.errors import SentretError
from sentret_core.evaluation import benchmarks
from sentret_core.evaluation.benchmarks import (
    BenchmarkSpec,
    benchmark_names,
    get_benchmark,
    load_benchmark,
    register_benchmark,
    unregister_benchmark,
)
from sentret_core.evaluation.evaluable import kind_of
from sentret_core.evaluation.plan import plan

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
BUILT_IN = ("wikiqa", "squad-support", "trecqa", "candidates")
QA = [
    ("q1", "Who painted Guernica?", "The museum opens at ten.", "0"),
    ("q1", "Who painted Guernica?", "Picasso painted Guernica in 1937.", "1"),
    ("q2", "When did the war end?", "The war began in 1936.", "0"),
    ("q2", "When did the war end?", "It ended in April 1939.", "1"),
    ("q3", "Where is the harbour?", "The town has a church.", "0"),
]


# learning needs at least 8 topics with a correct and a wrong sentence
TOWNS = ("Arden", "Brisk", "Corran", "Dunmore", "Elling", "Farrow", "Glenby", "Hallow")
TOWN_QA = [row for i, town in enumerate(TOWNS) for row in (
    (f"t{i}", f"When was {town} founded?", f"{town} is a small town with a harbour.", "0"),
    (f"t{i}", f"When was {town} founded?", f"{town} was settled by farmers in {1700 + 7 * i}.", "1"))]


def recipe_code() -> str:
    """The Python block of step 1 of "Add a benchmark"."""
    section = DOC.read_text(encoding="utf-8").split("## Add a benchmark", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1, "the benchmark section should hold one Python block: the benchmark's module"
    return blocks[0]


@pytest.fixture
def qa_tsv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """The recipe's module, written beside the package's own benchmarks and found by ``discover()``."""
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    (folder / "qa_tsv.py").write_text(recipe_code(), encoding="utf-8")
    monkeypatch.setattr(benchmarks, "__path__", [*benchmarks.__path__, str(folder)])
    name = f"{benchmarks.__name__}.qa_tsv"
    try:
        found = benchmarks.discover()
        assert [spec.name for spec in found] == ["qa-tsv"]  # the built-in ones were registered at import
        yield sys.modules[name]
    finally:
        sys.modules.pop(name, None)
        if "qa-tsv" in benchmark_names():
            unregister_benchmark("qa-tsv")


def write(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    path.write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write(tmp_path / "toy.tsv", QA)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exit:  # argparse's own errors and --help
        code = int(exit.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_recipe_benchmark_is_evaluated_by_sentret_eval(
    qa_tsv: types.ModuleType, data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert benchmark_names() == (*BUILT_IN, "qa-tsv")  # after the built-in ones, in registration order
    assert kind_of("qa-tsv") == "sentences" and plan("qa-tsv").baseline == "doc-order"
    code, out, err = run(["eval", "qa-tsv", "--data", str(data), "--models", "tfisf.v1", "--metrics", "mrr",
                          "--cache", str(tmp_path / "cache"), "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["benchmark"] == "qa-tsv" and report["topics"] == 2  # q3 has no correct sentence
    mrr = {model: values["mean"]["mrr"] for model, values in report["models"].items()}
    # tfisf.v1: q1's correct sentence holds "painted" and "guernica", the other candidate no query term: RR 1;
    # q2's correct sentence holds no query term ("ended"), the other holds "the" and "war": RR 1/2.
    assert mrr["tfisf.v1"] == pytest.approx((1 + 1 / 2) / 2)
    # doc-order: both correct sentences are second in their document: RR 1/2 each.
    assert mrr["doc-order"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    # random: two tied candidates per topic, the expected RR (1 + 1/2) / 2 each.
    assert mrr["random"] == pytest.approx((1 + 1 / 2) / 2)
    code, out, _ = run(["eval", "--help"], capsys)
    flat = "".join(out.split())  # argparse wraps lines at spaces and hyphens
    assert code == 0 and "oneofwikiqa,squad-support,trecqa,candidates,qa-tsv" in flat
    assert "aTrecQA.xml(or.tsv),aQA.tsv" in flat


def test_the_recipe_benchmark_is_a_source_of_sentret_learn(
    qa_tsv: types.ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write(tmp_path / "towns.tsv", TOWN_QA)
    code, out, _ = run(["learn", "qa-tsv", "--help"], capsys)
    assert code == 0 and "Learn from qa-tsv's training file." in out
    assert "--distractors" not in out  # the spec declares no loader options
    code, _, err = run(["learn"], capsys)
    assert code == 2 and "(or squad-support, trecqa, candidates, qa-tsv, judgments)" in err
    code, out, err = run(["learn", "qa-tsv", "--data", str(data), "--dev", str(data), "--learner", "linear",
                          "--out", "toyqa", "--cache", str(tmp_path / "cache"), "--json"], capsys)
    assert code == 0, err
    record = json.loads(out)
    assert record["name"] == "toyqa" and record["train"]["benchmark"] == "qa-tsv" and record["train"]["topics"] == 8


def test_an_unregistered_benchmark_is_gone(
    qa_tsv: types.ModuleType, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_benchmark(qa_tsv.BENCHMARK)
    unregister_benchmark("qa-tsv")
    assert benchmark_names() == BUILT_IN
    with pytest.raises(SentretError, match="unknown benchmark 'qa-tsv'; choose one of wikiqa, squad-support"):
        load_benchmark("qa-tsv", data)
    code, _, err = run(["eval", "qa-tsv", "--data", str(data)], capsys)
    assert code == 2 and "invalid choice: 'qa-tsv'" in err
    with pytest.raises(SentretError, match="not registered"):
        unregister_benchmark("qa-tsv")


def test_a_spec_is_checked_when_declared() -> None:
    load = get_benchmark("wikiqa").load
    bad: list[tuple[dict[str, Any], str]] = [
        ({"name": "QA tsv"}, "lowercase"),
        ({"kind": "passages"}, "kind 'passages'"),
        ({"baseline": "bm25"}, "baseline 'bm25'"),
        ({"options": ("window",)}, "unknown options"),
    ]
    for fields, message in bad:
        with pytest.raises(ValueError, match=message):
            BenchmarkSpec(**{"name": "toy", "load": load, **fields})
    # an option a benchmark does not take is refused before its file is read
    with pytest.raises(SentretError, match="distractors= and min_candidates= apply to squad-support only"):
        load_benchmark("wikiqa", "no-such-file.tsv", min_candidates=2)


def test_a_loader_that_contradicts_its_spec_is_refused(qa_tsv: types.ModuleType, data: Path, tmp_path: Path) -> None:
    """plan() picks the models by the declared kind, so a loader must make a benchmark of that kind."""
    register_benchmark(BenchmarkSpec("qa-tsv-support", qa_tsv.load_qa_tsv, kind="support"))
    try:
        assert kind_of("qa-tsv-support") == "support"
        with pytest.raises(ValueError, match="its loader made a 'sentences' benchmark, its spec says 'support'"):
            load_benchmark("qa-tsv-support", data, cache=tmp_path / "cache")
    finally:
        unregister_benchmark("qa-tsv-support")
