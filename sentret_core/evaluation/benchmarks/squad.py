"""squad-support (Rajpurkar et al. 2016, SQuAD v1.1 JSON): the entity-support benchmark.

Paragraph = document (title = the article title with ``_`` as spaces), sentences by our spaCy
pass. A topic is (question, answer entity): for each gold answer, the sentence holding
``answer_start`` (by the index's sentence offsets) must mention a spaCy entity whose normalised
text (:func:`~sentret_core.ingest.nlp.entity_text`, compared case-insensitively) equals the
answer's; a mention overlapping the answer span is preferred, which fixes the label. That
sentence is relevant (grade :data:`~sentret_core.defaults.ANSWER_GRADE`); every other sentence
is unjudged. Several answers of a question naming the same entity give one topic with each of
their sentences relevant. ``distractors="demo"`` adds the demo corpus's documents
(:func:`~sentret_core.ingest.corpus.read_demo`) to the collection, before the paragraphs: they are
parsed once per spaCy pipeline into cached shards that every split's index starts from, so a learn
and an eval on different files never parse them again; ``min_candidates=N`` keeps
the topics whose entity is mentioned in at least N sentences of the collection. Candidate
sentences of a topic depend on the model (S_qe or Ŝ_qe, see :mod:`sentret_core.evaluation.runs`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sentret_core.defaults import ANSWER_GRADE
from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import (
    Benchmark,
    Log,
    Topic,
    document_rows,
    sentence_docids,
)
from sentret_core.evaluation.benchmarks.indexing import cached_index, cached_shards
from sentret_core.evaluation.benchmarks.registry import BenchmarkSpec
from sentret_core.evaluation.trec_io import Qrels, topic_id
from sentret_core.ingest.corpus import Document, demo_path, read_demo
from sentret_core.ingest.qa_files import read_lines

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

DISTRACTORS: tuple[str, ...] = ("demo",)


@dataclass(frozen=True)
class SquadAnswer:
    """A gold answer: its character offset in the paragraph and its text."""

    start: int
    text: str


@dataclass(frozen=True)
class SquadQuestion:
    """A question and its gold answers."""

    id: str
    text: str
    answers: tuple[SquadAnswer, ...]


@dataclass(frozen=True)
class SquadParagraph:
    """A paragraph (one document of the collection) and its questions."""

    id: str  # a<article>p<paragraph>, e.g. a03p012
    title: str
    context: str
    questions: tuple[SquadQuestion, ...]


def read_squad(path: str | os.PathLike[str]) -> list[SquadParagraph]:
    """Parse a SQuAD v1.1 JSON file into paragraphs (with their questions)."""
    path = Path(path)
    lines = read_lines(path, "SQuAD JSON")
    try:
        data = json.loads("\n".join(lines))
    except json.JSONDecodeError as err:
        raise SentretError(f"{path}:{err.lineno}: not valid JSON ({err.msg})") from None
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list):
        raise SentretError(f'{path}: expected SQuAD\'s layout {{"version", "data": [articles]}}')
    paragraphs = []
    for a, article in enumerate(articles):
        try:
            title = str(article["title"]).replace("_", " ")
            for p, paragraph in enumerate(article["paragraphs"]):
                context = str(paragraph["context"])
                questions = []
                for qa in paragraph["qas"]:
                    answers = tuple(
                        SquadAnswer(int(ans["answer_start"]), str(ans["text"])) for ans in qa["answers"]
                    )
                    questions.append(SquadQuestion(_clean_id(str(qa["id"])), str(qa["question"]), answers))
                paragraphs.append(SquadParagraph(f"a{a:02d}p{p:03d}", title, context, tuple(questions)))
        except (KeyError, TypeError, ValueError) as err:
            raise SentretError(f"{path}: article {a} does not follow SQuAD v1.1's layout ({err!r})") from None
    if not paragraphs:
        raise SentretError(f"{path}: no paragraphs")
    return paragraphs


def _clean_id(value: str) -> str:
    return re.sub(r"\s+", "_", value.strip()) or "q"


def load_squad_support(
    path: str | os.PathLike[str],
    *,
    distractors: str | None = None,
    min_candidates: int = 1,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """The SQuAD entity-support benchmark: topics are (question, answer entity) pairs."""
    if distractors is not None and distractors not in DISTRACTORS:
        raise SentretError(f"unknown distractors {distractors!r}; choose one of {', '.join(DISTRACTORS)}")
    if isinstance(min_candidates, bool) or not isinstance(min_candidates, int) or min_candidates < 1:
        raise SentretError(f"min_candidates must be an integer >= 1 (got {min_candidates!r})")
    data_path = Path(path)
    paragraphs = read_squad(data_path)

    def documents() -> Iterator[Document]:
        for paragraph in paragraphs:
            if paragraph.context.strip():
                yield Document(paragraph.id, paragraph.title, paragraph.context)

    options = {"distractors": distractors}
    if distractors == "demo":  # parsed once per pipeline, then shared by every split's index
        base = cached_shards("demo", demo_path(), demo_distractors, cache=cache, n_process=n_process, log=log)
    else:
        base = None
    index = cached_index("squad-support", data_path, options, documents, cache=cache, n_process=n_process, log=log,
                         after=base)
    topics, qrels, stats = _squad_topics(index, paragraphs, min_candidates)
    if not topics:
        raise SentretError(f"{data_path}: no (question, answer entity) topic was found")
    return Benchmark(
        "squad-support",
        data_path,
        index,
        tuple(topics),
        qrels,
        "support",
        "graded",
        {"distractors": distractors, "min_candidates": min_candidates},
        stats,
    )


def demo_distractors() -> Iterator[Document]:
    """The demo corpus's documents as distractors, under ids that cannot clash with SQuAD's."""
    for i, doc in enumerate(read_demo()):
        yield Document(f"w{i:05d}", doc.title, doc.text)


def _normal(text: str) -> str:
    from sentret_core.ingest.nlp import entity_text  # spaCy's pass, loaded when SQuAD is

    return entity_text(text).casefold()


def _squad_topics(
    index: Index, paragraphs: Sequence[SquadParagraph], min_candidates: int
) -> tuple[list[Topic], Qrels, dict[str, Any]]:
    import numpy as np

    rows = document_rows(index)
    first, count = index.doc_first, index.doc_nsent
    starts, ends = np.asarray(index.sent_start), np.asarray(index.sent_end)
    mentions = index.mentions
    m_entity = mentions["entity"].to_numpy()
    m_start = mentions["char_start"].to_numpy()
    m_end = mentions["char_end"].to_numpy()
    indptr = index.mention_indptr
    entity_norm = [_normal(t) for t in index.entities["text"]]
    entity_sf = index.entities["sf"].to_numpy()
    labels = list(index.entities["label"])
    texts = list(index.entities["text"])
    docids = sentence_docids(index)
    topics: list[Topic] = []
    qrels: Qrels = {}
    n_questions = n_answers = unmatched = rare = 0
    for paragraph in paragraphs:
        d = rows.get(paragraph.id)
        for question in paragraph.questions:
            n_questions += 1
            found: dict[int, set[int]] = {}  # entity -> relevant sentences
            for answer in question.answers:
                n_answers += 1
                if d is None:
                    continue
                lo, hi = int(first[d]), int(first[d] + count[d])
                # the sentence holding answer_start (or the next one when it starts in a gap)
                s = lo + int(np.searchsorted(ends[lo:hi], answer.start, side="right"))
                if s >= hi:
                    continue
                wanted = _normal(answer.text)
                a_lo, a_hi = answer.start, answer.start + len(answer.text)
                best = None
                for m in range(int(indptr[s]), int(indptr[s + 1])):
                    e = int(m_entity[m])
                    if entity_norm[e] != wanted:
                        continue
                    span = (int(starts[s]) + int(m_start[m]), int(starts[s]) + int(m_end[m]))
                    overlaps = span[0] < a_hi and a_lo < span[1]
                    if best is None or (overlaps and not best[1]):
                        best = (e, overlaps)
                if best is not None:
                    found.setdefault(best[0], set()).add(s)
            if not found:
                unmatched += 1
            for entity, sentences in found.items():
                if entity_sf[entity] < min_candidates:
                    rare += 1
                    continue
                tid = topic_id(question.id, f"{texts[entity]}/{labels[entity]}")
                if tid in qrels:
                    continue
                relevant = tuple(sorted(sentences))
                topics.append(Topic(tid, question.id, question.text, relevant, None, entity))
                qrels[tid] = {docids[s]: ANSWER_GRADE for s in relevant}
    stats = {
        "questions": n_questions,
        "answers": n_answers,
        "questions_without_entity_answer": unmatched,
        "topics_below_min_candidates": rare,
        "questions_with_topics": len({t.question for t in topics}),
    }
    return topics, qrels, stats


BENCHMARK = BenchmarkSpec("squad-support", load_squad_support, kind="support", data="a SQuAD v1.1 .json",
                          options=("distractors", "min_candidates"), listed=20)
