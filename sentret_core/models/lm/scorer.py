"""Query-likelihood language models for sentences (Fernández et al., Inf. Retr. 2011, §3;
Doko et al., IP&M 2015, eq. 7-8).

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
s, s included; Fernández et al. §4.1.1 use window = 1).

log p(d|s) = Σ_{t∈s} c(t,s)·(log p(t|d) − log p(t)) (Fernández et al. eq. 5-7, p(d) uniform and dropped),
always with the document model (Doko et al., IP&M 2015, eq. 8), precomputed once per index.
3MMPDS (Doko et al. eq. 7) = 3MM with the window context plus log p(d|s).

Readings and conventions:

* a query term unseen in the collection (c(t,C) = 0: out of vocabulary, or only in titles) is
  skipped, so no score is -inf because of it (docs/spec.md);
* the maximum-likelihood model of an empty text (a sentence, window or document with no terms)
  is the collection model p(t) — the limit of Dirichlet smoothing as the length goes to 0 — so
  every p(t|θ_s) sums to 1 over the vocabulary; likewise a Dirichlet denominator |s|+μ = 0
  (μ = 0 and an empty sentence) gives all weight to the model it smooths with;
* the parameter ranges exclude the unsmoothed edges where a candidate lacking a query term would
  have probability 0 and score -inf (λ = 0 in JM and in 2S's JM stage, μ = 0 in DIR and in 2S-I's
  collection stage): every score is finite, so every ranking is one; 2S's local μ may
  be 0 (its JM stage still smooths), and a positive μ is at least ``MU_MIN`` = 1e-6 (a smaller
  one is 0 for any sentence, and 1/μ overflows);
* candidates are the sentences containing a query term, plus, for the local-context models
  when the local model carries weight (3MM γ > 0, 2S μ > 0 and λ < 1, 2S-I λ > 0), the
  sentences whose window or document contains one; JM and DIR have no local model. Any other
  sentence has the finite score Σ c(t,q)·log(h(s)·p(t)) of its smoothing mass alone:
  ``search``/``score`` skip it, and a closed candidate set gets it from the registered ``closed``
  form (:func:`lm_scoring.lm_scores_at`, used by ``ModelSpec.score_at``).

This module holds each mixture (the formula, written once) and its registered scorer; the
parameters are in :mod:`lm_params`, the vectorised scoring path in :mod:`lm_scoring` and the
per-sentence explain and distributions in :mod:`lm_explain`, all evaluating these mixtures.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.core.papers import DOKO_STULA_STIPANICEV_2015, FERNANDEZ_LOSADA_AZZOPARDI_2011
from sentret_core.models.core.registry import register
from sentret_core.models.lm.explain import make_distribution, make_explainer
from sentret_core.models.lm.params import (
    DirParams,
    JMParams,
    ThreeMMParams,
    ThreeMMPDSParams,
    TwoStageInvParams,
    TwoStageParams,
)
from sentret_core.models.lm.pruning import lm_top_k
from sentret_core.models.lm.scoring import Components, Variant, closed_form, lm_scores, safe_div

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

# --- the mixtures: p(t|θ_s) as named components, one definition for the scorers, explain and the
# distributions (arguments: c(t,s), |s|, p(t|s), p(t|l), p(t); arrays or scalars) ----------------


def jm(p: JMParams, c_s: Any, n_s: np.ndarray, p_s: Any, p_l: Any, p_c: Any) -> Components:
    """Jelinek-Mercer (Fernández et al., Inf. Retr. 2011, eq. 2)."""
    return [("(1-λ)·p(t|s)", (1 - p.lam) * p_s), ("λ·p(t)", p.lam * p_c)]


def dirichlet(p: DirParams, c_s: Any, n_s: np.ndarray, p_s: Any, p_l: Any, p_c: Any) -> Components:
    """Dirichlet (Fernández et al., Inf. Retr. 2011, eq. 3); |s|+μ = 0 gives p(t)."""
    den = n_s + p.mu
    return [
        ("c(t,s)/(|s|+μ)", safe_div(c_s, den)),
        ("μ·p(t)/(|s|+μ)", np.where(den > 0, safe_div(p.mu * p_c, den), p_c)),
    ]


def three_mm(p: ThreeMMParams, c_s: Any, n_s: np.ndarray, p_s: Any, p_l: Any, p_c: Any) -> Components:
    """Three-mixture model (Fernández et al., Inf. Retr. 2011, eq. 9)."""
    return [
        ("λ·p(t|s)", p.lam * p_s),
        ("γ·p(t|l)", p.gamma * p_l),
        ("(1-λ-γ)·p(t)", max(1 - p.lam - p.gamma, 0.0) * p_c),
    ]


def two_stage(p: TwoStageParams, c_s: Any, n_s: np.ndarray, p_s: Any, p_l: Any, p_c: Any) -> Components:
    """Two-stage: Dirichlet with the local model, then JM with the collection (Fernández et al., eq. 10)."""
    den = n_s + p.mu
    return [
        ("(1-λ)·c(t,s)/(|s|+μ)", (1 - p.lam) * safe_div(c_s, den)),
        ("(1-λ)·μ·p(t|l)/(|s|+μ)", (1 - p.lam) * np.where(den > 0, safe_div(p.mu * p_l, den), p_l)),
        ("λ·p(t)", p.lam * p_c),
    ]


def two_stage_inv(p: TwoStageInvParams, c_s: Any, n_s: np.ndarray, p_s: Any, p_l: Any, p_c: Any) -> Components:
    """Two-stage inverted: JM with the local model, then Dirichlet with the collection (Fernández et al., eq. 11)."""
    den = n_s + p.mu
    beta = np.where(den > 0, safe_div(np.full(den.shape, p.mu), den), 1.0)
    return [
        ("(1-β)(1-λ)·p(t|s)", (1 - beta) * (1 - p.lam) * p_s),
        ("(1-β)·λ·p(t|l)", (1 - beta) * p.lam * p_l),
        ("β·p(t)", beta * p_c),
    ]


JM = Variant(jm, local=False)
DIR = Variant(dirichlet, local=False)
THREE_MM = Variant(three_mm, local=True)
TWO_STAGE = Variant(two_stage, local=True)
TWO_STAGE_INV = Variant(two_stage_inv, local=True)

# --- the registered scorers ----------------------------------------------------------------

_QL = r"\sum_{t\in q}c(t,q)\log"
_PDS = r"\;[+\log p(d|s)]"
PDS_DEF = r"\log p(d|s)=\sum_{t\in s}c(t,s)\left(\log p(t|d)-\log p(t)\right)"


@register(
    "lm-jm.v1",
    display_name="LM, Jelinek-Mercer",
    family="lm",
    params=JMParams,
    explainer=make_explainer(JM),
    formula=_QL + r"\left[(1-\lambda)p(t|s)+\lambda p(t)\right]" + _PDS,
    paper=f"{FERNANDEZ_LOSADA_AZZOPARDI_2011} eq. 2",
    description="query likelihood, sentence model interpolated with the collection",
    distribution=make_distribution(JM),
    closed=closed_form(JM),
    top_k=lm_top_k("lm-jm.v1", JM),
)
def score_jm(index: Index, q: Query, p: JMParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, JM)


@register(
    "lm-dir.v1",
    display_name="LM, Dirichlet",
    family="lm",
    params=DirParams,
    explainer=make_explainer(DIR),
    formula=_QL + r"\frac{c(t,s)+\mu p(t)}{|s|+\mu}" + _PDS,
    paper=f"{FERNANDEZ_LOSADA_AZZOPARDI_2011} eq. 3",
    description="query likelihood with Dirichlet smoothing from the collection",
    distribution=make_distribution(DIR),
    closed=closed_form(DIR),
    top_k=lm_top_k("lm-dir.v1", DIR),
)
def score_dir(index: Index, q: Query, p: DirParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, DIR)


@register(
    "lm-3mm.v1",
    display_name="LM, three-mixture (3MM)",
    family="lm",
    params=ThreeMMParams,
    explainer=make_explainer(THREE_MM),
    formula=_QL + r"\left[\lambda p(t|s)+\gamma p(t|d)+(1-\lambda-\gamma)p(t)\right]" + _PDS,
    paper=f"{FERNANDEZ_LOSADA_AZZOPARDI_2011} eq. 9 (Murdock 2006)",
    description="sentence, local (document or window) and collection models mixed",
    distribution=make_distribution(THREE_MM),
    closed=closed_form(THREE_MM),
    top_k=lm_top_k("lm-3mm.v1", THREE_MM),
)
def score_3mm(index: Index, q: Query, p: ThreeMMParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, THREE_MM)


@register(
    "lm-2s.v1",
    display_name="LM, two-stage (2S)",
    family="lm",
    params=TwoStageParams,
    explainer=make_explainer(TWO_STAGE),
    formula=_QL + r"\left[(1-\lambda)\frac{c(t,s)+\mu p(t|d)}{|s|+\mu}+\lambda p(t)\right]" + _PDS,
    paper=f"{FERNANDEZ_LOSADA_AZZOPARDI_2011} eq. 10",
    description="Dirichlet smoothing with the local model, then interpolation with the collection",
    distribution=make_distribution(TWO_STAGE),
    closed=closed_form(TWO_STAGE),
    top_k=lm_top_k("lm-2s.v1", TWO_STAGE),
)
def score_2s(index: Index, q: Query, p: TwoStageParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, TWO_STAGE)


@register(
    "lm-2si.v1",
    display_name="LM, two-stage inverted (2S-I)",
    family="lm",
    params=TwoStageInvParams,
    explainer=make_explainer(TWO_STAGE_INV),
    formula=_QL + r"\left[(1-\beta)\left((1-\lambda)p(t|s)+\lambda p(t|d)\right)+\beta p(t)\right],"
    r"\;\beta=\frac{\mu}{|s|+\mu}" + _PDS,
    paper=f"{FERNANDEZ_LOSADA_AZZOPARDI_2011} eq. 11",
    description="interpolation with the local model, then Dirichlet smoothing with the collection",
    distribution=make_distribution(TWO_STAGE_INV),
    closed=closed_form(TWO_STAGE_INV),
    top_k=lm_top_k("lm-2si.v1", TWO_STAGE_INV),
)
def score_2si(index: Index, q: Query, p: TwoStageInvParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, p, TWO_STAGE_INV)


@lru_cache(maxsize=256)
def _as_3mm(p: ThreeMMPDSParams) -> ThreeMMParams:
    return p.as_3mm()


@register(
    "lm-3mmpds.v1",
    display_name="3MMPDS (3MM, window context, p(d|s))",
    family="lm",
    params=ThreeMMPDSParams,
    explainer=make_explainer(THREE_MM),
    formula=r"\log p(d|s)+" + _QL + r"\left[\lambda p(t|s)+\gamma p(t|c_s)+(1-\lambda-\gamma)p(t)\right],\;" + PDS_DEF,
    paper=f"{DOKO_STULA_STIPANICEV_2015} eq. 7-8; {FERNANDEZ_LOSADA_AZZOPARDI_2011}",
    description="3MM over the surrounding sentences, plus the sentence's importance",
    distribution=make_distribution(THREE_MM),
    closed=closed_form(THREE_MM, _as_3mm),
    top_k=lm_top_k("lm-3mmpds.v1", THREE_MM, _as_3mm),
)
def score_3mmpds(index: Index, q: Query, p: ThreeMMPDSParams) -> tuple[np.ndarray, np.ndarray]:
    return lm_scores(index, q, _as_3mm(p), THREE_MM)
