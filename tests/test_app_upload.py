"""Corpus upload: the build logic (sentret_core.ui.upload) and the Corpus page's upload form in AppTest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.errors import CorpusError, SentretError
from sentret_core.ui import upload
from sentret_core.ui.upload import Upload, build_uploaded, check_name

SCRIPT = """
import streamlit as st
from sentret_core.ui.pages import corpus as corpus_page
st.set_page_config(layout="wide")
corpus_page.render()
"""

JSONL = (
    json.dumps(
        {"id": "a", "title": "Marie Curie", "text": "Marie Curie won the Nobel Prize in Physics in 1903."}
    )
    + "\n"
    + json.dumps(
        {"id": "b", "title": "Niels Bohr", "text": "Niels Bohr worked in Copenhagen. He won in 1922."}
    )
    + "\n"
).encode()
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01" + bytes(range(256))


# --- the logic ------------------------------------------------------------------------------------


def test_names_are_checked(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    for bad, reason in [("", "name"), ("a/b", "path separator"), ("..", "path separator"),
                        ("..\\x", "path separator"), (".hidden", "not allowed"), ("a b", "not allowed"),
                        ("taken", "already exists")]:  # fmt: skip
        with pytest.raises(SentretError, match=reason):
            check_name(bad, tmp_path)
    assert check_name("taken", tmp_path, overwrite=True) == tmp_path / "taken"
    assert check_name(" fine-name_1.0 ", tmp_path) == tmp_path / "fine-name_1.0"


def test_mixed_files_build_one_index_with_progress(tmp_path: Path) -> None:
    files = [
        Upload("notes.md", b"# Lise Meitner\n\nLise Meitner worked in Berlin with Otto Hahn.\n"),
        Upload("people.jsonl", JSONL),
        Upload(
            "table.csv", b"id,title,text\n1,Ada Lovelace,Ada Lovelace wrote about the Analytical Engine.\n"
        ),
    ]
    seen: list[float] = []
    summary = build_uploaded(files, "mine", tmp_path, progress=lambda f, _m: seen.append(f))
    assert summary.documents == 4 and summary.path == tmp_path / "mine"
    index = Index.load(summary.path)
    assert sorted(index.titles) == ["Ada Lovelace", "Lise Meitner", "Marie Curie", "Niels Bohr"]
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    assert "people.jsonl:a" in set(index.documents["id"])  # ids stay unique across files
    with pytest.raises(SentretError, match="already exists"):
        build_uploaded(files, "mine", tmp_path)
    again = build_uploaded(files[:1], "mine", tmp_path, overwrite=True)
    assert again.documents == 1


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("picture.txt", PNG, "picture.txt: looks like a binary file"),
        ("latin.txt", "Café au lait à Paris.".encode("latin-1"), "latin.txt: not valid utf-8"),
        (
            "broken.jsonl",
            JSONL + b'{"id": "c", "text": "unterminated\n',
            "broken.jsonl, line 3: not valid JSON",
        ),
        (
            "notext.jsonl",
            b'{"id": "c", "title": "x"}\n',
            'broken|notext.jsonl, line 1: the object has no "text"',
        ),
        ("empty.md", b"  \n\n", "empty.md: the file is empty"),
        ("bad.csv", b"name,body\nx,y\n", "bad.csv: the CSV header must name"),
        ("slides.pdf", b"%PDF-1.4", "slides.pdf: unsupported file type"),
    ],
)
def test_bad_files_fail_with_their_reason(tmp_path: Path, name: str, data: bytes, reason: str) -> None:
    with pytest.raises(SentretError, match=reason.split("|")[-1].replace("(", r"\(")) as caught:
        build_uploaded([Upload("good.txt", b"Otto Hahn lived in Berlin."), Upload(name, data)], "x", tmp_path)
    assert str(tmp_path) not in str(caught.value) and "/tmp" not in str(caught.value)  # names as uploaded
    assert not (tmp_path / "x").exists()


def test_latin1_builds_when_the_encoding_is_chosen(tmp_path: Path) -> None:
    data = "Café au lait à Paris. Émile Zola lived in Paris.".encode("latin-1")
    with pytest.raises(CorpusError, match="choose the file's encoding"):
        build_uploaded([Upload("latin.txt", data)], "lat", tmp_path)
    assert build_uploaded([Upload("latin.txt", data)], "lat", tmp_path, encoding="latin-1").documents == 1


def test_the_size_limit_is_total(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upload, "MAX_TOTAL_BYTES", 100)
    files = [Upload("a.txt", b"x" * 60), Upload("b.txt", b"y" * 60)]
    with pytest.raises(SentretError, match="limit is 50 MB in total"):
        build_uploaded(files, "big", tmp_path)
    with pytest.raises(SentretError, match="at least one file"):
        build_uploaded([], "none", tmp_path)


# --- the page -------------------------------------------------------------------------------------


@pytest.fixture
def page(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The Corpus page on the small index; new indexes go to ``tmp_path``."""
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(tmp_path))
    return AppTest.from_string(SCRIPT, default_timeout=90).run()


