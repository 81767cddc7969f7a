"""The URL in Streamlit's AppTest: one history update per run at most, none on a page's first
run, and after Back or Forward the page is the URL's view again (sentret_core.ui.history, .url, .state).

The browser side (the shim that turns Streamlit's pushState into replaceState) is tested in Chromium:
tests/browser/test_history.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.ui import history

APP = str(Path(__file__).resolve().parents[2] / "app.py")

# Every URL update Streamlit sends to the browser (a page_info_changed message: one history entry each,
# before the shim) is recorded in session state.
SCRIPT = """
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from sentret_core.ui import history, url

ctx = get_script_run_ctx()
sent = st.session_state.setdefault("sent", [])
send = ctx.enqueue
def recording(msg):
    if msg.WhichOneof("type") == "page_info_changed":
        sent.append(msg.page_info_changed.query_string)
    send(msg)
ctx.enqueue = recording
history.install()
values = st.session_state.get("values", {"q": "peace war", "k": 100, "labels": ["PERSON", "GPE"], "restating": True})
url.write(values, ["q", "k", "labels", "restating", "entity"])
ctx.enqueue = send
"""


def test_a_first_run_writes_the_url_without_telling_the_browser_and_later_runs_tell_it_once() -> None:
    app = AppTest.from_string(SCRIPT, default_timeout=30)
    app.query_params["other"] = "left by another page"
    app.query_params["index"] = "demo"
    app.run()
    assert not app.exception
    # the page sees the URL it wrote (a link copied now names the view) ...
    assert app.query_params == {"index": "demo", "q": "peace war", "k": "100", "labels": "PERSON,GPE",
                                "restating": "1"}
    # ... but the browser is not told on a first run: it would be a history entry (the shim is not there yet)
    assert app.session_state["sent"] == []

    app.session_state["values"] = {"q": "Picasso", "k": 50, "labels": [], "restating": False,
                                   "entity": "Guernica|PERSON"}
    app.run()
    # four keys changed and one went: one message, so one history update
    assert app.session_state["sent"] == ["index=demo&q=Picasso&k=50&restating=0&entity=Guernica%7CPERSON"]
    app.run()  # nothing changed: nothing sent
    assert len(app.session_state["sent"]) == 1


def explore(index: Index, monkeypatch: pytest.MonkeyPatch, url: dict[str, str]) -> AppTest:
    monkeypatch.setenv("SENTRET_INDEX", str(index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(index.path.parent))
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update(url)
    return app.run()


def test_back_shows_the_urls_view_again(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = explore(small_index, monkeypatch, {"q": "peace", "per": "2"})
    app.selectbox(key="explore_entity").set_value("John Lennon|PERSON").run()
    earlier = dict(app.query_params)  # the view Back returns to
    assert earlier["q"] == "peace" and earlier["entity"] == "John Lennon|PERSON" and earlier["per"] == "2"
    app.text_input(key="explore_query").input("Spanish Civil War").run()
    app.slider(key="explore_per_entity").set_value(5).run()
    app.selectbox(key="explore_entity").set_value("Francisco Franco|PERSON").run()
    assert app.query_params["q"] == "Spanish Civil War" and app.query_params["per"] == "5"

    # Back: the browser reruns the page with the earlier URL, and says the run is a history step
    monkeypatch.setattr(history, "is_history_step", lambda: True)
    app.query_params.clear()
    app.query_params.update(earlier)
    app.run()
    assert not app.exception and not app.error
    assert app.text_input(key="explore_query").value == "peace"
    assert app.selectbox(key="explore_entity").value == "John Lennon|PERSON"
    assert app.slider(key="explore_per_entity").value == 2
    assert dict(app.query_params) == earlier

    # an ordinary rerun (a setting) keeps the page's own state, as before
    monkeypatch.setattr(history, "is_history_step", lambda: False)
    app.slider(key="explore_per_entity").set_value(3).run()
    assert app.text_input(key="explore_query").value == "peace" and app.query_params["per"] == "3"
    assert app.query_params["entity"] == "John Lennon|PERSON"


def test_forgetting_a_pages_view_keeps_other_pages_and_the_admins_training_form() -> None:
    script = """
import streamlit as st
from sentret_core.ui.history import forget_view_state
for key in ("explore_query", "explore_k", "howto_query", "howto_train_lm-class.v1_classes", "index_path"):
    st.session_state.setdefault(key, "kept")
if st.session_state.get("forget"):
    forget_view_state(["explore_", "howto_"])
st.session_state["left"] = sorted(k for k in st.session_state if k not in ("forget", "left"))
"""
    app = AppTest.from_string(script, default_timeout=30).run()
    app.session_state["forget"] = True
    app.run()
    assert app.session_state["left"] == ["howto_train_lm-class.v1_classes", "index_path"]
