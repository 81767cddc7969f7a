"""TF-ISF's parameters and term formulas (Doko et al., IP&M 2015, eq. 1-6).

Each formula is defined once and serves both the scorers (over postings, arrays) and explain
(over one sentence's row, scalars).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays.layout import layout
from sentret_core.models.core.params import Params, Preset, grid_range, param

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

_ALPHA: Preset = Preset(symbol=r"\alpha", min=0.0, max=1.0, step=0.05, grid=grid_range(0.0, 1.0, 0.1))
_MU: Preset = Preset(symbol=r"\mu", min=0.0, max=1.0, step=0.05, grid=grid_range(0.0, 1.0, 0.05))
_DEPTH: Preset = Preset(symbol="L", min=0, max=10, step=1, grid=(1, 2, 3, 4, 5))


@dataclass(frozen=True)
class TfMixParams(Params):
    alpha: float = param(
        0.7,
        "weight of the sentence's own count c(t,s) against its ±1-sentence context count "
        "(Doko et al. 2013 tuned 0.6-0.85; α = 1 is TF-ISF)",
        **_ALPHA,
    )


@dataclass(frozen=True)
class TfIsfConParams(Params):
    mu: float = param(
        0.2,
        "weight of the neighbours' recursive relevance (published optimum 0.1-0.2; μ ≥ 0.5 hurts P@k)",
        **_MU,
    )
    depth: int = param(
        3,
        "recursion depth L: sentences up to L away in the document contribute",
        **_DEPTH,
    )


def inverse_frequency(n: Any, freq: Any) -> Any:
    """log((N+1)/(0.5+sf(t))) — or log((D+1)/(0.5+df(t))) for idfdoc (Fernández et al. 2011, §3.5, §4.2.3 (b))."""
    return np.log((n + 1) / (0.5 + freq))


def mixed_count(alpha: float, c: Any, c_ctx: Any) -> Any:
    """tfmix's count α·c(t,s) + (1-α)·c(t,ctx), ctx = prev(s)+s+next(s) (Doko et al., IP&M 2015, eq. 6)."""
    return alpha * c + (1.0 - alpha) * c_ctx


def term_score(qf: float, weight: float, tf: Any) -> Any:
    """One term's addend of R(s|q): log(c(t,q)+1) · log(tf+1) · isf(t) (Doko et al., IP&M 2015, eq. 1)."""
    return (math.log(qf + 1.0) * weight) * np.log1p(tf)


def isf(index: Index, doc_level: bool = False) -> np.ndarray:
    """:func:`inverse_frequency` of every term, over sentences (or documents for idfdoc)."""
    if doc_level:
        return index.cache.get(
            "models.idfdoc", lambda: inverse_frequency(index.D, np.asarray(index.df, dtype=np.float64))
        )
    return index.cache.get("models.isf", lambda: inverse_frequency(index.N, np.asarray(index.sf, dtype=np.float64)))


def length_factor(index: Index) -> np.ndarray:
    """|s| / avgSentLen(d(s)) of every sentence, 0 where the document has no terms (Doko et al., IP&M 2015, eq. 4)."""

    def build() -> np.ndarray:
        lay = layout(index)
        avg = np.asarray(index.doc_avsl, dtype=np.float64)[lay.sent_doc] if index.N else np.zeros(0)
        out = np.zeros(index.N)
        np.divide(lay.sent_len, avg, out=out, where=avg > 0)
        return out

    return index.cache.get("models.length_factor", build)
