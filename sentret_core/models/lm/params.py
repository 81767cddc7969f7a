"""The language models' parameters and their ranges (Fernández et al., Inf. Retr. 2011, §3;
Doko et al., IP&M 2015, eq. 7).

Defaults: λ = 0.5 and μ = 100 are the values of Fernández et al.'s worked example (Inf. Retr. 2011, Fig. 4); the optimal
settings of its Tables 2 and 4 did not survive the text extraction. 3MM's γ = 0.3 leaves the
collection 0.2 (no published value survives either).
"""

from __future__ import annotations

from dataclasses import dataclass

from sentret_core.errors import SentretError
from sentret_core.models.core.params import Params, Preset, Range, grid_range, param

MU_GRID = (1.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0)
# μ = 0 (unsmoothed) or at least MU_MIN: a smaller positive prior is 0 for any non-empty sentence,
# and for an empty one its reciprocal overflows (μ = 2.2e-311 gave NaN)
MU_MIN = 1e-6
MU_RANGE: Preset = Preset(symbol=r"\mu", min=0.0, max=1e6, step=1.0, grid=MU_GRID, min_positive=MU_MIN)
# a Dirichlet prior on the collection model, or a JM weight on it, of 0 leaves p(t|s) = 0 for a
# sentence without t and its log-likelihood -inf (Fernández et al., §3): refused, so every score is finite
MU_COLLECTION: Preset = {**MU_RANGE, "min": MU_MIN, "min_positive": None}
_LAM: Preset = Preset(symbol=r"\lambda", min=0.0, max=1.0, step=0.05, grid=grid_range(0.1, 0.9, 0.1))
# a collection weight of 0 gives log 0; a subnormal one (5e-324) underflows to the same -inf: at least LAM_MIN
LAM_MIN = 1e-6
_LAM_COLLECTION: Preset = {**_LAM, "min": LAM_MIN}
_GAMMA: Preset = Preset(symbol=r"\gamma", min=0.0, max=1.0, step=0.05, grid=grid_range(0.1, 0.9, 0.1))
_CONTEXT: Range = Range(choices=("document", "window"))
_WINDOW: Preset = Preset(symbol="w", min=1, max=10, step=1, grid=(1, 2, 3))
_IMPORTANCE = "add log p(d|s), the sentence's importance in its document (Fernández et al. 2011, §3.3)"
_CONTEXT_HELP = "local model: the whole document, or the window of surrounding sentences"
_WINDOW_HELP = "window context: this many sentences before and after s (s included); Fernández et al. use 1"


@dataclass(frozen=True)
class JMParams(Params):
    lam: float = param(0.5, "weight of the collection model p(t)", **_LAM_COLLECTION)
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")


@dataclass(frozen=True)
class DirParams(Params):
    mu: float = param(100.0, "Dirichlet prior: pseudo-count of the collection model", **MU_COLLECTION)
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")


@dataclass(frozen=True)
class LocalParams(Params):
    """Shared by the local-context models (the first fields differ per model)."""

    def local_weighted(self) -> bool:
        """Whether the local model carries weight (then its matches are candidates too)."""
        raise NotImplementedError


@dataclass(frozen=True)
class ThreeMMParams(LocalParams):
    lam: float = param(0.5, "weight of the sentence model p(t|s)", **_LAM)
    gamma: float = param(0.3, "weight of the local model p(t|d) or p(t|c_s)", **_GAMMA)
    context: str = param("document", _CONTEXT_HELP, **_CONTEXT)
    window: int = param(1, _WINDOW_HELP, **_WINDOW)
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")

    def check(self) -> None:
        if self.lam + self.gamma > 1.0 + 1e-12:
            raise SentretError(
                f"parameters 'lam' + 'gamma' = {self.lam:g} + {self.gamma:g} exceed 1; "
                "they are mixture weights and the collection model gets 1 - lam - gamma"
            )
        if self.lam + self.gamma >= 1.0 - 1e-12:  # log 0 for a candidate whose s and context lack t
            raise SentretError(
                f"parameters 'lam' + 'gamma' = {self.lam:g} + {self.gamma:g} leave the collection model no "
                "weight; they must add up to less than 1"
            )

    def local_weighted(self) -> bool:
        return self.gamma > 0


@dataclass(frozen=True)
class TwoStageParams(LocalParams):
    lam: float = param(0.5, "weight of the collection model p(t) (the JM stage)", **_LAM_COLLECTION)
    mu: float = param(100.0, "Dirichlet prior of the local model (the first stage)", **MU_RANGE)
    context: str = param("document", _CONTEXT_HELP, **_CONTEXT)
    window: int = param(1, _WINDOW_HELP, **_WINDOW)
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")

    def local_weighted(self) -> bool:
        return self.mu > 0 and self.lam < 1


@dataclass(frozen=True)
class TwoStageInvParams(LocalParams):
    lam: float = param(0.5, "weight of the local model against the sentence model (the JM stage)", **_LAM)
    mu: float = param(100.0, "Dirichlet prior of the collection model (the second stage)", **MU_COLLECTION)
    context: str = param("document", _CONTEXT_HELP, **_CONTEXT)
    window: int = param(1, _WINDOW_HELP, **_WINDOW)
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")

    def local_weighted(self) -> bool:
        return self.lam > 0


@dataclass(frozen=True)
class ThreeMMPDSParams(Params):
    lam: float = param(0.5, "weight of the sentence model p(t|s)", **_LAM)
    gamma: float = param(0.3, "weight of the surrounding-sentence model p(t|c_s)", **_GAMMA)
    window: int = param(1, _WINDOW_HELP, **_WINDOW)

    def check(self) -> None:
        ThreeMMParams(lam=self.lam, gamma=self.gamma)

    def as_3mm(self) -> ThreeMMParams:
        """3MMPDS is 3MM with the window context and log p(d|s) (Doko et al., IP&M 2015, eq. 7)."""
        return ThreeMMParams(lam=self.lam, gamma=self.gamma, context="window", window=self.window, importance=True)
