"""The spaCy pass into shards, on one machine (``nlp.pipe``) or on a Ray cluster (``engine="ray"``).

Both engines take the same stream of :class:`Document` records and write the same shards
(:mod:`sentret_core.ingest.shards`); the Ray one lives in :mod:`sentret_core.ingest.ray_engine`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sentret_core.errors import CorpusError, SentretError
from sentret_core.index.safe_files import spacy_model_problem
from sentret_core.ingest.corpus import Document, Fields, Skipped, read_corpus
from sentret_core.ingest.nlp import DEFAULT_BATCH_SIZE, DEFAULT_PIPELINE, load_pipeline, parse_documents
from sentret_core.ingest.pipeline import check_same_pipeline, pipeline_record
from sentret_core.ingest.shards import ShardWriter

Progress = Callable[[int, int], None]  # (documents done, words done)
ENGINES = ("local", "ray")


@dataclass(frozen=True)
class Engine:
    """How the spaCy pass runs: ``local`` (``n_process`` workers) or ``ray`` (``num_workers`` actors at ``address``)."""

    name: str = "local"
    model: str = DEFAULT_PIPELINE
    n_process: int = 2
    batch_size: int = DEFAULT_BATCH_SIZE
    address: str | None = None
    num_workers: int | None = None

    def check(self) -> None:
        if self.name not in ENGINES:
            raise SentretError(f"unknown engine {self.name!r}; choose one of {', '.join(ENGINES)}")
        if self.n_process < 1 or self.batch_size < 1:
            raise SentretError(
                f"--n-process and --batch-size must be at least 1 (got {self.n_process}, {self.batch_size})"
            )
        if self.num_workers is not None and self.num_workers < 1:
            raise SentretError(f"--num-workers must be at least 1 (got {self.num_workers})")
        if self.model and (problem := spacy_model_problem(self.model)) is not None:
            raise SentretError(f"--model {self.model}: {problem.removeprefix('its ')}")
        if self.address is not None and not self.address.strip():
            raise SentretError(
                "--address is empty: name the Ray cluster as HOST:PORT (or 'auto'), or leave it out to start Ray here"
            )
        if self.address is not None and self.address.strip().lower().startswith("ray://"):
            raise SentretError(
                f"--address {self.address}: sentret does not go through Ray Client (ray://); give the head node's "
                "HOST:PORT as `ray start --head` prints it (port 6379 unless --port says otherwise), or auto"
            )


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

