"""A judgments database taken back to the schema just before a step, for the tests of reading and migrating
older files: each later step's statements undone in reverse (a column dropped, a table, index or trigger
dropped) and ``user_version`` set back."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from sentret_core.annotation.schema import MIGRATIONS, Step

_UNDO = (
    (re.compile(r"ALTER TABLE (\w+) ADD COLUMN (\w+)"), "ALTER TABLE {0} DROP COLUMN {1}"),
    (re.compile(r"CREATE (?:UNIQUE )?INDEX (\w+)"), "DROP INDEX {0}"),
    (re.compile(r"CREATE TRIGGER (\w+)"), "DROP TRIGGER {0}"),
    (re.compile(r"CREATE TABLE (\w+)"), "DROP TABLE {0}"),
)


def downgrade(path: Path, before: tuple[Step, ...]) -> None:
    """Take the database at ``path`` back to the schema just before migration step ``before``."""
    version = MIGRATIONS.index(before)
    with sqlite3.connect(path) as conn:
        for step in reversed(MIGRATIONS[version:]):
            for statement in reversed(step):
                assert isinstance(statement, str), "a step done in Python cannot be undone here"
                conn.execute(_undo(statement.strip()))
        conn.execute(f"PRAGMA user_version = {version}")
    conn.close()


def _undo(statement: str) -> str:
    for pattern, undo in _UNDO:
        found = pattern.match(statement)
        if found:
            return undo.format(*found.groups())
    raise AssertionError(f"no undo for {statement[:60]!r}")
