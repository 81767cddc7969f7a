"""sentret: entity support sentences (Blanco & Zaragoza, SIGIR 2010) and the sentence-retrieval
models the literature proposes for them.

A script or notebook imports everything from here: indexes, the scorers and support, benchmarks, metrics
and their evaluation, judgment sessions and their agreement (``tests/test_public_api.py`` keeps each name
the very object of its home module).

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
    from sentret_core.annotation.agreement import (
        cohen_kappa,
        fleiss_kappa,
        krippendorff_alpha,
        ratings_from_judgments,
    )
    from sentret_core.annotation.agreement_summary import AgreementSummary, agreement_summary
    from sentret_core.annotation.judged_eval import evaluate_session
    from sentret_core.annotation.records import Judgment, PoolItem, PoolSettings, SessionInfo
    from sentret_core.annotation.session_setup import build_pool, create_session
    from sentret_core.annotation.store import JudgmentStore
    from sentret_core.errors import (
        ArgumentError,
        ArgumentTypeError,
        ArgumentValueError,
        CorpusError,
        IndexFormatError,
        QueryError,
        SentretError,
    )
    from sentret_core.evaluation.benchmarks import load_benchmark
    from sentret_core.evaluation.benchmarks.base import Benchmark, Topic
    from sentret_core.evaluation.benchmarks.registry import list_benchmarks
    from sentret_core.evaluation.driver import evaluate_benchmark
    from sentret_core.evaluation.measures import evaluate
    from sentret_core.evaluation.metrics import (
        average_precision,
        dcg_at_k,
        ndcg_at_k,
        precision_at_k,
        r_precision,
        reciprocal_rank,
    )
    from sentret_core.evaluation.report import Report
    from sentret_core.evaluation.trec_io import read_qrels, read_run
    from sentret_core.index.reader import Index, verify
    from sentret_core.ingest.build import BuildSummary, add_documents, build_from_shards, build_index, parse_source
    from sentret_core.ingest.corpus import Document, read_corpus
    from sentret_core.models import Explanation, Scores, explain, get_model, list_models, score, search, top_k
    from sentret_core.support.engine import support
    from sentret_core.support.records import SupportResult

_WHERE = {
    "sentret_core.annotation.agreement": ("cohen_kappa", "fleiss_kappa", "krippendorff_alpha",
                                          "ratings_from_judgments"),
    "sentret_core.annotation.agreement_summary": ("AgreementSummary", "agreement_summary"),
    "sentret_core.annotation.judged_eval": ("evaluate_session",),
    "sentret_core.annotation.records": ("Judgment", "PoolItem", "PoolSettings", "SessionInfo"),
    "sentret_core.annotation.session_setup": ("build_pool", "create_session"),
    "sentret_core.annotation.store": ("JudgmentStore",),
    "sentret_core.errors": ("ArgumentError", "ArgumentTypeError", "ArgumentValueError", "CorpusError",
                            "IndexFormatError", "QueryError", "SentretError"),
    "sentret_core.evaluation.benchmarks": ("load_benchmark",),
    "sentret_core.evaluation.benchmarks.base": ("Benchmark", "Topic"),
    "sentret_core.evaluation.benchmarks.registry": ("list_benchmarks",),
    "sentret_core.evaluation.driver": ("evaluate_benchmark",),
    "sentret_core.evaluation.measures": ("evaluate",),
    "sentret_core.evaluation.metrics": ("average_precision", "dcg_at_k", "ndcg_at_k", "precision_at_k",
                                        "r_precision", "reciprocal_rank"),
    "sentret_core.evaluation.report": ("Report",),
    "sentret_core.evaluation.trec_io": ("read_qrels", "read_run"),
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
    "AgreementSummary",
    "ArgumentError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "Benchmark",
    "BuildSummary",
    "CorpusError",
    "Document",
    "Explanation",
    "Index",
    "IndexFormatError",
    "Judgment",
    "JudgmentStore",
    "PoolItem",
    "PoolSettings",
    "QueryError",
    "Report",
    "Scores",
    "SentretError",
    "SessionInfo",
    "SupportResult",
    "Topic",
    "__version__",
    "add_documents",
    "agreement_summary",
    "average_precision",
    "build_from_shards",
    "build_index",
    "build_pool",
    "cohen_kappa",
    "create_session",
    "dcg_at_k",
    "evaluate",
    "evaluate_benchmark",
    "evaluate_session",
    "explain",
    "fleiss_kappa",
    "get_model",
    "krippendorff_alpha",
    "list_benchmarks",
    "list_models",
    "load_benchmark",
    "ndcg_at_k",
    "parse_source",
    "precision_at_k",
    "r_precision",
    "ratings_from_judgments",
    "read_corpus",
    "read_qrels",
    "read_run",
    "reciprocal_rank",
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