def documents(app: AppTest) -> str:
    return {m.label: m.value for m in app.metric}["Documents"]


def test_a_bad_upload_is_an_error_and_the_index_stays(
    page: AppTest, small_index: Index, tmp_path: Path
) -> None:
    assert not page.exception and documents(page) == "3"
    broken = b'{"id": 1, "text": "ok"}\n{oops\n'
    for name, data, reason in [("picture.txt", PNG, "looks like a binary file"),
                               ("broken.jsonl", broken, "line 2: not valid JSON")]:  # fmt: skip
        page.file_uploader(key="upload_files").set_value((name, data, "text/plain"))
        page.text_input(key="upload_name").input("attempt").run()  # the button waits for files
        page.button(key="upload_build").click().run()
        assert not page.exception
        assert any(reason in e.value and name in e.value for e in page.error), [e.value for e in page.error]
        assert "index_path" not in page.session_state or page.session_state["index_path"] == str(
            small_index.path
        )
        assert documents(page) == "3"  # the previous index is still the one shown
        assert not (tmp_path / "attempt").exists()


def test_a_bad_name_is_an_error(page: AppTest, small_index: Index) -> None:
    page.file_uploader(key="upload_files").set_value(("people.jsonl", JSONL, "application/json"))
    page.text_input(key="upload_name").input("../escape").run()
    page.button(key="upload_build").click().run()
    assert any("path separator" in e.value for e in page.error)
    assert documents(page) == "3"


def test_a_good_upload_builds_and_switches_the_index(page: AppTest, tmp_path: Path) -> None:
    page.file_uploader(key="upload_files").set_value(
        [
            ("people.jsonl", JSONL, "application/json"),
            ("notes.txt", b"Otto Hahn lived in Berlin.", "text/plain"),
        ]
    )
    page.text_input(key="upload_name").input("physicists").run()
    page.button(key="upload_build").click().run()
    assert not page.exception and not page.error
    assert page.session_state["index_path"] == str(tmp_path / "physicists")
    shown = {m.label: m.value for m in page.metric}
    assert (shown["Documents"], shown["Sentences"]) == ("3", "4")  # 2 + 1 documents; 1 + 2 + 1 sentences
    assert any("It is now the loaded index" in s.value for s in page.success)


def test_replacing_an_index_needs_the_checkbox(page: AppTest, tmp_path: Path) -> None:
    page.file_uploader(key="upload_files").set_value(("people.jsonl", JSONL, "application/json"))
    page.text_input(key="upload_name").input("twice").run()
    page.button(key="upload_build").click().run()
    assert page.session_state["index_path"] == str(tmp_path / "twice") and documents(page) == "2"
    notes = ("notes.txt", b"Otto Hahn lived in Berlin.", "text/plain")
    page.file_uploader(key="upload_files").set_value(notes).run()
    page.button(key="upload_build").click().run()
    assert any("already exists" in e.value and "Replace the existing index" in e.value for e in page.error)
    assert documents(page) == "2"
    page.checkbox(key="upload_overwrite").check().run()
    page.button(key="upload_build").click().run()
    assert not page.exception and not page.error
    assert documents(page) == "1"  # the replaced index is reloaded, not served from the cache


def test_without_any_index_the_upload_is_offered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTRET_INDEX", str(tmp_path / "missing"))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(tmp_path))
    app = AppTest.from_string(SCRIPT, default_timeout=90).run()
    assert not app.exception and any("no such index folder" in e.value for e in app.error)
    app.file_uploader(key="upload_files").set_value(("people.jsonl", JSONL, "application/json"))
    app.text_input(key="upload_name").input("first").run()
    app.button(key="upload_build").click().run()
    assert not app.exception and not app.error and documents(app) == "2"
