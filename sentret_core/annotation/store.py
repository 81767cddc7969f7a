"""The SQLite store for graded (query, entity, sentence) judgments.

Assessors grade a triple 1 (non-relevant), 2 (fairly relevant), 3 (relevant) or 4 (very
relevant); a triple is relevant iff its grade is at least 3 (Blanco & Zaragoza, SIGIR 2010, §4).

One database file holds any number of *sessions*. A session is a pool of items (a query, an
entity and a sentence, with a snapshot of the sentence text so that exports work without the
index) shown in a fixed shuffled order, a passphrase that annotators sign in with, and the
annotators' judgments. Every grade is committed in its own transaction when it is given, and
every set, change, import and undo is appended to a history that triggers keep append-only.

The file is opened in WAL mode with ``synchronous=FULL``, foreign keys on and a busy timeout,
so that several processes (Streamlit sessions, the CLI) can write to it at once.

Annotators act only through the :class:`AnnotatorHandle` that :meth:`JudgmentStore.sign_in`
returns: it reads and writes the grades of one annotator in one session, and nothing else.
Administration (closing a session, reading every judgment, export and import) goes through
:class:`Admin`, which :meth:`JudgmentStore.admin` hands out only for the admin token
(:func:`admin_token`).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import hmac
import io
import json
import math
import operator
import os
import random
import secrets
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, SupportsIndex, cast

from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import split_topic_id, topic_id

GRADES = (1, 2, 3, 4)
GRADE_LABELS = {1: "non-relevant", 2: "fairly relevant", 3: "relevant", 4: "very relevant"}
ADMIN_TOKEN_ENV = "SENTRET_ADMIN_TOKEN"
RULES = ("majority", "mean", "annotator")
BUSY_TIMEOUT_S = 60.0
MAX_NAME = 200
MAX_NOTE = 5000
PERSON, IMPORTED = "person", "import"

# --------------------------------------------------------------------------- schema

_APPEND_ONLY = "SELECT RAISE(ABORT, 'history is append-only')"

_V1: tuple[str, ...] = (
    """CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
        index_path TEXT NOT NULL,
        queries TEXT NOT NULL,
        entities TEXT NOT NULL,
        settings TEXT NOT NULL,
        passphrase_hash TEXT NOT NULL,
        is_open INTEGER NOT NULL DEFAULT 1 CHECK (is_open IN (0, 1)),
        created_at TEXT NOT NULL)""",
    """CREATE TABLE pool_items (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        query TEXT NOT NULL,
        entity TEXT NOT NULL,
        sentence_id INTEGER NOT NULL,
        position INTEGER NOT NULL,
        text TEXT NOT NULL,
        title TEXT NOT NULL,
        UNIQUE (session_id, query, entity, sentence_id),
        UNIQUE (session_id, position),
        UNIQUE (session_id, id))""",
    """CREATE TABLE annotators (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        name TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('person', 'import')),
        created_at TEXT NOT NULL,
        UNIQUE (session_id, name),
        UNIQUE (session_id, id))""",
    """CREATE TABLE judgments (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        annotator_id INTEGER NOT NULL,
        grade INTEGER NOT NULL CHECK (grade BETWEEN 1 AND 4),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (session_id, item_id, annotator_id),
        FOREIGN KEY (session_id, item_id) REFERENCES pool_items(session_id, id),
        FOREIGN KEY (session_id, annotator_id) REFERENCES annotators(session_id, id))""",
    """CREATE TABLE history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        annotator_id INTEGER NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('set', 'change', 'undo', 'import')),
        old_grade INTEGER CHECK (old_grade BETWEEN 1 AND 4),
        new_grade INTEGER CHECK (new_grade BETWEEN 1 AND 4),
        undoes INTEGER REFERENCES history(id),
        at TEXT NOT NULL,
        FOREIGN KEY (session_id, item_id) REFERENCES pool_items(session_id, id),
        FOREIGN KEY (session_id, annotator_id) REFERENCES annotators(session_id, id))""",
    f"CREATE TRIGGER history_no_update BEFORE UPDATE ON history BEGIN {_APPEND_ONLY}; END",
    f"CREATE TRIGGER history_no_delete BEFORE DELETE ON history BEGIN {_APPEND_ONLY}; END",
)

# v2: free-text notes on judgments (and in history, so undo restores them), skips for
# next_item(), and the indexes that undo() and next_item() need.
_V2: tuple[str, ...] = (
    "ALTER TABLE judgments ADD COLUMN note TEXT",
    "ALTER TABLE history ADD COLUMN old_note TEXT",
    "ALTER TABLE history ADD COLUMN new_note TEXT",
    "CREATE INDEX history_by_annotator ON history(session_id, annotator_id, id)",
    "CREATE INDEX history_by_undoes ON history(undoes)",
    """CREATE TABLE skips (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        annotator_id INTEGER NOT NULL,
        at TEXT NOT NULL,
        UNIQUE (session_id, item_id, annotator_id),
        FOREIGN KEY (session_id, item_id) REFERENCES pool_items(session_id, id),
        FOREIGN KEY (session_id, annotator_id) REFERENCES annotators(session_id, id))""",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2)
SCHEMA_VERSION = len(MIGRATIONS)

# --------------------------------------------------------------------------- records


class PoolItem(NamedTuple):
    """One (query, entity, sentence) triple to grade, with a snapshot of the sentence."""

    query: str
    entity: str
    sentence_id: int
    text: str = ""
    title: str = ""


@dataclass(frozen=True)
class PoolSettings:
    """How a session's pool was made: the models pooled, the depth and the shuffle seed."""

    models: tuple[str, ...] = ()
    depth: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 1:
            raise ValueError(f"pool depth must be an integer in [1, ∞); got {self.depth!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"pool seed must be an integer; got {self.seed!r}")
        object.__setattr__(self, "models", tuple(str(m) for m in self.models))

    def to_json(self) -> str:
        return json.dumps({"models": list(self.models), "depth": self.depth, "seed": self.seed})

    @classmethod
    def from_json(cls, text: str) -> PoolSettings:
        data = json.loads(text)
        return cls(tuple(data["models"]), int(data["depth"]), int(data["seed"]))


class SessionInfo(NamedTuple):
    name: str
    index_path: str
    queries: tuple[str, ...]
    entities: tuple[tuple[str, str], ...]
    settings: PoolSettings
    is_open: bool
    created_at: str
    n_items: int


class ItemView(NamedTuple):
    """What an annotator is shown: never which model retrieved the sentence."""

    item_id: int
    position: int
    query: str
    entity: str
    sentence_id: int
    text: str
    title: str


class Judgment(NamedTuple):
    """One annotator's grade of one item, with every field the exports carry."""

    session: str
    topic_id: str
    query: str
    entity: str
    sentence_id: int
    position: int
    title: str
    text: str
    annotator: str
    annotator_kind: str
    grade: int
    note: str | None
    created_at: str
    updated_at: str


JUDGMENT_FIELDS: tuple[str, ...] = Judgment._fields


class HistoryEntry(NamedTuple):
    id: int
    annotator: str
    query: str
    entity: str
    sentence_id: int
    action: str
    old_grade: int | None
    new_grade: int | None
    old_note: str | None
    new_note: str | None
    undoes: int | None
    at: str


class Progress(NamedTuple):
    total: int
    graded: int
    skipped: int

    @property
    def remaining(self) -> int:
        return self.total - self.graded


# --------------------------------------------------------------------------- small helpers


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _clean_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SentretError(f"the {what} must be a non-empty text; got {value!r}")
    name = value.strip()
    if len(name) > MAX_NAME or any(ord(ch) < 32 for ch in name):
        raise SentretError(
            f"the {what} must be at most {MAX_NAME} characters without control characters"
        )
    return name


def _check_grade(grade: object) -> int:
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in GRADES:
        raise SentretError(
            "a grade must be 1 (non-relevant), 2 (fairly relevant), 3 (relevant) "
            f"or 4 (very relevant); got {grade!r}"
        )
    return grade


def _check_note(note: object) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str):
        raise SentretError(f"a note must be text; got {type(note).__name__}")
    if len(note) > MAX_NOTE:
        raise SentretError(f"a note must be at most {MAX_NOTE} characters; got {len(note)}")
    return note.strip() or None


