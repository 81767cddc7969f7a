"""Administration of sessions: close, read every judgment, export and import (admin token only)."""

from __future__ import annotations

import csv
import hmac
import io
import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from sentret_core.annotation.annotator import _progress
from sentret_core.annotation.auth import _clean_name, admin_token
from sentret_core.annotation.io import _parse_jsonl, _parse_qrels
from sentret_core.annotation.pooling import adjudicate
from sentret_core.annotation.records import (
    _JUDGMENT_SELECT,
    GRADES,
    JUDGMENT_FIELDS,
    RULES,
    HistoryEntry,
    Judgment,
    Progress,
    _judgment,
    _Key,
)
from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.annotation.store import JudgmentStore


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
