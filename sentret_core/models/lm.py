"""Query-likelihood language models for sentences (SPEC "Sentence scorers"; seed 000 §3, seed 003 eq. 7-8).

score(s) = Σ_{t∈q} c(t,q) · log p(t|θ_s)  [+ log p(d|s) with ``importance``], where

=====  =====================================================================
JM     (1-λ)·p(t|s) + λ·p(t)
DIR    (c(t,s) + μ·p(t)) / (|s| + μ)
3MM    λ·p(t|s) + γ·p(t|l) + (1-λ-γ)·p(t)
2S     (1-λ)·(c(t,s) + μ·p(t|l)) / (|s| + μ) + λ·p(t)
2S-I   (1-β)·((1-λ)·p(t|s) + λ·p(t|l)) + β·p(t),   β = μ/(|s|+μ)
=====  =====================================================================

p(t) = c(t,C)/|C| is the collection model, p(t|s) = c(t,s)/|s| the sentence model and p(t|l) the
local model: the document (``context="document"``, p(t|d) = c(t,d)/|d|) or the surrounding
sentences (``context="window"``, p(t|c_s) = counts over the ``window`` sentences before and after
s, s included; seed 000 §4.1.1 uses window = 1).

log p(d|s) = Σ_{t∈s} c(t,s)·(log p(t|d) − log p(t)) (seed 000 eq. 5-7, p(d) uniform and dropped),
always with the document model (seed 003 eq. 8), precomputed once per index.
3MMPDS (seed 003 eq. 7) = 3MM with the window context plus log p(d|s).

Readings and conventions:

* a query term unseen in the collection (c(t,C) = 0: out of vocabulary, or only in titles) is
  skipped, so no score is -inf because of it (SPEC);
* the maximum-likelihood model of an empty text (a sentence, window or document with no terms)
  is the collection model p(t) — the limit of Dirichlet smoothing as the length goes to 0 — so
  every p(t|θ_s) sums to 1 over the vocabulary; likewise a Dirichlet denominator |s|+μ = 0
  (μ = 0 and an empty sentence) gives all weight to the model it smooths with;
* the parameter ranges include the unsmoothed edges the papers allow (λ = 0 in JM, λ+γ = 1 in
  3MM, μ = 0): there a candidate lacking a query term has probability 0 and scores -inf;
* candidates are the sentences containing a query term, plus, for the local-context models
  when the local model carries weight (3MM γ > 0, 2S μ > 0 and λ < 1, 2S-I λ > 0), the
  sentences whose window or document contains one; JM and DIR have no local model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.models.data import (
    EMPTY_IDS,
    EMPTY_SCORES,
    Query,
    cached,
    cached_lru,
    collection_model,
    context_len,
    context_postings,
    doc_len,
    doc_postings,
    expand_ranges,
    gather,
    layout,
    postings,
    sentence_doc_matrix,
    union,
)
from sentret_core.models.params import Params, grid_range, param
from sentret_core.models.spec import Explained, ModelSpec
from sentret_core.models.tfisf import PAPER_000, PAPER_003, neighbour

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

MU_GRID = (1.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0)
_LAM = dict(symbol=r"\lambda", min=0.0, max=1.0, step=0.05, grid=grid_range(0.1, 0.9, 0.1))
_GAMMA = dict(symbol=r"\gamma", min=0.0, max=1.0, step=0.05, grid=grid_range(0.1, 0.9, 0.1))
_MU = dict(symbol=r"\mu", min=0.0, max=1e6, step=1.0, grid=MU_GRID)
_CONTEXT = dict(choices=("document", "window"))
_WINDOW = dict(symbol="w", min=1, max=10, step=1, grid=(1, 2, 3))
_IMPORTANCE = "add log p(d|s), the sentence's importance in its document (seed 000 §3.3)"
_CONTEXT_HELP = "local model: the whole document, or the window of surrounding sentences"
_WINDOW_HELP = "window context: this many sentences before and after s (s included); seed 000 uses 1"


# Defaults: λ = 0.5 and μ = 100 are the values of seed 000's worked example (Fig. 4); the
# optimal settings of its Tables 2 and 4 did not survive the text extraction. 3MM's γ = 0.3
# leaves the collection 0.2 (no published value survives either).


@dataclass(frozen=True)
class JMParams(Params):
    lam: float = param(0.5, "weight of the collection model p(t) (0: unsmoothed)", **_LAM)  # type: ignore[arg-type]
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")


@dataclass(frozen=True)
class DirParams(Params):
    mu: float = param(100.0, "Dirichlet prior: pseudo-count of the collection model", **_MU)  # type: ignore[arg-type]
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")


@dataclass(frozen=True)
class LocalParams(Params):
    """Shared by the local-context models (the first fields differ per model)."""

    def local_weighted(self) -> bool:
        raise NotImplementedError


@dataclass(frozen=True)
class ThreeMMParams(LocalParams):
    lam: float = param(0.5, "weight of the sentence model p(t|s)", **_LAM)  # type: ignore[arg-type]
    gamma: float = param(0.3, "weight of the local model p(t|d) or p(t|c_s)", **_GAMMA)  # type: ignore[arg-type]
    context: str = param("document", _CONTEXT_HELP, **_CONTEXT)  # type: ignore[arg-type]
    window: int = param(1, _WINDOW_HELP, **_WINDOW)  # type: ignore[arg-type]
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")

    def check(self) -> None:
        if self.lam + self.gamma > 1.0 + 1e-12:
            raise SentretError(
                f"parameters 'lam' + 'gamma' = {self.lam:g} + {self.gamma:g} exceed 1; "
                "they are mixture weights and the collection model gets 1 - lam - gamma"
            )

    def local_weighted(self) -> bool:
        return self.gamma > 0


@dataclass(frozen=True)
class TwoStageParams(LocalParams):
    lam: float = param(0.5, "weight of the collection model p(t) (the JM stage)", **_LAM)  # type: ignore[arg-type]
    mu: float = param(100.0, "Dirichlet prior of the local model (the first stage)", **_MU)  # type: ignore[arg-type]
    context: str = param("document", _CONTEXT_HELP, **_CONTEXT)  # type: ignore[arg-type]
    window: int = param(1, _WINDOW_HELP, **_WINDOW)  # type: ignore[arg-type]
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")

    def local_weighted(self) -> bool:
        return self.mu > 0 and self.lam < 1


@dataclass(frozen=True)
class TwoStageInvParams(LocalParams):
    lam: float = param(0.5, "weight of the local model against the sentence model (the JM stage)", **_LAM)  # type: ignore[arg-type]
    mu: float = param(100.0, "Dirichlet prior of the collection model (the second stage)", **_MU)  # type: ignore[arg-type]
    context: str = param("document", _CONTEXT_HELP, **_CONTEXT)  # type: ignore[arg-type]
    window: int = param(1, _WINDOW_HELP, **_WINDOW)  # type: ignore[arg-type]
    importance: bool = param(False, _IMPORTANCE, symbol="p(d|s)")

    def local_weighted(self) -> bool:
        return self.lam > 0


@dataclass(frozen=True)
class ThreeMMPDSParams(Params):
    lam: float = param(0.5, "weight of the sentence model p(t|s)", **_LAM)  # type: ignore[arg-type]
    gamma: float = param(0.3, "weight of the surrounding-sentence model p(t|c_s)", **_GAMMA)  # type: ignore[arg-type]
    window: int = param(1, _WINDOW_HELP, **_WINDOW)  # type: ignore[arg-type]

    def check(self) -> None:
        ThreeMMParams(lam=self.lam, gamma=self.gamma)

    def as_3mm(self) -> ThreeMMParams:
        return ThreeMMParams(
            lam=self.lam, gamma=self.gamma, context="window", window=self.window, importance=True
        )


# --- the mixtures: one definition, used by the scorers, explain and the distributions --------

Components = list[tuple[str, np.ndarray]]


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def jm(p: JMParams, c_s: np.ndarray, n_s: np.ndarray, p_s: np.ndarray, p_l: Any, p_c: Any) -> Components:
    return [("(1-λ)·p(t|s)", (1 - p.lam) * p_s), ("λ·p(t)", p.lam * p_c)]


def dirichlet(
    p: DirParams, c_s: np.ndarray, n_s: np.ndarray, p_s: np.ndarray, p_l: Any, p_c: Any
) -> Components:
    den = n_s + p.mu
    return [
        ("c(t,s)/(|s|+μ)", _div(c_s, den)),
        ("μ·p(t)/(|s|+μ)", np.where(den > 0, _div(p.mu * p_c, den), p_c)),
    ]


def three_mm(
    p: ThreeMMParams, c_s: np.ndarray, n_s: np.ndarray, p_s: np.ndarray, p_l: Any, p_c: Any
) -> Components:
    return [
        ("λ·p(t|s)", p.lam * p_s),
        ("γ·p(t|l)", p.gamma * p_l),
        ("(1-λ-γ)·p(t)", max(1 - p.lam - p.gamma, 0.0) * p_c),
    ]


def two_stage(
    p: TwoStageParams, c_s: np.ndarray, n_s: np.ndarray, p_s: np.ndarray, p_l: Any, p_c: Any
) -> Components:
    den = n_s + p.mu
    return [
        ("(1-λ)·c(t,s)/(|s|+μ)", (1 - p.lam) * _div(c_s, den)),
        ("(1-λ)·μ·p(t|l)/(|s|+μ)", (1 - p.lam) * np.where(den > 0, _div(p.mu * p_l, den), p_l)),
        ("λ·p(t)", p.lam * p_c),
    ]


def two_stage_inv(
    p: TwoStageInvParams, c_s: np.ndarray, n_s: np.ndarray, p_s: np.ndarray, p_l: Any, p_c: Any
) -> Components:
    den = n_s + p.mu
    beta = np.where(den > 0, _div(np.full(den.shape, p.mu), den), 1.0)
    return [
        ("(1-β)(1-λ)·p(t|s)", (1 - beta) * (1 - p.lam) * p_s),
        ("(1-β)·λ·p(t|l)", (1 - beta) * p.lam * p_l),
        ("β·p(t)", beta * p_c),
    ]


Mixture = Callable[..., Components]


def probability(components: Components) -> np.ndarray:
    total = components[0][1]
    for _, part in components[1:]:
        total = total + part
    return total


# --- query-independent pieces ------------------------------------------------------------


def local_len(index: Index, context: str, window: int) -> np.ndarray:
    """|l(s)|: the length of every sentence's document, or of its window (s included)."""
    if context == "document":
        return cached(index, "models.lm.doclen_s", lambda: doc_len(index)[layout(index).sent_doc])
    return cached(
        index,
        f"models.lm.windowlen/{window}",
        lambda: context_len(index, window) + layout(index).sent_len,
    )


