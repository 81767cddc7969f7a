"""Parsers for imported judgments (TREC qrels and JSONL): every field checked, with its bounds, before
it reaches SQLite or ``json``; every error names the line.

Limits: a qrels line holds at most :data:`MAX_QRELS_LINE` characters and a JSONL line at most
:data:`MAX_JSONL_LINE`; a file at most :data:`MAX_LINES` lines. Sentence ids are integers in
[0, 2**63 − 1] (SQLite's integers), written with at most 19 digits; a JSON number has at most
:data:`MAX_NUMBER_DIGITS` characters; a JSONL line is one flat object (nested at most
:data:`MAX_DEPTH` deep, with no repeated key); queries, entities and names are at most MAX_NAME
characters, notes MAX_NOTE. Timestamps are ISO 8601 with a time zone, not in the future, and are
kept for import annotators only. A sentence is named by its docno (``<document id>-<position>``, what
exports write) or by the index's internal id (a whole number, what exports wrote before): both are read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from sentret_core.annotation.auth import as_id, check_grade, check_note, clean_name, name_key, normalise_name
from sentret_core.annotation.records import GRADES, IMPORTED, MAX_NAME, PERSON, ImportLine
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import split_topic_id

MAX_QRELS_LINE = 4_000
MAX_JSONL_LINE = 200_000
MAX_LINES = 2_000_000
MAX_NUMBER_DIGITS = 20
MAX_DEPTH = 2
MAX_TIMESTAMP = 40
MAX_DOCNO = 2_000
MAX_SECONDS = 366 * 24 * 3600  # a time on task longer than a year is not one
_NUMBER = re.compile(r"[+-]?\d+")  # any digits: a docno always has a document id before its "-<position>"
IMPORTED_SUFFIX = " (imported)"
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _numbered(lines: Iterable[str], what: str, limit: int) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(lines, start=1):
        if number > MAX_LINES:
            raise SentretError(f"{what}: more than {MAX_LINES:,} lines; split the file")
        if not isinstance(line, str):
            raise SentretError(f"{what} line {number}: not text")
        if len(line) > limit:
            raise SentretError(
                f"{what} line {number}: {len(line):,} characters, over the limit of {limit:,} per line"
            )
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            raise SentretError(f"{what} line {number}: not valid Unicode text (a lone surrogate)") from None
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, line


def _no_repeats(keys: list[ImportLine]) -> list[ImportLine]:
    """Refuse two lines that grade the same item as the same annotator (names compared case-folded)."""
    first: dict[tuple[str, str, str, str], int] = {}
    for key in keys:
        triple = (key.query, key.entity, key.sentence, name_key(key.annotator))
        if triple in first:
            raise SentretError(f"line {key.line}: repeats the judgment of line {first[triple]}")
        first[triple] = key.line
    return keys


# ----------------------------------------------------------------------------- qrels


def parse_qrels_lines(
    lines: Iterable[str], annotator: str, grade_map: Mapping[int, int], scale: str = ""
) -> list[ImportLine]:
    keys = []
    for number, line in _numbered(lines, "qrels", MAX_QRELS_LINE):
        fields = line.split()
        if len(fields) != 4:
            raise SentretError(
                f"qrels line {number}: expected 4 fields 'topic iteration docno grade', "
                f"got {len(fields)}"
            )
        try:
            topic = split_topic_id(fields[0])
        except SentretError:
            topic = ("", "")
        if not all(topic) or any(len(part) > MAX_NAME for part in topic):
            raise SentretError(
                f"qrels line {number}: topic {fields[0][:80]!r} is not '<query>:<entity>' "
                f"(each at most {MAX_NAME} characters)"
            )
        sid, docno = _sentence(fields[2], number)
        rel = _qrels_int(fields[3], "grade", number)
        if rel not in grade_map or grade_map[rel] not in GRADES:
            allowed = ", ".join(str(g) for g in sorted(grade_map))
            which = f"the {scale} scale" if scale else "the grade map"
            raise SentretError(
                f"qrels line {number}: grade {rel} is not on {which} ({allowed}); "
                "choose the scale the file uses (trec 0-3, 1-4 or binary 0-1)"
            )
        grade = grade_map[rel]
        keys.append(ImportLine(number, *topic, sid, annotator, IMPORTED, grade, None, None, None, docno=docno))
    return _no_repeats(keys)


def _sentence(field: str, number: int) -> tuple[int, str | None]:
    """A qrels line's sentence: (internal id, None) for a number (checked: whole, ≥ 0), else (-1, the docno)."""
    if _NUMBER.fullmatch(field):
        return as_id(_qrels_int(field, "sentence id", number), f"qrels line {number}: the sentence id"), None
    return -1, _docno(field, f"qrels line {number}: the sentence")


