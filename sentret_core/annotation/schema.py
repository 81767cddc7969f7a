"""The SQLite schema of the judgment store, its append-only history triggers and migrations."""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Callable

Step = str | Callable[[sqlite3.Connection], None]

_APPEND_ONLY = "SELECT RAISE(ABORT, 'history is append-only')"

_V1: tuple[Step, ...] = (
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
_V2: tuple[Step, ...] = (
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



def _key_existing_names(conn: sqlite3.Connection) -> None:
    """v3: give every annotator its name key (the case-folded name). Names that only differed in
    case or white space ("Alice", "alice ") were separate annotators: the first (lowest id) keeps its
    name, the others are renamed "<name> #<id>" so that nothing is merged and no grade is lost; the
    admin may rename or remove them."""
    def key_of(shown: str) -> str:
        return unicodedata.normalize("NFKC", shown.casefold())

    rows = conn.execute("SELECT id, session_id, name FROM annotators ORDER BY id").fetchall()
    taken = {(session_id, key_of(" ".join(unicodedata.normalize("NFKC", str(name)).split())))
             for _, session_id, name in rows}
    given: set[tuple[int, str]] = set()
    conn.execute("UPDATE annotators SET name = '#' || id")  # unique meanwhile, whatever the new names are
    for annotator_id, session_id, name in rows:
        base = " ".join(unicodedata.normalize("NFKC", str(name)).split()) or f"annotator {annotator_id}"
        shown, suffix = base, 0
        while (session_id, key_of(shown)) in given or (shown != base and (session_id, key_of(shown)) in taken):
            suffix += 1
            shown = f"{base} #{annotator_id}" + (f".{suffix}" if suffix > 1 else "")
        given.add((session_id, key_of(shown)))
        conn.execute("UPDATE annotators SET name = ?, name_key = ? WHERE id = ?", (shown, key_of(shown), annotator_id))


# v3: personal secrets. Each annotator has a name key (unique per session among annotators not
# removed), the scrypt hashes of a sign-in token and a passphrase, a disabled flag, a removal stamp
# (a removed annotator's grades stay in the tables and the history, but count nowhere) and a
# credential counter that every change of access bumps, which signs out a browser signed in before.
# The session's shared passphrase no longer signs anyone in: annotators of older sessions keep
# their names and grades and wait for the admin to give them a secret. annotator_log records the
# admin's changes to annotators (append-only, like history).
_V3: tuple[Step, ...] = (
    "ALTER TABLE annotators ADD COLUMN name_key TEXT",
    "ALTER TABLE annotators ADD COLUMN passphrase_hash TEXT",
    "ALTER TABLE annotators ADD COLUMN token_hash TEXT",
    "ALTER TABLE annotators ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1))",
    "ALTER TABLE annotators ADD COLUMN removed_at TEXT",
    "ALTER TABLE annotators ADD COLUMN credential INTEGER NOT NULL DEFAULT 0",
    _key_existing_names,
    "CREATE UNIQUE INDEX annotators_by_key ON annotators(session_id, name_key)",
    """CREATE TABLE annotator_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id INTEGER NOT NULL,
        annotator_id INTEGER NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('add', 'rename', 'disable', 'enable', 'secret', 'remove')),
        detail TEXT,
        at TEXT NOT NULL,
        FOREIGN KEY (session_id, annotator_id) REFERENCES annotators(session_id, id))""",
    f"CREATE TRIGGER annotator_log_no_update BEFORE UPDATE ON annotator_log BEGIN {_APPEND_ONLY}; END",
    f"CREATE TRIGGER annotator_log_no_delete BEFORE DELETE ON annotator_log BEGIN {_APPEND_ONLY}; END",
)

# v4: sign-in attempts (annotators' and the admin's), counted here so that every process shares
# them and a restart forgets none (see throttle.py). ``key`` is a JSON list such as
# ["name", session, name key, client]; ``at`` is wall-clock seconds.
_V4: tuple[Step, ...] = (
    """CREATE TABLE sign_in_attempts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL,
        at REAL NOT NULL)""",
    "CREATE INDEX sign_in_attempts_by_key ON sign_in_attempts(key, at)",
    "CREATE INDEX sign_in_attempts_by_time ON sign_in_attempts(at)",
)

# v5: browser sign-ins that survive reloads, new tabs and restarts (see web_sessions.py): one row per
# signed-in browser, found by the SHA-256 of its random id, ending at ``expires_at`` (wall-clock
# seconds). An annotator's row names the annotator and the credential counter it was made under (a
# change of access ends it); the admin's holds a check of the admin token it was made with. Also:
# session guidelines (Markdown the admin writes) and a flag an annotator sets on a judgment.
_V5: tuple[Step, ...] = (
    """CREATE TABLE web_sessions (
        id_hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('annotator', 'admin')),
        session_id INTEGER REFERENCES sessions(id),
        annotator_id INTEGER REFERENCES annotators(id),
        credential INTEGER,
        admin_check TEXT,
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL)""",
    "CREATE INDEX web_sessions_by_expiry ON web_sessions(expires_at)",
    "ALTER TABLE sessions ADD COLUMN guidelines TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE judgments ADD COLUMN flagged INTEGER NOT NULL DEFAULT 0 CHECK (flagged IN (0, 1))",
)

# adjudications (see adjudication.py): the admin's grade for an item the annotators disagree on,
# kept apart from the annotators' own grades, one per item; adjudication_log keeps every change.
_ADJUDICATIONS: tuple[Step, ...] = (
    """CREATE TABLE adjudications (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        grade INTEGER NOT NULL CHECK (grade BETWEEN 1 AND 4),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (session_id, item_id),
        FOREIGN KEY (session_id, item_id) REFERENCES pool_items(session_id, id))""",
    """CREATE TABLE adjudication_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        old_grade INTEGER CHECK (old_grade BETWEEN 1 AND 4),
        new_grade INTEGER CHECK (new_grade BETWEEN 1 AND 4),
        at TEXT NOT NULL,
        FOREIGN KEY (session_id, item_id) REFERENCES pool_items(session_id, id))""",
    f"CREATE TRIGGER adjudication_log_no_update BEFORE UPDATE ON adjudication_log BEGIN {_APPEND_ONLY}; END",
    f"CREATE TRIGGER adjudication_log_no_delete BEFORE DELETE ON adjudication_log BEGIN {_APPEND_ONLY}; END",
)

# item orders (see item_order.py): who grades which item and in what order, as JSON; NULL for a
# session made before, which keeps one shared order for everybody.
_ITEM_ORDER: tuple[Step, ...] = ("ALTER TABLE sessions ADD COLUMN item_order TEXT",)

# docnos (see sentret_core.index.docnos): each item's ``<document id>-<position>``, the sentence id that
# exports, runs and other tools share (an index's internal ids change when it is rebuilt); NULL for an item
# pooled before, whose docno exports find from the session's index.
_DOCNOS: tuple[Step, ...] = ("ALTER TABLE pool_items ADD COLUMN docno TEXT",)

# known browsers (see known_browsers.py): a browser that signed in as ``who`` ("admin", "annotator:<id>"),
# found by the SHA-256 of the random id in its cookie, until ``expires_at``; and the scrypt hash of the admin
# token the admin's sign-ins were made under, so that a new token ends them all (web_sessions.py).
_KNOWN_BROWSERS: tuple[Step, ...] = (
    """CREATE TABLE known_browsers (
        id_hash TEXT NOT NULL,
        who TEXT NOT NULL,
        expires_at REAL NOT NULL,
        PRIMARY KEY (id_hash, who))""",
    "CREATE INDEX known_browsers_by_expiry ON known_browsers(expires_at)",
    """CREATE TABLE admin_token (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        token_hash TEXT NOT NULL)""",
)

# marks (see marks.py): the note and flag an annotator gave an item not graded (yet, or any more after an
# undo), so that neither lives only in a browser tab; and the flag before and after each history row, so
# that a flag is part of a judgment's history as its grade and note are (NULL in rows written before).
_MARKS: tuple[Step, ...] = (
    """CREATE TABLE marks (
        session_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        annotator_id INTEGER NOT NULL,
        note TEXT,
        flagged INTEGER NOT NULL DEFAULT 0 CHECK (flagged IN (0, 1)),
        at TEXT NOT NULL,
        PRIMARY KEY (session_id, item_id, annotator_id),
        FOREIGN KEY (session_id, item_id) REFERENCES pool_items(session_id, id),
        FOREIGN KEY (session_id, annotator_id) REFERENCES annotators(session_id, id))""",
    "ALTER TABLE history ADD COLUMN old_flagged INTEGER CHECK (old_flagged IN (0, 1))",
    "ALTER TABLE history ADD COLUMN new_flagged INTEGER CHECK (new_flagged IN (0, 1))",
)

# time on task (see time_on_task.py): the seconds each judgment's item was on screen before its grades
# (NULL: graded without being shown, or before this step), and the item each annotator has on screen now.
_TIME_ON_TASK: tuple[Step, ...] = (
    "ALTER TABLE judgments ADD COLUMN seconds REAL CHECK (seconds >= 0)",
    """CREATE TABLE current_views (
        session_id INTEGER NOT NULL,
        annotator_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        since REAL NOT NULL,
        PRIMARY KEY (session_id, annotator_id),
        FOREIGN KEY (session_id, item_id) REFERENCES pool_items(session_id, id),
        FOREIGN KEY (session_id, annotator_id) REFERENCES annotators(session_id, id))""",
)

# narratives (see narratives.py): the information need of each (query, entity) topic, shown while grading.
_NARRATIVES: tuple[Step, ...] = (
    """CREATE TABLE narratives (
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        query TEXT NOT NULL,
        entity TEXT NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (session_id, query, entity))""",
)

# suggestions (see suggestions.py): a model's or a file's guessed grade per pooled sentence, shown to
# annotators and never counted as a grade.
_SUGGESTIONS: tuple[Step, ...] = (
    """CREATE TABLE suggestions (
        session_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        source TEXT NOT NULL,
        grade INTEGER NOT NULL CHECK (grade BETWEEN 1 AND 4),
        at TEXT NOT NULL,
        PRIMARY KEY (session_id, item_id, source),
        FOREIGN KEY (session_id, item_id) REFERENCES pool_items(session_id, id))""",
)

# roles (see roles.py): an annotator grades, a reviewer adjudicates and cannot grade, a session's admin
# administers that session with a personal secret; who made each adjudication (NULL: the admin token); and
# every change of role, append-only (annotator_log's CHECK names its actions, and SQLite cannot widen it).
_ROLES: tuple[Step, ...] = (
    "ALTER TABLE annotators ADD COLUMN role TEXT NOT NULL DEFAULT 'annotator'"
    " CHECK (role IN ('annotator', 'reviewer', 'admin'))",
    "ALTER TABLE adjudication_log ADD COLUMN by_name TEXT",
    """CREATE TABLE role_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id INTEGER NOT NULL,
        annotator_id INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('annotator', 'reviewer', 'admin')),
        at TEXT NOT NULL,
        FOREIGN KEY (session_id, annotator_id) REFERENCES annotators(session_id, id))""",
    f"CREATE TRIGGER role_log_no_update BEFORE UPDATE ON role_log BEGIN {_APPEND_ONLY}; END",
    f"CREATE TRIGGER role_log_no_delete BEFORE DELETE ON role_log BEGIN {_APPEND_ONLY}; END",
)

MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    _V1, _V2, _V3, _V4, _V5, _ADJUDICATIONS, _ITEM_ORDER, _DOCNOS, _KNOWN_BROWSERS, _MARKS, _TIME_ON_TASK,
    _NARRATIVES, _SUGGESTIONS, _ROLES,
)
SCHEMA_VERSION = len(MIGRATIONS)
# A read-only connection can read a database this old as it is: what came after (the sign-in
# attempts of v4, the web sessions of v5) is used only by writers; v5's columns are read when present,
# and so are the adjudications (none when the table is absent) and item orders (one shared order).
READABLE_FROM = 3
