"""The Explore page in Streamlit's AppTest, on the small index and on one with hostile text."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import build_from_texts
from streamlit.testing.v1 import AppTest

from sentret_core import Index

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def explore(index: Index, monkeypatch: pytest.MonkeyPatch, url: dict[str, str] | None = None) -> AppTest:
    monkeypatch.setenv("SENTRET_INDEX", str(index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(index.path.parent))
    app = AppTest.from_file(APP, default_timeout=60)
    for key, value in (url or {}).items():
        app.query_params[key] = value
    return app.run()


def support_cards(app: AppTest) -> list[str]:
    return [m.value for m in app.markdown if m.value.startswith('<div class="support">')]


def test_query_entities_and_side_by_side_columns(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = explore(small_index, monkeypatch)
    assert not app.exception and not app.error
    app.text_input(key="explore_query").input("Spanish Civil War").run()
    options = app.selectbox(key="explore_entity").options
    assert any("Francisco Franco (PERSON)" in o for o in options)
    headers = [m.value for m in app.markdown if "candidate sentences" in m.value]
    assert len(headers) == 3  # BM25F | LM 2S-I | TF-ISF
    assert app.query_params["q"] == "Spanish Civil War"
    franco = next(o for o in options if "Francisco Franco" in o)
    app.selectbox(key="explore_entity").select(franco).run()
    cards = support_cards(app)
    assert cards and all("Francisco Franco" in card for card in cards)
    assert "box-shadow" in cards[0]  # the entity is outlined
    assert app.query_params["entity"] == "Francisco Franco|PERSON"


def test_widgets_change_the_results(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = explore(small_index, monkeypatch, {"q": "peace"})
    before = app.selectbox(key="explore_entity").options
    app.multiselect(key="explore_labels").set_value(["PERSON"]).run()
    after = app.selectbox(key="explore_entity").options
    assert after != before and all("(PERSON)" in o for o in after)
    app.multiselect(key="explore_models").set_value(["tfisf.v1"]).run()
    assert len([m for m in app.markdown if "candidate sentences" in m.value]) == 1


def test_a_link_reproduces_the_view(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    url = {"q": "peace", "entity": "John Lennon|PERSON", "models": "tfisf.v1,position", "score": "frequency"}
    app = explore(small_index, monkeypatch, url)
    assert app.text_input(key="explore_query").value == "peace"
    assert app.selectbox(key="explore_entity").value.endswith("John Lennon (PERSON)")
    assert app.radio(key="explore_score").value == "frequency"
    assert len([m for m in app.markdown if "candidate sentences" in m.value]) == 2


def test_bad_queries_give_messages_not_tracebacks(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = explore(small_index, monkeypatch, {"q": "the of and"})
    assert not app.exception
    assert any("stop words" in w.value for w in app.warning)
    app.text_input(key="explore_query").input("zzzz qqqq").run()
    assert any("no sentence contains" in w.value for w in app.warning)
    app.text_input(key="explore_query").input("peace").run()
    app.multiselect(key="explore_models").set_value([]).run()
    assert any("at least one support model" in e.value for e in app.error)


def test_hostile_corpus_text_is_inert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [
        {"id": "x", "title": "<b>Bold</b> title", "text": "Paris is <script>alert(1)</script> lovely. "
         'Paris has an <img src=x onerror="alert(2)"> image.'},
    ]  # fmt: skip
    index = build_from_texts(tmp_path, docs)
    app = explore(index, monkeypatch, {"q": "Paris", "labels": "GPE"})
    html = "\n".join(m.value for m in app.markdown)
    assert "<script>" not in html and "<img" not in html and "<b>Bold" not in html
    assert "&lt;script&gt;" in html


def two_pages() -> None:
    import streamlit as st

    from sentret_core.ui.pages import corpus as corpus_page
    from sentret_core.ui.pages import explore as explore_page

    corpus_page.render() if st.session_state.get("page") == "corpus" else explore_page.render()


def test_settings_survive_a_visit_to_another_page(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(small_index.path.parent))
    app = AppTest.from_function(two_pages, default_timeout=60).run()
    app.text_input(key="explore_query").input("peace").run()
    app.multiselect(key="explore_models").set_value(["tfisf.v1"]).run()
    app.session_state["page"] = "corpus"
    app.run()  # Explore's widgets are not drawn: Streamlit forgets their state
    app.session_state["page"] = "explore"
    app.run()
    assert app.text_input(key="explore_query").value == "peace"
    assert app.multiselect(key="explore_models").value == ["tfisf.v1"]
