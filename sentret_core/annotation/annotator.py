"""One annotator's view of one session: read and write only their own grades, with undo.

A handle is made only by signing in with the annotator's own secret (:mod:`.identity`), or by
resuming a web session made so (:mod:`.web_sessions`). Every call checks that the annotator still
has the access they signed in with: a disabled or removed annotator, one whose secret or name the
admin changed since, or one whose web session has ended, is refused (and must sign in again).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from sentret_core.annotation.auth import as_id, check_grade, check_note, timestamp_now
from sentret_core.annotation.item_order import queue, queue_positions
from sentret_core.annotation.marks import ItemState, item_state, write_mark
from sentret_core.annotation.records import (
    ITEM_COLUMNS,
    ItemView,
    Judgment,
    Progress,
    judgment_from_row,
    judgment_select,
)
from sentret_core.annotation.roles import ANNOTATOR, not_a_grader
from sentret_core.annotation.suggested import Suggestion, suggestions_of
from sentret_core.annotation.time_on_task import seconds_on, show, showing
from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.annotation.store import JudgmentStore
    from sentret_core.annotation.web_sessions import WebSessions


class Keep:
    """The default of :meth:`AnnotatorHandle.grade`'s note: keep the item's note as it is."""


KEEP = Keep()


class SignedOut(SentretError):
    """The annotator's access changed since they signed in (disabled, removed, new secret, renamed)."""


