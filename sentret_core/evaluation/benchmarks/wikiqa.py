"""WikiQA (Yang, Yih & Meek 2015): a TSV split as a sentence-retrieval benchmark.

``QuestionID Question DocumentID DocumentTitle SentenceID Sentence Label`` with a header line.
One document per DocumentID (title = DocumentTitle), its sentences in ``SentenceID``
(``D<n>-<i>``) order, deduplicated across the questions that share the document and kept
exactly as given (:func:`~sentret_core.ingest.corpus.presegmented`; a gap in ``i`` becomes an
empty sentence so that positions and neighbours stay true). One index holds every document of
the split, so collection statistics are over the split's sentences. A topic is a question with
at least one correct sentence; its candidates are the question's own rows (its document's
sentences), labels 0/1.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import (
    Benchmark,
    Log,
    Topic,
    check_id,
    document_rows,
    read_lines,
    sentence_docids,
)
from sentret_core.evaluation.benchmarks.indexing import cached_index
from sentret_core.ingest.corpus import Document, presegmented


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
                               f"found {len(fields)}")  # fmt: skip
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


def load_wikiqa(
    path: str | os.PathLike[str],
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """The WikiQA benchmark of one TSV split: topics are the questions with a correct sentence."""
    data_path = Path(path)
    parsed = read_wikiqa(data_path)

    def documents() -> Iterator[Document]:
        for doc, (title, sentences) in parsed.documents.items():
            yield presegmented(doc, title, sentences)

    index = cached_index("wikiqa", data_path, {}, documents, cache=cache, n_process=n_process, log=log)
    rows = document_rows(index)
    first = index.doc_first
    topics, qrels = [], {}
    docids = sentence_docids(index)
    for question in parsed.questions:
        if not any(question.labels):
            continue
        d = rows.get(question.document)
        if d is None:
            raise SentretError(
                f"{index.path}: the cached index lacks document {question.document}; delete it"
            )
        ids = first[d] + np.asarray(question.positions, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        relevant = tuple(int(s) for s, label in zip(ids, question.labels) if label)
        topics.append(Topic(question.id, question.id, question.text, relevant, ids[order]))
        qrels[question.id] = {docids[int(s)]: int(label) for s, label in zip(ids, question.labels)}
    if not topics:
        raise SentretError(f"{data_path}: no question has a correct sentence")
    stats = {
        "questions": len(parsed.questions),
        "candidates": sum(len(t.candidates) for t in topics if t.candidates is not None),
    }
    return Benchmark("wikiqa", data_path, index, tuple(topics), qrels, "sentences", "binary", {}, stats)
