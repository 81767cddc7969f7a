"""TREC qrels and run files, and the (query, entity) topic ids written into them.

A qrels file has one judgment per line, ``topic 0 docid grade``; a run file one retrieved item
per line, ``topic Q0 docid rank score tag`` (trec_eval's formats). In memory they are
``Qrels = {topic: {docid: grade}}`` and ``Run = {topic: {docid: score}}``. As in trec_eval the
rank column is ignored when reading: the order is given by the scores. Fields are
whitespace-separated, so an id never contains whitespace; a (query, entity) topic id is built
with :func:`topic_id`, which percent-escapes whitespace, ``%`` and ``:``.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from sentret_core.errors import SentretError
from sentret_core.files import write_text_atomic

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]
TIES_TAG = "ties-docorder"  # the last part of every run tag sentret writes: tied scores in document order
MAX_GRADE_VALUE = 2**31 - 1  # a qrels grade beyond it is one no tool reads (trec_eval's grades are C longs)

# --------------------------------------------------------------------------------------------
# Topic ids
# --------------------------------------------------------------------------------------------

_ESCAPE_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _escape(text: str) -> str:
    """Percent-encode (UTF-8 bytes, as in RFC 3986) every whitespace character, ``%`` and ``:``."""
    out = []
    for char in text:
        if char in "%:" or char.isspace():
            out.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8")))
        else:
            out.append(char)
    return "".join(out)


def _unescape(text: str, whole: str) -> str:
    def decode(match: re.Match[str]) -> str:
        escaped = match.group(0)
        raw = bytes(int(escaped[i + 1 : i + 3], 16) for i in range(0, len(escaped), 3))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SentretError(f"topic id {whole!r}: {match.group(0)} is not UTF-8") from None

    decoded = _ESCAPE_RUN.sub(decode, text)
    if "%" in _ESCAPE_RUN.sub("", text):
        raise SentretError(f"topic id {whole!r}: a '%' must be followed by two hex digits")
    return decoded


def topic_id(query_id: str, entity_key: str) -> str:
    """The TREC topic id ``<query-id>:<entity-key>`` of a (query, entity) pair.

    Whitespace, ``%`` and ``:`` inside either part are percent-encoded, so the id never
    contains whitespace, has exactly one bare ``:``, and :func:`split_topic_id` inverts it.
    """
    return f"{_escape(query_id)}:{_escape(entity_key)}"


def split_topic_id(tid: str) -> tuple[str, str]:
    """Invert :func:`topic_id`: ``(query_id, entity_key)``; raise if ``tid`` is not such an id."""
    parts = tid.split(":")
    if len(parts) != 2:
        raise SentretError(f"topic id {tid!r} is not of the form <query-id>:<entity-key> with one bare ':'")
    return _unescape(parts[0], tid), _unescape(parts[1], tid)


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def _read_text(path: str | os.PathLike[str], what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise SentretError(f"cannot read {what} file {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise SentretError(f"{path}: the {what} file is not UTF-8 text") from None


class QrelsLine(NamedTuple):
    """One judgment line of a qrels file: its 1-based line ``number`` and its four fields."""

    number: int
    topic: str
    iteration: str
    docid: str
    grade: int


def iter_qrels(lines: Iterable[str], *, source: str) -> Iterator[QrelsLine]:
    """The judgment lines ``topic iteration docid grade`` of qrels text, blank lines skipped.

    A line without exactly four fields, or whose grade is not an integer, raises
    :class:`SentretError` naming ``source`` and the 1-based line number.
    """
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{source}:{number}"
        if len(fields) != 4:
            raise SentretError(
                f"{where}: a qrels line has 4 fields 'topic 0 docid grade', found {len(fields)}"
            )
        topic, iteration, docid, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise SentretError(f"{where}: grade {grade_text[:40]!r} is not an integer") from None
        if not -MAX_GRADE_VALUE <= grade <= MAX_GRADE_VALUE:  # the metrics hold grades in 64-bit floats and ints
            raise SentretError(f"{where}: grade {grade_text[:40]} is out of range (|grade| ≤ {MAX_GRADE_VALUE:,})")
        yield QrelsLine(number, topic, iteration, docid, grade)


def parse_qrels(text: str, *, source: str = "<qrels>") -> Qrels:
    """Parse TREC qrels text (see :func:`iter_qrels`) into ``{topic: {docid: grade}}``.

    A malformed line or a duplicate (topic, docid) raises :class:`SentretError` naming
    ``source`` and the 1-based line number.
    """
    qrels: Qrels = {}
    for line in iter_qrels(text.splitlines(), source=source):
        judged = qrels.setdefault(line.topic, {})
        if line.docid in judged:
            raise SentretError(
                f"{source}:{line.number}: document {line.docid!r} is judged twice for topic {line.topic!r}"
            )
        judged[line.docid] = line.grade
    return qrels


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file (UTF-8); see :func:`parse_qrels`."""
    return parse_qrels(_read_text(path, "qrels"), source=str(path))


