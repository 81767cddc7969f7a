"""The SQLite store for graded (query, entity, sentence) judgments.

One database file holds any number of sessions: a pool of items shown in a fixed shuffled order,
its annotators (each with a personal secret) and their judgments. Every grade is committed in its
own transaction and every change is appended to a history kept append-only by triggers; the file is
opened in WAL mode with synchronous=FULL. Annotators act only through AnnotatorHandle
(JudgmentStore.sign_in or sign_in_with_token, with their own secret); administration goes through
Admin (JudgmentStore.admin, for the admin token only).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.annotator import AnnotatorHandle
from sentret_core.annotation.auth import as_id, clean_name, timestamp_now
from sentret_core.annotation.db import Database
from sentret_core.annotation.identity import sign_in_with_link, sign_in_with_passphrase
from sentret_core.annotation.item_order import ItemOrder, session_order
from sentret_core.annotation.known_browsers import KnownBrowsers
from sentret_core.annotation.narratives import read_narratives
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, BUSY_TIMEOUT_S, PoolItem, PoolSettings, SessionInfo
from sentret_core.annotation.review import Reviewer
from sentret_core.annotation.session_admin import SessionAdmin
from sentret_core.annotation.throttle import SignInThrottle
from sentret_core.annotation.web_sessions import WebSessions, end_other_tokens
from sentret_core.errors import SentretError


class JudgmentStore:
    """A judgments database file; safe to open from several processes at once.

    ``read_only=True`` opens it for reading only (export, agreement, evaluation): it never waits for
    the write lock and works on a file the user may not write. ``timeout`` is how long an operation
    waits for a lock another process holds before it gives up with a SentretError.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False, timeout: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.timeout = timeout
        self.throttle = SignInThrottle()
        self.web_sessions = WebSessions()
        self.known_browsers = KnownBrowsers()
        # the connection, its lock and transactions, shared with the admin, handles and identity
        self.db = Database(self.path, read_only=read_only, timeout=timeout)
        token = os.environ.get(ADMIN_TOKEN_ENV, "").strip()
        if token and not read_only:  # a restart with another token ends the admin's sign-ins (web_sessions.py)
            with contextlib.suppress(SentretError):  # a busy file: the next admin sign-in or resume checks again
                end_other_tokens(self, token)

    # ----------------------------------------------------------------- lifecycle

    def __enter__(self) -> JudgmentStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    @property
    def _conn(self) -> sqlite3.Connection:
        """The raw connection, for tests that inspect or damage the file (code uses :attr:`db`)."""
        return self.db.connection

    # ----------------------------------------------------------------- sessions

    def create_session(
        self,
        name: str,
        index_path: str | Path,
        items: Sequence[PoolItem],
        settings: PoolSettings | None = None,
        order: ItemOrder | None = None,
    ) -> SessionInfo:
        """Create a session whose items are in the order given (shuffle with :func:`pool`).

        ``order``: who grades which item and in what order (:mod:`.item_order`); None: every
        annotator grades every item in the order given.

        Annotators are then added by the admin (:meth:`Admin.add_annotator`), each with a personal
        secret: there is no shared session passphrase (it let anyone who knew it act as anyone).
        """
        name = clean_name(name, "session name")
        if settings is None:
            settings = PoolSettings()
        if not isinstance(settings, PoolSettings):
            raise SentretError("settings must be a PoolSettings(models, depth, seed)")
        if order is not None and not isinstance(order, ItemOrder):
            raise SentretError("order must be an ItemOrder(overlap, graders, shuffle, seed)")
        clean = _clean_items(items)
        queries = list(dict.fromkeys(item.query for item in clean))
        pairs = list(dict.fromkeys((item.query, item.entity) for item in clean))
        with self.db.transaction() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE name = ?", (name,)).fetchone():
                raise SentretError(f"a session named {name!r} already exists")
            session_id = conn.execute(
                "INSERT INTO sessions (name, index_path, queries, entities, settings,"
                " passphrase_hash, is_open, created_at, item_order) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)",
                (name, str(index_path), json.dumps(queries), json.dumps(pairs),
                 settings.to_json(), "", timestamp_now(), None if order is None else order.to_json()),
            ).lastrowid
            conn.executemany(
                "INSERT INTO pool_items (session_id, query, entity, sentence_id, position,"
                " text, title, docno) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(session_id, it.query, it.entity, it.sentence_id, pos, it.text, it.title, it.docno or None)
                 for pos, it in enumerate(clean)],
            )
        return self.session(name)

    def sessions(self) -> list[SessionInfo]:
        """Every session (names, settings, open or closed; never grades or hashes)."""
        with self.db.read() as conn:
            names = [r[0] for r in conn.execute("SELECT name FROM sessions ORDER BY id")]
        return [self.session(name) for name in names]

    def session(self, name: str) -> SessionInfo:
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT s.name, s.index_path, s.queries, s.entities, s.settings, s.is_open,"
                " s.created_at, (SELECT count(*) FROM pool_items p WHERE p.session_id = s.id), s.id"
                " FROM sessions s WHERE s.name = ?",
                (name,),
            ).fetchone()
            if row is None:
                raise SentretError(f"no session named {name!r}")
            order = session_order(conn, int(row[8]))
        queries = tuple(json.loads(row[2]))
        pairs = tuple((q, e) for q, e in json.loads(row[3]))
        settings = PoolSettings.from_json(row[4])
        return SessionInfo(row[0], row[1], queries, pairs, settings, bool(row[5]), row[6], row[7], order)

    def guidelines(self, name: str) -> str:
        """The session's guidelines for its annotators (Markdown the admin wrote; "" if none)."""
        with self.db.read() as conn:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
            if "guidelines" not in columns:  # a database older than v5, opened read-only
                self.db.session_row(conn, name)
                return ""
            row = conn.execute("SELECT guidelines FROM sessions WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise SentretError(f"no session named {name!r}")
        return str(row[0])

    def narratives(self, name: str) -> dict[tuple[str, str], str]:
        """The information need of each (query, entity key) topic of the session that has one."""
        with self.db.read() as conn:
            return read_narratives(conn, self.db.session_row(conn, name)[0])

    def sign_in(
        self, session_name: str, annotator: str, passphrase: str, *, client: str = "local", known: object = None
    ) -> AnnotatorHandle:
        """Sign in with a name and that annotator's personal passphrase (see :mod:`.identity`).

        ``client`` identifies who is trying (the app passes the browser's address, :mod:`.client_address`):
        repeated failures are slowed down per name and client, per client, and per name from every client,
        in the database (:mod:`.throttle`). ``known``: the id of the browser's known-browser cookie, if it
        sent one (:mod:`.known_browsers`): a browser known for this annotator is slowed down by its own
        failures only.
        """
        return sign_in_with_passphrase(self, session_name, annotator, passphrase, client, known)

    def sign_in_with_token(
        self, session_name: str, token: str, *, client: str = "local", known: object = None
    ) -> AnnotatorHandle:
        """Sign in with the token of an annotator's sign-in link (``client``, ``known``: as :meth:`sign_in`)."""
        return sign_in_with_link(self, session_name, token, client, known)

    def admin(self, token: str, *, client: str = "local", known: object = None) -> Admin:
        """The administration interface, for the right admin token only; wrong tokens are slowed
        down per ``client`` and from every client, except for a browser ``known`` as the admin's
        (as :meth:`sign_in`)."""
        return Admin(self, token, client, known)

    def reviewer(self, handle: AnnotatorHandle) -> Reviewer:
        """The adjudication of a reviewer (or session admin) signed in with ``handle`` (:mod:`.roles`)."""
        return Reviewer(self, handle)

    def session_admin(self, handle: AnnotatorHandle) -> SessionAdmin:
        """The administration of one session, for its admin signed in with ``handle`` (:mod:`.roles`)."""
        return SessionAdmin(self, handle)

    def check(self) -> list[str]:
        """Problems: ``integrity_check``, foreign keys, history that disagrees with judgments."""
        with self.db.read() as conn:
            problems = [r[0] for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
            problems += [f"foreign key: {r}" for r in conn.execute("PRAGMA foreign_key_check")]
            problems += [
                f"history of item {r[0]} by annotator {r[1]} ends at grade {r[2]}, "
                f"judgment says {r[3]}"
                for r in conn.execute(_HISTORY_MISMATCH)
            ]
        return problems



_HISTORY_MISMATCH = """
    WITH last AS (
        SELECT item_id, annotator_id, max(id) AS id FROM history GROUP BY item_id, annotator_id
    ),
    expected AS (
        SELECT h.item_id, h.annotator_id, h.new_grade, h.new_note
        FROM last JOIN history h ON h.id = last.id
    )
    SELECT e.item_id, e.annotator_id, e.new_grade, j.grade
    FROM expected e LEFT JOIN judgments j
        ON j.item_id = e.item_id AND j.annotator_id = e.annotator_id
    WHERE j.grade IS NOT e.new_grade OR (j.grade IS NOT NULL AND j.note IS NOT e.new_note)
    UNION ALL
    SELECT j.item_id, j.annotator_id, NULL, j.grade FROM judgments j
    WHERE NOT EXISTS (
        SELECT 1 FROM history h WHERE h.item_id = j.item_id AND h.annotator_id = j.annotator_id
    )
"""


def _clean_items(items: Sequence[PoolItem]) -> list[PoolItem]:
    if not items:
        raise SentretError("a session needs at least one item to grade")
    clean: list[PoolItem] = []
    seen: set[tuple[str, str, int]] = set()
    for number, item in enumerate(items, start=1):
        if not isinstance(item, PoolItem):
            raise SentretError(f"item {number} is not a PoolItem(query, entity, sentence_id, ...)")
        query = clean_name(item.query, f"query of item {number}")
        entity = clean_name(item.entity, f"entity of item {number}")
        sid = as_id(item.sentence_id, f"the sentence id of item {number}")
        key = (query, entity, sid)
        if key in seen:
            raise SentretError(f"item {number} repeats ({query!r}, {entity!r}, sentence {sid})")
        seen.add(key)
        clean.append(PoolItem(query, entity, sid, str(item.text), str(item.title), str(item.docno)))
    return clean
