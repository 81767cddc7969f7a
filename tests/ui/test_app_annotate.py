"""The Annotate page in Streamlit's AppTest: sign-in, grading, undo, skip, back, resume, isolation.

Each ``AppTest`` is one browser session; a fresh one after grading is a reload of the tab.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Button

from sentret_core import Index
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from tests.conftest import judgments_env
from tests.sign_in_util import enrol, sign_in_app

TOKEN = "annotate-test-token"


@pytest.fixture
def store(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as opened:
        # another session first, so that the item ids of session "s" do not start at 1
        create_session(opened, "other", small_index, "lennon religion", top_entities=2, depth=2)
        # the five top entities of the query, one candidate sentence each on this corpus
        info, _ = create_session(opened, "s", small_index, "picasso peace", top_entities=5, depth=2)
        assert info.n_items == 5
        enrol(opened, TOKEN, "s", "ann", "bob")
        yield opened


def sign_in(session: str = "s", name: str = "ann", secret: str | None = None) -> AppTest:
    return sign_in_app(session, name, secret)


def position(app: AppTest) -> str:
    """The caption naming the item shown, e.g. 'Item 2'."""
    return next(c.value for c in app.caption if c.value.startswith("Item"))


def keys_script(app: AppTest) -> str:
    """The keyboard shortcuts component's script (the page's other component writes the sign-in cookie)."""
    return next(e.proto.srcdoc for e in app.get("iframe") if "keydown" in e.proto.srcdoc)


def run_number(app: AppTest) -> int:
    """The run number the keyboard shortcuts component carries."""
    found = re.search(r"sentret-run=(\d+)", keys_script(app))
    assert found is not None
    return int(found[1])


def grade_button(app: AppTest, grade: int) -> Button:
    return next(b for b in app.button if (b.key or "").startswith(f"grade{grade}_"))


def grades(store: JudgmentStore, name: str = "ann") -> dict[int, int]:
    """position → grade of one annotator, read through the admin interface."""
    return {j.position: j.grade for j in store.admin(TOKEN).all_judgments("s") if j.annotator == name}


@pytest.mark.parametrize(
    ("session", "passphrase", "message"),
    [("nope", None, "no session named 'nope'"), ("s", "wrong-passphrase", "wrong name or passphrase for session 's'")],
)
def test_sign_in_errors_write_nothing(store: JudgmentStore, session: str, passphrase: str | None, message: str) -> None:
    app = sign_in(session, "ann", passphrase)
    assert not app.exception
    assert [e.value for e in app.error] == [message]
    assert grades(store) == {}


def test_closed_session_refuses_sign_in(store: JudgmentStore) -> None:
    store.admin(TOKEN).close_session("s")
    app = sign_in()
    assert any("is closed" in e.value for e in app.error)
    assert not app.get("progress")


def test_grading_advances_and_persists(store: JudgmentStore) -> None:
    app = sign_in()
    assert not app.exception and not app.error
    assert position(app) == "Item 1"
    html = "".join(m.value for m in app.markdown)
    assert "picasso peace" in html and 'class="entity"' in html and '<mark class="term">' in html
    grade_button(app, 3).click().run()
    assert position(app) == "Item 2"
    grade_button(app, 1).click().run()
    assert position(app) == "Item 3"
    assert grades(store) == {0: 3, 1: 1}
    assert app.get("progress")[0].proto.text.startswith("2 of 5 graded")
    # the keyboard shortcuts component is on the page and maps 1-4 to the grade buttons; each run
    # draws it with a new run number, which tells the key handler that a press has been answered
    script = keys_script(app)
    assert '"3": "grade3_"' in script
    run = run_number(app)
    app.run()
    assert run_number(app) == run + 1


def test_undo_reverts_the_last_grade(store: JudgmentStore) -> None:
    app = sign_in()
    grade_button(app, 4).click().run()
    grade_button(app, 2).click().run()
    assert grades(store) == {0: 4, 1: 2}
    app.button(key="annotate_undo").click().run()
    assert grades(store) == {0: 4} and position(app) == "Item 2"
    app.button(key="annotate_undo").click().run()
    assert grades(store) == {} and position(app) == "Item 1"
    app.button(key="annotate_undo").click().run()
    assert [i.value for i in app.info] == ["Nothing to undo."]


def test_resume_after_a_reload_and_isolation(store: JudgmentStore) -> None:
    first = sign_in("s", "ann")
    grade_button(first, 4).click().run()
    grade_button(first, 3).click().run()
    # a new browser session: the same annotator resumes at the third item
    again = sign_in("s", "ann")
    assert position(again) == "Item 3"
    assert again.get("progress")[0].proto.text.startswith("2 of 5 graded")
    # another annotator starts from the beginning and sees none of ann's grades
    other = sign_in("s", "bob")
    assert position(other) == "Item 1"
    assert "your grade" not in position(other)
    assert other.get("progress")[0].proto.text.startswith("0 of 5 graded")
    grade_button(other, 1).click().run()
    assert grades(store, "bob") == {0: 1} and grades(store, "ann") == {0: 4, 1: 3}
    other.button(key="annotate_undo").click().run()  # bob's undo touches bob's grade only
    assert grades(store, "bob") == {} and grades(store, "ann") == {0: 4, 1: 3}


def test_skip_back_and_regrade(store: JudgmentStore) -> None:
    app = sign_in()
    app.button(key="annotate_skip").click().run()
    assert position(app) == "Item 2"
    grade_button(app, 2).click().run()
    assert position(app) == "Item 3"
    app.button(key="annotate_back").click().run()
    assert position(app) == "Item 2 · revisiting · your grade: **2** (fairly relevant)"
    assert app.button(key="annotate_skip").disabled  # a graded item cannot be skipped
    app.button(key="annotate_back").click().run()
    assert position(app).startswith("Item 1 · revisiting") and "your grade" not in position(app)
    app.button(key="annotate_back").click().run()
    assert [i.value for i in app.info] == ["This is the first item."]
    grade_button(app, 3).click().run()  # grade the skipped item: on to the next already seen
    assert position(app).startswith("Item 2 · revisiting")
    grade_button(app, 4).click().run()  # change a grade: on to the next item to grade
    assert position(app) == "Item 3"
    assert grades(store) == {0: 3, 1: 4}
    app.button(key="annotate_back").click().run()
    app.button(key="annotate_current").click().run()
    assert position(app) == "Item 3"


def test_grading_a_closed_session_is_refused(store: JudgmentStore) -> None:
    app = sign_in()
    store.admin(TOKEN).close_session("s")
    app.run()
    assert any("is closed" in e.value for e in app.error)
    grade_button(app, 3).click().run()
    assert any("closed; no more grades" in e.value for e in app.error)
    assert grades(store) == {}


def test_all_graded_thanks_the_annotator(store: JudgmentStore) -> None:
    app = sign_in()
    for _ in range(5):
        grade_button(app, 1).click().run()
    assert any("All 5 items are graded" in s.value for s in app.success)
    app.button(key="annotate_back").click().run()
    assert position(app).startswith("Item 5 · revisiting")
    # a new browser session of a finished annotator: Undo brings back the last grade, then Back works
    again = sign_in()
    assert again.button(key="annotate_back").disabled
    again.button(key="annotate_undo").click().run()
    assert position(again) == "Item 5" and grades(store) == {0: 1, 1: 1, 2: 1, 3: 1}
    again.button(key="annotate_back").click().run()
    assert position(again).startswith("Item 4 · revisiting · your grade: **1**")


def test_context_and_sign_out(store: JudgmentStore) -> None:
    app = sign_in()
    sentence = next(m.value for m in app.markdown if "annotate-sentence" in m.value)
    app.toggle(key="annotate_context").set_value(True).run()
    shown = [m.value for m in app.markdown if "color:#6b7280" in m.value]
    assert shown and "<b>" in shown[0]
    assert "&lt;" not in sentence  # nothing double-escaped
    app.button(key="annotate_sign_out").click().run()
    assert app.text_input(key="annotate_name") is not None
    assert not app.get("progress")
