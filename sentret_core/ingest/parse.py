"""The spaCy pass into shards, on one machine (``nlp.pipe``) or on a Ray cluster (``engine="ray"``).

Both engines take the same stream of :class:`Document` records and write the same shards
(:mod:`sentret_core.ingest.shards`); the Ray one lives in :mod:`sentret_core.ingest.ray_engine`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sentret_core.errors import CorpusError
from sentret_core.ingest.corpus import Document, Fields, Skipped, read_corpus
from sentret_core.ingest.engine import Engine
from sentret_core.ingest.nlp import load_pipeline, parse_documents
from sentret_core.ingest.pipeline import check_same_pipeline, pipeline_record
from sentret_core.ingest.shards import ShardWriter

Progress = Callable[[int, int], None]  # (documents done, words done)


def open_source(source: str | Any, fmt: str, encoding: str, skipped: Skipped,
                fields: Fields | None = None) -> Iterator[Document]:
    """The documents of ``source``, a bad source reported before any model is loaded."""
    documents = read_corpus(source, fmt, encoding, skipped, fields)
    first = next(documents, None)
    if first is None:
        raise CorpusError(f"{source}: no documents with text found")
    return _chain(first, documents)


def parse_into(
    writer: ShardWriter, documents: Iterable[Document], engine: Engine, progress: Progress | None = None
) -> dict[str, Any]:
    """Parse ``documents`` into new shards of ``writer``; return the pipeline record."""
    engine.check()
    if engine.name == "ray":
        from sentret_core.ingest.ray_engine import parse_with_ray

        return parse_with_ray(writer, documents, engine, progress)
    nlp = load_pipeline(engine.model)
    record = pipeline_record(nlp, engine.model)
    check_same_pipeline(writer.pipeline, record)
    writer.pipeline = record
    docs = words = 0
    stream = parse_documents(documents, nlp, n_process=engine.n_process, batch_size=engine.batch_size)
    with contextlib.closing(stream):  # closed on any error: spaCy's workers are told to stop right away
        for doc in stream:
            writer.add(doc)
            docs, words = docs + 1, words + doc.n_words
            if progress is not None:
                progress(docs, words)
    writer.flush()
    return record


def refuse_known(documents: Iterable[Document], known: set[str], where: str) -> Iterator[Document]:
    """``documents``, stopping with a clear error at the first whose id is already in ``where``."""
    for doc in documents:
        if doc.id in known:
            raise CorpusError(
                f"document id {doc.id!r} is already in {where}; nothing was added (give new documents new ids)"
            )
        yield doc


def _chain(first: Document, rest: Iterator[Document]) -> Iterator[Document]:
    yield first
    yield from rest

