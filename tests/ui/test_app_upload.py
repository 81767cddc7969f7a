"""Corpus upload: the build logic (sentret_core.ui.upload) and the Corpus page's upload form in AppTest.

Building, replacing (and deleting) indexes needs the admin token; an index that an open annotation
session uses is never replaced; uploads are checked for type and size before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index, build_index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import CorpusError, SentretError
from sentret_core.ingest.build import BuildSummary
from sentret_core.ui import upload
from sentret_core.ui.upload import Upload, build_uploaded, check_name, save_uploads

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
TOKEN = "upload-test-token"
NOTES = ("notes.txt", b"Otto Hahn lived in Berlin.", "text/plain")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    """The app's judgments database (in ``tmp_path``) and its admin token."""
    db = tmp_path / "judgments.sqlite"
    monkeypatch.setenv("SENTRET_JUDGMENTS_DB", str(db))
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    with JudgmentStore(db) as opened:
        yield opened


def build(files: list[Upload], name: str, root: Path, store: JudgmentStore, overwrite: bool = False) -> BuildSummary:
    """``build_uploaded`` as the signed-in admin."""
    return build_uploaded(files, name, root, store=store, token=TOKEN, overwrite=overwrite)


def shared_index(root: Path) -> Path:
    """``root/shared``: an index of the two JSONL documents, built without the app."""
    (root / "shared.jsonl").write_bytes(JSONL)
    build_index(root / "shared.jsonl", root / "shared", n_process=1)
    return root / "shared"


# --- the logic ------------------------------------------------------------------------------------


def test_names_are_checked(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    for bad, reason in [("", "name"), ("a/b", "path separator"), ("..", "path separator"),
                        ("..\\x", "path separator"), (".hidden", "not allowed"), ("a b", "not allowed"),
                        ("taken", "already exists")]:
        with pytest.raises(SentretError, match=reason):
            check_name(bad, tmp_path)
    assert check_name("taken", tmp_path, overwrite=True) == tmp_path / "taken"
    assert check_name(" fine-name_1.0 ", tmp_path) == tmp_path / "fine-name_1.0"


def test_mixed_files_build_one_index_with_progress(tmp_path: Path, store: JudgmentStore) -> None:
    files = [
        Upload("notes.md", b"# Lise Meitner\n\nLise Meitner worked in Berlin with Otto Hahn.\n"),
        Upload("people.jsonl", JSONL),
        Upload(
            "table.csv", b"id,title,text\n1,Ada Lovelace,Ada Lovelace wrote about the Analytical Engine.\n"
        ),
    ]
    seen: list[float] = []
    summary = build_uploaded(files, "mine", tmp_path, store=store, token=TOKEN,
                             progress=lambda f, _m: seen.append(f))
    assert summary.documents == 4 and summary.path == tmp_path / "mine"
    index = Index.load(summary.path)
    assert sorted(index.titles) == ["Ada Lovelace", "Lise Meitner", "Marie Curie", "Niels Bohr"]
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    assert "people.jsonl:a" in set(index.documents["id"])  # ids stay unique across files
    with pytest.raises(SentretError, match="already exists"):
        build(files, "mine", tmp_path, store)
    again = build(files[:1], "mine", tmp_path, store, overwrite=True)
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
        ("page.html", b"<p>hello</p>", "page.html: unsupported file type"),
    ],
)
def test_bad_files_fail_with_their_reason(
    tmp_path: Path, store: JudgmentStore, name: str, data: bytes, reason: str
) -> None:
    with pytest.raises(SentretError, match=reason.split("|")[-1].replace("(", r"\(")) as caught:
        build([Upload("good.txt", b"Otto Hahn lived in Berlin."), Upload(name, data)], "x", tmp_path, store)
    assert str(tmp_path) not in str(caught.value) and "/tmp" not in str(caught.value)  # names as uploaded
    assert not (tmp_path / "x").exists()


def test_latin1_builds_when_the_encoding_is_chosen(tmp_path: Path, store: JudgmentStore) -> None:
    data = "Café au lait à Paris. Émile Zola lived in Paris.".encode("latin-1")
    with pytest.raises(CorpusError, match="choose the file's encoding"):
        build([Upload("latin.txt", data)], "lat", tmp_path, store)
    assert build_uploaded([Upload("latin.txt", data)], "lat", tmp_path, store=store, token=TOKEN,
                          encoding="latin-1").documents == 1


