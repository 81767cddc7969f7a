"""The cold start's warm-up (sentret_core.ui.state, started with the server by sentret_core.ui.serve): it loads
what the first query needs, then leaves everything alive out of later garbage collections, since Streamlit's
collection after every run is off."""

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


@pytest.fixture
def no_warm_ups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """No warm-up of this process counted, and each one started recorded (its index) instead of run."""
    started: list[str] = []
    monkeypatch.setattr(state, "_WARMING", {})
    monkeypatch.setattr(state, "_warm", started.append)
    return started


def test_the_launcher_starts_the_warm_up_before_the_server(
    small_index: Index, no_warm_ups: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make run` and `sentret app` start `serve run …`: the warm-up is under way before Streamlit even listens,
    and Streamlit gets the arguments unchanged."""
    from streamlit.web import cli

    from sentret_core.ui import serve

    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    seen: list[tuple[list[str], list[str]]] = []
    monkeypatch.setattr(cli, "main", lambda args, prog_name: seen.append((list(args), list(no_warm_ups))))
    serve.main(["run", "app.py", "--server.port", "8600"])
    assert seen == [(["run", "app.py", "--server.port", "8600"], [str(small_index.path)])]
    serve.main(["run", "app.py"])  # once per process
    assert no_warm_ups == [str(small_index.path)]


def test_a_page_waits_for_a_warm_up_under_way(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first request does not load beside the warm-up what the warm-up is loading (two cores, one GIL)."""
    import threading
    import time

    done = threading.Event()
    monkeypatch.setattr(state, "_WARMING", {})
    monkeypatch.setattr(state, "_warm", lambda path: (time.sleep(0.3), done.set()))
    state.warm_up(small_index.path)
    state.wait_for_warm_up(small_index.path)
    assert done.is_set()
    state.wait_for_warm_up(small_index.path.parent)  # nothing warming there: no wait, no error


def test_a_bare_streamlit_run_warms_up_only_after_the_first_page(
    small_index: Index, no_warm_ups: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the launcher the warm-up would share the cores with the first page: it starts once that is drawn."""
    from streamlit.testing.v1 import AppTest

    from sentret_core.ui.pages import explore

    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(small_index.path.parent))
    order: list[str] = []
    monkeypatch.setattr(explore, "render", lambda: order.append(f"page, warm-ups started: {len(no_warm_ups)}"))
    AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert order == ["page, warm-ups started: 0"]
    assert no_warm_ups == [str(small_index.path)]
