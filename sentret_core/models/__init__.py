"""Sentence scorers F_q(s): TF-ISF, BM25/BM25F and query-likelihood LMs (formulas and papers: docs/spec.md).

    from sentret_core.models import score, top_k, explain
    best = top_k(score(index, "spanish civil war", "bm25f.v1", k1=0.3), 10)
    best = search(index, "spanish civil war", "bm25.v1", 10)   # the same as top_k(score(...)), pruned

Every model is registered under a versioned name (``list_models()``) by the ``@register``
decorator on its scorer, in its family's subpackage (``tfisf``, ``bm25``, ``lm``, ``lm_class``,
``lm_trigger``, ``embed``, ``minilm``; the learned ranker ``ltr.v1`` in :mod:`sentret_core.learning.scorer`, a stage
above support, registered by the top package), with its formula and the paper it comes from;
``ModelSpec.source`` says where. ``core`` holds the machinery, ``arrays`` the derived arrays.
"""

from __future__ import annotations

# Importing a family registers its models, in import order: `sentret models` lists them so.
# isort: off
from sentret_core.models.tfisf import scorer as _tfisf  # noqa: F401
from sentret_core.models.bm25 import scorer as _bm25  # noqa: F401
from sentret_core.models.lm import scorer as _lm  # noqa: F401
from sentret_core.models.lm_class import scorer as _lm_class  # noqa: F401
from sentret_core.models.lm_trigger import scorer as _lm_trigger  # noqa: F401
from sentret_core.models.embed import scorer as _embed  # noqa: F401
from sentret_core.models.embed import align as _align  # noqa: F401
from sentret_core.models.minilm import scorer as _minilm  # noqa: F401

# isort: on
from sentret_core.models.core.api import distribution, explain, score, search, top_k
from sentret_core.models.core.params import Params, ParamSpec
from sentret_core.models.core.query import NO_MATCH, NO_TERMS, Query, prepare
from sentret_core.models.core.records import Explanation, Scores
from sentret_core.models.core.registry import MODELS, add, aliases, get_model, list_models, register
from sentret_core.models.core.spec import ModelSpec

__all__ = [
    "MODELS",
    "NO_MATCH",
    "NO_TERMS",
    "Explanation",
    "ModelSpec",
    "ParamSpec",
    "Params",
    "Query",
    "Scores",
    "add",
    "aliases",
    "distribution",
    "explain",
    "get_model",
    "list_models",
    "prepare",
    "register",
    "score",
    "search",
    "top_k",
]
