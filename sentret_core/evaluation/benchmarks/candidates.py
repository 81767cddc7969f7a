"""Closed-candidate benchmarks in one format: questions, each with candidate sentences from one or more documents.

The JSONL a user writes (one question per line)::

    {"id": "q1", "question": "who painted guernica?",
     "candidates": [{"doc": "d1", "title": "Guernica", "position": 0, "text": "Guernica is a painting.", "label": 0},
                    {"doc": "d1", "title": "Guernica", "position": 1, "text": "Picasso painted it in 1937.",
                     "label": 1},
                    {"doc": "d7", "title": "Pablo Picasso", "position": 4, "text": "...", "label": 0}]}

``position`` is the sentence's place in its document (from 0), so a document's sentences, their order and
their neighbours (the local context of Blanco & Zaragoza's BM25F and the context LMs) are rebuilt from every question
that names it; a gap becomes an empty sentence so that positions stay true (at most
:data:`GAPS_PER_SENTENCE` of them per sentence the file gives, so a small file cannot build a huge
index). ``label`` is optional (0/1, or a graded 0-3); a question without a positive label is not evaluable
and is counted, not scored. WikiQA and TrecQA are converters into :class:`CandidateSet` and share this one
code path to an index, topics and qrels.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import Benchmark, Log, Topic, document_rows, sentence_docids
from sentret_core.evaluation.benchmarks.indexing import cached_index
from sentret_core.evaluation.benchmarks.registry import BenchmarkSpec
from sentret_core.ingest.corpus import Document, presegmented, repaired_text
from sentret_core.ingest.qa_files import check_id, read_lines

MAX_POSITION = 100_000  # a sentence position beyond this is a mistake, not a document
MAX_LABEL = 3  # the trec scale's highest grade
GAPS_PER_SENTENCE = 100  # empty sentences (positions no line gives) allowed per sentence given


@dataclass(frozen=True)
class CandidateQuestion:
    """A question and its candidates as ``(document id, position, label or None)``, in the file's order."""

    id: str
    text: str
    candidates: tuple[tuple[str, int, int | None], ...]


@dataclass(frozen=True)
class CandidateSet:
    """Every document (title, sentences by position, in index order) and every question."""

    documents: dict[str, tuple[str, list[str]]]
    questions: list[CandidateQuestion]


