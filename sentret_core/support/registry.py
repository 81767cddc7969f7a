"""The support models that are not sentence scorers, by name (Blanco & Zaragoza, SIGIR 2010, §3).

* ``position``: eq. 8, ``|s| - max(pos_q(s), pos_e(s))``, over S_qe (the ranker's top k that mention e);
* ``sum-<score>`` / ``avg-<score>``: eq. 7, the sum (or mean) of an entity score (eqs. 9-12) over the
  sentence's entities, over Ŝ_qe (S_q with each sentence's ±window neighbours, those that mention e).

Every registered sentence scorer is a support model too (eqs. 5/6, over its own top k), from
:mod:`sentret_core.models.core.registry`; :func:`title` names a support model of either kind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from sentret_core.models.core.registry import get_model
from sentret_core.support.entities import AGGREGATORS, aggregate
from sentret_core.support.entity_position import position_scores
from sentret_core.support.entity_stats import ENTITY_SCORES

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.support.entity_stats import EntityStats

OVER_TOP = "S_qe"  # candidates: the sentences of the ranker's top k that mention the entity
OVER_CONTEXT = "Ŝ_qe"  # candidates: those of the top k and its ±window neighbours that mention the entity



class SupportContext(Protocol):
    """What a support model reads of the query's shared context (``support.context.QueryContext`` has it)."""

    @property
    def index(self) -> Index: ...

    @property
    def terms(self) -> Sequence[str]: ...  # the query's terms

    @property
    def stats(self) -> EntityStats: ...  # of the entities in the ranker's top k

    @property
    def allowed(self) -> np.ndarray: ...  # a boolean per entity: does it carry one of the labels asked for?


# (the query's context, entity id, candidate sentence ids ascending) -> H_qe(s) of each candidate
SupportScorer = Callable[[SupportContext, int, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SupportModel:
    """A support model that scores an entity's candidate sentences from the query's shared context."""

    name: str  # "position", "sum-kld"
    title: str  # shown in the app: "Position (eq. 8)"
    over: str  # which sentences are candidates: OVER_TOP or OVER_CONTEXT
    score: SupportScorer
    paper: str  # the paper and equation
    evaluated_by_default: bool  # `sentret eval` on an entity-support benchmark runs it unless models are named


SUPPORT_MODELS: dict[str, SupportModel] = {}


def add_support_model(model: SupportModel) -> SupportModel:
    """Add ``model`` under its name; a name a sentence scorer could also take must not clash."""
    if model.name in SUPPORT_MODELS:
        raise ValueError(f"support model {model.name!r} is already registered")
    SUPPORT_MODELS[model.name] = model
    return model


def support_model(name: str) -> SupportModel | None:
    """The support model named ``name``, or None when ``name`` is not one (a sentence scorer, say)."""
    return SUPPORT_MODELS.get(name)


def support_model_names() -> tuple[str, ...]:
    """Every support model's name, in registration order: ``position``, then ``sum-*``, then ``avg-*``."""
    return tuple(SUPPORT_MODELS)


def title(name: str) -> str:
    """The display title of a support model or of a registered sentence scorer ("Sum of KLD (eq. 7)",
    "BM25F (sentence, context, title)"). Raises SentretError for an unknown name."""
    found = SUPPORT_MODELS.get(name)
    return found.title if found is not None else get_model(name).display_name


def _position(ctx: SupportContext, entity: int, ids: np.ndarray) -> np.ndarray:
    return position_scores(ctx.index, ids, ctx.terms, entity)


def _aggregated(how: str, score: str) -> SupportScorer:
    def scorer(ctx: SupportContext, entity: int, ids: np.ndarray) -> np.ndarray:
        return aggregate(ctx.index, ids, ctx.stats, score, how, ctx.allowed)

    return scorer


POSITION = add_support_model(
    SupportModel("position", "Position (eq. 8)", OVER_TOP, _position, "Blanco & Zaragoza, SIGIR 2010, eq. 8", True)
).name
_SCORE_TITLES = {"kld": "KLD"}  # the others are titled by their name
_AGGREGATOR_TITLES = {"sum": "Sum", "avg": "Average"}
_SCORE_EQUATIONS = {"frequency": "eq. 9", "rarity": "eq. 10", "combination": "eq. 11", "kld": "eqs. 12-13"}
ENTITY_MODELS = tuple(
    add_support_model(
        SupportModel(
            f"{how}-{score}",
            f"{_AGGREGATOR_TITLES[how]} of {_SCORE_TITLES.get(score, score)} (eq. 7)",
            OVER_CONTEXT,
            _aggregated(how, score),
            f"Blanco & Zaragoza, SIGIR 2010, eq. 7 with {_SCORE_EQUATIONS[score]}",
            how == "sum",
        )
    ).name
    for how in AGGREGATORS
    for score in ENTITY_SCORES
)
