"""The pages' one error guard (sentret_core.ui.state): a reason on the page, never a traceback."""

from __future__ import annotations

import logging

import pytest
from streamlit.testing.v1 import AppTest

SCRIPT = """
import streamlit as st
from sentret_core.errors import SentretError
from sentret_core.ui.state import error_guard, guarded

def fail(kind):
    if kind == "user":
        raise SentretError("no sentence contains 'zzzz'")
    raise ZeroDivisionError("division by zero")

kind = st.session_state.get("kind", "user")
st.session_state["result"] = guarded("compute the ranking", fail, kind)
with error_guard("draw the table"):
    if st.session_state.get("rerun_once"):
        st.session_state["rerun_once"] = False
        st.rerun()
    st.session_state["after"] = guarded("add", lambda a, b: a + b, 1, b=2)
"""


def run(**state: object) -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=30)
    for key, value in state.items():
        app.session_state[key] = value
    return app.run()


def test_a_user_error_shows_its_reason() -> None:
    app = run(kind="user")
    assert not app.exception
    assert [e.value for e in app.error] == ["no sentence contains 'zzzz'"]
    assert app.session_state["result"] is None and app.session_state["after"] == 3


def test_an_unexpected_error_is_logged_and_named(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="sentret_core.ui.state"):
        app = run(kind="bug")
    assert not app.exception
    [shown] = [e.value for e in app.error]
    assert shown.startswith("Could not compute the ranking: ZeroDivisionError: division by zero.")
    assert "Traceback" not in shown
    logged = [r for r in caplog.records if r.name == "sentret_core.ui.state"]
    assert logged and logged[0].exc_info is not None  # the traceback goes to the server log


def test_streamlit_rerun_passes_through_the_guard() -> None:
    app = run(kind="user", rerun_once=True)
    assert not app.exception
    assert app.session_state["rerun_once"] is False and app.session_state["after"] == 3


def test_stages_log_one_line_per_run_only_when_asked(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.ui.state import STAGE_LOG, Stages

    with caplog.at_level(logging.WARNING, logger="sentret.stages"):
        monkeypatch.delenv(STAGE_LOG, raising=False)
        quiet = Stages("page")
        quiet.mark("setup")
        quiet.done()
        assert not [r for r in caplog.records if r.name == "sentret.stages"]
        monkeypatch.setenv(STAGE_LOG, "1")
        stages = Stages("explore results")
        stages.mark("support")
        stages.mark("entity table")
        stages.mark("support")  # a stage met twice adds up
        stages.done()
    [line] = [r.getMessage() for r in caplog.records if r.name == "sentret.stages"]
    assert line.startswith("stages explore results: support=") and " entity_table=" in line and " total=" in line
    assert list(stages.times) == ["support", "entity table"] and all(v >= 0 for v in stages.times.values())
