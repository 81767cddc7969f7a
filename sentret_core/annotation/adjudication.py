"""Disagreements and adjudication: the items annotators graded differently, side by side, and the
*adjudicated grade* of one, kept apart from the annotators' own grades. Who adjudicates: the admin (the
admin token, or a session's admin) or a session's reviewer (:mod:`.roles`, :mod:`.review`).

The rule: an item's adjudicated grade, when it has one, is its grade in qrels exports and evaluation
under the majority and mean rules, which decide only the items without one; the annotator rule
still reads that annotator's own grades, and no annotator's grade is ever changed.

Adjudications live in their own table (one per item, :mod:`.schema`), every change also in an
append-only log that also says who made it. A database opened read-only before it had that table has no
adjudications.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from sentret_core.annotation.auth import timestamp_now
from sentret_core.annotation.connect import has_column, has_table
from sentret_core.annotation.records import GRADES
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import topic_id

if TYPE_CHECKING:
    from sentret_core.annotation.store import JudgmentStore


class Adjudicator(Protocol):
    """Who may adjudicate: an :class:`~.admin.Admin` or a :class:`~.review.Reviewer`."""

    @property
    def store(self) -> JudgmentStore: ...

    @property
    def acting_as(self) -> str | None:
        """The person's name in the adjudication log (None: the holder of the admin token)."""

    def session_id(self, conn: sqlite3.Connection, session: str) -> int:
        """The id of ``session``; SentretError if this adjudicator may not act in it."""


class Disagreement(NamedTuple):
    """An item graded differently by two or more annotators: what they saw and each one's grade."""

    item_id: int
    position: int
    query: str
    entity: str
    sentence_id: int
    title: str
    text: str
    grades: tuple[tuple[str, int], ...]  # (annotator, grade), by annotator name
    adjudicated: int | None  # the adjudicated grade, if given
    adjudicated_by: str | None = None  # who gave it: a person's name, or "admin" for the admin token

    @property
    def topic_id(self) -> str:
        return topic_id(self.query, self.entity)


def has_adjudications(conn: sqlite3.Connection) -> bool:
    """Whether the database has the adjudications table (an older one opened read-only has not)."""
    return has_table(conn, "adjudications")


def disagreements(actor: Adjudicator, session: str) -> list[Disagreement]:
    """Every item of ``session`` that two or more annotators graded with different grades, in the
    session's order (removed annotators count nowhere), each with its adjudicated grade if any."""
    store = actor.store
    with store.db.read() as conn:
        session_id = actor.session_id(conn, session)
        rows = conn.execute(
            "SELECT p.id, p.position, p.query, p.entity, p.sentence_id, p.title, p.text, a.name, j.grade"
            " FROM judgments j JOIN pool_items p ON p.id = j.item_id JOIN annotators a ON a.id = j.annotator_id"
            " WHERE j.session_id = ? AND a.removed_at IS NULL ORDER BY p.position, a.name_key",
            (session_id,),
        ).fetchall()
        adjudicated = _adjudicated_by_item(conn, session_id)
        by = _adjudicators(conn, session_id)
    items: dict[int, list[Any]] = {}
    for row in rows:
        items.setdefault(int(row[0]), []).append(row)
    found = []
    for item_id, graded in items.items():
        if len({int(r[8]) for r in graded}) < 2:
            continue
        first = graded[0]
        found.append(Disagreement(item_id, int(first[1]), str(first[2]), str(first[3]), int(first[4]),
                                  str(first[5]), str(first[6]), tuple((str(r[7]), int(r[8])) for r in graded),
                                  adjudicated.get(item_id), by.get(item_id) if item_id in adjudicated else None))
    return found


def _adjudicated_by_item(conn: sqlite3.Connection, session_id: int) -> dict[int, int]:
    if not has_adjudications(conn):
        return {}
    rows = conn.execute("SELECT item_id, grade FROM adjudications WHERE session_id = ?", (session_id,))
    return {int(item): int(grade) for item, grade in rows.fetchall()}


def _adjudicators(conn: sqlite3.Connection, session_id: int) -> dict[int, str]:
    """Item id → who made its latest adjudication (read where the log says, else "admin")."""
    if not has_column(conn, "adjudication_log", "by_name"):
        return {}
    rows = conn.execute("SELECT item_id, by_name FROM adjudication_log WHERE session_id = ? ORDER BY id", (session_id,))
    return {int(item): str(by) if by is not None else "admin" for item, by in rows.fetchall()}


def adjudicated_grades(actor: Adjudicator, session: str) -> dict[tuple[str, int], int]:
    """(topic id, sentence id) → adjudicated grade (1-4) for every adjudicated item of ``session``."""
    store = actor.store
    with store.db.read() as conn:
        session_id = actor.session_id(conn, session)
        if not has_adjudications(conn):
            return {}
        rows = conn.execute(
            "SELECT p.query, p.entity, p.sentence_id, d.grade FROM adjudications d"
            " JOIN pool_items p ON p.id = d.item_id WHERE d.session_id = ?",
            (session_id,),
        ).fetchall()
    return {(topic_id(q, e), int(sid)): int(grade) for q, e, sid, grade in rows}


def adjudicate(actor: Adjudicator, session: str, item_id: int, grade: int | None) -> bool:
    """Record ``grade`` (1-4) as the adjudicated grade of item ``item_id`` of ``session``, or clear it
    with ``None``; the annotators' grades are left as they are. Returns whether anything changed."""
    if grade is not None and (isinstance(grade, bool) or grade not in GRADES):
        raise SentretError(f"an adjudicated grade is one of {', '.join(map(str, GRADES))}; got {grade!r}")
    if isinstance(item_id, bool) or not isinstance(item_id, int):
        raise SentretError(f"an item id is a whole number; got {item_id!r}")
    store = actor.store
    with store.db.transaction() as conn:
        session_id = actor.session_id(conn, session)
        pooled = conn.execute("SELECT 1 FROM pool_items WHERE session_id = ? AND id = ?", (session_id, item_id))
        if pooled.fetchone() is None:
            raise SentretError(f"item {item_id} is not in the pool of session {session!r}")
        row = conn.execute(
            "SELECT grade FROM adjudications WHERE session_id = ? AND item_id = ?", (session_id, item_id)
        ).fetchone()
        old = None if row is None else int(row[0])
        if old == grade:
            return False
        stamp = timestamp_now()
        if grade is None:
            conn.execute("DELETE FROM adjudications WHERE session_id = ? AND item_id = ?", (session_id, item_id))
        elif old is None:
            conn.execute(
                "INSERT INTO adjudications (session_id, item_id, grade, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                (session_id, item_id, grade, stamp, stamp),
            )
        else:
            conn.execute(
                "UPDATE adjudications SET grade = ?, updated_at = ? WHERE session_id = ? AND item_id = ?",
                (grade, stamp, session_id, item_id),
            )
        conn.execute(
            "INSERT INTO adjudication_log (session_id, item_id, old_grade, new_grade, at, by_name)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, item_id, old, grade, stamp, actor.acting_as),
        )
    return True