def test_the_size_limit_is_total(tmp_path: Path, store: JudgmentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upload, "MAX_TOTAL_BYTES", 100)
    files = [Upload("a.txt", b"x" * 60), Upload("b.txt", b"y" * 60)]
    with pytest.raises(SentretError, match="limit is 50 MB in total"):
        build(files, "big", tmp_path, store)
    with pytest.raises(SentretError, match="at least one file"):
        build([], "none", tmp_path, store)


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ([Upload("good.txt", b"Otto Hahn."), Upload("page.html", b"<p>x</p>")], "page.html: unsupported file type"),
        ([Upload("good.txt", b"Otto Hahn."), Upload("big.txt", b"x" * 200)], "limit is 50 MB in total"),
        ([Upload("good.txt", b"Otto Hahn."), Upload("empty.txt", b" \n")], "empty.txt: the file is empty"),
    ],
)
def test_uploads_are_checked_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: list[Upload], reason: str
) -> None:
    monkeypatch.setattr(upload, "MAX_TOTAL_BYTES", 100)
    with pytest.raises(SentretError, match=reason):
        save_uploads(files, tmp_path)
    assert list(tmp_path.iterdir()) == []  # not even the good file that came first


def test_building_needs_the_admin_token(tmp_path: Path, store: JudgmentStore) -> None:
    existing = shared_index(tmp_path)
    for token in ("", "guess", TOKEN.upper()):
        with pytest.raises(SentretError, match="admin token"):
            build_uploaded([Upload(*NOTES[:2])], "shared", tmp_path, store=store, token=token, overwrite=True)
        with pytest.raises(SentretError, match="admin token"):
            build_uploaded([Upload(*NOTES[:2])], "new", tmp_path, store=store, token=token)
    assert Index.load(existing).D == 2 and not (tmp_path / "new").exists()


def test_an_index_an_open_session_uses_is_never_replaced(tmp_path: Path, store: JudgmentStore) -> None:
    existing = shared_index(tmp_path)
    create_session(store, "pilot", Index.load(existing), "Nobel Prize", top_entities=2, depth=1)
    with pytest.raises(SentretError, match="open annotation session 'pilot'"):
        build([Upload(*NOTES[:2])], "shared", tmp_path, store, overwrite=True)
    with pytest.raises(SentretError, match="open annotation session 'pilot'"):
        check_name("shared", tmp_path, overwrite=True, in_use=store.sessions())
    assert Index.load(existing).D == 2
    store.admin(TOKEN).close_session("pilot")  # closed: its grades keep the sentence texts they were given
    assert build([Upload(*NOTES[:2])], "shared", tmp_path, store, overwrite=True).documents == 1


def test_the_server_refuses_uploads_over_the_limit() -> None:
    tomllib = pytest.importorskip("tomllib")
    config = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"
    assert config.is_file(), "streamlit run reads .streamlit/config.toml from the app's folder"
    assert tomllib.loads(config.read_text())["server"]["maxUploadSize"] == upload.MAX_TOTAL_MB


# --- the page -------------------------------------------------------------------------------------


