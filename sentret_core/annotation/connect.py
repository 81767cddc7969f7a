"""Opening the judgments database file, for writing or read-only, and SQLite's errors as messages.

A writing connection runs in WAL mode with synchronous=FULL and migrates an older schema; it takes
the write lock only when there is something to migrate. A read-only connection (``mode=ro`` URI,
``PRAGMA query_only``) never takes the write lock, so export, agreement and evaluation run while an
annotator or an import holds it, and it reads a file the user may not write.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sentret_core.annotation.schema import MIGRATIONS, READABLE_FROM, SCHEMA_VERSION
from sentret_core.errors import SentretError


def open_connection(path: Path, *, read_only: bool, timeout: float) -> sqlite3.Connection:
    """A configured connection to the judgments database at ``path``; SentretError when it cannot be."""
    if read_only and not path.is_file():
        raise SentretError(f"no judgments database at {path}")
    try:
        conn = _read_only(path, timeout) if read_only else _connect(str(path), timeout)
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc, timeout) from None
    try:
        if read_only:
            _check_version(path, _version(conn), read_only=True)
        else:
            _configure(path, conn)
            _migrate(path, conn)
    except sqlite3.Error as exc:
        conn.close()
        raise sqlite_error(path, exc, timeout) from None
    except BaseException:
        conn.close()
        raise
    return conn


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the database has table ``name`` (a database opened read-only may be older than it)."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return found.fetchone() is not None


def has_column(conn: sqlite3.Connection, table: str, column: str) -> bool:
    """Whether ``table`` has ``column`` (as :func:`has_table`, for a column a later schema step added)."""
    return any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})"))


def caused_by_the_user(exc: sqlite3.Error) -> bool:
    """A lock held too long, a file or folder the user may not write, a full disk: not a bug of ours."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_READONLY", "SQLITE_FULL", "SQLITE_CANTOPEN"))


def sqlite_error(path: Path, exc: sqlite3.Error, timeout: float) -> SentretError:
    """One message for an SQLite error a user can cause (a lock held too long, permissions, a full disk)."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return SentretError(
            f"{path}: the judgments database is busy: another process has held its lock for more than "
            f"{timeout:g} s; try again when it is done"
        )
    if name == "SQLITE_READONLY_DIRECTORY":
        return SentretError(
            f"{path}: its folder is read-only, and SQLite needs to write its -wal and -shm files there; "
            "copy the database to a folder you can write"
        )
    if name.startswith("SQLITE_READONLY"):
        return SentretError(
            f"{path}: the file is read-only; export and agreement can read it, but grading, importing "
            "and creating sessions need write access"
        )
    if name in ("SQLITE_NOTADB", "SQLITE_CORRUPT"):
        return SentretError(f"{path}: not a judgments database ({exc})")
    if name == "SQLITE_FULL":
        return SentretError(f"{path}: the disk is full; free some space and try again")
    return SentretError(f"{path}: cannot use the judgments database ({exc})")


def _connect(target: str, timeout: float, *, uri: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(target, timeout=timeout, isolation_level=None, check_same_thread=False, uri=uri)
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return conn


def _read_only(path: Path, timeout: float) -> sqlite3.Connection:
    uri = f"{path.resolve().as_uri()}?mode=ro"
    conn = _connect(uri, timeout, uri=True)
    conn.execute("PRAGMA query_only = ON")
    try:
        _version(conn)
    except sqlite3.OperationalError as exc:
        wal = path.with_name(path.name + "-wal")
        if getattr(exc, "sqlite_errorname", "") != "SQLITE_READONLY_DIRECTORY" or wal.exists():
            conn.close()
            raise
        # a read-only folder where SQLite cannot create the -shm file: with no -wal file beside it,
        # the database file alone holds every commit, and nobody who cannot write here can add one
        conn.close()
        conn = _connect(f"{uri}&immutable=1", timeout, uri=True)
        conn.execute("PRAGMA query_only = ON")
    return conn


def _version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _configure(path: Path, conn: sqlite3.Connection) -> None:
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise SentretError(f"{path}: the file system does not support WAL mode")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")


def _migrate(path: Path, conn: sqlite3.Connection) -> None:
    """Apply the missing migrations in order, in one transaction; a current schema takes no lock."""
    if _check_version(path, _version(conn), read_only=False):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _version(conn)  # another process may have migrated it meanwhile
        if not _check_version(path, version, read_only=False):
            if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise SentretError(f"{path}: not a sentret judgments database")
            for steps in MIGRATIONS[version:]:
                for step in steps:
                    if isinstance(step, str):
                        conn.execute(step)
                    else:
                        step(conn)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _check_version(path: Path, version: int, *, read_only: bool) -> bool:
    """True when the schema is current; SentretError when it is newer, or older and cannot be migrated."""
    if version > SCHEMA_VERSION:
        raise SentretError(
            f"{path}: judgments schema version {version} is newer than this sentret understands "
            f"({SCHEMA_VERSION}); upgrade sentret"
        )
    if version == SCHEMA_VERSION or (read_only and version >= READABLE_FROM):
        return True
    if read_only and version == 0:
        raise SentretError(f"{path}: not a sentret judgments database")
    if read_only:
        raise SentretError(
            f"{path}: judgments schema version {version} is older than this sentret's ({SCHEMA_VERSION}); "
            "open it once with write access (the app or `sentret judgments import` do) to upgrade it"
        )
    return False
