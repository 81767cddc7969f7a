"""Long commands say how far they are on stderr (a line at most every few seconds, in a log file too), and
say so whenever they train or build something on the way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.cli import judgments as judgments_cli
from sentret_core.cli.common import every
from sentret_core.cli.main import main


def test_every_says_done_of_total_at_most_that_often(capsys: pytest.CaptureFixture[str]) -> None:
    say = every(0.0, "run", "ran", "topics")  # no wait between lines: each call says it
    for done in range(3):
        say(done, 2)
    assert capsys.readouterr().err.splitlines() == ["sentret run: ran 0 of 2 topics", "sentret run: ran 1 of 2 topics",
                                                    "sentret run: ran 2 of 2 topics"]
    quick = every(3600.0, "run", "ran", "topics", quiet_when_quick=True)  # done well within the hour: silent
    for done in range(3):
        quick(done, 2)
    assert capsys.readouterr().err == ""
    slow = every(3600.0, "train", "encoded", "sentences")  # a long wait: the first call and the end only
    for done in range(4):
        slow(done, 3)
    assert capsys.readouterr().err.splitlines() == ["sentret train: encoded 0 of 3 sentences",
                                                    "sentret train: encoded 3 of 3 sentences"]


def test_eval_notes_what_it_scores_and_trains_on_the_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "my.jsonl"
    question = {"id": "q1", "question": "who painted guernica", "candidates": [
        {"doc": "d1", "position": 0, "text": "Guernica is a painting.", "label": 0},
        {"doc": "d1", "position": 1, "text": "Picasso painted it in 1937.", "label": 1}]}
    data.write_text(json.dumps(question) + "\n", "utf-8")
    code = main(["eval", "candidates", "--data", str(data), "--models", "lm-class.v1", "--cache", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "sentret eval: training the classes artefact 'classes' of" in err  # lm-class.v1's word classes
    assert "sentret eval: scoring doc-order, random, lm-class.v1" in err


def test_judgments_create_says_how_many_queries_it_has_pooled(
    small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(judgments_cli, "PROGRESS_S", 0.0)  # no wait between lines: every query is said
    topics = tmp_path / "topics.tsv"
    topics.write_text("picasso peace\tPicasso|PERSON\nlennon religion\n", "utf-8")
    create = ["judgments", "create", str(tmp_path / "j.sqlite"), "--session", "s", "--index", str(small_index.path),
              "--topics", str(topics), "--pool-depth", "2"]
    for extra in (["--preview"], []):
        assert main([*create, *extra]) == 0
        lines = [line for line in capsys.readouterr().err.splitlines() if "pooled" in line]
        assert lines == ["sentret judgments create: pooled 1 of 2 queries",
                         "sentret judgments create: pooled 2 of 2 queries"]
