"""Training on the How it works page is an admin action with capped parameters, one at a time per
index (a visitor once trained 232 MB of artefacts in 43 s and a K=5000 × 200-pass class
training held the server for minutes)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core.defaults import APP_MAX_CLASSES, APP_MAX_PASSES
from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.ui.howto.training import BUSY, NEEDS_ADMIN, one_training
from tests.conftest import SMALL_DOCS, build_from_texts, judgments_env

SCRIPT = """
import streamlit as st
from sentret_core.ui.pages import howto as howto_page
st.set_page_config(layout="wide")
howto_page.render()
"""
TOKEN = "training-admin-token"
CLASSES = "howto_p_lm-class.v1_classes"  # the page's keys for lm-class.v1's classes parameter


def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **state: object) -> tuple[AppTest, Path]:
    index = build_from_texts(tmp_path, SMALL_DOCS)
    judgments_env(monkeypatch, tmp_path, index, TOKEN)
    app = AppTest.from_string(SCRIPT, default_timeout=60)
    for key, value in {"howto_query": "peace war", "howto_model": "lm-class.v1", **state}.items():
        app.session_state[key] = value
    return app.run(), index.path


def train_buttons(app: AppTest) -> list[str]:
    return [b.label for b in app.button if b.label.startswith("Train ")]


def test_a_visitor_sees_no_train_button_and_is_asked_for_the_admin_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, index = page(tmp_path, monkeypatch)
    assert not app.exception
    assert train_buttons(app) == []
    assert NEEDS_ADMIN in [i.value for i in app.info]
    assert "Sign in as admin" in [b.label for b in app.button]
    assert artefacts.available(index) == []


def test_a_wrong_token_trains_nothing_and_the_right_one_trains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, index = page(tmp_path, monkeypatch)
    app.text_input(key="howto_train_lm-class.v1_classes_token").input("not the token")
    next(b for b in app.button if b.label == "Sign in as admin").click().run()
    assert train_buttons(app) == [] and any("wrong admin token" in e.value for e in app.error)
    app.text_input(key="howto_train_lm-class.v1_classes_token").input(TOKEN)
    next(b for b in app.button if b.label == "Sign in as admin").click().run()
    assert train_buttons(app) == ["Train classes"]
    app.text_input(key=f"{CLASSES}_new_name").input("k4")
    app.number_input(key=f"{CLASSES}_K").set_value(4)
    app.number_input(key=f"{CLASSES}_min_count").set_value(1)
    next(b for b in app.button if b.label == "Train classes").click().run()
    assert not app.exception and not app.error
    assert [r["name"] for r in artefacts.available(index, "classes")] == ["k4"]


def test_the_widgets_cap_k_and_the_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _ = page(tmp_path, monkeypatch, admin_verified_token=TOKEN)
    assert app.number_input(key=f"{CLASSES}_K").max == APP_MAX_CLASSES == 500
    assert app.number_input(key=f"{CLASSES}_iterations").max == APP_MAX_PASSES == 50


def test_a_token_changed_since_sign_in_trains_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, index = page(tmp_path, monkeypatch, admin_verified_token="an old token")
    assert train_buttons(app) == []
    assert artefacts.available(index) == []


def test_one_training_of_an_index_at_a_time(tmp_path: Path) -> None:
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with one_training(str(tmp_path)):
            inside.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(10)
    with pytest.raises(SentretError, match=BUSY), one_training(str(tmp_path)):
        pass
    with one_training(str(tmp_path / "other")):  # another index is free
        pass
    release.set()
    holder.join()
    with one_training(str(tmp_path)):  # free again once the first is done
        pass


def test_a_training_running_elsewhere_is_named_on_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, index = page(tmp_path, monkeypatch, admin_verified_token=TOKEN)
    app.text_input(key=f"{CLASSES}_new_name").input("k4")
    app.number_input(key=f"{CLASSES}_K").set_value(4)
    with one_training(str(index)):
        next(b for b in app.button if b.label == "Train classes").click().run()
    assert any(BUSY in e.value for e in app.error)
    assert artefacts.available(index) == []
