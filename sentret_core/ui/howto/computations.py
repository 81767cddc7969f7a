"""The How it works page's cached computations: pure functions of (index path, query, model, parameters).

Heavy objects (the index and its derived arrays) are cached per process by ``load_index``;
every pure result (a ranking, an explanation, the entities, the Fig. 1 sizes) by ``st.cache_data``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from sentret_core.defaults import DEFAULT_WINDOW, EXPLORE_ENTITY_WEIGHTING
from sentret_core.models import explain, score, top_k
from sentret_core.models.core.records import Explanation
from sentret_core.support.context import QueryContext
from sentret_core.support.engine import rank_entities
from sentret_core.support.teaching import SetSizes, entity_growth, log_ks, set_sizes
from sentret_core.ui.state import load_index

TOP = 10
MAX_GROWTH_K = 10_000  # the coverage curve's k runs 1 → 10⁴, as in Blanco & Zaragoza, SIGIR 2010, Fig. 2
WINDOW = DEFAULT_WINDOW  # Ŝ_q adds the same ±window of context as support() does
ENTITY_CHOICES = 30  # entities offered for Fig. 1
ParamItems = tuple[tuple[str, Any], ...]  # a model's changed parameters, hashable for the caches


class Ranked(NamedTuple):
    ids: np.ndarray  # rank order
    scores: np.ndarray
    terms: tuple[str, ...]
    candidates: int
    reason: str | None
    oov: tuple[str, ...]


@st.cache_data(show_spinner=False, max_entries=512)
def ranked(path: str, query: str, model: str, params: ParamItems, k: int) -> Ranked:
    scores = score(load_index(path), query, model, **dict(params))
    top = top_k(scores, k)
    return Ranked(np.asarray(top.ids), np.asarray(top.scores), top.terms, len(scores), top.reason, top.oov)


@st.cache_data(show_spinner=False, max_entries=256)
def explained(path: str, query: str, sentence: int, model: str, params: ParamItems) -> Explanation:
    return explain(load_index(path), query, sentence, model, **dict(params))


class EntityChoice(NamedTuple):
    entity: int
    text: str
    label: str
    frequency: int  # |S_qe|
    kld: float


@st.cache_data(show_spinner=False, max_entries=128)
def query_entities(path: str, query: str, model: str, params: ParamItems, k: int) -> list[EntityChoice]:
    """The entities of S_q by KLD (the best single score of Blanco & Zaragoza, SIGIR 2010), each sentence
    weighted as on Explore, CARDINAL and ORDINAL left out."""
    context = QueryContext.of(load_index(path), query, ranker=model, k=k, window=WINDOW, params={model: dict(params)},
                           entity_weighting=EXPLORE_ENTITY_WEIGHTING)
    return [
        EntityChoice(e.entity, e.text, e.label, e.frequency, e.kld)
        for e in rank_entities(context, "kld", ENTITY_CHOICES, None)
    ]


@st.cache_data(show_spinner=False, max_entries=128)
def fig1(
    path: str, query: str, model: str, params: ParamItems, k: int, entity: int
) -> tuple[SetSizes, pd.DataFrame]:
    index = load_index(path)
    full = ranked(path, query, model, params, MAX_GROWTH_K).ids
    sizes = set_sizes(index, full, entity, k, WINDOW)
    growth = entity_growth(index, full, entity, log_ks(max(len(full), 1)), WINDOW)
    return sizes, growth


def judged_relevant(query: str, entity: int) -> frozenset[int] | None:
    """Sentences judged relevant (grade ≥ 3) for the topic (query, entity), or None without judgments.

    The hook for the judgment store: once the app has one open, return the relevant sentence
    ids here and the page shows where the first of them enters S_qe and Ŝ_qe (Blanco & Zaragoza, SIGIR 2010, Fig. 2,
    per topic; ``evaluate.coverage_curve`` over many topics gives the figure itself).
    """
    return None
