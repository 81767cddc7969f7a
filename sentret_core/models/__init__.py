"""Sentence scorers F_q(s): TF-ISF, BM25/BM25F and query-likelihood LMs (SPEC "Sentence scorers").

    from sentret_core.models import score, top_k, explain
    best = top_k(score(index, "spanish civil war", "bm25f.v1", k1=0.3), 10)

Every model is registered under a versioned name (``list_models()``); each formula is a small
function in its family's module (``tfisf``, ``bm25``, ``lm``) with the paper it comes from.
"""

from __future__ import annotations

from .api import distribution, explain, score, top_k
from .data import NO_MATCH, NO_TERMS, Query, prepare
from .params import Params, ParamSpec
from .records import Explanation, Scores
from .registry import DEFAULT_MODEL, MODELS, aliases, get_model, list_models, register
from .spec import ModelSpec

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "NO_MATCH",
    "NO_TERMS",
    "Explanation",
    "ModelSpec",
    "ParamSpec",
    "Params",
    "Query",
    "Scores",
    "aliases",
    "distribution",
    "explain",
    "get_model",
    "list_models",
    "prepare",
    "register",
    "score",
    "top_k",
]
