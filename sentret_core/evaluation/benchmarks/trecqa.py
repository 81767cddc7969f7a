"""TrecQA (Wang, Smith & Mitamura 2007): the XML as distributed, or the TSV
``QuestionID Question CandidateIndex Sentence Label``, as a sentence-retrieval benchmark.

No document order exists, so there is no local context: every distinct candidate sentence is
its own one-sentence document with an empty title (context fields are empty, the ``doc-order``
baseline ties every candidate). One index holds every distinct candidate of the file (a
sentence shared by two questions is one sentence). The file lists positives before negatives,
so its order must never reach a tie-breaker: sentence ids follow the SHA-256 of the sentence
text — a fixed pseudo-random order independent of the file's order — so shuffling the file
gives the very same index, ids and runs.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import Benchmark, Log
from sentret_core.evaluation.benchmarks.candidates import CandidateQuestion, CandidateSet, candidate_benchmark
from sentret_core.evaluation.benchmarks.registry import BenchmarkSpec
from sentret_core.ingest.qa_files import check_id, read_lines


@dataclass(frozen=True)
class TrecQAQuestion:
    """One question and its distinct candidate sentences with their 0/1 labels."""

    id: str
    text: str
    candidates: tuple[tuple[str, int], ...]  # (sentence, label) in file order


_QAPAIRS = re.compile(r"<QApairs\s+id=['\"]([^'\"]*)['\"]\s*>(.*?)</QApairs>", re.S)
_BLOCK = re.compile(r"<(question|positive|negative)>\s*\n(.*?)</\1>", re.S)


def read_trecqa(path: str | os.PathLike[str]) -> list[TrecQAQuestion]:
    """Parse TrecQA: the XML as distributed (not well-formed XML: raw ``&``; each block's first
    line holds the tab-separated tokens) or the TSV ``QuestionID Question CandidateIndex Sentence Label``."""
    path = Path(path)
    if path.suffix.lower() in (".tsv", ".txt"):
        return _read_trecqa_tsv(path)
    lines = read_lines(path, "TrecQA XML")
    text = "\n".join(lines)
    questions = []
    starts = [m.start() for m in re.finditer(r"<QApairs\b", text)]
    matches = list(_QAPAIRS.finditer(text))
    if len(matches) != len(starts):
        found = {m.start() for m in matches}
        bad = next(s for s in starts if s not in found)
        raise SentretError(f"{path}:{text.count(chr(10), 0, bad) + 1}: a <QApairs> block is not closed")
    if not matches:
        raise SentretError(f"{path}: no <QApairs id=...> blocks: not a TrecQA XML file")
    for match in matches:
        qid, body = match.group(1), match.group(2)
        line = text.count("\n", 0, match.start()) + 1
        check_id(qid, f"{path}:{line}", "QApairs id")
        question = None
        candidates = []
        for block in _BLOCK.finditer(body):
            tokens = block.group(2).split("\n", 1)[0].split("\t")
            sentence = " ".join(t for t in (tok.strip() for tok in tokens) if t)
            if block.group(1) == "question":
                question = sentence
            else:
                candidates.append((sentence, 1 if block.group(1) == "positive" else 0))
        if question is None:
            raise SentretError(f"{path}:{line}: <QApairs id='{qid}'> has no <question>")
        questions.append(TrecQAQuestion(qid, question, _merge_candidates(candidates)))
    return questions


def _merge_candidates(candidates: list[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    """One entry per distinct sentence (the highest label if a sentence is listed twice)."""
    merged: dict[str, int] = {}
    for sentence, label in candidates:
        if sentence:
            merged[sentence] = max(label, merged.get(sentence, 0))
    return tuple(merged.items())


def _read_trecqa_tsv(path: Path) -> list[TrecQAQuestion]:
    lines = read_lines(path, "TrecQA TSV")
    header = ("QuestionID", "Question", "CandidateIndex", "Sentence", "Label")
    if not lines or tuple(lines[0].split("\t")) != header:
        raise SentretError(f"{path}:1: expected the TrecQA header {' '.join(header)}")
    rows: dict[str, list[Any]] = {}
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        fields = line.split("\t")
        if len(fields) != 5:
            raise SentretError(f"{where}: expected 5 tab-separated fields, found {len(fields)}")
        qid, question, _, sentence, label = fields
        check_id(qid, where, "QuestionID")
        if label not in ("0", "1"):
            raise SentretError(f"{where}: Label {label!r} must be 0 or 1")
        rows.setdefault(qid, [question, []])[1].append((sentence.strip(), int(label)))
    if not rows:
        raise SentretError(f"{path}: no question lines after the header")
    return [TrecQAQuestion(qid, q, _merge_candidates(c)) for qid, (q, c) in rows.items()]


def _text_key(sentence: str) -> str:
    return hashlib.sha256(sentence.encode("utf-8")).hexdigest()


def load_trecqa(
    path: str | os.PathLike[str],
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """The TrecQA benchmark of one XML (or TSV) file: every distinct candidate is a document."""
    found = trecqa_candidates(read_trecqa(path))
    # The index depends on the set of sentences only, not on the file: key it by that set.
    distinct = "\n".join(sentences[0] for _, sentences in found.documents.values())
    recipe = {"sentences": hashlib.sha256(distinct.encode("utf-8")).hexdigest()}
    return candidate_benchmark("trecqa", Path(path), found, recipe, cache=cache, n_process=n_process, log=log)


def trecqa_candidates(questions: list[TrecQAQuestion]) -> CandidateSet:
    """TrecQA in the candidates format: each distinct sentence a one-sentence document with an empty
    title, the documents in the order of their text's SHA-256 (never the file's order)."""
    distinct = sorted({s for q in questions for s, _ in q.candidates}, key=lambda s: (_text_key(s), s))
    width = max(5, len(str(len(distinct))))
    doc = {sentence: f"T{i:0{width}d}" for i, sentence in enumerate(distinct)}
    documents = {doc[sentence]: ("", [sentence]) for sentence in distinct}
    found = [CandidateQuestion(q.id, q.text, tuple((doc[s], 0, label) for s, label in q.candidates))
             for q in questions]
    return CandidateSet(documents, found)


# no document order: doc-order ties every candidate, so significance is tested against random
BENCHMARK = BenchmarkSpec("trecqa", load_trecqa, baseline="random", data="a TrecQA .xml (or .tsv)", listed=30)
