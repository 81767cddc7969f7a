"""What every benchmark shares: its topics and the loaded benchmark (file readers: :mod:`sentret_core.ingest.qa_files`).

A benchmark is a collection (an index), topics and graded qrels; a sentence's TREC docid is
``<document id>-<position in the document>``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sentret_core.evaluation.trec_io import Qrels

if TYPE_CHECKING:  # the CLI lists the benchmarks at start: numpy and the index machinery load when one is used
    import numpy as np

    from sentret_core.index.reader import Index

Kind = Literal["sentences", "support"]
Log = Callable[[str], None]


@dataclass(frozen=True)
class Topic:
    """One evaluation topic.

    ``candidates`` (sentence ids, ascending) is set for plain sentence retrieval (WikiQA,
    TrecQA): the question's own candidates. For entity support it is None (the candidates
    depend on the model) and ``entity`` is the answer entity's id. ``relevant`` are the
    relevant sentence ids; ``question`` the question id (entity topics of one question share it).
    """

    id: str
    question: str
    query: str
    relevant: tuple[int, ...]
    candidates: np.ndarray | None = field(default=None, compare=False)
    entity: int | None = None


@dataclass
class Benchmark:
    """A benchmark ready to evaluate: the collection's index, its topics and qrels."""

    name: str
    data: Path
    index: Index
    topics: tuple[Topic, ...]
    qrels: Qrels
    kind: Kind
    scale: Literal["binary", "graded"]
    options: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def docids(self) -> list[str]:
        """The TREC docid of every sentence: ``<document id>-<position in the document>``."""
        return sentence_docids(self.index)

    def docid(self, sentence: int) -> str:
        return self.docids[sentence]

    @cached_property
    def topic_map(self) -> dict[str, Topic]:
        return {topic.id: topic for topic in self.topics}

    def describe(self) -> dict[str, Any]:
        """What a report says about the collection."""
        return {
            "benchmark": self.name,
            "data": str(self.data),
            "topics": len(self.topics),
            "documents": self.index.D,
            "sentences": self.index.N,
            "index": str(self.index.path),
            "options": dict(self.options),
            **self.stats,
        }


def sentence_docids(index: Index) -> list[str]:
    """Every sentence's TREC docid ``<document id>-<position>``, by sentence id."""
    doc_ids = list(index.documents["id"])
    return [f"{doc_ids[d]}-{p}" for d, p in zip(index.sent_doc.tolist(), index.sent_pos.tolist())]


def document_rows(index: Index) -> dict[str, int]:
    """Document id -> its row in the index."""
    return {str(doc): row for row, doc in enumerate(index.documents["id"])}
