"""What a support request returns: typed records with ``to_json`` / ``to_frame`` (Blanco & Zaragoza, SIGIR 2010, §3)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class ContextSentence:
    sentence: int
    offset: int  # position relative to the support sentence: -2, -1, 1, 2
    text: str


@dataclass(frozen=True)
class SupportSentence:
    sentence: int
    rank: int
    score: float
    document: int
    title: str
    text: str
    term_spans: tuple[tuple[int, int], ...]  # character spans of query terms in ``text``
    entity_spans: tuple[tuple[int, int], ...]  # character spans of the entity's mentions
    context: tuple[ContextSentence, ...]


@dataclass(frozen=True)
class RankedEntity:
    entity: int
    text: str
    label: str
    rank: int
    score: float  # the chosen entity score
    frequency: int  # |S_qe|
    context_frequency: int  # |Ŝ_qe|
    rarity: float
    combination: float
    kld: float
    weighted_frequency: float  # W_qe, the weighted |S_qe| (= |S_qe| unweighted; sentret_core.support.weighting)


@dataclass(frozen=True)
class EntitySupport:
    entity: RankedEntity
    sentences: dict[str, tuple[SupportSentence, ...]]  # model → its top support sentences
    candidates: dict[str, int]  # model → number of candidate sentences

    def agreement(self) -> dict[int, list[str]]:
        """Top sentence → the models that rank it first, for sentences at least two models agree on."""
        firsts: dict[int, list[str]] = {}
        for model, sentences in self.sentences.items():
            if sentences:
                firsts.setdefault(sentences[0].sentence, []).append(model)
        return {s: models for s, models in firsts.items() if len(models) > 1}


@dataclass(frozen=True)
class SupportResult:
    query: str
    terms: tuple[str, ...]
    ranker: str
    k: int
    entity_score: str
    entity_weighting: str  # how each sentence of S_q counts in the entity scores: none, rank or score
    labels: tuple[str, ...]
    models: tuple[str, ...]
    n_top: int  # |S_q|
    n_context: int  # |Ŝ_q|
    entities: tuple[EntitySupport, ...]
    reason: str | None = None
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    def to_frame(self) -> pd.DataFrame:
        """One row per (entity, model, support sentence)."""
        rows = [
            {
                "entity_rank": es.entity.rank,
                "entity": es.entity.text,
                "label": es.entity.label,
                "entity_score": es.entity.score,
                "model": model,
                "rank": s.rank,
                "sentence": s.sentence,
                "score": s.score,
                "title": s.title,
                "text": s.text,
            }
            for es in self.entities
            for model, sentences in es.sentences.items()
            for s in sentences
        ]
        columns = ["entity_rank", "entity", "label", "entity_score", "model", "rank", "sentence", "score"]
        return pd.DataFrame(rows, columns=[*columns, "title", "text"])