def log_pds(index: Index) -> np.ndarray:
    """log p(d|s) = Σ_{t∈s} c(t,s)·(log p(t|d) − log p(t)) for every sentence."""

    def build() -> np.ndarray:
        X = index.X
        lay = layout(index)
        if X.nnz == 0:
            return np.zeros(index.N)
        Xd = (sentence_doc_matrix(index) @ X).tocsr()
        Xd.sort_indices()
        V = np.int64(index.V)
        d_rows = np.repeat(np.arange(Xd.shape[0], dtype=np.int64), np.diff(Xd.indptr))
        d_keys = d_rows * V + Xd.indices
        s_rows = np.repeat(np.arange(index.N, dtype=np.int64), np.diff(X.indptr))
        cols = np.asarray(X.indices, dtype=np.int64)
        s_keys = lay.sent_doc[s_rows].astype(np.int64) * V + cols
        c_td = np.asarray(Xd.data, dtype=np.float64)[np.searchsorted(d_keys, s_keys)]
        p_td = c_td / doc_len(index)[lay.sent_doc[s_rows]]
        p_t = collection_model(index)[cols]
        c = np.asarray(X.data, dtype=np.float64)
        return np.bincount(s_rows, weights=c * (np.log(p_td) - np.log(p_t)), minlength=index.N)

    return cached(index, "models.lm.log_pds", build)