def _as_id(value: object, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise SentretError(f"{what} must be an integer; got {value!r}")
    return operator.index(cast(SupportsIndex, value))  # numpy integers


_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1


def _hash_passphrase(passphrase: str) -> str:
    """``scrypt$n$r$p$salt$digest`` with a random 16-byte salt."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(
        passphrase.encode("utf-8"), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=32
    )
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${salt.hex()}${digest.hex()}"


def _passphrase_matches(passphrase: str, stored: str) -> bool:
    """Recompute the hash with the stored salt and compare in constant time."""
    _, n, r, p, salt, digest = stored.split("$")
    expected = bytes.fromhex(digest)
    given = hashlib.scrypt(
        passphrase.encode("utf-8"),
        salt=bytes.fromhex(salt),
        n=int(n),
        r=int(r),
        p=int(p),
        dklen=len(expected),
    )
    return hmac.compare_digest(given, expected)


@functools.cache
def _generated_token() -> str:
    return secrets.token_urlsafe(32)


def admin_token() -> str:
    """The admin token: ``$SENTRET_ADMIN_TOKEN`` if set, else one generated once per process."""
    return os.environ.get(ADMIN_TOKEN_ENV, "").strip() or _generated_token()


# --------------------------------------------------------------------------- pooling


def pool(ranked: Mapping[str, Sequence[int]], depth: int, seed: int) -> list[int]:
    """TREC-style pool: the union of every model's top ``depth`` sentence ids, shuffled.

    The union is sorted before the shuffle, so the order depends only on the ids and
    ``seed`` (``random.Random(seed)``), not on the models' order; model names are dropped.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise SentretError(f"pool depth must be an integer in [1, ∞); got {depth!r}")
    union = {
        _as_id(sid, "a sentence id") for ranking in ranked.values() for sid in ranking[:depth]
    }
    ordered = sorted(union)
    random.Random(seed).shuffle(ordered)
    return ordered


def adjudicate(grades: Sequence[int], rule: str) -> int:
    """One grade from several: ``majority`` (ties go to the lower grade) or ``mean``
    (rounded half up, computed exactly)."""
    if not grades:
        raise SentretError("cannot adjudicate an item without grades")
    if rule == "majority":
        counts = Counter(grades)
        top = max(counts.values())
        return min(grade for grade, count in counts.items() if count == top)
    if rule == "mean":
        return math.floor(Fraction(sum(grades), len(grades)) + Fraction(1, 2))
    raise SentretError(f"unknown adjudication rule {rule!r}; choose majority or mean")


# --------------------------------------------------------------------------- the store

_JUDGMENT_SELECT = """
    SELECT s.name, p.query, p.entity, p.sentence_id, p.position, p.title, p.text,
           a.name, a.kind, j.grade, j.note, j.created_at, j.updated_at
    FROM judgments j
    JOIN pool_items p ON p.id = j.item_id
    JOIN annotators a ON a.id = j.annotator_id
    JOIN sessions s ON s.id = j.session_id
"""

_ITEM_COLUMNS = "p.id, p.position, p.query, p.entity, p.sentence_id, p.text, p.title"


def _judgment(row: Sequence[Any]) -> Judgment:
    session, query, entity, *rest = row
    return Judgment(session, topic_id(query, entity), query, entity, *rest)


class _Key(NamedTuple):
    """A parsed import line: which item, whose grade."""

    line: int
    query: str
    entity: str
    sentence_id: int
    annotator: str
    kind: str
    grade: int
    note: str | None
    created_at: str | None
    updated_at: str | None


class JudgmentStore:
    """A judgments database file; safe to open from several processes at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise SentretError(f"{self.path}: cannot open the judgments database ({exc})") from None
        try:
            self._configure()
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

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
        with self._lock:
            self._conn.close()

    def _configure(self) -> None:
        conn = self._conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise SentretError(f"{self.path}: not a judgments database ({exc})") from None
        if str(mode).lower() != "wal":
            raise SentretError(f"{self.path}: the file system does not support WAL mode")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")

    def _migrate(self) -> None:
        """Apply the missing migrations in order, in one transaction."""
        with self._transaction() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise SentretError(
                    f"{self.path}: judgments schema version {version} is newer than this "
                    f"sentret understands ({SCHEMA_VERSION}); upgrade sentret"
                )
            if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise SentretError(f"{self.path}: not a sentret judgments database")
            for statements in MIGRATIONS[version:]:
                for statement in statements:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _transaction(self, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
        """One transaction: committed on success, rolled back on any error."""
        with self._lock:
            conn = self._conn
            conn.execute(f"BEGIN {mode}")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read transaction: one consistent snapshot for several statements."""
        return self._transaction("DEFERRED")

    # ----------------------------------------------------------------- sessions

    def create_session(
        self,
        name: str,
        index_path: str | Path,
        items: Sequence[PoolItem],
        passphrase: str,
        settings: PoolSettings,
    ) -> SessionInfo:
        """Create a session whose items are shown in the order given (shuffle with :func:`pool`)."""
        name = _clean_name(name, "session name")
        if not isinstance(passphrase, str) or not passphrase:
            raise SentretError("a session needs a non-empty passphrase")
        if not isinstance(settings, PoolSettings):
            raise SentretError("settings must be a PoolSettings(models, depth, seed)")
        clean = _clean_items(items)
        queries = list(dict.fromkeys(item.query for item in clean))
        pairs = list(dict.fromkeys((item.query, item.entity) for item in clean))
        hashed = _hash_passphrase(passphrase)
        with self._transaction() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE name = ?", (name,)).fetchone():
                raise SentretError(f"a session named {name!r} already exists")
            session_id = conn.execute(
                "INSERT INTO sessions (name, index_path, queries, entities, settings,"
                " passphrase_hash, is_open, created_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
                (name, str(index_path), json.dumps(queries), json.dumps(pairs),
                 settings.to_json(), hashed, _now()),
            ).lastrowid
            conn.executemany(
                "INSERT INTO pool_items (session_id, query, entity, sentence_id, position,"
                " text, title) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(session_id, it.query, it.entity, it.sentence_id, pos, it.text, it.title)
                 for pos, it in enumerate(clean)],
            )
        return self.session(name)

    def sessions(self) -> list[SessionInfo]:
        """Every session (names, settings, open or closed; never grades or hashes)."""
        with self._read() as conn:
            names = [r[0] for r in conn.execute("SELECT name FROM sessions ORDER BY id")]
        return [self.session(name) for name in names]

    def session(self, name: str) -> SessionInfo:
        with self._read() as conn:
            row = conn.execute(
                "SELECT s.name, s.index_path, s.queries, s.entities, s.settings, s.is_open,"
                " s.created_at, (SELECT count(*) FROM pool_items p WHERE p.session_id = s.id)"
                " FROM sessions s WHERE s.name = ?",
                (name,),
            ).fetchone()
        if row is None:
            raise SentretError(f"no session named {name!r}")
        queries = tuple(json.loads(row[2]))
        pairs = tuple((q, e) for q, e in json.loads(row[3]))
        settings = PoolSettings.from_json(row[4])
        return SessionInfo(row[0], row[1], queries, pairs, settings, bool(row[5]), row[6], row[7])

    def _session_row(self, conn: sqlite3.Connection, name: str) -> tuple[int, str, bool]:
        row = conn.execute(
            "SELECT id, passphrase_hash, is_open FROM sessions WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise SentretError(f"no session named {name!r}")
        return int(row[0]), str(row[1]), bool(row[2])

    def sign_in(self, session_name: str, annotator: str, passphrase: str) -> AnnotatorHandle:
        """Check the passphrase (constant-time) and return this annotator's handle.

        The first sign-in registers the annotator name in the session.
        """
        annotator = _clean_name(annotator, "annotator name")
        with self._read() as conn:
            session_id, hashed, is_open = self._session_row(conn, str(session_name))
        if not isinstance(passphrase, str) or not _passphrase_matches(passphrase, hashed):
            raise SentretError(f"wrong passphrase for session {session_name!r}")
        if not is_open:
            raise SentretError(f"session {session_name!r} is closed; ask the organiser")
        with self._transaction() as conn:
            annotator_id, kind = self._annotator(conn, session_id, annotator, PERSON)
        if kind != PERSON:
            raise SentretError(
                f"{annotator!r} names imported judgments in session {session_name!r}; "
                "sign in with another name"
            )
        return AnnotatorHandle(self, session_id, str(session_name), annotator_id, annotator)

    def _annotator(
        self, conn: sqlite3.Connection, session_id: int, name: str, kind: str
    ) -> tuple[int, str]:
        """The annotator's id and kind, registering it with ``kind`` if it is new."""
        row = conn.execute(
            "SELECT id, kind FROM annotators WHERE session_id = ? AND name = ?",
            (session_id, name),
        ).fetchone()
        if row is not None:
            return int(row[0]), str(row[1])
        cursor = conn.execute(
            "INSERT INTO annotators (session_id, name, kind, created_at) VALUES (?, ?, ?, ?)",
            (session_id, name, kind, _now()),
        )
        return int(cursor.lastrowid or 0), kind

    def admin(self, token: str) -> Admin:
        """The administration interface, for the right admin token only."""
        return Admin(self, token)

    def check(self) -> list[str]:
        """Problems: ``integrity_check``, foreign keys, history that disagrees with judgments."""
        with self._read() as conn:
            problems = [r[0] for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
            problems += [f"foreign key: {r}" for r in conn.execute("PRAGMA foreign_key_check")]
            problems += [
                f"history of item {r[0]} by annotator {r[1]} ends at grade {r[2]}, "
                f"judgment says {r[3]}"
                for r in conn.execute(_HISTORY_MISMATCH)
            ]
        return problems

    # ----------------------------------------------------------------- writes shared by handles

    def _write_grade(
        self,
        conn: sqlite3.Connection,
        key: tuple[int, int, int],
        grade: int | None,
        note: str | None,
        action: str,
        *,
        undoes: int | None = None,
        stamps: tuple[str | None, str | None] = (None, None),
    ) -> bool:
        """Set (or with ``grade=None`` remove) one judgment and append its history row.

        ``key`` is (session id, item id, annotator id). Returns False when nothing changed.
        """
        session_id, item_id, annotator_id = key
        old = conn.execute(
            "SELECT grade, note FROM judgments"
            " WHERE session_id = ? AND item_id = ? AND annotator_id = ?",
            key,
        ).fetchone()
        old_grade, old_note = old if old is not None else (None, None)
        if (old_grade, old_note) == (grade, note) and undoes is None:
            return False
        now = _now()
        created, updated = stamps[0] or now, stamps[1] or now
        if grade is None:
            conn.execute(
                "DELETE FROM judgments WHERE session_id = ? AND item_id = ? AND annotator_id = ?",
                key,
            )
        else:
            conn.execute(
                "INSERT INTO judgments (session_id, item_id, annotator_id, grade, note,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (session_id, item_id, annotator_id) DO UPDATE SET"
                " grade = excluded.grade, note = excluded.note, updated_at = excluded.updated_at",
                (*key, grade, note, created, updated),
            )
        conn.execute(
            "INSERT INTO history (session_id, item_id, annotator_id, action, old_grade,"
            " new_grade, old_note, new_note, undoes, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, item_id, annotator_id, action, old_grade, grade, old_note, note,
             undoes, now),
        )
        return True


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
    WHERE j.grade IS NOT e.new_grade OR j.note IS NOT e.new_note
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
        query = _clean_name(item.query, f"query of item {number}")
        entity = _clean_name(item.entity, f"entity of item {number}")
        sid = _as_id(item.sentence_id, f"the sentence id of item {number}")
        key = (query, entity, sid)
        if key in seen:
            raise SentretError(f"item {number} repeats ({query!r}, {entity!r}, sentence {sid})")
        seen.add(key)
        clean.append(PoolItem(query, entity, sid, str(item.text), str(item.title)))
    return clean


# --------------------------------------------------------------------------- annotator handle


class AnnotatorHandle:
    """One annotator in one session: reads and writes that annotator's grades only."""

    def __init__(
        self, store: JudgmentStore, session_id: int, session: str, annotator_id: int, name: str
    ) -> None:
        self._store = store
        self._session_id = session_id
        self._annotator_id = annotator_id
        self.session = session
        self.annotator = name

    def __repr__(self) -> str:
        return f"AnnotatorHandle(session={self.session!r}, annotator={self.annotator!r})"

    def _open_item(self, conn: sqlite3.Connection, item_id: object) -> int:
        """Check that the session is open and the item belongs to it; return the item id."""
        item = _as_id(item_id, "an item id")
        row = conn.execute("SELECT is_open FROM sessions WHERE id = ?", (self._session_id,))
        if not row.fetchone()[0]:
            raise SentretError(f"session {self.session!r} is closed; no more grades are taken")
        found = conn.execute(
            "SELECT 1 FROM pool_items WHERE session_id = ? AND id = ?", (self._session_id, item)
        ).fetchone()
        if found is None:
            raise SentretError(f"item {item} is not in session {self.session!r}")
        return item

    def grade(self, item_id: int, grade: int, note: str | None = None) -> None:
        """Set this annotator's grade (and note) of an item; committed before returning."""
        grade = _check_grade(grade)
        note = _check_note(note)
        with self._store._transaction() as conn:
            item = self._open_item(conn, item_id)
            key = (self._session_id, item, self._annotator_id)
            self._store._write_grade(conn, key, grade, note, _set_or_change(conn, key))
            conn.execute(
                "DELETE FROM skips WHERE session_id = ? AND item_id = ? AND annotator_id = ?", key
            )

    def undo(self) -> ItemView | None:
        """Revert this annotator's last grade action not yet undone; None if there is none.

        Repeated calls walk further back. The undo is itself appended to the history.
        """
        with self._store._transaction() as conn:
            row = conn.execute(
                "SELECT h.id, h.item_id, h.old_grade, h.old_note FROM history h"
                " WHERE h.session_id = ? AND h.annotator_id = ? AND h.action IN ('set', 'change')"
                " AND NOT EXISTS (SELECT 1 FROM history u WHERE u.undoes = h.id)"
                " ORDER BY h.id DESC LIMIT 1",
                (self._session_id, self._annotator_id),
            ).fetchone()
            if row is None:
                return None
            history_id, item, old_grade, old_note = row
            self._open_item(conn, item)
            key = (self._session_id, item, self._annotator_id)
            self._store._write_grade(conn, key, old_grade, old_note, "undo", undoes=history_id)
            return self._item(conn, item)

    def skip(self, item_id: int) -> None:
        """Put an ungraded item aside: it comes back after every item neither graded nor skipped."""
        with self._store._transaction() as conn:
            item = self._open_item(conn, item_id)
            key = (self._session_id, item, self._annotator_id)
            if _current(conn, key) is not None:
                raise SentretError(f"item {item} is already graded; grade it again or undo")
            conn.execute(
                "INSERT OR REPLACE INTO skips (session_id, item_id, annotator_id, at)"
                " VALUES (?, ?, ?, ?)",
                (*key, _now()),
            )

    def next_item(self) -> ItemView | None:
        """Where this annotator stopped: the first item in the shuffled order neither graded
        nor skipped; then the skipped ones, longest-skipped first; None when all are graded."""
        args = (self._session_id, self._annotator_id)
        with self._store._read() as conn:
            row = conn.execute(_NEXT_FRESH, args).fetchone()
            if row is None:
                row = conn.execute(_NEXT_SKIPPED, args).fetchone()
        return None if row is None else ItemView(*row)

    def item(self, item_id: int) -> ItemView:
        """An item of this session (to show it again, e.g. to regrade it)."""
        with self._store._read() as conn:
            return self._item(conn, _as_id(item_id, "an item id"))

    def _item(self, conn: sqlite3.Connection, item_id: int) -> ItemView:
        row = conn.execute(
            f"SELECT {_ITEM_COLUMNS} FROM pool_items p WHERE p.session_id = ? AND p.id = ?",
            (self._session_id, item_id),
        ).fetchone()
        if row is None:
            raise SentretError(f"item {item_id} is not in session {self.session!r}")
        return ItemView(*row)

    def my_judgments(self) -> list[Judgment]:
        """This annotator's judgments, in the session's order."""
        with self._store._read() as conn:
            rows = conn.execute(
                f"{_JUDGMENT_SELECT} WHERE j.session_id = ? AND j.annotator_id = ?"
                " ORDER BY p.position",
                (self._session_id, self._annotator_id),
            ).fetchall()
        return [_judgment(row) for row in rows]

    def progress(self) -> Progress:
        with self._store._read() as conn:
            return _progress(conn, self._session_id, self._annotator_id)


_NEXT_FRESH = f"""
    SELECT {_ITEM_COLUMNS} FROM pool_items p
    WHERE p.session_id = ?1
      AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.session_id = ?1 AND j.item_id = p.id
                      AND j.annotator_id = ?2)
      AND NOT EXISTS (SELECT 1 FROM skips k WHERE k.session_id = ?1 AND k.item_id = p.id
                      AND k.annotator_id = ?2)
    ORDER BY p.position LIMIT 1
"""

_NEXT_SKIPPED = f"""
    SELECT {_ITEM_COLUMNS} FROM skips k JOIN pool_items p ON p.id = k.item_id
    WHERE k.session_id = ?1 AND k.annotator_id = ?2
      AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.session_id = ?1 AND j.item_id = p.id
                      AND j.annotator_id = ?2)
    ORDER BY k.id LIMIT 1
"""


def _current(conn: sqlite3.Connection, key: tuple[int, int, int]) -> int | None:
    row = conn.execute(
        "SELECT grade FROM judgments WHERE session_id = ? AND item_id = ? AND annotator_id = ?",
        key,
    ).fetchone()
    return None if row is None else int(row[0])


def _set_or_change(conn: sqlite3.Connection, key: tuple[int, int, int]) -> str:
    return "set" if _current(conn, key) is None else "change"


def _progress(conn: sqlite3.Connection, session_id: int, annotator_id: int) -> Progress:
    total, graded, skipped = conn.execute(
        "SELECT (SELECT count(*) FROM pool_items WHERE session_id = ?1),"
        " (SELECT count(*) FROM judgments WHERE session_id = ?1 AND annotator_id = ?2),"
        " (SELECT count(*) FROM skips k WHERE k.session_id = ?1 AND k.annotator_id = ?2"
        "  AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.session_id = ?1"
        "  AND j.item_id = k.item_id AND j.annotator_id = ?2))",
        (session_id, annotator_id),
    ).fetchone()
    return Progress(int(total), int(graded), int(skipped))


# --------------------------------------------------------------------------- administration


class Admin:
    """Session administration, export and import; created only with the admin token."""

    def __init__(self, store: JudgmentStore, token: str) -> None:
        expected = admin_token().encode("utf-8")
        given = token.encode("utf-8") if isinstance(token, str) else b""
        if not hmac.compare_digest(given, expected):
            raise SentretError("wrong admin token")
        self._store = store

    # ----------------------------------------------------------------- sessions

    def close_session(self, name: str) -> None:
        """Stop taking grades (sign-in and grading are refused until it is reopened)."""
        self._set_open(name, False)

    def reopen_session(self, name: str) -> None:
        self._set_open(name, True)

    def _set_open(self, name: str, is_open: bool) -> None:
        with self._store._transaction() as conn:
            session_id = self._store._session_row(conn, name)[0]
            conn.execute("UPDATE sessions SET is_open = ? WHERE id = ?", (int(is_open), session_id))

    def progress_by_annotator(self, name: str) -> dict[str, Progress]:
        with self._store._read() as conn:
            session_id = self._store._session_row(conn, name)[0]
            annotators = conn.execute(
                "SELECT id, name FROM annotators WHERE session_id = ? ORDER BY name", (session_id,)
            ).fetchall()
            return {who: _progress(conn, session_id, aid) for aid, who in annotators}

    def all_judgments(self, name: str) -> list[Judgment]:
        """Every annotator's judgments in a session, in the session's order."""
        with self._store._read() as conn:
            session_id = self._store._session_row(conn, name)[0]
            rows = conn.execute(
                f"{_JUDGMENT_SELECT} WHERE j.session_id = ? ORDER BY p.position, a.name",
                (session_id,),
            ).fetchall()
        return [_judgment(row) for row in rows]

    def history(self, name: str) -> list[HistoryEntry]:
        """The session's append-only history, oldest first."""
        with self._store._read() as conn:
            session_id = self._store._session_row(conn, name)[0]
            rows = conn.execute(
                "SELECT h.id, a.name, p.query, p.entity, p.sentence_id, h.action, h.old_grade,"
                " h.new_grade, h.old_note, h.new_note, h.undoes, h.at FROM history h"
                " JOIN annotators a ON a.id = h.annotator_id JOIN pool_items p ON p.id = h.item_id"
                " WHERE h.session_id = ? ORDER BY h.id",
                (session_id,),
            ).fetchall()
        return [HistoryEntry(*row) for row in rows]

    # ----------------------------------------------------------------- export

    def export_qrels(
        self, name: str, *, rule: str = "majority", annotator: str | None = None
    ) -> str:
        """TREC qrels ``topic 0 sentence_id grade``, one line per judged item, grades 1-4.

        ``rule``: ``majority`` (most frequent grade, ties to the lower), ``mean`` (rounded half
        up) or ``annotator`` (the grades of ``annotator`` alone). Topic ids are
        ``<query>:<entity>`` percent-encoded; a grade ≥ 3 is relevant.
        """
        if rule not in RULES:
            raise SentretError(f"unknown adjudication rule {rule!r}; choose one of {RULES}")
        if (rule == "annotator") != (annotator is not None):
            raise SentretError("name an annotator with rule='annotator', and only then")
        judgments = self.all_judgments(name)
        if annotator is not None:
            if annotator not in self.progress_by_annotator(name):
                raise SentretError(f"no annotator named {annotator!r} in session {name!r}")
            judgments = [j for j in judgments if j.annotator == annotator]
        grades: dict[tuple[str, int], list[int]] = {}
        for j in judgments:
            grades.setdefault((j.topic_id, j.sentence_id), []).append(j.grade)
        adjudication = "majority" if rule == "annotator" else rule
        return "".join(
            f"{topic} 0 {sid} {adjudicate(found, adjudication)}\n"
            for (topic, sid), found in sorted(grades.items())
        )

    def export_csv(self, name: str) -> str:
        """Every judgment with every field (:data:`JUDGMENT_FIELDS`), one CSV row each."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(JUDGMENT_FIELDS)
        writer.writerows(self.all_judgments(name))
        return out.getvalue()

    def export_jsonl(self, name: str) -> str:
        """Every judgment with every field, one JSON object a line."""
        return "".join(
            json.dumps(j._asdict(), ensure_ascii=False) + "\n" for j in self.all_judgments(name)
        )

    # ----------------------------------------------------------------- import

    def import_qrels(
        self,
        name: str,
        lines: Iterable[str],
        annotator: str,
        *,
        grade_map: Mapping[int, int] | None = None,
    ) -> int:
        """Import TREC qrels as the grades of a pseudo-annotator; returns how many changed.

        Every (topic, sentence) must be in the session's pool. ``grade_map`` translates
        another scale (e.g. ``{0: 1, 1: 3}``). One bad line aborts the import, naming the line.
        """
        annotator = _clean_name(annotator, "annotator name")
        keys = _parse_qrels(lines, annotator, grade_map or {g: g for g in GRADES})
        return self._import(name, keys)

    def import_jsonl(self, name: str, lines: Iterable[str]) -> int:
        """Import judgments exported by :meth:`export_jsonl`; returns how many changed."""
        return self._import(name, _parse_jsonl(lines))

    def _import(self, name: str, keys: list[_Key]) -> int:
        store = self._store
        changed = 0
        with store._transaction() as conn:
            session_id = store._session_row(conn, name)[0]
            for key in keys:
                item = _find_item(conn, session_id, key, name)
                annotator_id, kind = store._annotator(conn, session_id, key.annotator, key.kind)
                if kind != key.kind:
                    raise SentretError(
                        f"line {key.line}: annotator {key.annotator!r} is registered as "
                        f"{kind!r} in session {name!r}, not {key.kind!r}; use another name"
                    )
                changed += store._write_grade(
                    conn, (session_id, item, annotator_id), key.grade, key.note, "import",
                    stamps=(key.created_at, key.updated_at),
                )
        return changed


def _find_item(conn: sqlite3.Connection, session_id: int, key: _Key, session: str) -> int:
    row = conn.execute(
        "SELECT id FROM pool_items WHERE session_id = ? AND query = ? AND entity = ?"
        " AND sentence_id = ?",
        (session_id, key.query, key.entity, key.sentence_id),
    ).fetchone()
    if row is None:
        raise SentretError(
            f"line {key.line}: ({key.query!r}, {key.entity!r}, sentence {key.sentence_id}) "
            f"is not in the pool of session {session!r}"
        )
    return int(row[0])


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(lines, start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, line


def _no_repeats(keys: list[_Key]) -> list[_Key]:
    first: dict[tuple[str, str, int, str], int] = {}
    for key in keys:
        triple = (key.query, key.entity, key.sentence_id, key.annotator)
        if triple in first:
            raise SentretError(f"line {key.line}: repeats the judgment of line {first[triple]}")
        first[triple] = key.line
    return keys


def _parse_qrels(lines: Iterable[str], annotator: str, grade_map: Mapping[int, int]) -> list[_Key]:
    keys = []
    for number, line in _numbered(lines):
        fields = line.split()
        if len(fields) != 4:
            raise SentretError(
                f"qrels line {number}: expected 4 fields 'topic iteration sentence_id grade', "
                f"got {len(fields)}"
            )
        try:
            topic = split_topic_id(fields[0])
        except SentretError:
            topic = ("", "")
        if not all(topic):
            raise SentretError(
                f"qrels line {number}: topic {fields[0]!r} is not '<query>:<entity>'"
            )
        sid = _qrels_int(fields[2], "sentence id", number)
        rel = _qrels_int(fields[3], "grade", number)
        if rel not in grade_map or grade_map[rel] not in GRADES:
            raise SentretError(
                f"qrels line {number}: grade {rel} is not one of 1-4; "
                "pass grade_map to translate another scale"
            )
        grade = grade_map[rel]
        keys.append(_Key(number, *topic, sid, annotator, IMPORTED, grade, None, None, None))
    return _no_repeats(keys)


def _qrels_int(text: str, what: str, number: int) -> int:
    try:
        return int(text)
    except ValueError:
        raise SentretError(f"qrels line {number}: {what} {text!r} is not an integer") from None


def _parse_jsonl(lines: Iterable[str]) -> list[_Key]:
    keys = []
    for number, line in _numbered(lines):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SentretError(f"JSONL line {number}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise SentretError(f"JSONL line {number}: expected a JSON object")
        try:
            keys.append(_jsonl_key(number, record))
        except SentretError as exc:
            raise SentretError(f"JSONL line {number}: {exc}") from None
    return _no_repeats(keys)


def _jsonl_key(number: int, record: dict[str, Any]) -> _Key:
    required = ("query", "entity", "sentence_id", "annotator", "grade")
    missing = [field for field in required if field not in record]
    if missing:
        raise SentretError(f"missing field(s) {', '.join(missing)}")
    kind = record.get("annotator_kind", PERSON)
    if kind not in (PERSON, IMPORTED):
        raise SentretError(f"annotator_kind must be {PERSON!r} or {IMPORTED!r}; got {kind!r}")
    return _Key(
        number,
        _clean_name(record["query"], "query"),
        _clean_name(record["entity"], "entity"),
        _as_id(record["sentence_id"], "sentence_id"),
        _clean_name(record["annotator"], "annotator name"),
        kind,
        _check_grade(record["grade"]),
        _check_note(record.get("note")),
        _timestamp(record.get("created_at")),
        _timestamp(record.get("updated_at")),
    )


def _timestamp(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value)
            return value
        except ValueError:
            pass
    raise SentretError(f"timestamp {value!r} is not ISO 8601")
