"""The TF-ISF family (Fernández et al., Inf. Retr. 2011; Doko et al., IP&M 2015; Doko et al. 2013).

* TF-ISF (Allan et al. 2003; Fernández et al. §3.5; Doko et al. 2015, eq. 1)::

      R(s|q) = Σ_{t∈q∩s} log(c(t,q)+1) · log(c(t,s)+1) · log((N+1)/(0.5+sf(t)))

* tfmix (Fernández et al. §4.2.3 (a); Doko et al. 2015, eq. 6): c(t,s) → α·c(t,s) + (1-α)·c(t,ctx) with
  ctx = prev(s) + s + next(s) (Doko et al.'s reading, the surrounding-sentence context); the
  sum still runs over t ∈ q∩s, so only sentences containing a query term are candidates.
* idfdoc (Fernández et al. §4.2.3 (b)): sf(t), N → df(t), D. tfmix+idfdoc: both.
* TF-ISF_con (Doko et al. 2013, eq. 2; Doko et al. 2015, eq. 2-3), R⁰ = R and
  ``Rᴸ(s) = (1-μ)·R(s) + μ·[Rᴸ⁻¹(prev(s)) + Rᴸ⁻¹(next(s))]``, a missing neighbour giving 0.
  Reading: the papers' "three recurrences" is L = 3, which expands exactly to Doko et al. 2015, eq. 3
  when s has three neighbours on each side. At a document boundary the recursion is the
  definition (a missing neighbour's whole term is 0), which is what eq. 3 gives with the
  missing P_i, N_i *and the recursive parts through them* set to 0. Rᴸ(s) is non-zero only
  within distance L of a sentence containing a query term, so the candidates are those
  sentences (in the same document) and the recursion runs on shifts of a vector over them.
  With μ = 0 (or L = 0) it is TF-ISF and only matching sentences are candidates.
* TF-ISF_length (Doko et al. 2015, eq. 4): ``|s| / avgSentLen(d(s)) · R(s)``; TF-ISF_con,length (eq. 5):
  the same factor times Rᴸ(s). avgSentLen(d) is the mean |s| (in terms) over d's sentences;
  a document whose sentences have no terms gets factor 0.

The term formulas and parameters are in :mod:`tfisf_formulas`, the per-sentence explainers in
:mod:`tfisf_explain`; this module holds the vectorised scorers, each registered where it is defined.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sentret_core.index.neighbours import neighbourhood
from sentret_core.models.arrays.layout import layout
from sentret_core.models.arrays.vectors import scatter
from sentret_core.models.core.papers import (
    ALLAN,
    DOKO_STULA_STIPANICEV_2013,
    DOKO_STULA_STIPANICEV_2015,
    FERNANDEZ_LOSADA_AZZOPARDI_2011,
)
from sentret_core.models.core.params import NoParams
from sentret_core.models.core.registry import register
from sentret_core.models.core.spec import zero_without_a_match
from sentret_core.models.tfisf.explain import (
    explain_con,
    explain_con_length,
    explain_idfdoc,
    explain_length,
    explain_tfisf,
    explain_tfmix,
    explain_tfmix_idfdoc,
)
from sentret_core.models.tfisf.formulas import TfIsfConParams, TfMixParams, length_factor
from sentret_core.models.tfisf.pruning import tfisf_top_k
from sentret_core.models.tfisf.sums import tfisf_scores

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query


def recursive(index: Index, ids: np.ndarray, base: np.ndarray, mu: float, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Rᴰ over the sentences within ``depth`` of ``ids`` (which carry R = ``base``).

    The candidates come in runs of consecutive sentences, so prev(s) is the previous
    candidate when it is s-1 in the same document: the recursion is a shift of the vector.
    """
    if mu == 0.0 or depth == 0 or len(ids) == 0:
        return ids, base
    lay = layout(index)
    cand = neighbourhood(lay.first, lay.end, ids, depth)
    r0 = scatter(cand, ids, base)
    later = cand[1:]
    # linked[i]: cand[i] and cand[i+1] are neighbours in one document
    linked = ((later - cand[:-1]) == 1) & (lay.first.take(later) < later)
    link = linked.astype(np.float64)
    keep = (1.0 - mu) * r0
    level = r0
    for _ in range(depth):
        around = np.zeros(len(cand))
        around[1:] = level[:-1] * link  # R(prev(s))
        around[:-1] += level[1:] * link  # R(next(s))
        level = keep + mu * around
    return cand, level


# --- the registered scorers ----------------------------------------------------------------

_R = r"R(s|q)=\sum_{t\in q\cap s}\log(c(t,q)+1)\,\log(c(t,s)+1)\,\log\frac{N+1}{0.5+sf(t)}"
_MIX = r"\sum_{t\in q\cap s}\log(c(t,q)+1)\,\log(\alpha c(t,s)+(1-\alpha)c(t,ctx)+1)"
_CON = r"R^{L}(s|q)=(1-\mu)\,R(s|q)+\mu\left[R^{L-1}(prev(s)|q)+R^{L-1}(next(s)|q)\right],\;R^{0}=R"
_LEN = r"\frac{|s|}{avgSentLen(d(s))}"