# --- scoring -----------------------------------------------------------------------------
#
# Every mixture above is linear in (c(t,s), c(t,l), p(t)) once the sentence is fixed:
#     p(t|θ_s) = a(s)·c(t,s) + g(s)·c(t,l(s)) + h(s)·p(t)
# with coefficients from |s|, |l| and the parameters, computed once per parameter setting
# for every sentence; a query gathers them at its candidates, then each term costs a scatter
# of its postings and three multiply-adds. The per-model coefficients below are checked
# against the mixtures by the explain-equals-score tests (explain evaluates the mixtures).


class Lengths(NamedTuple):
    inv_s: np.ndarray  # 1/|s| (0 for an empty sentence) of every sentence
    empty_s: np.ndarray  # 1.0 for an empty sentence
    n_s: np.ndarray  # |s|
    inv_l: Any  # 1/|l| (local models; 0.0 otherwise)
    empty_l: Any


Coefficients = tuple[Any, Any, Any]  # a, g, h: arrays over all sentences (g may be the scalar 0)


def _safe_inverse(den: np.ndarray) -> np.ndarray:
    out = np.zeros(len(den))
    np.divide(1.0, den, out=out, where=den > 0)
    return out


def coef_jm(p: JMParams, x: Lengths) -> Coefficients:
    return (1 - p.lam) * x.inv_s, 0.0, p.lam + (1 - p.lam) * x.empty_s


