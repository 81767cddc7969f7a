"""Topics files for batch runs: a TSV ``qid<TAB>query[<TAB>entity]`` or a TREC topic file.

A TREC topic file holds ``<top>`` blocks with ``<num> Number: 301`` and ``<title> …`` (the query is
the title, as in the ad hoc tracks' title runs); other fields are ignored. In a TSV, blank lines and
lines starting with ``#`` are skipped, and the optional third column names an entity (``text|LABEL``
or ``text``) whose support sentences the topic ranks. A malformed line is refused with its number.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from sentret_core.errors import SentretError
from sentret_core.ingest.qa_files import check_id, read_lines

MAX_TOPIC_QUERY_CHARS = 10_000  # a bound on reading the file; the query limit is defaults.MAX_QUERY_CHARS


class BatchTopic(NamedTuple):
    id: str
    query: str
    entity: str | None = None


_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_TITLE = re.compile(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<[a-z/]|\Z)", re.S | re.I)


def read_topics(path: str | os.PathLike[str]) -> list[BatchTopic]:
    """The topics of ``path`` (TREC topic file when it holds ``<top>``, else TSV), in file order."""
    path = Path(path)
    lines = read_lines(path, "topics")
    text = "\n".join(lines)
    topics = _trec(path, text) if re.search(r"<top>", text, re.I) else _tsv(path, lines)
    if not topics:
        raise SentretError(f"{path}: no topics (a TSV 'qid<TAB>query[<TAB>entity]' or a TREC topic file)")
    seen: set[str] = set()
    for topic in topics:
        if topic.id in seen:
            raise SentretError(f"{path}: topic {topic.id!r} appears twice")
        seen.add(topic.id)
    return topics


def _tsv(path: Path, lines: list[str]) -> list[BatchTopic]:
    topics = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{number}"
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            raise SentretError(f"{where}: expected 'qid<TAB>query' or 'qid<TAB>query<TAB>entity', "
                               f"found {len(fields)} field(s)")
        qid = check_id(fields[0].strip(), where, "topic id")
        query = _query(fields[1], where)
        entity = fields[2].strip() if len(fields) == 3 and fields[2].strip() else None
        topics.append(BatchTopic(qid, query, entity))
    return topics


def _trec(path: Path, text: str) -> list[BatchTopic]:
    topics = []
    for block in _TOP.finditer(text):
        where = f"{path}:{text.count(chr(10), 0, block.start()) + 1}"
        num, title = _NUM.search(block.group(1)), _TITLE.search(block.group(1))
        if num is None or title is None:
            raise SentretError(f"{where}: a <top> block needs <num> and <title>")
        topics.append(BatchTopic(check_id(num.group(1), where, "topic number"), _query(title.group(1), where)))
    return topics


def _query(text: str, where: str) -> str:
    query = " ".join(text.split())
    if not query:
        raise SentretError(f"{where}: the query is empty")
    if len(query) > MAX_TOPIC_QUERY_CHARS:
        raise SentretError(f"{where}: the query has {len(query):,} characters; at most {MAX_TOPIC_QUERY_CHARS:,}")
    return query