def read_candidates(path: str | os.PathLike[str]) -> CandidateSet:
    """Parse a candidates JSONL file; a malformed line raises :class:`SentretError` naming its number.

    Documents are indexed in the order they first appear."""
    path = Path(path)
    sentences: dict[str, dict[int, str]] = {}
    titles: dict[str, str] = {}
    questions: list[CandidateQuestion] = []
    seen: set[str] = set()
    for lineno, line in enumerate(read_lines(path, "candidates JSONL"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        record = _object(line, where)
        qid = check_id(_string(record, "id", where), where, '"id"')
        if qid in seen:
            raise SentretError(f"{where}: question id {qid!r} appears on an earlier line")
        seen.add(qid)
        text = _string(record, "question", where)
        listed = record.get("candidates")
        if not isinstance(listed, list) or not listed:
            raise SentretError(f'{where}: "candidates" must be a non-empty list of objects')
        candidates: list[tuple[str, int, int | None]] = []
        listed_here: set[tuple[str, int]] = set()
        for number, item in enumerate(listed, start=1):
            at = f"{where}, candidate {number}"
            if not isinstance(item, dict):
                raise SentretError(f"{at}: expected an object with doc, title, position, text")
            doc = check_id(_string(item, "doc", at), at, '"doc"')
            position, label = _position(item, at), _label(item, at)
            sentence, title = _string(item, "text", at), item.get("title", "")
            if not isinstance(title, str):
                raise SentretError(f'{at}: "title" must be a string')
            title = repaired_text(title)
            known = sentences.setdefault(doc, {})
            if known.get(position, sentence) != sentence:
                raise SentretError(f"{at}: document {doc} position {position} has another text on an earlier line")
            if titles.setdefault(doc, title) != title:
                raise SentretError(f"{at}: document {doc} has another title on an earlier line")
            known[position] = sentence
            if (doc, position) in listed_here:
                raise SentretError(f"{at}: document {doc} position {position} is listed twice for question {qid}")
            listed_here.add((doc, position))
            candidates.append((doc, position, label))
        questions.append(CandidateQuestion(qid, text, tuple(candidates)))
    if not questions:
        raise SentretError(f"{path}: no questions (one JSON object per line; the format: docs/evaluation.md)")
    _check_gaps(path, sentences)
    documents = {doc: (titles[doc], [known.get(i, "") for i in range(max(known) + 1)])
                 for doc, known in sentences.items()}
    return CandidateSet(documents, questions)


def _check_gaps(path: Path, sentences: dict[str, dict[int, str]]) -> None:
    """Refuse a file whose positions leave far more empty sentences than it gives sentences."""
    given = sum(len(known) for known in sentences.values())
    gaps = sum(max(known) + 1 - len(known) for known in sentences.values())
    if gaps > GAPS_PER_SENTENCE * given:
        doc = max(sentences, key=lambda d: max(sentences[d]) + 1 - len(sentences[d]))
        raise SentretError(
            f"{path}: its positions leave {gaps:,} empty sentences for the {given:,} sentences it gives (at most "
            f"{GAPS_PER_SENTENCE} per sentence; document {doc} alone reaches position {max(sentences[doc]):,}); "
            '"position" is the sentence\'s place in its document, counted from 0')


def write_candidates(found: CandidateSet, path: str | os.PathLike[str]) -> None:
    """Write ``found`` as a candidates JSONL file that :func:`read_candidates` reads back to the same set
    (a converted WikiQA or TrecQA file, to edit or to extend with documents of your own)."""
    lines = []
    for question in found.questions:
        candidates = [{"doc": doc, "title": found.documents[doc][0], "position": position,
                       "text": found.documents[doc][1][position], **({} if label is None else {"label": label})}
                      for doc, position, label in question.candidates]
        record = {"id": question.id, "question": question.text, "candidates": candidates}
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    try:
        Path(path).write_text("".join(lines), encoding="utf-8")
    except OSError as err:
        raise SentretError(f"cannot write {path}: {err.strerror or err}") from None


def _object(line: str, where: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as err:
        raise SentretError(f"{where}: not valid JSON ({getattr(err, 'msg', None) or type(err).__name__})") from None
    if not isinstance(record, dict):
        raise SentretError(f"{where}: expected a JSON object with id, question and candidates")
    return record


def _string(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SentretError(f'{where}: "{key}" must be a non-empty string')
    return repaired_text(value)


def _position(item: dict[str, Any], where: str) -> int:
    value = item.get("position")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_POSITION:
        raise SentretError(f'{where}: "position" must be an integer from 0 to {MAX_POSITION:,} (got {value!r})')
    return value


def _label(item: dict[str, Any], where: str) -> int | None:
    value = item.get("label")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LABEL:
        raise SentretError(f'{where}: "label" must be an integer from 0 to {MAX_LABEL} (got {value!r})')
    return value


def load_candidates(
    path: str | os.PathLike[str],
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """The benchmark of a candidates JSONL file (``sentret eval candidates --data F``)."""
    return candidate_benchmark("candidates", Path(path), read_candidates(path), {},
                               cache=cache, n_process=n_process, log=log)


def candidate_benchmark(
    name: str,
    data_path: Path,
    found: CandidateSet,
    recipe: dict[str, Any],
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """Index ``found``'s documents (once, cached by ``recipe``) and make a topic of every question with a
    positive label: its candidates are its own sentences, its qrels their labels."""

    def documents() -> Iterator[Document]:
        for doc, (title, sentences) in found.documents.items():
            yield presegmented(doc, title, sentences)

    import numpy as np

    index = cached_index(name, data_path, recipe, documents, cache=cache, n_process=n_process, log=log)
    rows, first, docids = document_rows(index), index.doc_first, sentence_docids(index)
    topics, qrels = [], {}
    for question in found.questions:
        labels = [label or 0 for _, _, label in question.candidates]
        if not any(labels):
            continue
        try:
            ids = np.array([first[rows[doc]] + position for doc, position, _ in question.candidates], dtype=np.int64)
        except KeyError as err:
            raise SentretError(f"{index.path}: the cached index lacks document {err.args[0]}; delete it") from None
        relevant = tuple(sorted(int(s) for s, label in zip(ids, labels) if label))
        topics.append(Topic(question.id, question.id, question.text, relevant, np.sort(ids)))
        qrels[question.id] = {docids[int(s)]: label for s, label in zip(ids.tolist(), labels)}
    if not topics:
        raise SentretError(f"{data_path}: no question has a positive label: nothing to evaluate")
    stats = {
        "questions": len(found.questions),
        "candidates": sum(len(t.candidates) for t in topics if t.candidates is not None),
    }
    return Benchmark(name, data_path, index, tuple(topics), qrels, "sentences",
                     "graded" if max(max(q.values()) for q in qrels.values()) > 1 else "binary", {}, stats)


BENCHMARK = BenchmarkSpec("candidates", load_candidates, listed=40,
                          training_file="a candidates JSONL file (see docs/evaluation.md)")