@register(
    "tfisf.v1",
    display_name="TF-ISF",
    family="tfisf",
    closed=zero_without_a_match,
    params=NoParams,
    explainer=explain_tfisf,
    formula=_R,
    paper=f"{ALLAN}; {FERNANDEZ_LOSADA_AZZOPARDI_2011} §3.5; {DOKO_STULA_STIPANICEV_2015} eq. 1",
    description="tf-idf at sentence level: parameter-free, the long-standing sentence-retrieval baseline",
    top_k=tfisf_top_k(doc_level=False),
)
def score_tfisf(index: Index, q: Query, p: NoParams) -> tuple[np.ndarray, np.ndarray]:
    return tfisf_scores(index, q)


@register(
    "tfmix.v1",
    display_name="TF-ISF tfmix",
    family="tfisf",
    closed=zero_without_a_match,
    params=TfMixParams,
    explainer=explain_tfmix,
    formula=_MIX + r"\,\log\frac{N+1}{0.5+sf(t)},\;ctx=prev(s)+s+next(s)",
    paper=f"{FERNANDEZ_LOSADA_AZZOPARDI_2011} §4.2.3 (a); {DOKO_STULA_STIPANICEV_2015} eq. 6",
    description="TF-ISF whose term count mixes the sentence with its previous/next sentences",
)
def score_tfmix(index: Index, q: Query, p: TfMixParams) -> tuple[np.ndarray, np.ndarray]:
    return tfisf_scores(index, q, alpha=p.alpha)


@register(
    "idfdoc.v1",
    display_name="TF-ISF idfdoc",
    family="tfisf",
    closed=zero_without_a_match,
    params=NoParams,
    explainer=explain_idfdoc,
    formula=r"\sum_{t\in q\cap s}\log(c(t,q)+1)\,\log(c(t,s)+1)\,\log\frac{D+1}{0.5+df(t)}",
    paper=f"{FERNANDEZ_LOSADA_AZZOPARDI_2011} §4.2.3 (b)",
    description="TF-ISF with the inverse frequency computed over documents instead of sentences",
    top_k=tfisf_top_k(doc_level=True),
)
def score_idfdoc(index: Index, q: Query, p: NoParams) -> tuple[np.ndarray, np.ndarray]:
    return tfisf_scores(index, q, doc_level=True)


@register(
    "tfmix-idfdoc.v1",
    display_name="TF-ISF tfmix + idfdoc",
    family="tfisf",
    closed=zero_without_a_match,
    params=TfMixParams,
    explainer=explain_tfmix_idfdoc,
    formula=_MIX + r"\,\log\frac{D+1}{0.5+df(t)}",
    paper=f"{FERNANDEZ_LOSADA_AZZOPARDI_2011} §4.2.3 (c)",
    description="tfmix and idfdoc together",
)
def score_tfmix_idfdoc(index: Index, q: Query, p: TfMixParams) -> tuple[np.ndarray, np.ndarray]:
    return tfisf_scores(index, q, alpha=p.alpha, doc_level=True)


@register(
    "tfisf-con.v1",
    display_name="TF-ISF_con",
    family="tfisf",
    closed=zero_without_a_match,
    params=TfIsfConParams,
    explainer=explain_con,
    formula=_CON,
    paper=f"{DOKO_STULA_STIPANICEV_2013} eq. 2; {DOKO_STULA_STIPANICEV_2015} eq. 2-3",
    description="TF-ISF plus the recursively discounted relevance of the neighbouring sentences",
)
def score_con(index: Index, q: Query, p: TfIsfConParams) -> tuple[np.ndarray, np.ndarray]:
    ids, base = tfisf_scores(index, q)
    return recursive(index, ids, base, p.mu, p.depth)


@register(
    "tfisf-length.v1",
    display_name="TF-ISF_length",
    family="tfisf",
    closed=zero_without_a_match,
    params=NoParams,
    explainer=explain_length,
    formula=_LEN + r"\cdot R(s|q)",
    paper=f"{DOKO_STULA_STIPANICEV_2015} eq. 4",
    description="TF-ISF promoting sentences longer than their document's average",
)
def score_length(index: Index, q: Query, p: NoParams) -> tuple[np.ndarray, np.ndarray]:
    ids, base = tfisf_scores(index, q)
    return ids, base * length_factor(index)[ids]


@register(
    "tfisf-con-length.v1",
    display_name="TF-ISF_con,length",
    family="tfisf",
    closed=zero_without_a_match,
    params=TfIsfConParams,
    explainer=explain_con_length,
    formula=_LEN + r"\cdot R^{L}(s|q)",
    paper=f"{DOKO_STULA_STIPANICEV_2015} eq. 5",
    description="TF-ISF_con times the sentence-length factor: context and long sentences together",
)
def score_con_length(index: Index, q: Query, p: TfIsfConParams) -> tuple[np.ndarray, np.ndarray]:
    ids, level = score_con(index, q, p)
    return ids, level * length_factor(index)[ids]
