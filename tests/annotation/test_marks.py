"""Notes and flags are part of a judgment's history: an ungraded item keeps them (never only in a tab), undo
never drops a note, and a note or flag change is undone like a grade (sentret_core.annotation.marks)."""

from __future__ import annotations

from sentret_core.annotation.marks import ItemState
from sentret_core.annotation.schema import _MARKS
from sentret_core.annotation.store import JudgmentStore
from tests.annotation.downgrade import downgrade
from tests.annotation.test_store import TOKEN, join


def history(store: JudgmentStore) -> list[tuple[object, ...]]:
    with store.db.read() as conn:
        return conn.execute("SELECT action, old_grade, new_grade, old_note, new_note, old_flagged, new_flagged"
                            " FROM history ORDER BY id").fetchall()


def test_an_ungraded_items_note_and_flag_are_stored_and_go_with_its_grade(store: JudgmentStore) -> None:
    ann = join(store)
    ann.flag(2)
    ann.note(2, "  is 'Woz' the same person?  ")
    other_tab = store.sign_in("s", "ann", "ann-passphrase-1")  # another tab or process sees them
    assert other_tab.state_of(2) == ItemState(None, "is 'Woz' the same person?", True)
    assert history(store) == []  # nothing graded yet: no judgment changed
    ann.grade(2, 3)  # the note and flag given before go with the grade
    assert ann.state_of(2) == ItemState(3, "is 'Woz' the same person?", True)
    [judgment] = store.admin(TOKEN).all_judgments("s")
    assert (judgment.grade, judgment.note, judgment.flagged) == (3, "is 'Woz' the same person?", True)
    assert history(store) == [("set", None, 3, "is 'Woz' the same person?", "is 'Woz' the same person?", 1, 1)]
    with store.db.read() as conn:
        assert conn.execute("SELECT count(*) FROM marks").fetchone()[0] == 0
    ann.grade(2, 4, None)  # a note given as none clears it; the default keeps it
    assert ann.state_of(2) == ItemState(4, None, True)
    ann.note(3, "x")
    ann.note(3, "   ")  # blank: no note, and no mark left behind
    ann.flag(4)
    ann.flag(4, False)
    with store.db.read() as conn:
        assert conn.execute("SELECT count(*) FROM marks").fetchone()[0] == 0
    assert store.check() == []


def test_undo_takes_back_a_grade_but_never_the_note_written_with_it(store: JudgmentStore) -> None:
    ann = join(store)
    ann.grade(1, 2, "only the founders' names", flagged=True)
    undone = ann.undo()
    assert undone is not None and undone.item_id == 1
    assert ann.state_of(1) == ItemState(None, "only the founders' names", True)  # ungraded, note and flag kept
    assert ann.my_judgments() == []
    assert history(store)[-1] == ("undo", 2, None, "only the founders' names", "only the founders' names", 1, 1)
    ann.grade(1, 3)  # graded again: the kept note and flag are there
    assert ann.state_of(1) == ItemState(3, "only the founders' names", True)
    # a regrade with a new note: undo brings the grade back and leaves the new note
    ann.grade(1, 4, "it says why")
    ann.undo()
    assert ann.state_of(1) == ItemState(3, "it says why", True)
    assert store.check() == []


def test_a_note_or_flag_change_is_undone_like_a_grade(store: JudgmentStore) -> None:
    ann = join(store)
    ann.grade(1, 3, "first")
    ann.note(1, "second")
    ann.flag(1)
    assert ann.state_of(1) == ItemState(3, "second", True)
    ann.undo()  # the flag
    assert ann.state_of(1) == ItemState(3, "second", False)
    ann.undo()  # the note
    assert ann.state_of(1) == ItemState(3, "first", False)
    ann.undo()  # the grade: the note stays
    assert ann.state_of(1) == ItemState(None, "first", False)
    assert ann.undo() is None
    assert [row[0] for row in history(store)] == ["set", "change", "change", "undo", "undo", "undo"]
    assert store.check() == []


def test_a_database_from_before_marks_is_read_as_it_is_and_migrated_on_writing(store: JudgmentStore) -> None:
    ann = join(store)
    ann.grade(1, 3, "kept", flagged=True)
    path = store.path
    store.close()
    downgrade(path, _MARKS)  # the schema just before marks: history rows without flags
    with JudgmentStore(path, read_only=True) as old:
        [judgment] = old.admin(TOKEN).all_judgments("s")
        assert (judgment.grade, judgment.note, judgment.flagged) == (3, "kept", True)
    with JudgmentStore(path) as upgraded:
        ann = upgraded.sign_in("s", "ann", "ann-passphrase-1")
        assert ann.state_of(1) == ItemState(3, "kept", True)
        ann.note(1, "changed")
        ann.undo()  # a row written after the migration: its flag is known
        ann.undo()  # the old row, a grade: the note and flag stay as they are
        assert ann.state_of(1) == ItemState(None, "kept", True)
        assert upgraded.check() == []

