"""sentret: entity support sentences (Blanco & Zaragoza, SIGIR 2010) and the sentence-retrieval
models the literature proposes for them.

The names below are imported on first use (PEP 562), so that ``import sentret_core`` — which every
``sentret`` command does first, ``--version`` and ``--help`` included — costs milliseconds, not the
seconds numpy, pandas, pyarrow and spaCy take. The first name used also registers ``ltr.v1`` (the
learned ranker sits above support, so no lower layer may import it): ``sentret_core.list_models()``
lists it, as ``from sentret_core import Index`` does for ``sentret_core.models.list_models()``.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from sentret_core._version import __version__

if TYPE_CHECKING:  # what the type checker and the reader see; at run time __getattr__ imports them
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
    from sentret_core.models import Explanation, Scores, explain, get_model, list_models, score, search, top_k
    from sentret_core.support.engine import support
    from sentret_core.support.records import SupportResult

_WHERE = {
    "sentret_core.errors": ("ArgumentError", "ArgumentTypeError", "ArgumentValueError", "CorpusError",
                            "IndexFormatError", "QueryError", "SentretError"),
    "sentret_core.index.reader": ("Index", "verify"),
    "sentret_core.ingest.build": ("BuildSummary", "add_documents", "build_from_shards", "build_index", "parse_source"),
    "sentret_core.ingest.corpus": ("Document", "read_corpus"),
    "sentret_core.models": ("Explanation", "Scores", "explain", "get_model", "list_models", "score", "search",
                            "top_k"),
    "sentret_core.support.engine": ("support",),
    "sentret_core.support.records": ("SupportResult",),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}
LEARNED_RANKER = "sentret_core.learning.scorer"  # registers ltr.v1 when imported

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
assert sorted(__all__) == sorted([*_MODULE_OF, "__version__"])  # every name has a home


class _Package(types.ModuleType):
    """``sentret_core.support`` is the function (as it always was), though a subpackage of that name exists:
    importing the subpackage would set the attribute to it, and is kept from doing so."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "support" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'sentret_core' has no attribute {name!r}")
    importlib.import_module(LEARNED_RANKER)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
