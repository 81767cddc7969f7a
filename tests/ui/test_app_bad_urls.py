"""No URL shows a traceback: a bad value in a link is named in a warning or an error, and the
page goes on. AppTest on the small index; the same URLs in a real browser are in browser/test_safety.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index

APP = str(Path(__file__).resolve().parents[2] / "app.py")
CORPUS = """
import streamlit as st
from sentret_core.ui.pages import corpus
corpus.render()
"""
HOWTO = """
import streamlit as st
from sentret_core.ui.pages import howto
howto.render()
"""


def deep_manifest_root(tmp_path: Path) -> Path:
    """An index root holding a folder whose manifest.json is JSON nested 100,000 deep (Python's json
    recurses once per level: far past its recursion limit of 1,000)."""
    hostile = tmp_path / "root" / "deep"
    hostile.mkdir(parents=True)
    (hostile / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    return tmp_path / "root"


def run(script: str | None, index: Index, root: Path, monkeypatch: pytest.MonkeyPatch, url: dict[str, str]) -> AppTest:
    monkeypatch.setenv("SENTRET_INDEX", str(index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(root))
    app = AppTest.from_file(APP) if script is None else AppTest.from_string(script)
    app.default_timeout = 60
    for key, value in url.items():
        app.query_params[key] = value
    return app.run()


def said(app: AppTest) -> str:
    return " ".join(str(e.value) for e in [*app.error, *app.warning])


@pytest.mark.parametrize(
    "name",
    [
        "a" * 120,  # over the 100-character limit of an index name
        "é" * 130,  # 260 bytes in UTF-8: over ext4's 255-byte limit ("File name too long")
        "a" * 300,
        "../small",
        "nul\x00byte",
        ".hidden",
    ],
)
def test_an_index_name_that_cannot_be_a_folder_name_is_refused_before_the_file_system(
    small_index: Index, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    app = run(None, small_index, small_index.path.parent, monkeypatch, {"index": name})
    assert not app.exception, [e.value for e in app.exception]
    assert "is not an index" in said(app)
    assert [m.value for m in app.title] == ["Explore"]  # the page went on with the default index


def test_a_superscript_sentence_id_is_named_not_a_traceback(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "²".isdigit() is True but int("²") raises ValueError: the id must be ASCII digits
    app = run(HOWTO, small_index, small_index.path.parent, monkeypatch, {"q": "war", "sentence": "²"})
    assert not app.exception, [e.value for e in app.exception]
    assert "sentence='²' is not a sentence id" in said(app)


def test_a_huge_sentence_id_is_named(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run(HOWTO, small_index, small_index.path.parent, monkeypatch, {"q": "war", "sentence": "9" * 5000})
    assert not app.exception, [e.value for e in app.exception]
    assert "is not a sentence id" in said(app)


def test_a_deeply_nested_manifest_on_the_corpus_page_is_not_a_traceback(
    small_index: Index, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    app = run(CORPUS, small_index, deep_manifest_root(tmp_path), monkeypatch, {})
    assert not app.exception, [e.value for e in app.exception]
    assert [m.label for m in app.metric][:1] == ["Documents"]  # the default index is still shown


def test_a_link_to_a_deeply_nested_manifest_is_refused(
    small_index: Index, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    app = run(None, small_index, deep_manifest_root(tmp_path), monkeypatch, {"index": "deep"})
    assert not app.exception, [e.value for e in app.exception]
    assert "index='deep' is not an index" in said(app)


def test_a_bad_index_name_never_reaches_the_file_system(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    from sentret_core.ui import state

    asked: list[str] = []
    real = state.is_index
    monkeypatch.setattr(state, "is_index", lambda path: asked.append(str(path)) or real(path))
    app = run(None, small_index, small_index.path.parent, monkeypatch, {"index": "x" * 120})
    assert not app.exception
    assert not [p for p in asked if "x" * 120 in p]  # refused by its name alone
    assert [state.is_index_name(n) for n in ("demo", "my-index_2.v1", "a" * 100, "a" * 101, ".x", "a/b", "ä", "")] == [
        True, True, True, False, False, False, False, False,
    ]


def test_any_error_reading_a_manifest_is_not_a_traceback(
    small_index: Index, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Whatever reading a manifest raises (here a RecursionError, as a deeply nested one did before the
    reader limited its depth), the Corpus page and a link to that index show the default index."""
    from sentret_core.ui import state

    real = state.is_index

    def hostile(path: Path) -> bool:
        if Path(path).name == "deep":
            raise RecursionError("maximum recursion depth exceeded")
        return real(path)

    monkeypatch.setattr(state, "is_index", hostile)
    root = deep_manifest_root(tmp_path)
    corpus = run(CORPUS, small_index, root, monkeypatch, {})
    assert not corpus.exception, [e.value for e in corpus.exception]
    assert [m.label for m in corpus.metric][:1] == ["Documents"]
    linked = run(None, small_index, root, monkeypatch, {"index": "deep"})
    assert not linked.exception, [e.value for e in linked.exception]
    assert "index='deep' is not an index" in said(linked)