def coef_dir(p: DirParams, x: Lengths) -> Coefficients:
    den = x.n_s + p.mu
    inv = _safe_inverse(den)
    return inv, 0.0, np.where(den > 0, p.mu * inv, 1.0)


def coef_3mm(p: ThreeMMParams, x: Lengths) -> Coefficients:
    rest = max(1 - p.lam - p.gamma, 0.0)
    return p.lam * x.inv_s, p.gamma * x.inv_l, rest + p.lam * x.empty_s + p.gamma * x.empty_l


def coef_2s(p: TwoStageParams, x: Lengths) -> Coefficients:
    den = x.n_s + p.mu
    inv = _safe_inverse(den)
    local = (1 - p.lam) * np.where(den > 0, p.mu * inv, 1.0)  # weight of p(t|l)
    return (1 - p.lam) * inv, local * x.inv_l, p.lam + local * x.empty_l


def coef_2si(p: TwoStageInvParams, x: Lengths) -> Coefficients:
    den = x.n_s + p.mu
    beta = np.where(den > 0, p.mu * _safe_inverse(den), 1.0)
    keep = 1 - beta
    return (
        keep * (1 - p.lam) * x.inv_s,
        keep * p.lam * x.inv_l,
        beta + keep * ((1 - p.lam) * x.empty_s + p.lam * x.empty_l),
    )


@dataclass(frozen=True)
class Variant:
    mixture: Mixture
    coefficients: Callable[[Any, Lengths], Coefficients]
    local: bool  # has a local model (p(t|d) or p(t|c_s))


