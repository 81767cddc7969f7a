"""Parsers for imported judgments (TREC qrels and JSONL), with line numbers in every error."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from sentret_core.annotation.auth import _as_id, _check_grade, _check_note, _clean_name
from sentret_core.annotation.records import GRADES, IMPORTED, PERSON, _Key
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import split_topic_id


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
