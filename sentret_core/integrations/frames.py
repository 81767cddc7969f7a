"""Retrieval and re-ranking over pandas frames in PyTerrier's column convention, with no dependency
beyond pandas: the adapter :mod:`sentret_core.integrations.pyterrier` wraps, and what ``sentret run``
ranks each topic with.

- topics: ``qid``, ``query`` (and optionally ``entity``: that entity's support sentences, ``text|LABEL``
  or ``text`` as in a topics file);
- results: ``qid``, ``query``, ``docno``, ``score``, ``rank`` — rank from 0, by score descending, ties
  in sentence (document) order, scores finite — and, asked for, ``text``: the sentence (what PyTerrier's
  neural re-rankers read). :func:`to_ir_measures` renames them for ir_measures
  (``query_id``, ``doc_id``, ``score``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sentret_core.defaults import DEFAULT_K
from sentret_core.errors import SentretError
from sentret_core.index.docnos import sentence_docnos, sentence_ids

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.records import Scores

RESULT_COLUMNS = ["qid", "query", "docno", "score", "rank"]
TEXT = "text"
ENTITY = "entity"


def rank_topic(index: Index, model: str, params: Mapping[str, Any], query: str, entity: str | None,
               k: int) -> Scores:
    """``model``'s top ``k`` sentences for ``query``; with ``entity``, only the sentences that mention it."""
    from sentret_core.annotation.topics import find_entity
    from sentret_core.models import score, search, top_k
    from sentret_core.support.entity_stats import entity_sentences

    if entity is None:
        return search(index, query, model, k, **params)
    scored = score(index, query, model, **params)
    keep = np.isin(scored.ids, entity_sentences(index, find_entity(index, entity)))
    return top_k(replace(scored, ids=scored.ids[keep], scores=scored.scores[keep]), k)


def _need(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise SentretError(f"{what}: expected a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise SentretError(f"{what}: the frame lacks the column(s) {', '.join(missing)} "
                           f"(it has {', '.join(map(str, frame.columns)) or 'none'})")


def retrieve(index: Index, topics: pd.DataFrame, model: str, k: int = DEFAULT_K,
             params: Mapping[str, Any] | None = None, *, text: bool = False) -> pd.DataFrame:
    """The top ``k`` sentences of each topic (``qid``, ``query``[, ``entity``]) under ``model``; with
    ``text``, each sentence's text in a column ``text``."""
    from sentret_core.checks import check_int
    from sentret_core.defaults import MAX_K
    from sentret_core.models import get_model

    _need(topics, ["qid", "query"], "topics")
    k = check_int("k", k, 1, MAX_K)
    params = dict(params or {})
    get_model(model).resolve(params)  # a bad parameter is refused before any topic is run
    names = sentence_docnos(index)
    rows: list[tuple[str, str, str, float, int]] = []
    ids: list[int] = []
    for topic in topics.itertuples(index=False):
        qid, query = str(getattr(topic, "qid")), str(getattr(topic, "query"))  # noqa: B009
        entity = getattr(topic, ENTITY, None)
        entity = None if entity is None or (isinstance(entity, float) and math.isnan(entity)) else str(entity)
        found = rank_topic(index, model, params, query, entity, k)
        finite = [(int(s), float(v)) for s, v in zip(found.ids, found.scores) if math.isfinite(float(v))]
        rows.extend((qid, query, names[s], v, rank) for rank, (s, v) in enumerate(finite))
        ids.extend(s for s, _ in finite)
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    if text:
        frame[TEXT] = texts_of(index, ids)
    return frame


def texts_of(index: Index, ids: list[int]) -> list[str]:
    """The text of each sentence of ``ids``."""
    return [index.texts[s] for s in ids]


def rerank(index: Index, results: pd.DataFrame, model: str, params: Mapping[str, Any] | None = None, *,
           text: bool = False) -> pd.DataFrame:
    """``results`` (``qid``, ``query``, ``docno``) scored again by ``model`` and ranked by that score; with
    ``text``, a ``text`` column is added where the frame has none.

    Every row is kept. A sentence the model cannot score (an LM's ``-inf`` outside its candidates)
    ranks last with a finite score: one below the lowest finite score of its query (or -1).
    """
    from sentret_core.models import get_model
    from sentret_core.models.core.query import prepare

    _need(results, ["qid", "query", "docno"], "results")
    spec = get_model(model)
    resolved = spec.resolve(dict(params or {}))
    out = results.drop(columns=[c for c in ("score", "rank") if c in results.columns]).copy()
    out["qid"] = out["qid"].astype(str)
    ids = np.asarray(sentence_ids(index, [str(d) for d in out["docno"]]), dtype=np.int64)
    scores = np.zeros(len(out))
    for _, rows in out.groupby("qid", sort=False).indices.items():
        queries = set(out["query"].iloc[rows])
        if len(queries) != 1:
            raise SentretError(f"results: qid {out['qid'].iloc[rows[0]]} has {len(queries)} different queries")
        values = spec.score_at(index, prepare(index, str(queries.pop())), resolved, ids[rows])
        finite = np.isfinite(values)
        floor = (values[finite].min() if finite.any() else 0.0) - 1.0
        scores[rows] = np.where(finite, values, floor)
    out["score"], out["_sentence"] = scores, ids
    if text and TEXT not in out.columns:
        out[TEXT] = texts_of(index, ids.tolist())
    out = out.sort_values(["qid", "score", "_sentence"], ascending=[True, False, True], kind="stable")
    out["rank"] = out.groupby("qid", sort=False).cumcount()
    return out.drop(columns="_sentence").reset_index(drop=True)


def to_ir_measures(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` with ir_measures' column names: ``query_id``, ``doc_id``, ``score``."""
    _need(results, ["qid", "docno", "score"], "results")
    renamed = results.rename(columns={"qid": "query_id", "docno": "doc_id"})
    return renamed[["query_id", "doc_id", "score"]]
