"""Reading a session's suggested grades for one item (what an annotator sees; the admin's side, making and
comparing them, is :mod:`.suggestions`)."""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from sentret_core.annotation.connect import has_table


class Suggestion(NamedTuple):
    source: str
    grade: int


def has_suggestions(conn: sqlite3.Connection) -> bool:
    return has_table(conn, "suggestions")


def suggestions_of(conn: sqlite3.Connection, session_id: int, item_id: int) -> list[Suggestion]:
    """Every source's suggestion for one item, by source name."""
    if not has_suggestions(conn):
        return []
    rows = conn.execute("SELECT source, grade FROM suggestions WHERE session_id = ? AND item_id = ?"
                        " ORDER BY source", (session_id, item_id)).fetchall()
    return [Suggestion(str(source), int(grade)) for source, grade in rows]
