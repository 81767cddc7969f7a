"""BM25's and BM25F's parameters and term formulas (Fernández et al., Inf. Retr. 2011, §3.5;
Blanco & Zaragoza, SIGIR 2010, §5.1).

Each formula is defined once and serves both the scorers (arrays over postings) and explain
(scalars for one sentence). BM25 is BM25F with the sentence as its one field: both saturate a
pseudo-frequency x̃ = Σ_f w_f·c(t,f_s)/B_f(s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sentret_core.models.core.params import Params, Preset, Range, grid_range, param

_K1: Preset = Preset(symbol="k_1", min=0.0, max=10.0, step=0.01, grid=grid_range(1.0, 2.0, 0.1))
_B: Preset = Preset(symbol="b", min=0.0, max=1.0, step=0.01, grid=grid_range(0.0, 1.0, 0.1))
_K3: Preset = Preset(symbol="k_3", min=0.0, max=1000.0, step=1.0, grid=(0.0, 1.0, 10.0, 100.0, 1000.0))
_IDF: Range = Range(choices=("rsj", "lucene"))
_W: Range = Range(min=0.0, max=10.0, step=0.01, grid=grid_range(0.0, 1.0, 0.1))
_BF: Range = Range(min=0.0, max=1.0, step=0.01, grid=grid_range(0.0, 1.0, 0.1), nullable=True)


@dataclass(frozen=True)
class BM25Params(Params):
    k1: float = param(1.2, "term-frequency saturation (0: binary match)", **_K1)
    b: float = param(0.75, "sentence-length normalisation (0: none, 1: full)", **_B)
    k3: float = param(
        0.0,
        "query-term-frequency saturation (0: repeated query terms count once)",
        **_K3,
    )
    idf: str = param(
        "rsj",
        "idf variant: 'rsj' log((N-sf+0.5)/(sf+0.5)) as in the paper (negative above N/2), "
        "'lucene' log(1+(N-sf+0.5)/(sf+0.5))",
        **_IDF,
    )


@dataclass(frozen=True)
class BM25FParams(Params):
    k1: float = param(0.26, "term-frequency saturation of the combined pseudo-frequency", **_K1)
    b: float = param(0.15, "length normalisation tied across fields (Blanco & Zaragoza)", **_B)
    w_context: float = param(
        0.23,
        "weight of the context field (the ±window sentences around s)",
        symbol="w_{context}",
        **_W,
    )
    w_title: float = param(
        0.23,
        "weight of the title field (the document's title)",
        symbol="w_{title}",
        **_W,
    )
    window: int = param(
        2,
        "context field: this many sentences before and after s in its document",
        symbol="w",
        min=1,
        max=10,
        step=1,
        grid=(1, 2, 3, 4, 5),
    )
    b_sentence: float | None = param(
        None,
        "b of the sentence field (None: the tied b)",
        symbol="b_{sentence}",
        **_BF,
    )
    b_context: float | None = param(
        None,
        "b of the context field (None: the tied b)",
        symbol="b_{context}",
        **_BF,
    )
    b_title: float | None = param(
        None,
        "b of the title field (None: the tied b)",
        symbol="b_{title}",
        **_BF,
    )
    k3: float = param(0.0, "query-term-frequency saturation (0: repeats count once)", **_K3)
    idf: str = param("rsj", "idf variant over sentences: 'rsj' or 'lucene'", **_IDF)

    def field_b(self) -> tuple[float, float, float]:
        b = self.b
        return (
            b if self.b_sentence is None else self.b_sentence,
            b if self.b_context is None else self.b_context,
            b if self.b_title is None else self.b_title,
        )


def idf_of(n: int, sf: Any, variant: str) -> Any:
    """idf(t) = log((N-sf+0.5)/(sf+0.5)) ("rsj", < 0 when sf > N/2) or log(1 + that ratio) ("lucene")."""
    ratio = (n - sf + 0.5) / (sf + 0.5)
    return np.log1p(ratio) if variant == "lucene" else np.log(ratio)


def length_norm(length: Any, avg: float, b: float) -> Any:
    """B_f(s) = (1-b) + b·len_f(s)/avglen_f (the ratio is 0 when avglen_f = 0)."""
    return (1.0 - b) + b * (length / avg if avg > 0 else length * 0.0)


def saturation(x: Any, k: Any, k1: float, weight: float = 1.0) -> Any:
    """weight · (k1+1)·x / (k+x): the term-frequency part, with k = k1·B(s) for BM25's raw count
    x = c(t,s), and k = k1 for BM25F's length-normalised x̃ (k1 = 0: 1 where x > 0, a binary match)."""
    if k1 == 0:
        return weight * np.greater(x, 0)
    return (weight * (k1 + 1.0)) * x / (k + x)


def query_factor(qf: Any, k3: float) -> Any:
    """(k3+1)·c(t,q) / (k3+c(t,q)) (of one term, or of an array of them element by element)."""
    return (k3 + 1.0) * qf / (k3 + qf)
