"""The marker that says a training of an index runs (sentret_core.models.training.running), and what the
app makes of it: the models' labels and the notice with about how long is left."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.models.training.running import (
    BUSY,
    Running,
    expected_seconds,
    marker_path,
    running,
    training,
)
from sentret_core.ui.background import notice_text
from sentret_core.ui.offered import untrained_label
from tests.conftest import build_from_texts

DEMO_SIZE = {"counts": {"term_occurrences": 433_221}}  # the demo corpus's manifest


def test_the_estimate_is_the_corpus_size_times_the_measured_rate() -> None:
    # classes: 433,221 occurrences × 0.0001 s = 43.3221 s (what the README's measurement gave: 43 s)
    assert expected_seconds(DEMO_SIZE, ["classes"]) == pytest.approx(43.3221)
    # triggers: 433,221 × 0.000003 s = 1.299663 s; together 44.621763 s
    assert expected_seconds(DEMO_SIZE, ["triggers"]) == pytest.approx(1.299663)
    assert expected_seconds(DEMO_SIZE, ["classes", "triggers"]) == pytest.approx(44.621763)
    assert expected_seconds({}, ["classes"]) == 1.0  # an unknown size: the least, never zero
    assert Running(("classes",), started=100.0, expected=43.0).seconds_left(now=110.0) == 33.0
    assert Running(("classes",), started=100.0, expected=43.0).seconds_left(now=200.0) == 0.0


def test_the_marker_is_believed_only_while_its_training_holds_it(tmp_path: Path) -> None:
    assert running(tmp_path) is None  # no marker at all
    with training(tmp_path, ["classes"], 43.0, clock=lambda: 1234.5):
        now = running(tmp_path)
        assert now is not None and now.kinds == ("classes",) and now.expected == 43.0
        assert now.started == 1234.5  # the marker records when the training started
        with pytest.raises(SentretError, match=BUSY), training(tmp_path, ["triggers"], 1.0):
            pass  # one training of an index at a time
        assert running(tmp_path / "other") is None  # another index's marker is its own
    assert marker_path(tmp_path).exists()  # left behind, but nobody holds it: stale, not believed
    assert running(tmp_path) is None


def test_a_training_in_another_process_is_seen_and_forgotten_when_it_dies(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from sentret_core.models.training.running import training\n"
         f"with training({str(tmp_path)!r}, ['triggers'], 5.0):\n    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        now = running(tmp_path)
        assert now is not None and now.kinds == ("triggers",)
        holder.kill()  # a killed training releases its marker with its process
        holder.wait(timeout=30)
        assert running(tmp_path) is None
    finally:
        holder.kill()


def test_the_notice_says_what_trains_which_models_wait_and_about_how_long() -> None:
    now = Running(("classes",), started=1000.0, expected=43.0)  # at 1010.2: 43 − 10.2 = 32.8 → "about 33 s"
    assert notice_text(now, clock=1010.2) == (
        "The word classes of this index are training in the background, about 33 s left. "
        "lm-class.v1, lm-class.v2 are enabled when it finishes."
    )
    late = Running(("classes", "triggers"), started=1000.0, expected=43.0)
    assert notice_text(late, clock=1100.0).startswith(
        "The word classes and trigger tables of this index are training in the "
        "background, finishing. lm-class.v1, lm-class.v2, lm-trigger.v1"
    )


def test_a_models_label_says_training_while_its_artefact_trains(tmp_path: Path) -> None:
    index: Index = build_from_texts(tmp_path, [{"id": "p", "title": "Paris", "text": "Paris hosted the talks."}])
    path = str(index.path)
    assert untrained_label("lm-class.v1", path) == " — not trained yet (classes)"
    assert untrained_label("bm25f.v1", path) == ""
    with training(path, ["classes"], 43.0):
        assert untrained_label("lm-class.v1", path) == " — training in the background"
        assert untrained_label("lm-trigger.v1", path) == " — not trained yet (triggers)"  # not what trains


def test_sentret_train_holds_the_marker_and_refuses_a_second_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sentret_core.cli.main import main

    index = build_from_texts(tmp_path, [{"id": "p", "title": "Paris", "text": "Paris hosted the talks."}])
    with training(index.path, ["triggers"], 1.0):  # the app's Train button, say
        assert main(["train", "classes", str(index.path)]) == 2  # a user error
    assert BUSY in capsys.readouterr().err
    assert main(["train", "triggers", str(index.path)]) == 0  # free again: trains, and lets go after
    assert running(index.path) is None
