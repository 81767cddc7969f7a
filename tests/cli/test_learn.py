"""`sentret learn` then `sentret eval … --models ltr.v1` on the real WikiQA train and dev files
(the whole learning-to-rank workflow), in a fresh ranker store and benchmark cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA

WIKIQA = SHARED_DATA / "wikiqa"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not WIKIQA.is_dir(), reason="../shared/data is absent (it is present in CI)"),
]


def sentret(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sentret_core", *args], capture_output=True, text=True, env=env,
                          timeout=900, check=False)


def test_learn_on_train_then_evaluate_on_dev(tmp_path: Path) -> None:
    env = dict(os.environ, SENTRET_RANKERS=str(tmp_path / "rankers"), SENTRET_BENCHMARK_CACHE=str(tmp_path / "cache"))
    train, dev = str(WIKIQA / "WikiQA-train.tsv"), str(WIKIQA / "WikiQA-dev.tsv")
    learned = sentret("learn", "wikiqa", "--data", train, "--dev", dev, "--out", "wikiqa-ltr", "--json", env=env)
    assert learned.returncode == 0, learned.stderr
    record = json.loads(learned.stdout)
    assert record["learner"] == "lambdamart" and record["train"]["topics"] == 873 and record["dev"]["topics"] == 126
    evaluated = sentret("eval", "wikiqa", "--data", dev, "--models", "ltr.v1", "--param", "ltr.v1.model=wikiqa-ltr",
                        "--metrics", "map,mrr", "--json", env=env)
    assert evaluated.returncode == 0, evaluated.stderr
    report = json.loads(evaluated.stdout)
    ltr, position = (report["models"][m]["mean"]["map"] for m in ("ltr.v1", "doc-order"))
    assert ltr == pytest.approx(record["metrics"]["dev"]["map"])  # the learner's dev score is the evaluator's
    assert ltr > position
    assert report["settings"]["artefacts"]["ltr.v1"]["model"] == record["reference"]  # the run names its ranker
    listed = sentret("rankers", env=env)
    assert "wikiqa-ltr@" in listed.stdout