def parse_run(text: str, *, source: str = "<run>") -> Run:
    """Parse TREC run text: lines ``topic Q0 docid rank score tag`` (blank lines are skipped).

    The rank column must be an integer but is otherwise ignored (the scores order the
    items, as in trec_eval). A malformed line, a NaN score or a duplicate (topic, docid)
    raises :class:`SentretError` naming ``source`` and the 1-based line number.
    """
    run: Run = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{source}:{lineno}"
        if len(fields) != 6:
            raise SentretError(
                f"{where}: a run line has 6 fields 'topic Q0 docid rank score tag', found {len(fields)}"
            )
        topic, _, docid, rank_text, score_text, _ = fields
        try:
            int(rank_text)
        except ValueError:
            raise SentretError(f"{where}: rank {rank_text!r} is not an integer") from None
        try:
            score = float(score_text)
        except ValueError:
            raise SentretError(f"{where}: score {score_text!r} is not a number") from None
        if math.isnan(score):
            raise SentretError(f"{where}: score is NaN")
        ranked = run.setdefault(topic, {})
        if docid in ranked:
            raise SentretError(f"{where}: document {docid!r} is ranked twice for topic {topic!r}")
        ranked[docid] = score
    return run


def read_run(path: str | os.PathLike[str]) -> Run:
    """Read a TREC run file (UTF-8); see :func:`parse_run`."""
    return parse_run(_read_text(path, "run"), source=str(path))


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _write_text(path: str | os.PathLike[str], text: str, what: str) -> None:
    write_text_atomic(path, text, f"{what} file")


def _check_field(value: str, what: str) -> str:
    if not isinstance(value, str) or not value or any(char.isspace() for char in value):
        raise SentretError(
            f"{what} {value!r} cannot be written to a TREC file: it must be a non-empty string "
            "without whitespace (build topic ids with topic_id())"
        )
    return value


def format_qrels(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """TREC qrels text, one ``topic 0 docid grade`` line per judgment, in mapping order."""
    lines: list[str] = []
    for topic, judged in qrels.items():
        _check_field(topic, "topic id")
        for docid, grade in judged.items():
            _check_field(docid, "document id")
            if isinstance(grade, bool) or not isinstance(grade, numbers.Integral):  # numpy's integers too
                raise SentretError(f"grade {grade!r} of {topic} {docid} is not an integer")
            lines.append(f"{topic} 0 {docid} {int(grade)}\n")
    return "".join(lines)


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | os.PathLike[str]) -> None:
    """Write :func:`format_qrels` to ``path`` (UTF-8)."""
    _write_text(path, format_qrels(qrels), "qrels")


def format_run(run: Mapping[str, Mapping[str, float]], *, tag: str = "sentret") -> str:
    """TREC run text: per topic, items by score descending, ranks from 1.

    Tied items keep the order they have in ``run`` (sentret's runs list candidates in document
    order, so ties are in document order). trec_eval and ir_measures ignore the rank column and
    order ties by document id instead: what they compute on this text is
    :func:`sentret_core.evaluation.as_exported.as_exported`.

    Scores are written with ``repr``, the shortest text that reads back to the same float. An
    item scored ``-inf`` is unscored (a closed-set candidate the model has no score for) and is
    left out: trec_eval and ir_measures would count it as retrieved, and Java's parsers reject
    the text. A NaN or ``+inf`` score raises :class:`SentretError`.
    """
    _check_field(tag, "run tag")
    lines = []
    for topic, ranked in run.items():
        _check_field(topic, "topic id")
        items = []
        for docid, score in ranked.items():
            _check_field(docid, "document id")
            value = float(score)
            if value == -math.inf:
                continue
            if not math.isfinite(value):
                raise SentretError(f"score of {topic} {docid} is {value}: a run file holds finite scores")
            items.append((value, docid))
        items.sort(key=lambda item: -item[0])  # stable: ties stay in the run's (document) order
        for rank, (value, docid) in enumerate(items, start=1):
            lines.append(f"{topic} Q0 {docid} {rank} {value!r} {tag}\n")
    return "".join(lines)


def write_run(
    run: Mapping[str, Mapping[str, float]], path: str | os.PathLike[str], *, tag: str = "sentret"
) -> None:
    """Write :func:`format_run` to ``path`` (UTF-8)."""
    _write_text(path, format_run(run, tag=tag), "run")
