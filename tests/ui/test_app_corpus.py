"""The Corpus page in Streamlit's AppTest on the small index built by the fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def corpus_script() -> None:
    from sentret_core.ui.pages import corpus as corpus_page

    corpus_page.render()


@pytest.fixture
def app(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(small_index.path.parent))
    return AppTest.from_function(corpus_script, default_timeout=60)


def test_overview_shows_counts_labels_and_a_document(app: AppTest, small_index: Index) -> None:
    app.run()
    assert not app.exception and not app.error
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Documents"] == "3" and metrics["Sentences"] == "12"
    html = app.markdown[-1].value
    assert "Spanish Civil War" in html and 'class="entity"' in html
    app.text_input(key="corpus_find").input("lennon").run()
    assert "sang about peace" in app.markdown[-1].value and "Spanish" not in app.markdown[-1].value


def test_unknown_title_warns(app: AppTest) -> None:
    app.run()
    app.text_input(key="corpus_find").input("no such title").run()
    assert any("No document title contains" in w.value for w in app.warning)


def test_missing_index_is_an_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SENTRET_INDEX", str(tmp_path / "nothing"))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(tmp_path))
    app = AppTest.from_file(APP, default_timeout=60).run()
    assert not app.exception
    assert any("no such index folder" in e.value for e in app.error)