class AnnotatorHandle:
    """One annotator in one session: reads and writes that annotator's grades only."""

    def __init__(
        self, store: JudgmentStore, session_id: int, session: str, annotator_id: int, name: str, credential: int = 0,
        role: str = ANNOTATOR,
    ) -> None:
        self._store = store
        self.role = role  # a change of role bumps the credential, so it holds as long as the handle does
        self._session_id = session_id
        self._annotator_id = annotator_id
        self._credential = credential
        self.session = session
        self.annotator = name
        # (hash of its id, WebSessions) once bound to a browser's web session: ending it ends the handle
        self._web: tuple[str, WebSessions] | None = None

    @property
    def signed_in_as(self) -> tuple[int, int, int]:
        """(session id, annotator id, credential counter) this handle signed in with."""
        return self._session_id, self._annotator_id, self._credential

    @property
    def web_session_hash(self) -> str | None:
        """The hash of the web session this handle is bound to (None: it is bound to none)."""
        return None if self._web is None else self._web[0]

    def bind_web_session(self, id_hash: str, web_sessions: WebSessions) -> None:
        """From now on every action also checks web session ``id_hash``: ending it ends the handle."""
        self._web = (id_hash, web_sessions)

    def end_web_session(self, web_id: str) -> None:
        """Sign this browser out: end the web session ``web_id`` (the one the browser holds)."""
        self._store.web_sessions.end(self._store, web_id)

    def session_is_open(self) -> bool:
        """Whether this handle's session still takes grades (an admin may close it at any time)."""
        return self._store.session(self.session).is_open

    def check_access(self, conn: sqlite3.Connection | None = None) -> None:
        """Raise :class:`SignedOut` if this handle no longer acts for its annotator; ``conn``: check
        inside that transaction (the caller's) rather than in a read of its own."""
        if conn is None:
            with self._store.db.read() as conn:
                self.check_access(conn)
            return
        row = conn.execute(
            "SELECT disabled, removed_at, credential FROM annotators WHERE session_id = ? AND id = ?",
            (self._session_id, self._annotator_id),
        ).fetchone()
        if row is None or row[1] is not None or row[0] or int(row[2]) != self._credential:
            raise SignedOut(
                f"you are signed out of session {self.session!r}: the organiser changed or disabled "
                "your access; sign in again with your current link or passphrase"
            )
        if self._web is not None:
            self._web[1].check(conn, self._web[0], self.session)

    def belongs_to(self, store: JudgmentStore) -> bool:
        """Whether this handle was made by ``store`` (a reviewer or session admin acts in that store only)."""
        return self._store is store

    def __repr__(self) -> str:
        return f"AnnotatorHandle(session={self.session!r}, annotator={self.annotator!r}, role={self.role!r})"

    def _open_item(self, conn: sqlite3.Connection, item_id: object) -> int:
        """Check that the session is open and the item belongs to it; return the item id."""
        item = as_id(item_id, "an item id")
        self.check_access(conn)
        if self.role != ANNOTATOR:
            raise not_a_grader(self.role, self.session)
        row = conn.execute("SELECT is_open FROM sessions WHERE id = ?", (self._session_id,))
        if not row.fetchone()[0]:
            raise SentretError(f"session {self.session!r} is closed; no more grades are taken")
        found = conn.execute(
            "SELECT 1 FROM pool_items WHERE session_id = ? AND id = ?", (self._session_id, item)
        ).fetchone()
        if found is None:
            raise SentretError(f"item {item} is not in session {self.session!r}")
        return item

    def grade(self, item_id: int, grade: int, note: str | Keep | None = KEEP, *, flagged: bool | None = None) -> None:
        """Set this annotator's grade of an item; committed before returning. ``note``: the item's note
        (None or blank: none; by default the one it has, given before grading too). ``flagged``: also set
        its flag (None: keep the one it has)."""
        grade = check_grade(grade)
        with self._store.db.transaction() as conn:
            item = self._open_item(conn, item_id)
            key = (self._session_id, item, self._annotator_id)
            now = item_state(conn, key)
            text = now.note if isinstance(note, Keep) else check_note(note)
            self._store.db.write_grade(conn, key, grade, text, "set" if now.grade is None else "change",
                                       flagged=flagged, seconds=_time_spent(conn, key))
            conn.execute(
                "DELETE FROM skips WHERE session_id = ? AND item_id = ? AND annotator_id = ?", key
            )

    def show(self, item_id: int) -> None:
        """The grading page shows this item now: its time on task runs until it is graded
        (:mod:`.time_on_task`); reporting the item already shown changes nothing."""
        item = as_id(item_id, "an item id")
        with self._store.db.read() as conn:
            self.check_access(conn)
            if showing(conn, self._session_id, self._annotator_id) == item:
                return  # a rerun of the same page: no write
        with self._store.db.transaction() as conn:
            if not conn.execute("SELECT is_open FROM sessions WHERE id = ?", (self._session_id,)).fetchone()[0]:
                return  # a closed session takes no grades: nothing to time
            show(conn, self._session_id, self._annotator_id, self._open_item(conn, item))

    def suggestions(self, item_id: int) -> list[Suggestion]:
        """The grades models or files suggest for an item (:mod:`.suggestions`): shown, never counted."""
        item = as_id(item_id, "an item id")
        with self._store.db.read() as conn:
            self.check_access(conn)
            return suggestions_of(conn, self._session_id, item)

    def grade_of(self, item_id: int) -> int | None:
        """This annotator's grade of an item (None: not graded)."""
        return self.state_of(item_id).grade

    def state_of(self, item_id: int) -> ItemState:
        """This annotator's grade, note and flag of an item (a note and flag are kept before grading too)."""
        with self._store.db.read() as conn:
            self.check_access(conn)
            return item_state(conn, (self._session_id, as_id(item_id, "an item id"), self._annotator_id))

    def flag(self, item_id: int, flagged: bool = True) -> None:
        """Flag (or unflag) an item for the organiser to look at, graded or not. On a graded item the change
        is a step of the judgment's history (undo takes it back); an ungraded one keeps it until it is graded."""
        self._mark(item_id, flagged=bool(flagged))

    def note(self, item_id: int, note: str | None) -> None:
        """Write (None or blank: remove) the item's note, graded or not; on a graded item a history step."""
        self._mark(item_id, note=check_note(note))

    def _mark(self, item_id: int, **change: object) -> None:
        with self._store.db.transaction() as conn:
            item = self._open_item(conn, item_id)
            key = (self._session_id, item, self._annotator_id)
            now = item_state(conn, key)
            new = now._replace(**change)  # type: ignore[arg-type]
            if now.grade is None:
                write_mark(conn, key, new.note, new.flagged)
            else:
                self._store.db.write_grade(conn, key, now.grade, new.note, "change", flagged=new.flagged)

    def undo(self) -> ItemView | None:
        """Take back this annotator's last change not yet undone; None if there is none.

        A change of grade is taken back, the item's note and flag staying as they are now (a note written
        with the grade is the annotator's text, never dropped: an item back to ungraded keeps it). A change of
        note or flag alone brings back the earlier note and flag. Repeated calls walk further back; the undo
        is itself appended to the history.
        """
        with self._store.db.transaction() as conn:
            self.check_access(conn)
            row = conn.execute(
                "SELECT h.id, h.item_id, h.old_grade, h.new_grade, h.old_note, h.old_flagged FROM history h"
                " WHERE h.session_id = ? AND h.annotator_id = ? AND h.action IN ('set', 'change')"
                " AND NOT EXISTS (SELECT 1 FROM history u WHERE u.undoes = h.id)"
                " ORDER BY h.id DESC LIMIT 1",
                (self._session_id, self._annotator_id),
            ).fetchone()
            if row is None:
                return None
            history_id, item, old_grade, new_grade, old_note, old_flagged = row
            self._open_item(conn, item)
            key = (self._session_id, item, self._annotator_id)
            now = item_state(conn, key)
            if old_grade != new_grade:
                note, flagged = now.note, now.flagged
            else:
                note, flagged = old_note, now.flagged if old_flagged is None else bool(old_flagged)
            self._store.db.write_grade(conn, key, old_grade, note, "undo", flagged=flagged, undoes=history_id)
            return self._item(conn, item)

    def skip(self, item_id: int) -> None:
        """Put an ungraded item aside: it comes back after every item neither graded nor skipped."""
        with self._store.db.transaction() as conn:
            item = self._open_item(conn, item_id)
            key = (self._session_id, item, self._annotator_id)
            if item_state(conn, key).grade is not None:
                raise SentretError(f"item {item} is already graded; grade it again or undo")
            conn.execute(
                "INSERT OR REPLACE INTO skips (session_id, item_id, annotator_id, at)"
                " VALUES (?, ?, ?, ?)",
                (*key, timestamp_now()),
            )

    def next_item(self) -> ItemView | None:
        """Where this annotator stopped: the first item of their queue (:mod:`.item_order`) neither
        graded nor skipped; then the skipped ones, longest-skipped first; None when all are graded."""
        args = (self._session_id, self._annotator_id)
        with self._store.db.read() as conn:
            self.check_access(conn)
            mine = queue(conn, *args)
            graded = {int(r[0]) for r in conn.execute(
                "SELECT item_id FROM judgments WHERE session_id = ? AND annotator_id = ?", args)}
            skipped = [int(r[0]) for r in conn.execute(
                "SELECT item_id FROM skips WHERE session_id = ? AND annotator_id = ? ORDER BY id", args)]
            put_aside = set(skipped)
            fresh = next((i for i in mine if i not in graded and i not in put_aside), None)
            if fresh is None:
                fresh = next((i for i in skipped if i not in graded), None)
            return None if fresh is None else self._item(conn, fresh, mine)

    def item(self, item_id: int) -> ItemView:
        """An item of this session (to show it again, e.g. to regrade it); its ``position`` is its
        place in this annotator's queue."""
        with self._store.db.read() as conn:
            self.check_access(conn)
            return self._item(conn, as_id(item_id, "an item id"))

    def item_at(self, position: int) -> ItemView:
        """The item at ``position`` (0-based) of this annotator's queue."""
        position = as_id(position, "an item position")
        with self._store.db.read() as conn:
            self.check_access(conn)
            mine = queue(conn, self._session_id, self._annotator_id)
            if position >= len(mine):
                raise SentretError(f"session {self.session!r} has no item {position + 1} for you")
            return self._item(conn, mine[position], mine)

    def _item(self, conn: sqlite3.Connection, item_id: int, mine: list[int] | None = None) -> ItemView:
        row = conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM pool_items p WHERE p.session_id = ? AND p.id = ?",
            (self._session_id, item_id),
        ).fetchone()
        if row is None:
            raise SentretError(f"item {item_id} is not in session {self.session!r}")
        if mine is None:
            mine = queue(conn, self._session_id, self._annotator_id)
        places = {item: place for place, item in enumerate(mine)}
        # an item outside the queue (only reachable by its id) comes after it
        return ItemView(*row)._replace(position=places.get(item_id, len(mine)))

    def my_judgments(self) -> list[Judgment]:
        """This annotator's judgments, in their queue's order (``position``: the place in it)."""
        with self._store.db.read() as conn:
            self.check_access(conn)
            places = queue_positions(conn, self._session_id, self._annotator_id)
            rows = conn.execute(
                f"{judgment_select(conn)} WHERE j.session_id = ? AND j.annotator_id = ?"
                " ORDER BY p.position",
                (self._session_id, self._annotator_id),
            ).fetchall()
            ids = [int(r[0]) for r in conn.execute(
                "SELECT j.item_id FROM judgments j JOIN pool_items p ON p.id = j.item_id"
                " WHERE j.session_id = ? AND j.annotator_id = ? ORDER BY p.position",
                (self._session_id, self._annotator_id),
            )]
        mine = [judgment_from_row(row)._replace(position=places.get(item, len(places))) for row, item in zip(rows, ids)]
        return sorted(mine, key=lambda j: j.position)

    def progress(self) -> Progress:
        with self._store.db.read() as conn:
            self.check_access(conn)
            return annotator_progress(conn, self._session_id, self._annotator_id)


def _time_spent(conn: sqlite3.Connection, key: tuple[int, int, int]) -> float | None:
    """The judgment's time on task after this grade: its earlier seconds plus those the item was just on screen."""
    spent = seconds_on(conn, key)
    if spent is None:
        return None
    before = conn.execute("SELECT seconds FROM judgments WHERE session_id = ? AND item_id = ? AND annotator_id = ?",
                          key).fetchone()
    return spent + (float(before[0]) if before is not None and before[0] is not None else 0.0)


def annotator_progress(conn: sqlite3.Connection, session_id: int, annotator_id: int) -> Progress:
    """The annotator's progress through their own queue (:func:`.item_order.queue`)."""
    total = len(queue(conn, session_id, annotator_id))
    graded, skipped = conn.execute(
        "SELECT (SELECT count(*) FROM judgments WHERE session_id = ?1 AND annotator_id = ?2),"
        " (SELECT count(*) FROM skips k WHERE k.session_id = ?1 AND k.annotator_id = ?2"
        "  AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.session_id = ?1"
        "  AND j.item_id = k.item_id AND j.annotator_id = ?2))",
        (session_id, annotator_id),
    ).fetchone()
    return Progress(int(total), int(graded), int(skipped))
