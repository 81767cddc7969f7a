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
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import Benchmark, Log, Topic, document_rows, sentence_docids
from sentret_core.evaluation.benchmarks.indexing import cached_index
from sentret_core.ingest.corpus import Document, presegmented
from sentret_core.ingest.qa_files import read_wikiqa


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
