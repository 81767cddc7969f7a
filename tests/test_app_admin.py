"""The Admin page in Streamlit's AppTest: the token guard, creating sessions, close/reopen,
progress, agreement, export and import."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import judgments_env
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.ui.pages import admin as admin_page

SCRIPT = "from sentret_core.ui.pages import admin as admin_page\nadmin_page.render()\n"
TOKEN = "admin-page-test-token"


@pytest.fixture
def store(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as opened:
        yield opened


def signed_in(token: str = TOKEN) -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.text_input(key="admin_token").input(token)
    return app.button[0].click().run()


def graded_session(store: JudgmentStore, index: Index) -> None:
    """Session 's' (5 items), graded by ann (all) and bob (the first three)."""
    create_session(store, "s", index, "picasso peace", "pw", top_entities=5, depth=1)
    for name, grades in (("ann", [4, 3, 1, 2, 1]), ("bob", [4, 1, 1])):
        handle = store.sign_in("s", name, "pw")
        for grade in grades:
            item = handle.next_item()
            assert item is not None
            handle.grade(item.item_id, grade)


def test_refuses_without_the_token(store: JudgmentStore, small_index: Index) -> None:
    graded_session(store, small_index)
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    assert not app.exception
    assert [i.value for i in app.info] == ["This page needs the admin token."]
    assert not app.dataframe and not app.download_button
    app = signed_in("not-the-token")
    assert [e.value for e in app.error] == ["wrong admin token"]
    assert not app.dataframe and not app.download_button


def test_the_generated_token_is_printed_once(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.delenv(ADMIN_TOKEN_ENV, raising=False)
    admin_page.announce_admin_token.cache_clear()
    assert admin_page.announce_admin_token() is True
    assert admin_page.announce_admin_token() is True  # cached: not printed again
    err = capsys.readouterr().err
    assert err.count("admin token for this server process") == 1
    from sentret_core.annotation.auth import admin_token

    assert admin_token() in err
    monkeypatch.setenv(ADMIN_TOKEN_ENV, "chosen")
    admin_page.announce_admin_token.cache_clear()
    assert admin_page.announce_admin_token() is False
    assert "chosen" not in capsys.readouterr().err


def test_create_a_session_from_topics(store: JudgmentStore, small_index: Index) -> None:
    app = signed_in()
    assert not app.exception and not app.error
    app.text_input(key="admin_new_name").input("first")
    app.text_input(key="admin_new_passphrase").input("secret")
    app.text_area(key="admin_topics").input("picasso peace\tPicasso|PERSON\nlennon religion")
    app.number_input(key="admin_top_entities").set_value(2)
    app.button(key="admin_create").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any("Created session 'first'" in s.value for s in app.success)
    assert app.dataframe[0].value["session"].tolist() == ["first"]  # listed at once
    info = store.session("first")
    assert info.settings.models == ("bm25f.v1", "lm-2si.v1", "tfisf.v1") and info.settings.depth == 10
    pairs = [e for _, e in info.entities]
    assert pairs[0] == "Picasso|PERSON" and len(pairs) == 3  # + the two top entities of "lennon religion"
    assert store.sign_in("first", "ann", "secret").next_item() is not None
    # the same name again is refused with one message
    app.button(key="admin_create").click().run()
    assert [e.value for e in app.error] == ["a session named 'first' already exists"]


def test_create_errors_and_the_explore_query(store: JudgmentStore) -> None:
    app = signed_in()
    app.text_input(key="admin_new_name").input("x")
    app.text_input(key="admin_new_passphrase").input("pw")
    app.button(key="admin_create").click().run()
    assert any("no topics" in e.value for e in app.error)
    app.text_area(key="admin_topics").input("picasso peace\tNobody")
    app.button(key="admin_create").click().run()
    assert any("no entity 'Nobody'" in e.value for e in app.error)
    assert store.sessions() == []
    app.button(key="admin_from_explore").click().run()
    assert any("no current query" in w.value for w in app.warning)
    # the Explore page's query widget state; the page keeps a copy past Streamlit's widget clean-up
    app.session_state["explore_query"] = "spanish war"
    app.run()
    del app.session_state["explore_query"]
    app.button(key="admin_from_explore").click().run()
    assert app.text_area(key="admin_topics").value == "picasso peace\tNobody\nspanish war"


def test_close_reopen_progress_and_agreement(store: JudgmentStore, small_index: Index) -> None:
    graded_session(store, small_index)
    app = signed_in()
    assert not app.exception and not app.error
    progress = next(d.value for d in app.dataframe if "graded" in d.value.columns)
    assert progress.set_index("annotator")["graded"].to_dict() == {"ann": 5, "bob": 3}
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Items shared by ≥ 2 annotators"] == "3"
    assert metrics["Krippendorff's α (ordinal)"] not in ("", "—")
    kappa = next(d.value for d in app.dataframe if "Cohen's κ" in d.value.columns)
    assert kappa.iloc[0][["annotator A", "annotator B", "shared items"]].tolist() == ["ann", "bob", 3]
    app.button(key="admin_close").click().run()
    assert not store.session("s").is_open
    assert app.button(key="admin_reopen") is not None
    app.button(key="admin_reopen").click().run()
    assert store.session("s").is_open


def test_export_contents(store: JudgmentStore, small_index: Index) -> None:
    graded_session(store, small_index)
    app = signed_in()
    labels = [b.label for b in app.download_button]
    assert labels == ["Download qrels", "Download CSV", "Download JSONL"]
    qrels = app.code[0].value.splitlines()
    # majority of (4, 4), (3, 1) -> 1 (ties go to the lower grade), (1, 1), 2, 1
    assert len(qrels) == 5 and all(len(line.split()) == 4 for line in qrels)
    by_admin = store.admin(TOKEN).export_qrels("s", rule="majority").splitlines()
    assert qrels == by_admin
    assert sorted(int(line.split()[3]) for line in qrels) == [1, 1, 1, 2, 4]
    app.selectbox(key="admin_rule").set_value("annotator").run()
    app.selectbox(key="admin_rule_annotator").set_value("bob").run()
    assert sorted(int(line.split()[3]) for line in app.code[0].value.splitlines()) == [1, 1, 4]


def test_import_qrels_and_jsonl(store: JudgmentStore, small_index: Index) -> None:
    graded_session(store, small_index)
    admin = store.admin(TOKEN)
    qrels = admin.export_qrels("s", rule="annotator", annotator="ann")
    jsonl = [json.loads(line) for line in admin.export_jsonl("s").splitlines()]
    app = signed_in()
    app.text_input(key="admin_import_annotator").input("gold")
    app.file_uploader(key="admin_import_file_qrels").set_value(("ann.qrels", qrels.encode(), "text/plain"))
    app.run()
    app.button(key="admin_import").click().run()
    assert any("5 judgment(s)" in s.value for s in app.success), [e.value for e in app.error]
    assert set(admin.progress_by_annotator("s")) == {"ann", "bob", "gold"}
    # JSONL: a new annotator's lines, and a bad file that changes nothing
    carol = [dict(j, annotator="carol") for j in jsonl if j["annotator"] == "bob"]
    app.radio(key="admin_import_format").set_value("jsonl").run()
    app.file_uploader(key="admin_import_file_jsonl").set_value(
        ("carol.jsonl", "".join(json.dumps(j) + "\n" for j in carol).encode(), "application/jsonl")
    )
    app.run()
    app.button(key="admin_import").click().run()
    assert any("3 judgment(s)" in s.value for s in app.success)
    bad = ("bad.jsonl", b"{not json\n", "application/jsonl")
    app.file_uploader(key="admin_import_file_jsonl").set_value(bad)
    app.run()
    app.button(key="admin_import").click().run()
    assert next(e.value for e in app.error).startswith("JSONL line 1: not valid JSON")
    assert len(admin.all_judgments("s")) == 5 + 3 + 5 + 3
