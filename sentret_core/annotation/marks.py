"""An annotator's state of one item: grade, note and flag, read from the judgment or, for an item not
graded, from its mark (a note or flag given before grading, or kept through an undo).

A note is the annotator's own writing and a flag their question to the organiser, so neither is ever kept
only in a browser tab nor dropped when a grade is taken back: an ungraded item's note and flag live in
``marks`` (schema step ``_MARKS``), a graded item's on its judgment, and every judgment change records
the flag before and after it in ``history`` beside the grade and the note.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from sentret_core.annotation.auth import timestamp_now
from sentret_core.annotation.connect import has_table

Key = tuple[int, int, int]  # (session id, item id, annotator id)


class ItemState(NamedTuple):
    grade: int | None  # None: not graded
    note: str | None
    flagged: bool


def has_marks(conn: sqlite3.Connection) -> bool:
    """Whether the database has the marks table (a read-only one may be older)."""
    return has_table(conn, "marks")


def item_state(conn: sqlite3.Connection, key: Key) -> ItemState:
    """The annotator's grade, note and flag of the item (its judgment's, else its mark's)."""
    row = conn.execute(
        "SELECT grade, note, flagged FROM judgments WHERE session_id = ? AND item_id = ? AND annotator_id = ?", key
    ).fetchone()
    if row is not None:
        return ItemState(int(row[0]), row[1], bool(row[2]))
    mark = conn.execute(
        "SELECT note, flagged FROM marks WHERE session_id = ? AND item_id = ? AND annotator_id = ?", key
    ).fetchone() if has_marks(conn) else None
    return ItemState(None, mark[0], bool(mark[1])) if mark is not None else ItemState(None, None, False)


def write_mark(conn: sqlite3.Connection, key: Key, note: str | None, flagged: bool) -> None:
    """Keep an ungraded item's note and flag (none of either: no mark)."""
    if note is None and not flagged:
        drop_mark(conn, key)
        return
    conn.execute(
        "INSERT INTO marks (session_id, item_id, annotator_id, note, flagged, at) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (session_id, item_id, annotator_id) DO UPDATE SET"
        " note = excluded.note, flagged = excluded.flagged, at = excluded.at",
        (*key, note, int(flagged), timestamp_now()),
    )


def drop_mark(conn: sqlite3.Connection, key: Key) -> None:
    conn.execute("DELETE FROM marks WHERE session_id = ? AND item_id = ? AND annotator_id = ?", key)
