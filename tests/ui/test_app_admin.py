"""The Admin page in Streamlit's AppTest: the token guard, close/reopen, the
annotators (add with a secret shown once, rename, disable, remove), progress, agreement, export and
import. (Creating a session is tested in ui/test_app_session_form.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.scales import relevance_rule
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.ui.pages import admin as admin_page
from tests.conftest import judgments_env

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
    create_session(store, "s", index, "picasso peace", top_entities=5, depth=1)
    for name, grades in (("ann", [4, 3, 1, 2, 1]), ("bob", [4, 1, 1])):
        handle = store.sign_in("s", name, store.admin(TOKEN).add_annotator("s", name).passphrase)
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
                                             capsys: pytest.CaptureFixture[str]) -> None:
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


def test_close_reopen_progress_and_agreement(store: JudgmentStore, small_index: Index) -> None:
    graded_session(store, small_index)
    app = signed_in()
    assert not app.exception and not app.error
    progress = next(d.value for d in app.dataframe if "graded" in d.value.columns)
    assert progress.set_index("annotator")["graded"].to_dict() == {"ann": 5, "bob": 3}
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Items shared by ≥ 2 annotators"] == "3"
    # three shared items: no coefficient, but how many items there are and why
    assert metrics["Krippendorff's α (ordinal)"] == "—" and metrics["Fleiss' κ"] == "—"
    assert any("too few shared items (n = 3 < 10)" in c.value.replace("\\", "") for c in app.caption)
    kappa = next(d.value for d in app.dataframe if "Cohen's κ" in d.value.columns)
    assert kappa.iloc[0][["annotator A", "annotator B", "shared items", "Cohen's κ", "note"]].tolist() == [
        "ann", "bob", 3, "—", "too few shared items (n = 3 < 10)"
    ]
    # below the κ threshold the raw agreement is still shown, with its n: the shared items' grades compared
    grades: dict[str, dict[tuple[str, int], int]] = {}
    for j in store.admin(TOKEN).all_judgments("s"):
        grades.setdefault(j.annotator, {})[(j.topic_id, j.sentence_id)] = j.grade
    shared = grades["ann"].keys() & grades["bob"].keys()
    agreed = sum(grades["ann"][i] == grades["bob"][i] for i in shared)
    assert len(shared) == 3
    assert kappa.iloc[0]["same grade"] == f"{100 * agreed / 3:.1f}% ({agreed} of 3 shared items)"
    app.button(key="admin_close").click().run()
    assert not store.session("s").is_open
    assert app.button(key="admin_reopen") is not None
    app.button(key="admin_reopen").click().run()
    assert store.session("s").is_open


def test_export_contents(store: JudgmentStore, small_index: Index) -> None:
    graded_session(store, small_index)
    app = signed_in()
    labels = [b.label for b in app.download_button]
    assert labels == ["Download qrels", "Download CSV", "Download JSONL", "Download topics",
                      "Download for Label Studio", "Download for Hugging Face"]
    topics = store.admin(TOKEN).export_topics("s").splitlines()  # what "Download topics" serves
    assert topics and all(len(line.split("\t")) == 3 for line in topics)  # topic id, query, entity
    qrels = app.code[0].value.splitlines()
    # majority of (4, 4), (3, 1) -> 1 (ties go to the lower grade), (1, 1), 2, 1
    assert len(qrels) == 5 and all(len(line.split()) == 4 for line in qrels)
    by_admin = store.admin(TOKEN).export_qrels("s", rule="majority").splitlines()
    assert qrels == by_admin
    # the trec scale by default: grades 1, 1, 1, 2, 4 written as 0, 0, 0, 1, 3
    assert sorted(int(line.split()[3]) for line in qrels) == [0, 0, 0, 1, 3]
    assert "trec_eval -l 2" in app.expander[-1].label
    app.selectbox(key="admin_rule").set_value("annotator").run()
    app.selectbox(key="admin_rule_annotator").set_value("bob").run()
    assert sorted(int(line.split()[3]) for line in app.code[0].value.splitlines()) == [0, 0, 3]
    app.selectbox(key="admin_scale").set_value("1-4").run()
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
    # the scale was sniffed (auto, the default) and said: ann's grades 4, 3, 1, 2, 1 are trec 3, 2, 0, 1, 0
    assert app.selectbox(key="admin_import_scale").value == "auto"
    assert "values 0-3 found: read as trec scale, relevant ≥ 2." in [c.value for c in app.caption]
    assert set(admin.progress_by_annotator("s")) == {"ann", "bob", "gold"}
    assert admin.all_judgments("s")[0].grade in (1, 2, 3, 4)
    assert sorted(j.grade for j in admin.all_judgments("s") if j.annotator == "gold") == sorted(
        j.grade for j in admin.all_judgments("s") if j.annotator == "ann"
    )  # the trec scale read back as it was written
    # JSONL: a new annotator's lines, and a bad file that changes nothing
    carol = [dict(j, annotator="carol") for j in jsonl if j["annotator"] == "bob"]
    app.radio(key="admin_import_format").set_value("jsonl").run()
    app.file_uploader(key="admin_import_file_jsonl").set_value(
        ("carol.jsonl", "".join(json.dumps(j) + "\n" for j in carol).encode(), "application/jsonl")
    )
    app.run()
    app.button(key="admin_import").click().run()
    assert any("3 judgment(s)" in s.value for s in app.success)
    assert {a.name: a.kind for a in admin.annotators("s")}["carol (imported)"] == "import"  # never a person
    bad = ("bad.jsonl", b"{not json\n", "application/jsonl")
    app.file_uploader(key="admin_import_file_jsonl").set_value(bad)
    app.run()
    app.button(key="admin_import").click().run()
    assert next(e.value for e in app.error).startswith("JSONL line 1: not valid JSON")
    assert len(admin.all_judgments("s")) == 5 + 3 + 5 + 3


def _click(app: AppTest, label: str) -> AppTest:
    return next(b for b in app.button if b.label == label).click().run()


def test_annotators_get_a_secret_shown_once_and_can_be_changed(store: JudgmentStore, small_index: Index) -> None:
    from sentret_core.annotation.annotator import SignedOut
    from sentret_core.errors import SentretError

    create_session(store, "s", small_index, "picasso peace", top_entities=5, depth=1)
    app = signed_in()
    assert any("No annotator yet" in i.value for i in app.info)
    app.text_input(key="admin_annotator_new").input("  Alice  ")
    app = _click(app, "Add person")
    assert not app.exception and not app.error, [e.value for e in app.error]
    link, phrase = (c.value for c in app.code[:2])
    assert link.startswith("http://localhost:8501/annotate?session=s&token=")
    assert phrase.startswith("passphrase: ")
    token, passphrase = link.split("token=")[1], phrase.removeprefix("passphrase: ")
    alice = store.sign_in_with_token("s", token)
    assert alice.annotator == "Alice" and store.sign_in("s", "alice", passphrase).annotator == "Alice"
    table = next(d.value for d in app.dataframe if "status" in d.value.columns)
    assert table[["annotator", "status", "sign-in link", "passphrase"]].values.tolist() == [
        ["Alice", "active", True, True]
    ]
    app.run()  # shown once: the next run no longer has it
    assert not any(token in c.value for c in app.code)
    # a name that differs only in case and spaces is the same annotator: refused
    app.text_input(key="admin_annotator_new").input("ALICE")
    app = _click(app, "Add person")
    assert [e.value for e in app.error] == ["session 's' already has an annotator named 'ALICE'"]

    app.selectbox(key="admin_annotator_pick").set_value("Alice").run()
    app.button(key="admin_annotator_disable").click().run()
    with pytest.raises(SignedOut):
        alice.grade(1, 3)  # the open handle stops working
    with pytest.raises(SentretError, match="disabled"):
        store.sign_in("s", "Alice", passphrase)
    app.button(key="admin_annotator_enable").click().run()
    app.text_input(key="admin_annotator_rename_to").input("Alice Smith")
    app.button(key="admin_annotator_rename").click().run()
    assert any("Renamed Alice to Alice Smith." in s.value for s in app.success)
    alice = store.sign_in("s", "alice smith", passphrase)
    alice.grade(1, 3)
    app.selectbox(key="admin_annotator_pick").set_value("Alice Smith").run()
    app.button(key="admin_annotator_secret").click().run()
    new_link = app.code[0].value
    assert "token=" in new_link and token not in new_link
    with pytest.raises(SentretError, match="not valid"):
        store.sign_in_with_token("s", token)  # the old link no longer works
    assert store.sign_in_with_token("s", new_link.split("token=")[1]).annotator == "Alice Smith"
    # removal needs the confirmation; the grade then counts nowhere but stays in the history
    assert app.button(key="admin_annotator_remove").disabled
    app.checkbox(key="admin_annotator_sure").check().run()
    app.button(key="admin_annotator_remove").click().run()
    assert any("Removed Alice Smith" in s.value for s in app.success)
    admin = store.admin(TOKEN)
    assert admin.annotators("s") == [] and admin.all_judgments("s") == []
    assert [h.new_grade for h in admin.history("s")] == [3] and "(removed" in admin.history("s")[0].annotator
    assert not app.exception


def test_a_new_session_is_selected_and_every_action_names_its_session(
    store: JudgmentStore, small_index: Index
) -> None:
    """A regression: after creating a session the panel stayed on the previous one ("Add annotator" added
    Alice to the wrong session), and the form kept the old name, topics and upload."""
    from sentret_core.ui.disagreements import RULE
    from sentret_core.ui.session_form import FILE, field_key

    create_session(store, "old", small_index, "picasso peace", top_entities=1, depth=1)
    create_session(store, "older", small_index, "lennon religion", top_entities=1, depth=1)
    app = signed_in()
    app.selectbox(key="admin_session").set_value("old").run()  # the admin works on "old"
    assert [c.value.split(" · ")[0] for c in app.caption if c.value.startswith("Session: ")] == ["Session: **old**"] * 5
    app.text_input(key="admin_new_name").input("new")
    app.file_uploader(key=FILE).set_value(("t.tsv", b"picasso peace\tPicasso|PERSON\n", "text/plain"))
    app.button(key="admin_preview").click().run()
    app.button(key="admin_create").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert app.selectbox(key="admin_session").value == "new"
    # annotators, export and import each say which session they act on
    captions = [c.value for c in app.caption if c.value.startswith("Session: ")]
    assert captions == ["Session: **new**", "Session: **new**", f"Session: **new** · {RULE}",
                        f"Session: **new** · {relevance_rule()}", "Session: **new**"]
    # annotators, flags and notes, disagreements, export, import
    app.text_input(key="admin_annotator_new").input("Alice")
    app = _click(app, "Add person")
    admin = store.admin(TOKEN)
    assert [a.name for a in admin.annotators("new")] == ["Alice"] and admin.annotators("old") == []
    # the form is empty again: no name, no upload (a new uploader), nothing to create twice
    assert app.text_input(key=field_key("admin_new_name", 1)).value == ""
    assert app.file_uploader(key=field_key(FILE, 1)).value is None
    assert not any(b.key == "admin_create" for b in app.button)


def test_flags_and_notes_reach_the_admin(store: JudgmentStore, small_index: Index) -> None:
    graded_session(store, small_index)
    app = signed_in()
    assert "No annotator has flagged an item or written a note yet." in [i.value for i in app.info]
    bob = store.sign_in("s", "bob", store.admin(TOKEN).new_secret("s", "bob").passphrase)
    first, second = bob.item_at(0), bob.item_at(1)
    bob.flag(first.item_id)
    bob.grade(second.item_id, 1, "names the war, not the prize")
    app.run()
    assert not app.exception and not app.error
    table = next(d.value for d in app.dataframe if "flag" in d.value.columns)
    assert table[["item", "annotator", "flag", "note"]].values.tolist() == [
        [first.position + 1, "bob", "⚑", ""],
        [second.position + 1, "bob", "", "names the war, not the prize"],
    ]
    assert "1 flagged · 1 with a note" in [c.value for c in app.caption]


def test_the_admin_sees_index_names_never_the_servers_folders(store: JudgmentStore, small_index: Index) -> None:
    """A projected or shared Admin page names the index by its folder, as links do, not by the server's path."""
    graded_session(store, small_index)
    app = signed_in()
    assert not app.exception and not app.error
    texts = [str(e.value) for kind in ("markdown", "caption", "info", "warning") for e in getattr(app, kind)]
    texts += [app.dataframe[0].value.to_csv()]
    absolute = str(small_index.path.resolve())
    assert not [t for t in texts if absolute in t or str(small_index.path.parent) in t]
    assert app.dataframe[0].value["index"].tolist() == [small_index.path.name]
    assert any(f"index {small_index.path.name} ·" in t for t in texts)
    assert app.dataframe[0].value["entities"].tolist() == [
        "entities by kld over the top 100 sentences of bm25f.v1, sentences weighted by score"]


def test_durations_read_as_people_say_them() -> None:
    shown = [admin_page._duration(s) for s in (None, 4.25, 42.4, 185, 3725)]
    assert shown == ["—", "4.2 s", "42 s", "3 min 05 s", "1 h 02 min"]


def test_the_admin_suggests_grades_with_a_model_and_sees_how_often_they_were_taken(
    store: JudgmentStore, small_index: Index
) -> None:
    graded_session(store, small_index)  # ann and bob graded before any suggestion: nothing to compare yet
    app = signed_in()
    assert any(i.value == "No annotator has graded a suggested sentence yet." for i in app.info)
    app.selectbox(key="admin_suggest_model").select("tfisf.v1")
    app = app.button(key="admin_suggest").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any(s.value == "Stored 5 suggestions from tfisf.v1." for s in app.success)
    table = next(d.value for d in app.dataframe if "same relevance (≥ 3 or not)" in d.value.columns)
    assert table["annotator"].tolist() == ["ann", "bob"] and table["compared"].tolist() == [5, 3]
    assert all(v.endswith("%") for v in table["same relevance (≥ 3 or not)"])
