"""Administration of sessions: close, annotators, read every judgment, export and import (admin token only).

Removed annotators (:meth:`AnnotatorAdmin.remove_annotator`) count nowhere: not in progress, not in
:meth:`Admin.all_judgments` (so not in exports, agreement or evaluation); their grades stay in the
tables and in :meth:`Admin.history`. Imported grades always belong to an *import* annotator, never to
a person, and never overwrite a person's grade.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from sentret_core.annotation.adjudication import adjudicated_grades
from sentret_core.annotation.annotator import annotator_progress
from sentret_core.annotation.auth import admin_token, name_key, normalise_name
from sentret_core.annotation.csv_export import csv_text
from sentret_core.annotation.identity import AnnotatorAdmin
from sentret_core.annotation.io import parse_jsonl_lines, parse_qrels_lines
from sentret_core.annotation.known_browsers import ADMIN
from sentret_core.annotation.pooling import adjudicate
from sentret_core.annotation.records import (
    DEFAULT_SCALE,
    IMPORT_SCALES,
    IMPORTED,
    JUDGMENT_FIELDS,
    PERSON,
    RULES,
    SCALES,
    SENTENCE_IDS,
    HistoryEntry,
    ImportLine,
    Judgment,
    Progress,
    judgment_from_row,
    judgment_select,
)
from sentret_core.annotation.roles import graders
from sentret_core.annotation.scales import AUTO, qrels_grades, sniff_or_default
from sentret_core.annotation.throttle import ceiling_of
from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.annotation.store import JudgmentStore


class Admin(AnnotatorAdmin):
    """Session administration, annotators, export and import; created only with the admin token."""

    def __init__(self, store: JudgmentStore, token: str, client: str = "local", known: object = None) -> None:
        """``client`` identifies who is trying (the app: the browser's address); wrong tokens are slowed
        down per client and from every client like annotators' sign-ins (:mod:`.throttle`), except from
        a browser ``known`` as the admin's (the id of its known-browser cookie, :mod:`.known_browsers`)."""
        expected = admin_token().encode("utf-8")
        given = token.encode("utf-8", "surrogatepass") if isinstance(token, str) else b""
        right = lambda: hmac.compare_digest(given, expected)  # noqa: E731
        browser = store.known_browsers.key(store, known, ADMIN) if known is not None else None
        if not store.throttle.attempt(store, ("admin", str(client)), (), "with the admin token", right,
                                      ceiling=ceiling_of("admin"), known=browser, cheap=True):
            raise SentretError("wrong admin token")
        self._store = store

    # ----------------------------------------------------------------- sessions

    def close_session(self, name: str) -> None:
        """Stop taking grades (sign-in and grading are refused until it is reopened)."""
        self._set_open(name, False)

    def reopen_session(self, name: str) -> None:
        self._set_open(name, True)

    def _set_open(self, name: str, is_open: bool) -> None:
        with self._store.db.transaction() as conn:
            session_id = self.session_id(conn, name)
            conn.execute("UPDATE sessions SET is_open = ? WHERE id = ?", (int(is_open), session_id))

    def progress_by_annotator(self, name: str) -> dict[str, Progress]:
        with self._store.db.read() as conn:
            session_id = self.session_id(conn, name)
            annotators = conn.execute(
                f"SELECT id, name FROM annotators WHERE session_id = ? AND removed_at IS NULL{graders(conn)}"
                " ORDER BY name_key",
                (session_id,),
            ).fetchall()
            return {who: annotator_progress(conn, session_id, aid) for aid, who in annotators}

    def all_judgments(self, name: str) -> list[Judgment]:
        """Every annotator's judgments in a session, in the session's order (removed annotators' left out)."""
        with self._store.db.read() as conn:
            session_id = self.session_id(conn, name)
            rows = conn.execute(
                f"{judgment_select(conn)} WHERE j.session_id = ? AND a.removed_at IS NULL"
                " ORDER BY p.position, a.name_key",
                (session_id,),
            ).fetchall()
        return [judgment_from_row(row) for row in rows]

    def history(self, name: str) -> list[HistoryEntry]:
        """The session's append-only history, oldest first (removed annotators' grades too)."""
        with self._store.db.read() as conn:
            session_id = self.session_id(conn, name)
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
        self, name: str, *, rule: str = "majority", annotator: str | None = None, scale: str = DEFAULT_SCALE,
        ids: str = "docno",
    ) -> str:
        """TREC qrels ``topic 0 docno grade``, one line per judged item.

        ``ids``: ``docno`` (default: ``<document id>-<position>``, as ``sentret run``, ``--run-out`` and the
        PyTerrier transformer name a sentence, and as stable as the documents' ids) or ``internal`` (the
        index's sentence ids, which change when it is rebuilt).

        ``scale``: ``trec`` (default: 0 non-relevant, 1 fairly relevant, 2 relevant, 3 very
        relevant, so trec_eval's defaults never count a non-relevant sentence, and ``trec_eval -l 2``
        counts what the app calls relevant) or ``1-4`` (the grades as stored). ``rule``:
        ``majority`` (most frequent grade, ties to the lower), ``mean`` (rounded half up) or
        ``annotator`` (the grades of ``annotator`` alone). Under majority and mean an item's
        adjudicated grade (:mod:`.adjudication`), when it has one, is its grade. Topic ids are
        ``<query>:<entity>`` percent-encoded.
        """
        if rule not in RULES:
            raise SentretError(f"unknown adjudication rule {rule!r}; choose one of {RULES}")
        if scale not in SCALES:
            raise SentretError(f"unknown qrels scale {scale!r}; choose one of {tuple(SCALES)}")
        if (rule == "annotator") != (annotator is not None):
            raise SentretError("name an annotator with rule='annotator', and only then")
        if ids not in SENTENCE_IDS:
            raise SentretError(f"unknown sentence ids {ids!r}; choose one of {SENTENCE_IDS}")
        judgments = self.all_judgments(name)
        if annotator is not None:
            wanted = name_key(annotator)
            if not any(name_key(who) == wanted for who in self.progress_by_annotator(name)):
                raise SentretError(f"no annotator named {normalise_name(annotator)!r} in session {name!r}")
            judgments = [j for j in judgments if name_key(j.annotator) == wanted]
        grades: dict[tuple[str, int], list[int]] = {}
        for j in judgments:
            grades.setdefault((j.topic_id, j.sentence_id), []).append(j.grade)
        adjudication = "majority" if rule == "annotator" else rule
        decided = {} if rule == "annotator" else adjudicated_grades(self, name)
        chosen = {key: adjudicate(found, adjudication) for key, found in grades.items()} | decided
        written = SCALES[scale]
        named = self._docnos(name, judgments) if ids == "docno" else {}
        return "".join(f"{topic} 0 {named.get(sid, sid)} {written[grade]}\n"
                       for (topic, sid), grade in sorted(chosen.items()))

    def _docnos(self, name: str, judgments: list[Judgment]) -> dict[int, str]:
        """Sentence id → docno of the judged items: as pooled, or, for items pooled before sentret recorded
        docnos, from the session's index where its sentence still has the item's text."""
        named = {j.sentence_id: j.docno for j in judgments if j.docno}
        missing = {j.sentence_id: j.text for j in judgments if not j.docno}
        if not missing:
            return named
        from sentret_core.index.docnos import sentence_docnos
        from sentret_core.index.reader import Index

        where = self._store.session(name).index_path
        unsure = "the index it was pooled from cannot name them; export internal ids instead"
        try:
            index = Index.load(where)
        except SentretError:
            raise SentretError(f"session {name!r} has items without a docno (pooled before sentret recorded them, "
                               f"or made without), and {unsure}") from None
        names = sentence_docnos(index)
        for sid, text in missing.items():
            if not 0 <= sid < index.N or index.texts[sid] != text:
                raise SentretError(f"session {name!r}: sentence {sid} of {where} is no longer the one pooled "
                                   f"(the index was rebuilt), so {unsure}")
            named[sid] = names[sid]
        return named

    def export_topics(self, name: str) -> str:
        """The session's topics as a topics file for ``sentret run``: ``topic id<TAB>query<TAB>entity``, one
        per (query, entity) pooled, so that a run's qids are the topic ids of :meth:`export_qrels`."""
        from sentret_core.evaluation.trec_io import topic_id

        with self._store.db.read() as conn:
            session_id = self.session_id(conn, name)
            pairs = conn.execute("SELECT query, entity FROM pool_items WHERE session_id = ?"
                                 " GROUP BY query, entity ORDER BY min(position)", (session_id,)).fetchall()
        return "".join(f"{topic_id(query, entity)}\t{query}\t{entity}\n" for query, entity in pairs)

    def export_csv(self, name: str) -> str:
        """Every judgment with every field (:data:`JUDGMENT_FIELDS`), one CSV row each; a text cell
        that a spreadsheet would run as a formula starts with ``'`` (:mod:`.csv_export`)."""
        return csv_text(JUDGMENT_FIELDS, self.all_judgments(name))

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
        scale: str = DEFAULT_SCALE,
        grade_map: Mapping[int, int] | None = None,
    ) -> int:
        """Import TREC qrels as the grades of the import annotator ``annotator``; returns how many changed.

        ``scale``: ``trec`` (0-3, as exported by default), ``auto`` (sniffed from the grades, as the
        CLI and the app do: :func:`.scales.sniff_scale`), ``1-4`` or ``binary`` (0 non-relevant, 1
        relevant); ``grade_map``
        translates any other scale (e.g. ``{0: 1, 1: 3}``) instead.
        Every (topic, sentence) must be in the session's pool, and ``annotator`` may not name a
        person. One bad line aborts the import, naming the line, and nothing is written.
        """
        annotator = normalise_name(annotator)
        if grade_map is None:
            if scale == AUTO:  # grades on no scale: read on the default one, so the parser names the line
                lines = list(lines)
                scale = getattr(sniff_or_default(qrels_grades(lines)), "scale", DEFAULT_SCALE)
            if scale not in IMPORT_SCALES:
                raise SentretError(f"unknown qrels scale {scale!r}; choose one of {tuple(IMPORT_SCALES)}")
            grade_map = IMPORT_SCALES[scale]
        keys = parse_qrels_lines(lines, annotator, grade_map, scale)
        return self._import(name, keys)

    def import_jsonl(self, name: str, lines: Iterable[str]) -> int:
        """Import judgments exported by :meth:`export_jsonl`; returns how many changed.

        Every grade goes to an import annotator: a person's grades to ``"<name> (imported)"``, an
        import annotator's to the same name; notes and flags come with them. Timestamps are kept
        for import annotators only.
        """
        return self._import(name, parse_jsonl_lines(lines))

    def _import(self, name: str, keys: list[ImportLine]) -> int:
        store = self._store
        changed = 0
        seen: dict[tuple[int, str], int] = {}  # (item, annotator) → line: a docno and an id may name one item
        with store.db.transaction() as conn:
            session_id = self.session_id(conn, name)
            for key in keys:
                item = store.db.find_item(conn, session_id, key, name)
                who = key.annotator  # always an import annotator's name (see .io)
                if (item, name_key(who)) in seen:
                    raise SentretError(f"line {key.line}: repeats the judgment of line {seen[item, name_key(who)]}")
                seen[item, name_key(who)] = key.line
                try:
                    annotator_id, kind = store.db.find_or_register_annotator(conn, session_id, who, IMPORTED)
                except SentretError as exc:
                    raise SentretError(f"line {key.line}: {exc}") from None
                if kind == PERSON:
                    raise SentretError(
                        f"line {key.line}: {who!r} is a person annotator of session {name!r}; imported "
                        "grades never overwrite a person's: import them under another name"
                    )
                judgment = (session_id, item, annotator_id)
                changed += store.db.write_grade(conn, judgment, key.grade, key.note, "import", flagged=key.flagged,
                                                seconds=key.seconds, stamps=(key.created_at, key.updated_at))
        return changed
