"""What teams expect from Label Studio / Prodigy on the grading page: the session's
guidelines (escaped), a key legend, a note and a flag kept with the judgment and in the exports, and
the annotator's own list of grades with a jump back to any (library and AppTest)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.records import PoolItem, PoolSettings
from sentret_core.annotation.session_setup import create_session, set_guidelines
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from sentret_core.ui.annotate.keys import NOTE_KEY
from sentret_core.ui.judgments import cached_store
from tests.conftest import judgments_env

TOKEN = "extras-admin-token"
SCRIPT = "from sentret_core.ui.pages import annotate\nannotate.render()\n"
GUIDELINES_TEXT = "Grade **4** only if the sentence *explains* the link.\n<img src=x onerror=alert(1)> [x](http://evil)"


@pytest.fixture
def store(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as opened:
        create_session(opened, "s", small_index, "picasso peace", top_entities=5, depth=2, guidelines=GUIDELINES_TEXT)
        opened.admin(TOKEN).add_annotator("s", "alice", "alice-passphrase")
        yield opened
    cached_store.clear()


def sign_in() -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.text_input(key="annotate_session").input("s")
    app.text_input(key="annotate_name").input("alice")
    app.text_input(key="annotate_passphrase").input("alice-passphrase")
    return app.button[0].click().run()


def button(app: AppTest, key: str) -> object:
    return next(b for b in app.button if (b.key or "").startswith(key))


def test_guidelines_are_stored_checked_and_only_the_admin_sets_them(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTRET_ADMIN_TOKEN", TOKEN)
    with JudgmentStore(tmp_path / "g.db") as opened:
        opened.create_session("t", "/idx", [PoolItem("q", "e", 0, "x")], PoolSettings())
        assert opened.guidelines("t") == ""
        assert set_guidelines(opened.admin(TOKEN), "t", "  Be strict.\r\nThen kind.  ") == "Be strict.\nThen kind."
        assert opened.guidelines("t") == "Be strict.\nThen kind."
        with pytest.raises(SentretError, match="only the admin"):
            set_guidelines(opened, "t", "mine now")  # type: ignore[arg-type]
        with pytest.raises(SentretError, match="at most 20,000 characters"):
            set_guidelines(opened.admin(TOKEN), "t", "x" * 20_001)
        with pytest.raises(SentretError, match="no session named"):
            opened.guidelines("nope")


def test_guidelines_and_the_legend_show_on_the_grading_page_as_text(store: JudgmentStore) -> None:
    app = sign_in()
    assert not app.exception
    html = " ".join(m.value for m in app.markdown if "annotate-guidelines" in m.value)
    # every character of the admin's text is shown as typed: nothing becomes a tag or a link
    assert "Grade **4** only if the sentence *explains* the link.<br>&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<img" not in html
    assert any(c.value.startswith("**Keys** · **1**–**4** grade") for c in app.caption)


def test_a_note_and_a_flag_are_kept_with_the_grade_and_exported(store: JudgmentStore) -> None:
    app = sign_in()
    first = button(app, "grade3_").key.split("_")[1]  # type: ignore[attr-defined]
    app.text_area(key=NOTE_KEY.format(item=first)).input("=HYPERLINK(\"x\") odd wording")
    button(app, "annotate_flag").click().run()  # flagged before grading: stored at once, kept until graded
    assert any(c.value == "Flagged for the organiser (kept until you grade it)." for c in app.caption)
    other_tab = sign_in()  # the flag is the judgment store's, not this tab's
    assert any(c.value == "Flagged for the organiser (kept until you grade it)." for c in other_tab.caption)
    assert store.admin(TOKEN).all_judgments("s") == []  # nothing graded yet
    button(app, "grade3_").click().run()
    admin = store.admin(TOKEN)
    [judgment] = admin.all_judgments("s")
    assert (judgment.grade, judgment.note, judgment.flagged) == (3, '=HYPERLINK("x") odd wording', True)
    record = json.loads(admin.export_jsonl("s"))
    assert (record["note"], record["flagged"]) == ('=HYPERLINK("x") odd wording', True)
    [row] = list(csv.DictReader(io.StringIO(admin.export_csv("s"))))
    assert (row["note"], row["flagged"]) == ('\'=HYPERLINK("x") odd wording', "True")  # never a formula


def test_my_grades_list_and_jump_back(store: JudgmentStore) -> None:
    app = sign_in()
    button(app, "grade2_").click().run()
    button(app, "grade4_").click().run()
    assert any(e.label == "Your grades (2)" for e in app.expander)
    [table] = app.dataframe
    assert list(table.value["item"]) == [1, 2] and list(table.value["grade"]) == ["2 · fairly relevant",
                                                                                 "4 · very relevant"]
    app.selectbox(key="annotate_jump_choice").select(0)  # item 1 (position 0)
    button(app, "annotate_jump").click().run()
    assert any(c.value.startswith("Item 1 · revisiting · your grade: **2**") for c in app.caption)
    # flagging a graded item works at once; so does saving its note
    button(app, "annotate_flag").click().run()
    app.text_area(key=NOTE_KEY.format(item=button(app, "grade1_").key.split("_")[1])).input("recheck")  # type: ignore[attr-defined]
    button(app, "annotate_save_note").click().run()
    first = store.admin(TOKEN).all_judgments("s")[0]
    assert (first.position, first.grade, first.flagged, first.note) == (0, 2, True, "recheck")
    assert any(i.value == "Note saved." for i in app.info)


def test_the_admin_writes_guidelines_when_creating_a_session(store: JudgmentStore) -> None:
    from sentret_core.ui.session_form import GUIDELINES, TABLE

    app = AppTest.from_string("from sentret_core.ui.pages import admin\nadmin.render()\n", default_timeout=60).run()
    app.text_input(key="admin_token").input(TOKEN)
    app = app.button[0].click().run()
    app.text_input(key="admin_new_name").input("second")
    added = [{"query": "picasso peace", "entity": "Picasso|PERSON"}]
    app.session_state[TABLE] = {"edited_rows": {}, "added_rows": added, "deleted_rows": []}
    app.text_area(key=GUIDELINES).input("Read the *whole* sentence.\nGrade 1 when unsure.")
    app.button(key="admin_preview").click().run()
    app.button(key="admin_create").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert store.guidelines("second") == "Read the *whole* sentence.\nGrade 1 when unsure."
    assert store.guidelines("s") == GUIDELINES_TEXT


def test_the_admin_edits_the_guidelines_later(store: JudgmentStore) -> None:
    script = (
        "from sentret_core.ui.judgments import app_store\n"
        "from sentret_core.ui.session_form import guidelines_editor\n"
        f"store = app_store()\nguidelines_editor(store, store.admin({TOKEN!r}), 's')\n"
    )
    app = AppTest.from_string(script, default_timeout=60).run()
    assert app.text_area(key="admin_guidelines_s").value == GUIDELINES_TEXT
    app.text_area(key="admin_guidelines_s").input("New rule: grade 1 when unsure.")
    app.button[0].click().run()
    assert not app.exception and [s.value for s in app.success] == ["Saved the guidelines of session 's'."]
    assert store.guidelines("s") == "New rule: grade 1 when unsure."
    annotator = sign_in()
    assert any("New rule: grade 1 when unsure." in m.value for m in annotator.markdown)


def test_a_late_grade_for_an_item_already_graded_is_refused_aloud(store: JudgmentStore) -> None:
    first_tab, second_tab = sign_in(), sign_in()  # both show item 1, the next to grade
    button(first_tab, "grade3_").click().run()
    button(second_tab, "grade4_").click().run()  # meant for item 1, which the other tab graded meanwhile
    assert [(j.position, j.grade) for j in store.admin(TOKEN).all_judgments("s")] == [(0, 3)]
    assert next(i.value for i in second_tab.info).startswith(
        "Your grade 4 was for item 1, which is already graded: not applied."
    )
    button(second_tab, "grade4_").click().run()  # pressed again: the item shown now, item 2
    assert [(j.position, j.grade) for j in store.admin(TOKEN).all_judgments("s")] == [(0, 3), (1, 4)]


def test_undo_of_a_noted_item_brings_it_back_with_its_note(store: JudgmentStore) -> None:
    """Undo takes back the grade and says what happened; the note written with it is in the box again."""
    app = sign_in()
    first = button(app, "grade3_").key.split("_")[1]  # type: ignore[attr-defined]
    app.text_area(key=NOTE_KEY.format(item=first)).input("names only the founders")
    button(app, "grade4_").click().run()
    assert button(app, "grade3_").key.split("_")[1] != first  # type: ignore[attr-defined]  # the next item
    button(app, "annotate_undo").click().run()
    assert not app.exception and not app.error
    assert any(i.value.startswith(r"Undid your last change \(item 1\).") for i in app.info)
    assert button(app, "grade3_").key.split("_")[1] == first  # type: ignore[attr-defined]
    assert app.text_area(key=NOTE_KEY.format(item=first)).value == "names only the founders"
    assert store.admin(TOKEN).all_judgments("s") == []
    button(app, "grade2_").click().run()  # graded again: with the note it kept
    [judgment] = store.admin(TOKEN).all_judgments("s")
    assert (judgment.grade, judgment.note) == (2, "names only the founders")


def test_the_grading_page_times_each_item_it_shows(store: JudgmentStore) -> None:
    """The page reports the item it shows, so the grade carries its time on task (Admin shows the median)."""
    app = sign_in()
    button(app, "grade3_").click().run()
    button(app, "grade1_").click().run()
    judgments = store.admin(TOKEN).all_judgments("s")
    assert len(judgments) == 2 and all(j.seconds is not None and 0 <= j.seconds < 120 for j in judgments)
    admin = AppTest.from_string("from sentret_core.ui.pages import admin\nadmin.render()\n", default_timeout=60).run()
    admin.text_input(key="admin_token").input(TOKEN)
    admin = admin.button[0].click().run()
    progress = next(d.value for d in admin.dataframe if "median time per item" in d.value.columns)
    row = progress.set_index("annotator").loc["alice"]
    assert row["graded"] == 2 and row["median time per item"].endswith(" s") and row["time on task"] != "—"
