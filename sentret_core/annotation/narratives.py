"""Per-topic narratives: the information need behind a (query, entity) topic, in the annotator's words
to read while grading (TREC's ``<narr>``; Quepid's and Argilla's task descriptions).

A topics line may carry one as its third column (``query<TAB>entity<TAB>narrative``); a query given
without an entity passes its narrative to every entity it is pooled with. Stored in ``narratives``
(schema step ``_NARRATIVES``), one per (session, query, entity key).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from sentret_core.annotation.connect import has_table
from sentret_core.errors import SentretError

MAX_NARRATIVE = 2_000


def check_narrative(text: object, where: str = "a narrative") -> str:
    """A narrative as stored: plain text, whitespace collapsed, at most :data:`MAX_NARRATIVE` characters."""
    if not isinstance(text, str):
        raise SentretError(f"{where} must be text; got {type(text).__name__}")
    if any(0xD800 <= ord(ch) <= 0xDFFF or (ord(ch) < 32 and ch not in "\t\n\r") for ch in text):
        raise SentretError(f"{where} must be plain text without control characters or lone surrogates")
    clean = " ".join(text.split())
    if len(clean) > MAX_NARRATIVE:
        raise SentretError(f"{where} must be at most {MAX_NARRATIVE:,} characters; got {len(clean):,}")
    return clean


def store_narratives(conn: sqlite3.Connection, session_id: int, narratives: Mapping[tuple[str, str], str]) -> None:
    conn.executemany(
        "INSERT INTO narratives (session_id, query, entity, text) VALUES (?, ?, ?, ?)",
        [(session_id, query, entity, text) for (query, entity), text in narratives.items() if text],
    )


def read_narratives(conn: sqlite3.Connection, session_id: int) -> dict[tuple[str, str], str]:
    """(query, entity key) → narrative of a session (none on a database older than narratives)."""
    if not has_table(conn, "narratives"):
        return {}
    rows = conn.execute("SELECT query, entity, text FROM narratives WHERE session_id = ?", (session_id,))
    return {(str(q), str(e)): str(t) for q, e, t in rows}