def _docno(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_DOCNO or any(c.isspace() for c in value):
        raise SentretError(f"{what} {str(value)[:80]!r} is not a docno (<document id>-<position>) "
                           "nor a sentence id")
    return value


def _qrels_int(text: str, what: str, number: int) -> int:
    body = text[1:] if text[:1] in "+-" else text
    if not body.isascii() or not body.isdigit():
        raise SentretError(f"qrels line {number}: {what} {text[:40]!r} is not an integer")
    if len(body) > 19:
        raise SentretError(
            f"qrels line {number}: {what} has {len(body)} digits; it must lie in [0, 2**63 − 1]"
        )
    return int(text)


# ----------------------------------------------------------------------------- JSONL


def parse_jsonl_lines(lines: Iterable[str]) -> list[ImportLine]:
    keys = []
    for number, line in _numbered(lines, "JSONL", MAX_JSONL_LINE):
        try:
            record = _load(line)
            if not isinstance(record, dict):
                raise SentretError("expected a JSON object")
            keys.append(_jsonl_key(number, record))
        except SentretError as exc:
            raise SentretError(f"JSONL line {number}: {exc}") from None
    return _no_repeats(keys)


def _load(line: str) -> Any:
    """``json.loads`` of one line, after checking its nesting; numbers and keys bounded."""
    if line.count("[") + line.count("{") > MAX_DEPTH:
        depth = deepest = 0
        for ch in re.findall(r"[\[\]{}]", _STRING.sub("", line)):
            depth += 1 if ch in "[{" else -1
            deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            raise SentretError(f"nested {deepest} deep; a judgment is one flat JSON object")
    try:
        return json.loads(
            line, parse_int=_bounded_int, parse_float=_bounded_float, parse_constant=_no_constant,
            object_pairs_hook=_unique_keys,
        )
    except SentretError:
        raise
    except json.JSONDecodeError as exc:
        raise SentretError(f"not valid JSON ({exc.msg}, column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # a guard above should have caught it
        raise SentretError(f"not a valid judgment ({type(exc).__name__})") from None


def _bounded_int(text: str) -> int:
    if len(text) > MAX_NUMBER_DIGITS:
        raise SentretError(f"a number with {len(text)} characters (at most {MAX_NUMBER_DIGITS})")
    return int(text)


def _bounded_float(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS:
        raise SentretError(f"a number with {len(text)} characters (at most {MAX_NUMBER_DIGITS})")
    return float(text)


def _no_constant(text: str) -> float:
    raise SentretError(f"{text} is not a number JSON allows")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for key, value in pairs:
        if key in record:
            raise SentretError(f"the key {key[:40]!r} appears twice")
        record[key] = value
    return record


def _jsonl_key(number: int, record: dict[str, Any]) -> ImportLine:
    required = ("query", "entity", "annotator", "grade")
    missing = [field for field in required if field not in record]
    if record.get("docno") is None and "sentence_id" not in record:
        missing.append("sentence_id (or docno)")
    if missing:
        raise SentretError(f"missing field(s) {', '.join(missing)}")
    kind = record.get("annotator_kind", PERSON)
    if kind not in (PERSON, IMPORTED):
        raise SentretError(f"annotator_kind must be {PERSON!r} or {IMPORTED!r}; got {str(kind)[:40]!r}")
    annotator = normalise_name(record["annotator"])
    if kind == PERSON:  # a person's grades arrive as the grades of an import annotator
        if len(annotator) + len(IMPORTED_SUFFIX) > MAX_NAME:
            raise SentretError(f"the annotator name must be at most {MAX_NAME - len(IMPORTED_SUFFIX)} characters")
        annotator += IMPORTED_SUFFIX
    flagged = record.get("flagged", False)
    if not isinstance(flagged, bool):
        raise SentretError(f"flagged must be true or false; got {str(flagged)[:40]!r}")
    return ImportLine(
        number,
        clean_name(record["query"], "query"),
        clean_name(record["entity"], "entity"),
        as_id(record["sentence_id"], "sentence_id") if "sentence_id" in record else -1,
        annotator,
        IMPORTED,
        check_grade(record["grade"]),
        check_note(record.get("note")),
        _timestamp(record.get("created_at")),
        _timestamp(record.get("updated_at")),
        flagged,
        None if record.get("docno") is None else _docno(record["docno"], "docno"),
        _seconds(record.get("seconds")),
    )


def _seconds(value: object) -> float | None:
    """Time on task: a number of seconds from 0 to a year; None when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_SECONDS:
        raise SentretError(f"seconds must be a number from 0 to {MAX_SECONDS:,}; got {str(value)[:40]!r}")
    return float(value)


def _timestamp(value: object) -> str | None:
    """An ISO 8601 time with a zone, not in the future, as UTC; None when absent."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_TIMESTAMP:
        raise SentretError(f"timestamp {str(value)[:MAX_TIMESTAMP]!r} is not ISO 8601")
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise SentretError(f"timestamp {value!r} is not ISO 8601") from None
    if when.tzinfo is None:
        raise SentretError(f"timestamp {value!r} has no time zone (e.g. +00:00)")
    if when > datetime.now(timezone.utc) + timedelta(minutes=5):
        raise SentretError(f"timestamp {value!r} is in the future")
    return when.astimezone(timezone.utc).isoformat(timespec="microseconds")
