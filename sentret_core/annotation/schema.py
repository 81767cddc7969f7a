"""The SQLite schema of the judgment store, its append-only history triggers and migrations."""

from __future__ import annotations

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