def _inverse_lengths(index: Index, key: str, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    def build() -> tuple[np.ndarray, np.ndarray]:
        return _safe_inverse(lengths), (lengths <= 0).astype(np.float64)

    return cached(index, key, build)


def coefficients(index: Index, p: Any, variant: Variant) -> np.ndarray:
    """N×3: (a, g, h) of every sentence for these parameters (the last few settings are kept)."""

    def build() -> np.ndarray:
        lay = layout(index)
        inv_s, empty_s = _inverse_lengths(index, "models.lm.inv_s", lay.sent_len)
        inv_l: Any = 0.0
        empty_l: Any = 0.0
        if variant.local:
            window = getattr(p, "window", 1)
            inv_l, empty_l = _inverse_lengths(
                index, f"models.lm.inv_l/{p.context}/{window}", local_len(index, p.context, window)
            )
        a, g, h = variant.coefficients(p, Lengths(inv_s, empty_s, lay.sent_len, inv_l, empty_l))
        out = np.empty((index.N, 3))
        out[:, 0], out[:, 1], out[:, 2] = a, g, h
        return out

    return cached_lru(index, "models.lm.coefficients", (variant.coefficients, p), build)


def lm_scores(index: Index, q: Query, p: Any, variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    lay = layout(index)
    post = postings(index)
    pc_all = collection_model(index)
    use = [(t, qf) for t, qf in zip(q.ids, q.qtf) if pc_all[t] > 0]
    if not use:
        return EMPTY_IDS, EMPTY_SCORES
    local = variant.local
    window = getattr(p, "window", 1)
    by_doc = local and p.context == "document"
    reach = local and p.local_weighted()
    sent = [post(t) for t, _ in use]
    if by_doc:
        # candidates: every sentence of a document containing a query term (documents are
        # contiguous runs of sentences, so these come out sorted and distinct)
        docs = doc_postings(index)
        dterm = [docs(t) for t, _ in use]
        doc_ids = union([d for d, _ in dterm])
        if reach:
            first = lay.doc_first.take(doc_ids)
            nsent = lay.doc_nsent.take(doc_ids)
            cand = expand_ranges(first, first + nsent)
        else:
            cand = union([r for r, _ in sent])
            cand_doc = np.searchsorted(doc_ids, lay.sent_doc.take(cand))
    elif local:
        ctx = context_postings(index, window, include_self=True)
        cterm = [ctx(t) for t, _ in use]
        cand = union([r for r, _ in (cterm if reach else sent)])
    else:
        cand = union([r for r, _ in sent])
    n = len(cand)
    if n == 0:
        return EMPTY_IDS, EMPTY_SCORES
    agh = coefficients(index, p, variant).take(cand, axis=0)
    a, g, h = agh[:, 0], agh[:, 1], agh[:, 2]
    total = np.zeros(n)
    with np.errstate(divide="ignore"):
        for i, (t, qf) in enumerate(use):
            prob = h * float(pc_all[t])
            r, c = sent[i]
            pos = np.searchsorted(cand, r)
            prob[pos] += c * a.take(pos)
            if local:
                if by_doc:
                    d, dc = dterm[i]
                    per_doc = np.zeros(len(doc_ids))
                    per_doc[np.searchsorted(doc_ids, d)] = dc
                    prob += (np.repeat(per_doc, nsent) if reach else per_doc.take(cand_doc)) * g
                elif reach:
                    r, c = cterm[i]
                    pos = np.searchsorted(cand, r)
                    prob[pos] += c * g.take(pos)
                else:  # the window reaches sentences that are not candidates
                    prob += gather(*cterm[i], cand) * g
            logp = np.log(prob, out=prob)
            total += logp if qf == 1.0 else qf * logp
    if getattr(p, "importance", False):
        total += log_pds(index)[cand]
    return cand, total


# --- per-sentence inputs (row lookups, independent of the postings path) ---------------------


def _row(matrix: Any, row: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = int(matrix.indptr[row]), int(matrix.indptr[row + 1])
    return np.asarray(matrix.indices[lo:hi]), np.asarray(matrix.data[lo:hi], dtype=np.float64)


def _dense_counts(index: Index, sentences: list[int]) -> np.ndarray:
    out = np.zeros(index.V)
    for s in sentences:
        cols, data = _row(index.X, s)
        np.add.at(out, cols, data)
    return out


def _window_sentences(index: Index, sentence: int, window: int) -> list[int]:
    around = [neighbour(index, sentence, o) for o in range(-window, window + 1)]
    return [s for s in around if s >= 0]


def _local_dense(index: Index, sentence: int, context: str, window: int) -> np.ndarray:
    if context == "window":
        return _dense_counts(index, _window_sentences(index, sentence, window))
    doc = int(index.sent_doc[sentence])
    first, count = int(index.doc_first[doc]), int(index.doc_nsent[doc])
    return _dense_counts(index, list(range(first, first + count)))


def _ml(counts: np.ndarray, length: float, p_c: np.ndarray) -> np.ndarray:
    return counts / length if length > 0 else p_c


def sentence_inputs(index: Index, sentence: int, p: Any, variant: Variant) -> dict[str, Any]:
    """c(t,s), |s|, p(t|s), p(t|l), p(t) over the whole vocabulary for one sentence."""
    p_c = collection_model(index)
    c_s = _dense_counts(index, [sentence])
    n_s = float(c_s.sum())
    out: dict[str, Any] = {"c_s": c_s, "n_s": n_s, "p_s": _ml(c_s, n_s, p_c), "p_c": p_c}
    if variant.local:
        c_l = _local_dense(index, sentence, p.context, p.window)
        n_l = float(c_l.sum())
        out.update(c_l=c_l, n_l=n_l, p_l=_ml(c_l, n_l, p_c))
    else:
        out["p_l"] = np.zeros(index.V)
    return out


def make_distribution(variant: Variant) -> Callable[[Index, int, Any], np.ndarray]:
    def distribution(index: Index, sentence: int, p: Any) -> np.ndarray:
        """p(t|θ_s) over the whole vocabulary (sums to 1)."""
        if isinstance(p, ThreeMMPDSParams):
            p = p.as_3mm()
        x = sentence_inputs(index, sentence, p, variant)
        n_s = np.full(index.V, x["n_s"])
        return probability(variant.mixture(p, x["c_s"], n_s, x["p_s"], x["p_l"], x["p_c"]))

    return distribution


def make_explainer(variant: Variant) -> Callable[[Index, Query, int, Any], Explained]:
    def explain(index: Index, q: Query, sentence: int, p: Any) -> Explained:
        if isinstance(p, ThreeMMPDSParams):
            p = p.as_3mm()
        x = sentence_inputs(index, sentence, p, variant)
        rows = []
        columns: dict[str, None] = {}
        for term, t, qf in zip(q.unique, q.ids, q.qtf):
            if x["p_c"][t] <= 0:
                continue  # unseen in the collection: skipped
            comps = variant.mixture(
                p,
                x["c_s"][t : t + 1],
                np.array([x["n_s"]]),
                x["p_s"][t : t + 1],
                x["p_l"][t : t + 1],
                x["p_c"][t : t + 1],
            )
            prob = float(probability(comps)[0])
            row: dict[str, Any] = {"term": term, "c(t,q)": qf, "c(t,s)": float(x["c_s"][t]), "|s|": x["n_s"]}
            row["p(t|s)"] = float(x["p_s"][t])
            if variant.local:
                row["c(t,l)"] = float(x["c_l"][t])
                row["|l|"] = x["n_l"]
                row["p(t|l)"] = float(x["p_l"][t])
            row["p(t)"] = float(x["p_c"][t])
            for name, value in comps:
                row[name] = float(np.asarray(value).ravel()[0])
            row["p(t|θ)"] = prob
            row["log p(t|θ)"] = math.log(prob) if prob > 0 else -math.inf
            row["contribution"] = qf * row["log p(t|θ)"]
            rows.append(row)
            columns.update(dict.fromkeys(row))
        extra = {}
        notes: dict[str, float] = {}
        if getattr(p, "importance", False):
            extra["log p(d|s)"] = _log_pds_of(index, sentence)
        if variant.local:
            notes["|l|"] = x["n_l"]
        notes["|s|"] = x["n_s"]
        if variant.local:  # name the local model by what it is: the document or the window
            sym = "d" if p.context == "document" else "c_s"
            rows = [{_local_name(k, sym): v for k, v in row.items()} for row in rows]
            columns = {_local_name(k, sym): None for k in columns}
            notes = {_local_name(k, sym): v for k, v in notes.items()}
        return Explained(tuple(columns) or ("term", "contribution"), rows, extra, notes)

    return explain


def _local_name(name: str, sym: str) -> str:
    return name.replace("|l)", f"|{sym})").replace("(t,l)", f"(t,{sym})").replace("|l|", f"|{sym}|")


def _log_pds_of(index: Index, sentence: int) -> float:
    """log p(d|s) of one sentence from its own and its document's rows."""
    doc = int(index.sent_doc[sentence])
    first, count = int(index.doc_first[doc]), int(index.doc_nsent[doc])
    doc_counts = _dense_counts(index, list(range(first, first + count)))
    n_d = doc_counts.sum()
    p_c = collection_model(index)
    cols, data = _row(index.X, sentence)
    return float(sum(c * (math.log(doc_counts[t] / n_d) - math.log(p_c[t])) for t, c in zip(cols, data)))


# --- registry entries --------------------------------------------------------------------

JM = Variant(jm, coef_jm, local=False)
DIR = Variant(dirichlet, coef_dir, local=False)
THREE_MM = Variant(three_mm, coef_3mm, local=True)
TWO_STAGE = Variant(two_stage, coef_2s, local=True)
TWO_STAGE_INV = Variant(two_stage_inv, coef_2si, local=True)


def score_jm(index: Index, q: Query, p: JMParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, JM)


def score_dir(index: Index, q: Query, p: DirParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, DIR)


def score_3mm(index: Index, q: Query, p: ThreeMMParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, THREE_MM)


def score_2s(index: Index, q: Query, p: TwoStageParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, TWO_STAGE)


def score_2si(index: Index, q: Query, p: TwoStageInvParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, TWO_STAGE_INV)


@lru_cache(maxsize=256)
def _as_3mm(p: ThreeMMPDSParams) -> ThreeMMParams:
    return p.as_3mm()


def score_3mmpds(index: Index, q: Query, p: ThreeMMPDSParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, _as_3mm(p), THREE_MM)


_QL = r"\sum_{t\in q}c(t,q)\log"
_PDS = r"\;[+\log p(d|s)]"
PDS_DEF = r"\log p(d|s)=\sum_{t\in s}c(t,s)\left(\log p(t|d)-\log p(t)\right)"

SPECS = [
    ModelSpec(
        "lm-jm.v1",
        "LM, Jelinek-Mercer",
        "lm",
        JMParams,
        score_jm,
        make_explainer(JM),
        _QL + r"\left[(1-\lambda)p(t|s)+\lambda p(t)\right]" + _PDS,
        f"{PAPER_000} eq. 2",
        "query likelihood, sentence model interpolated with the collection",
        make_distribution(JM),
    ),
    ModelSpec(
        "lm-dir.v1",
        "LM, Dirichlet",
        "lm",
        DirParams,
        score_dir,
        make_explainer(DIR),
        _QL + r"\frac{c(t,s)+\mu p(t)}{|s|+\mu}" + _PDS,
        f"{PAPER_000} eq. 3",
        "query likelihood with Dirichlet smoothing from the collection",
        make_distribution(DIR),
    ),
    ModelSpec(
        "lm-3mm.v1",
        "LM, three-mixture (3MM)",
        "lm",
        ThreeMMParams,
        score_3mm,
        make_explainer(THREE_MM),
        _QL + r"\left[\lambda p(t|s)+\gamma p(t|d)+(1-\lambda-\gamma)p(t)\right]" + _PDS,
        f"{PAPER_000} eq. 9 (Murdock 2006)",
        "sentence, local (document or window) and collection models mixed",
        make_distribution(THREE_MM),
    ),
    ModelSpec(
        "lm-2s.v1",
        "LM, two-stage (2S)",
        "lm",
        TwoStageParams,
        score_2s,
        make_explainer(TWO_STAGE),
        _QL + r"\left[(1-\lambda)\frac{c(t,s)+\mu p(t|d)}{|s|+\mu}+\lambda p(t)\right]" + _PDS,
        f"{PAPER_000} eq. 10",
        "Dirichlet smoothing with the local model, then interpolation with the collection",
        make_distribution(TWO_STAGE),
    ),
    ModelSpec(
        "lm-2si.v1",
        "LM, two-stage inverted (2S-I)",
        "lm",
        TwoStageInvParams,
        score_2si,
        make_explainer(TWO_STAGE_INV),
        _QL + r"\left[(1-\beta)\left((1-\lambda)p(t|s)+\lambda p(t|d)\right)+\beta p(t)\right],"
        r"\;\beta=\frac{\mu}{|s|+\mu}" + _PDS,
        f"{PAPER_000} eq. 11",
        "interpolation with the local model, then Dirichlet smoothing with the collection",
        make_distribution(TWO_STAGE_INV),
    ),
    ModelSpec(
        "lm-3mmpds.v1",
        "3MMPDS (3MM, window context, p(d|s))",
        "lm",
        ThreeMMPDSParams,
        score_3mmpds,
        make_explainer(THREE_MM),
        r"\log p(d|s)+"
        + _QL
        + r"\left[\lambda p(t|s)+\gamma p(t|c_s)+(1-\lambda-\gamma)p(t)\right],\;"
        + PDS_DEF,
        f"{PAPER_003} eq. 7-8; {PAPER_000}",
        "3MM over the surrounding sentences, plus the sentence's importance",
        make_distribution(THREE_MM),
    ),
]
