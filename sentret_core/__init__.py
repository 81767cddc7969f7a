"""sentret: entity support sentences (Blanco & Zaragoza, SIGIR 2010) and the sentence-retrieval
models the literature proposes for them."""

from __future__ import annotations

__version__ = "0.1.0"

from .build import BuildSummary, build_index
from .corpus import Document, read_corpus
from .errors import CorpusError, IndexFormatError, QueryError, SentretError
from .index import Index, verify

__all__ = [
    "BuildSummary",
    "CorpusError",
    "Document",
    "Index",
    "IndexFormatError",
    "QueryError",
    "SentretError",
    "__version__",
    "build_index",
    "read_corpus",
    "verify",
]
