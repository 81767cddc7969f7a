"""The trigger LMs' parameters (Momtazi & Klakow, IP&M 2015, eq. 12): the triggerings' mixture weights, the word
unigram's Dirichlet prior, the candidate cap and the trained tables' artefact name; v2's grids and tuned defaults."""

from __future__ import annotations

from dataclasses import dataclass

from sentret_core.errors import SentretError
from sentret_core.models.core.params import Params, Range, grid_range, param
from sentret_core.models.lm.params import MU_GRID, MU_MIN
from sentret_core.models.training.triggers import COMPONENTS, DEFAULT_NAME, KIND

_LAM: Range = Range(min=0.0, max=1.0, step=0.05, grid=grid_range(0.1, 0.9, 0.1))


_HELP = {
    "self": "weight of self triggering: the unsmoothed sentence model c(q,s)/|s|",
    "inside": "weight of inside-sentence triggering (terms of one sentence trigger each other)",
    "across": "weight of across-sentence triggering (terms trigger the next sentence's terms)",
    "qa": "weight of QA-pair triggering (question terms trigger answer terms; see train_triggers)",
    "ne": "weight of named-entity triggering (question terms trigger answer NER labels; see train_triggers)",
    "mu": "Dirichlet prior of the word unigram model, which gets the remaining weight 1 − Σλ",
    "max_candidates": "most sentences returned: those with a query term, then the best others",
    "tables": "name of the trained trigger-table artefact of the index (sentret train triggers INDEX --name …)",
}


@dataclass(frozen=True)
class TriggerParams(Params):
    lam_self: float = param(0.0, _HELP["self"], symbol=r"\lambda_{self}", **_LAM)
    lam_inside: float = param(0.2, _HELP["inside"], symbol=r"\lambda_{in}", **_LAM)
    lam_across: float = param(0.0, _HELP["across"], symbol=r"\lambda_{ac}", **_LAM)
    lam_qa: float = param(0.0, _HELP["qa"], symbol=r"\lambda_{qa}", **_LAM)
    lam_ne: float = param(0.0, _HELP["ne"], symbol=r"\lambda_{ne}", **_LAM)
    # μ = 0 leaves a sentence without a query term probability 0 (-inf): refused
    mu: float = param(100.0, _HELP["mu"], symbol=r"\mu", min=MU_MIN, max=1e6, step=1.0, grid=MU_GRID)
    max_candidates: int = param(10000, _HELP["max_candidates"], min=1, max=1_000_000, step=1)
    tables: str = param(DEFAULT_NAME, _HELP["tables"], artefact=KIND)

    def check(self) -> None:
        total = sum(self.weights().values())
        if total > 1.0 + 1e-12:
            raise SentretError(
                f"the triggering weights lam_self + lam_inside + lam_across + lam_qa + lam_ne = {total:g} "
                "exceed 1; they are mixture weights and the word unigram model gets 1 minus their sum"
            )

    def weights(self) -> dict[str, float]:
        return {name: float(getattr(self, f"lam_{name}")) for name in COMPONENTS}

    def rest(self) -> float:
        return max(1.0 - sum(self.weights().values()), 0.0)


_LAM0: Range = Range(min=0.0, max=1.0, step=0.05, grid=(0.0, *grid_range(0.1, 0.9, 0.1)))


@dataclass(frozen=True)
class TriggerParamsV2(TriggerParams):
    """v1's parameters with 0 on every λ grid, and defaults tuned on WikiQA train: MAP, coordinate
    ascent over the grids from the defaults, on half B of the train questions with tables whose
    QA/NE rows were counted on the other half A (so the weights are not tuned on the questions the
    tables memorised; ``benchmarks/vocab_gap_crossfit.py``). They suit tables trained with QA pairs;
    with corpus-only tables the QA and NE weights act as extra collection smoothing."""

    lam_self: float = param(0.0, _HELP["self"], symbol=r"\lambda_{self}", **_LAM0)
    lam_inside: float = param(0.1, _HELP["inside"], symbol=r"\lambda_{in}", **_LAM0)
    lam_across: float = param(0.0, _HELP["across"], symbol=r"\lambda_{ac}", **_LAM0)
    lam_qa: float = param(0.1, _HELP["qa"] + "; also question words → answer terms", symbol=r"\lambda_{qa}",
                          **_LAM0)
    lam_ne: float = param(0.4, _HELP["ne"] + "; also question words (?when → DATE)", symbol=r"\lambda_{ne}",
                          **_LAM0)
    # μ = 0 with every trigger weight 0 leaves a sentence without a query term probability 0: refused
    mu: float = param(50.0, _HELP["mu"], symbol=r"\mu", min=MU_MIN, max=1e6, step=1.0, grid=MU_GRID)
