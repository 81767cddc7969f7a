"""Sentence scorers F_q(s): TF-ISF, BM25/BM25F and query-likelihood LMs (formulas and papers: docs/spec.md).

    from sentret_core.models import score, top_k, explain
    best = top_k(score(index, "spanish civil war", "bm25f.v1", k1=0.3), 10)
    best = search(index, "spanish civil war", "bm25.v1", 10)   # the same as top_k(score(...)), pruned

Every model is registered under a versioned name (``list_models()``) by the ``@register``
decorator on its scorer, in its family's module (``tfisf``, ``bm25``, ``lm``, ``lm_class``,
``lm_trigger``, ``ltr.scorer``, ``embed.scorer``, ``embed.align``), with its formula and the paper it comes from;
``ModelSpec.source`` says where.
"""

from __future__ import annotations

# Importing a family registers its models, in import order: `sentret models` lists them so.
# isort: off
from sentret_core.models import tfisf, bm25, lm, lm_class, lm_trigger  # noqa: F401
from sentret_core.models.ltr import scorer  # noqa: F401
from sentret_core.models.embed import scorer as _embed  # noqa: F401
from sentret_core.models.embed import align as _align  # noqa: F401

# isort: on
from sentret_core.models.api import distribution, explain, score, search, top_k
from sentret_core.models.params import Params, ParamSpec
from sentret_core.models.query import NO_MATCH, NO_TERMS, Query, prepare
from sentret_core.models.records import Explanation, Scores
from sentret_core.models.registry import MODELS, add, aliases, get_model, list_models, register
from sentret_core.models.spec import ModelSpec

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
