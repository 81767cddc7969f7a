"""sentret: entity support sentences (Blanco & Zaragoza, SIGIR 2010) and the sentence-retrieval
models the literature proposes for them."""

from __future__ import annotations

from sentret_core._version import __version__
from sentret_core.errors import (
    ArgumentError,
    ArgumentTypeError,
    ArgumentValueError,
    CorpusError,
    IndexFormatError,
    QueryError,
    SentretError,
)
from sentret_core.index.reader import Index, verify
from sentret_core.ingest.build import BuildSummary, add_documents, build_from_shards, build_index, parse_source
from sentret_core.ingest.corpus import Document, read_corpus
from sentret_core.learning import scorer as _ltr  # noqa: F401  registers ltr.v1, which sits above support
from sentret_core.models import Explanation, Scores, explain, get_model, list_models, score, search, top_k
from sentret_core.support.engine import support
from sentret_core.support.records import SupportResult

__all__ = [
    "ArgumentError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "BuildSummary",
    "CorpusError",
    "Document",
    "Explanation",
    "Index",
    "IndexFormatError",
    "QueryError",
    "Scores",
    "SentretError",
    "SupportResult",
    "__version__",
    "add_documents",
    "build_from_shards",
    "build_index",
    "explain",
    "get_model",
    "list_models",
    "parse_source",
    "read_corpus",
    "score",
    "search",
    "support",
    "top_k",
    "verify",
]
