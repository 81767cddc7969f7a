"""The cold start's warm-up (sentret_core.ui.state): it loads what the first query needs, then leaves
everything alive out of later garbage collections, since Streamlit's collection after every run is off."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

from sentret_core.index.reader import Index
from sentret_core.ui import state
from tests.browser_util import ROOT


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The test process's heap as it was: nothing frozen before, everything unfrozen after."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_the_warm_up_freezes_what_it_loaded(small_index: Index, unfrozen: None) -> None:
    assert gc.get_freeze_count() == 0
    state._warm(str(small_index.path))
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # the libraries' objects and the index's, not a handful
    assert state.load_index(str(small_index.path)) is not None  # loaded (and cached) by the warm-up
    # a full pass now walks only what came after: far fewer objects than were frozen
    assert len(gc.get_objects()) < frozen


def test_a_failing_warm_up_still_freezes(tmp_path: Path, unfrozen: None) -> None:
    state._warm(str(tmp_path / "no-index"))  # the first page that needs it reports the error
    assert gc.get_freeze_count() > 0


def test_streamlit_does_not_collect_after_every_run() -> None:
    """The full collection would hold each run's last messages back (benchmarks/app_latency.py)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


def test_the_warm_up_logs_its_stages_for_the_latency_benchmark(
    small_index: Index, unfrozen: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """benchmarks/app_latency.py starts timing only once this line is in the server's log."""
    monkeypatch.setenv(state.STAGE_LOG, "1")
    with caplog.at_level("WARNING", logger="sentret.stages"):
        state._warm(str(small_index.path))
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("stages warm-up:")]
    assert len(lines) == 1
    assert all(f"{stage}=" in lines[0] for stage in ("index", "support", "freeze", "total"))