@pytest.fixture
def anonymous(small_index: Index, tmp_path: Path, store: JudgmentStore, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The Corpus page on the small index for a visitor who has not signed in; indexes go to ``tmp_path``."""
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(tmp_path))
    return AppTest.from_string(SCRIPT, default_timeout=90).run()


def sign_in(app: AppTest, token: str = TOKEN) -> AppTest:
    app.text_input(key="upload_token").input(token)
    return next(b for b in app.button if b.label == "Sign in as admin").click().run()


@pytest.fixture
def page(anonymous: AppTest) -> AppTest:
    """The Corpus page signed in with the admin token."""
    return sign_in(anonymous)


def documents(app: AppTest) -> str:
    return {m.label: m.value for m in app.metric}["Documents"]


def has(app: AppTest, kind: str, key: str) -> bool:
    return any(w.key == key for w in app.get(kind))


def test_an_anonymous_visitor_cannot_replace_an_index(anonymous: AppTest, tmp_path: Path) -> None:
    existing = shared_index(tmp_path)
    app = anonymous
    if has(app, "file_uploader", "upload_files"):  # what a visitor could do before: replace it with one file
        app.file_uploader(key="upload_files").set_value(NOTES)
        app.text_input(key="upload_name").input("shared").run()
        app.checkbox(key="upload_overwrite").check().run()
        app.button(key="upload_build").click().run()
    assert not app.exception
    assert Index.load(existing).D == 2
    assert not has(app, "file_uploader", "upload_files") and not has(app, "button", "upload_build")
    assert any("admin token" in i.value for i in app.info)
    assert documents(app) == "3"  # exploring needs no token
    wrong = sign_in(app, "guess")
    assert [e.value for e in wrong.error] == ["wrong admin token"] and not has(wrong, "button", "upload_build")


def test_signing_in_on_the_admin_page_is_enough(anonymous: AppTest) -> None:
    from sentret_core.ui.admin_sign_in import TOKEN as SIGNED_IN

    anonymous.session_state[SIGNED_IN] = TOKEN  # what the Admin page's sign-in leaves in the session
    assert has(anonymous.run(), "file_uploader", "upload_files")


def test_an_admin_cannot_replace_an_index_an_open_session_uses(
    page: AppTest, tmp_path: Path, store: JudgmentStore
) -> None:
    existing = shared_index(tmp_path)
    create_session(store, "pilot", Index.load(existing), "Nobel Prize", top_entities=2, depth=1)
    page.file_uploader(key="upload_files").set_value(NOTES)
    page.text_input(key="upload_name").input("shared").run()
    page.checkbox(key="upload_overwrite").check().run()
    page.button(key="upload_build").click().run()
    assert not page.exception
    assert any("open annotation session" in e.value and "pilot" in e.value for e in page.error)
    assert Index.load(existing).D == 2 and documents(page) == "3"
    store.admin(TOKEN).close_session("pilot")
    page.button(key="upload_build").click().run()
    assert not page.exception and not page.error and documents(page) == "1"


def test_a_file_of_another_type_is_an_error_not_a_traceback(page: AppTest, tmp_path: Path) -> None:
    # the browser only offers the accepted types; a rewritten request can still send any name
    page.file_uploader(key="upload_files").set_value(("page.html", b"<p>hello</p>", "text/html"))
    page.run()
    assert not page.exception
    assert any(".html" in e.value and "txt" in e.value for e in page.error), [e.value for e in page.error]
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]  # nothing built, nothing left


def test_an_oversize_upload_is_refused_before_building(
    page: AppTest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upload, "MAX_TOTAL_BYTES", 100)
    page.file_uploader(key="upload_files").set_value([("a.txt", b"x" * 60, "text/plain"),
                                                       ("b.txt", b"y" * 60, "text/plain")])
    page.text_input(key="upload_name").input("big").run()
    assert not page.exception
    assert any("limit is 50 MB in total" in e.value for e in page.error)  # before Build is pressed
    assert page.button(key="upload_build").disabled
    assert not (tmp_path / "big").exists()


def test_a_bad_upload_is_an_error_and_the_index_stays(
    page: AppTest, small_index: Index, tmp_path: Path
) -> None:
    assert not page.exception and documents(page) == "3"
    broken = b'{"id": 1, "text": "ok"}\n{oops\n'
    for name, data, reason in [("picture.txt", PNG, "looks like a binary file"),
                               ("broken.jsonl", broken, "line 2: not valid JSON")]:
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


def test_without_any_index_the_upload_is_offered(
    tmp_path: Path, store: JudgmentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SENTRET_INDEX", str(tmp_path / "missing"))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(tmp_path))
    app = sign_in(AppTest.from_string(SCRIPT, default_timeout=90).run())
    assert not app.exception and any("no such index folder" in e.value for e in app.error)
    app.file_uploader(key="upload_files").set_value(("people.jsonl", JSONL, "application/json"))
    app.text_input(key="upload_name").input("first").run()
    app.button(key="upload_build").click().run()
    assert not app.exception and not app.error and documents(app) == "2"
