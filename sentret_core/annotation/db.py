"""The judgments database layer that the store, the admin, annotators and identity share.

:class:`Database` owns the one SQLite connection of a :class:`~.store.JudgmentStore` and the lock
that serialises its threads. Every statement runs inside :meth:`Database.transaction` (writes,
``BEGIN IMMEDIATE``) or :meth:`Database.read` (one consistent snapshot, ``BEGIN DEFERRED``): each
commits on success and rolls back on any error, so a grade is either wholly written or not at all.
The other public methods are the few statements several modules need inside such a transaction.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from sentret_core.annotation.auth import name_key, normalise_name, timestamp_now
from sentret_core.annotation.connect import caused_by_the_user, open_connection, sqlite_error
from sentret_core.annotation.marks import drop_mark, item_state, write_mark
from sentret_core.annotation.records import ImportLine
from sentret_core.errors import SentretError


class Database:
    """One connection to a judgments file (WAL, synchronous=FULL; see :mod:`.connect`) and its lock."""

    def __init__(self, path: Path, *, read_only: bool, timeout: float) -> None:
        self.path = path
        self.read_only = read_only
        self.timeout = timeout
        self._lock = threading.RLock()
        self.connection = open_connection(path, read_only=read_only, timeout=timeout)

    def close(self) -> None:
        with self._lock:
            self.connection.close()

    @contextmanager
    def transaction(self, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
        """One transaction: committed on success, rolled back on any error."""
        if self.read_only and mode != "DEFERRED":
            raise SentretError(f"{self.path}: opened read-only; this needs the database opened for writing")
        with self._lock:
            conn = self.connection
            try:
                conn.execute(f"BEGIN {mode}")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                if caused_by_the_user(exc):  # a lock held too long, a read-only file, a full disk
                    raise sqlite_error(self.path, exc, self.timeout) from None
                raise

    def read(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read transaction: one consistent snapshot for several statements."""
        return self.transaction("DEFERRED")

    # ----------------------------------------------------------------- statements shared by modules

    @staticmethod
    def session_row(conn: sqlite3.Connection, name: str) -> tuple[int, str, bool]:
        """(id, passphrase hash, is open) of the session named ``name``; SentretError if there is none."""
        row = conn.execute(
            "SELECT id, passphrase_hash, is_open FROM sessions WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise SentretError(f"no session named {name!r}")
        return int(row[0]), str(row[1]), bool(row[2])

    @staticmethod
    def find_or_register_annotator(
        conn: sqlite3.Connection, session_id: int, name: str, kind: str
    ) -> tuple[int, str]:
        """The id and kind of the annotator named ``name`` (by name key), registering it with
        ``kind`` if there is none (imports only: people are added by the admin)."""
        shown, key = normalise_name(name), name_key(name)
        row = conn.execute(
            "SELECT id, kind FROM annotators WHERE session_id = ? AND name_key = ? AND removed_at IS NULL",
            (session_id, key),
        ).fetchone()
        if row is not None:
            return int(row[0]), str(row[1])
        cursor = conn.execute(
            "INSERT INTO annotators (session_id, name, name_key, kind, created_at) VALUES (?, ?, ?, ?, ?)",
            (session_id, shown, key, kind, timestamp_now()),
        )
        return int(cursor.lastrowid or 0), kind

    @staticmethod
    def find_item(conn: sqlite3.Connection, session_id: int, key: ImportLine, session: str) -> int:
        """The pool item a line names: by its docno when it has one (an item pooled before sentret recorded
        docnos by the line's internal id, when it has that too), else by its internal id."""
        row = None
        for column, value in (("docno", key.docno), ("sentence_id", key.sentence_id)):
            if row is None and value is not None and value != -1:
                row = conn.execute(
                    f"SELECT id FROM pool_items WHERE session_id = ? AND query = ? AND entity = ? AND {column} = ?",
                    (session_id, key.query, key.entity, value),
                ).fetchone()
        if row is None:
            raise SentretError(
                f"line {key.line}: ({key.query!r}, {key.entity!r}, sentence {key.sentence}) "
                f"is not in the pool of session {session!r}"
            )
        return int(row[0])

    @staticmethod
    def write_grade(
        conn: sqlite3.Connection,
        key: tuple[int, int, int],
        grade: int | None,
        note: str | None,
        action: str,
        *,
        flagged: bool | None = None,
        seconds: float | None = None,
        undoes: int | None = None,
        stamps: tuple[str | None, str | None] = (None, None),
    ) -> bool:
        """Set (or with ``grade=None`` remove) one judgment and append its history row.

        ``key`` is (session id, item id, annotator id); ``flagged`` None keeps the item's flag; ``seconds``, time
        on task, is set when given (else kept). An item left
        without a grade keeps its note and flag as its mark (:mod:`.marks`). Returns False when nothing changed.
        """
        session_id, item_id, annotator_id = key
        old = item_state(conn, key)
        flag = old.flagged if flagged is None else bool(flagged)
        if old == (grade, note, flag) and undoes is None:
            return False
        now = timestamp_now()
        created, updated = stamps[0] or now, stamps[1] or now
        if grade is None:
            conn.execute(
                "DELETE FROM judgments WHERE session_id = ? AND item_id = ? AND annotator_id = ?",
                key,
            )
            write_mark(conn, key, note, flag)
        else:
            conn.execute(
                "INSERT INTO judgments (session_id, item_id, annotator_id, grade, note, flagged, seconds,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (session_id, item_id, annotator_id) DO UPDATE SET grade = excluded.grade,"
                " note = excluded.note, flagged = excluded.flagged, updated_at = excluded.updated_at,"
                " seconds = coalesce(excluded.seconds, judgments.seconds)",
                (*key, grade, note, int(flag), seconds, created, updated),
            )
            drop_mark(conn, key)
        conn.execute(
            "INSERT INTO history (session_id, item_id, annotator_id, action, old_grade, new_grade, old_note,"
            " new_note, old_flagged, new_flagged, undoes, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, item_id, annotator_id, action, old.grade, grade, old.note, note, int(old.flagged),
             int(flag), undoes, now),
        )
        return True
