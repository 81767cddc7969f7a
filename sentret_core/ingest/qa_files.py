"""Readers of question-answering benchmark files that more than one layer uses: UTF-8 lines with
clear errors, id checks, and the WikiQA TSV (Yang, Yih & Meek 2015) — the evaluation's benchmark
and, its Label-1 rows, the trigger LM's question/answer pairs (Momtazi & Klakow, IP&M 2015, §6.4)."""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentret_core.errors import SentretError


def read_lines(path: Path, what: str) -> list[str]:
    """The lines of a UTF-8 text file (``-``: standard input; gzip read decompressed); a missing or unreadable
    file raises :class:`SentretError`."""
    from sentret_core.ingest.textfile import STDIN, opened

    if str(path) != STDIN and not path.is_file():
        raise SentretError(f"{path}: no such {what} file")
    try:
        with opened(path) as handle:
            return handle.read().decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as err:
        raise SentretError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except (OSError, EOFError, zlib.error) as err:  # gzip.BadGzipFile is an OSError
        raise SentretError(f"cannot read {path}: {getattr(err, 'strerror', None) or err}") from None


def check_id(value: str, where: str, what: str) -> str:
    """``value`` if it is a non-empty id without whitespace, else :class:`SentretError` at ``where``."""
    if not value or any(ch.isspace() for ch in value):
        raise SentretError(f"{where}: {what} {value!r} must be non-empty without whitespace")
    return value


@dataclass(frozen=True)
class WikiQAQuestion:
    """One question: its document, the positions of its candidate sentences and their 0/1 labels."""

    id: str
    text: str
    document: str
    positions: tuple[int, ...]  # sentence positions in the document, in file order
    labels: tuple[int, ...]


@dataclass(frozen=True)
class WikiQAData:
    """A parsed split: every document (title, sentences by position) and every question."""

    documents: dict[str, tuple[str, list[str]]]  # id -> (title, sentences by position)
    questions: list[WikiQAQuestion]


WIKIQA_HEADER = ("QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID", "Sentence", "Label")


def read_wikiqa(path: str | os.PathLike[str]) -> WikiQAData:
    """Parse a WikiQA TSV split; any malformed line raises :class:`SentretError` with its number."""
    path = Path(path)
    lines = read_lines(path, "WikiQA TSV")
    if not lines or tuple(lines[0].split("\t")) != WIKIQA_HEADER:
        raise SentretError(f"{path}:1: expected the WikiQA header {' '.join(WIKIQA_HEADER)}")
    sentences: dict[str, dict[int, str]] = {}
    titles: dict[str, str] = {}
    rows: dict[str, list[Any]] = {}  # question id -> [text, document, positions, labels]
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        fields = line.split("\t")
        if len(fields) != 7:
            raise SentretError(f"{where}: expected 7 tab-separated fields ({', '.join(WIKIQA_HEADER)}), "
                               f"found {len(fields)}")
        qid, question, doc, title, sid, sentence, label = fields
        check_id(qid, where, "QuestionID")
        check_id(doc, where, "DocumentID")
        match = re.fullmatch(r"(.+)-(\d+)", sid)
        if match is None or match.group(1) != doc:
            raise SentretError(f"{where}: SentenceID {sid!r} is not {doc}-<number>")
        if label not in ("0", "1"):
            raise SentretError(f"{where}: Label {label!r} must be 0 or 1")
        position = int(match.group(2))
        known = sentences.setdefault(doc, {})
        if known.get(position, sentence) != sentence:
            raise SentretError(f"{where}: SentenceID {sid} has another text than on an earlier line")
        if titles.setdefault(doc, title) != title:
            raise SentretError(f"{where}: DocumentID {doc} has another title than on an earlier line")
        known[position] = sentence
        record = rows.setdefault(qid, [question, doc, [], []])
        if record[1] != doc or record[0] != question:
            raise SentretError(f"{where}: question {qid} appears with another text or document earlier")
        if position in record[2]:
            raise SentretError(f"{where}: SentenceID {sid} is listed twice for question {qid}")
        record[2].append(position)
        record[3].append(int(label))
    if not rows:
        raise SentretError(f"{path}: no question lines after the header")
    documents = {
        doc: (titles[doc], [known.get(i, "") for i in range(max(known) + 1)])
        for doc, known in sentences.items()
    }
    questions = [
        WikiQAQuestion(qid, text, doc, tuple(pos), tuple(labels))
        for qid, (text, doc, pos, labels) in rows.items()
    ]
    return WikiQAData(documents, questions)
