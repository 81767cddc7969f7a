"""The TF-ISF family (SPEC "Sentence scorers"; seeds 000, 003, 004).

* TF-ISF (Allan et al. 2003; seed 000 §3.5, seed 003 eq. 1)::

      R(s|q) = Σ_{t∈q∩s} log(c(t,q)+1) · log(c(t,s)+1) · log((N+1)/(0.5+sf(t)))

* tfmix (seed 000 §4.2.3 (a), seed 003 eq. 6): c(t,s) → α·c(t,s) + (1-α)·c(t,ctx) with
  ctx = prev(s) + s + next(s) (seed 003's reading, the surrounding-sentence context); the
  sum still runs over t ∈ q∩s, so only sentences containing a query term are candidates.
* idfdoc (seed 000 §4.2.3 (b)): sf(t), N → df(t), D. tfmix+idfdoc: both.
* TF-ISF_con (seed 004 eq. 2, seed 003 eq. 2-3), R⁰ = R and
  ``Rᴸ(s) = (1-μ)·R(s) + μ·[Rᴸ⁻¹(prev(s)) + Rᴸ⁻¹(next(s))]``, a missing neighbour giving 0.
  Reading: the papers' "three recurrences" is L = 3, which expands exactly to seed 003 eq. 3
  when s has three neighbours on each side. At a document boundary the recursion is the
  definition (a missing neighbour's whole term is 0), which is what eq. 3 gives with the
  missing P_i, N_i *and the recursive parts through them* set to 0. Rᴸ(s) is non-zero only
  within distance L of a sentence containing a query term, so the candidates are those
  sentences (in the same document) and the recursion runs on shifts of a vector over them.
  With μ = 0 (or L = 0) it is TF-ISF and only matching sentences are candidates.
* TF-ISF_length (seed 003 eq. 4): ``|s| / avgSentLen(d(s)) · R(s)``; TF-ISF_con,length (eq. 5):
  the same factor times Rᴸ(s). avgSentLen(d) is the mean |s| (in terms) over d's sentences;
  a document whose sentences have no terms gets factor 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.data import (
    EMPTY_IDS,
    EMPTY_SCORES,
    Query,
    cached,
    context_postings,
    layout,
    neighbourhood,
    postings,
    scatter,
    union_sum,
)
from sentret_core.models.params import NoParams, Params, grid_range, param
from sentret_core.models.spec import Explained, ModelSpec

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

PAPER_000 = (
    "Fernández, Losada & Azzopardi, Extending the language modeling framework for sentence "
    "retrieval to include local context, Inf. Retrieval 2011 (seed 000)"
)
PAPER_003 = (
    "Doko, Štula & Stipaničev, Improved sentence retrieval using local context and sentence "
    "length, IP&M 2015 (seed 003)"
)
PAPER_004 = (
    "Doko, Štula & Stipaničev, A recursive TF-ISF based sentence retrieval method with local "
    "context, 2013 (seed 004)"
)
ALLAN = "Allan, Wade & Bolivar, Retrieval and novelty detection at the sentence level, SIGIR 2003"


# --- parameters ----------------------------------------------------------------------------

_ALPHA = dict(
    symbol=r"\alpha",
    min=0.0,
    max=1.0,
    step=0.05,
    grid=grid_range(0.0, 1.0, 0.1),
)
_MU = dict(symbol=r"\mu", min=0.0, max=1.0, step=0.05, grid=grid_range(0.0, 1.0, 0.05))
_DEPTH = dict(symbol="L", min=0, max=10, step=1, grid=(1, 2, 3, 4, 5))


@dataclass(frozen=True)
class TfMixParams(Params):
    alpha: float = param(
        0.7,
        "weight of the sentence's own count c(t,s) against its ±1-sentence context count "
        "(seed 004 tuned 0.6-0.85; α = 1 is TF-ISF)",
        **_ALPHA,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class TfIsfConParams(Params):
    mu: float = param(
        0.2,
        "weight of the neighbours' recursive relevance (published optimum 0.1-0.2; μ ≥ 0.5 hurts P@k)",
        **_MU,  # type: ignore[arg-type]
    )
    depth: int = param(
        3,
        "recursion depth L: sentences up to L away in the document contribute",
        **_DEPTH,  # type: ignore[arg-type]
    )


# --- shared pieces -----------------------------------------------------------------------


def isf(index: Index, doc_level: bool = False) -> np.ndarray:
    """log((N+1)/(0.5+sf(t))), or log((D+1)/(0.5+df(t))) for idfdoc, over the vocabulary."""
    if doc_level:
        return cached(
            index,
            "models.idfdoc",
            lambda: np.log((index.D + 1) / (0.5 + np.asarray(index.df, dtype=np.float64))),
        )
    return cached(
        index, "models.isf", lambda: np.log((index.N + 1) / (0.5 + np.asarray(index.sf, dtype=np.float64)))
    )


def length_factor(index: Index) -> np.ndarray:
    """|s| / avgSentLen(d(s)) of every sentence (0 where the document has no terms)."""

    def build() -> np.ndarray:
        lay = layout(index)
        avg = np.asarray(index.doc_avsl, dtype=np.float64)[lay.sent_doc] if index.N else np.zeros(0)
        out = np.zeros(index.N)
        np.divide(lay.sent_len, avg, out=out, where=avg > 0)
        return out

    return cached(index, "models.length_factor", build)


def tfisf_scores(
    index: Index, q: Query, alpha: float | None = None, doc_level: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """R(s|q) over the sentences containing a query term (tfmix when ``alpha`` is given)."""
    post = postings(index)
    weights = isf(index, doc_level)
    ctx = context_postings(index, 1, include_self=True) if alpha is not None else None
    rows, vals = [], []
    for t, qf in zip(q.ids, q.qtf):
        r, c = post(t)
        if len(r) == 0:
            continue
        if ctx is not None and alpha is not None:
            # c(t, prev+s+next): every sentence containing t is among t's window postings
            cr, cc = ctx(t)
            c = alpha * c + (1.0 - alpha) * cc[np.searchsorted(cr, r)]
        rows.append(r)
        vals.append((math.log(qf + 1.0) * weights[t]) * np.log1p(c))
    if not rows:
        return EMPTY_IDS, EMPTY_SCORES
    return union_sum(rows, vals)


def recursive(
    index: Index, ids: np.ndarray, base: np.ndarray, mu: float, depth: int
) -> tuple[np.ndarray, np.ndarray]:
    """Rᴰ over the sentences within ``depth`` of ``ids`` (which carry R = ``base``).

    The candidates come in runs of consecutive sentences, so prev(s) is the previous
    candidate when it is s-1 in the same document: the recursion is a shift of the vector.
    """
    if mu == 0.0 or depth == 0 or len(ids) == 0:
        return ids, base
    lay = layout(index)
    cand = neighbourhood(lay, ids, depth)
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


# --- scorers -----------------------------------------------------------------------------


def score_tfisf(index: Index, q: Query, p: NoParams) -> tuple[np.ndarray, np.ndarray]:
    return tfisf_scores(index, q)


def score_idfdoc(index: Index, q: Query, p: NoParams) -> tuple[np.ndarray, np.ndarray]:
    return tfisf_scores(index, q, doc_level=True)


def score_tfmix(index: Index, q: Query, p: TfMixParams) -> tuple[np.ndarray, np.ndarray]:
    return tfisf_scores(index, q, alpha=p.alpha)


def score_tfmix_idfdoc(index: Index, q: Query, p: TfMixParams) -> tuple[np.ndarray, np.ndarray]:
    return tfisf_scores(index, q, alpha=p.alpha, doc_level=True)


def score_con(index: Index, q: Query, p: TfIsfConParams) -> tuple[np.ndarray, np.ndarray]:
    ids, base = tfisf_scores(index, q)
    return recursive(index, ids, base, p.mu, p.depth)


def score_length(index: Index, q: Query, p: NoParams) -> tuple[np.ndarray, np.ndarray]:
    ids, base = tfisf_scores(index, q)
    return ids, base * length_factor(index)[ids]


def score_con_length(index: Index, q: Query, p: TfIsfConParams) -> tuple[np.ndarray, np.ndarray]:
    ids, level = score_con(index, q, p)
    return ids, level * length_factor(index)[ids]


# --- explanations (computed per sentence from its own row, independently of the scorers) ---


def sentence_counts(index: Index, sentence: int, term_ids: np.ndarray) -> np.ndarray:
    """c(t,s) for each of ``term_ids`` (a CSR row lookup)."""
    X = index.X
    lo, hi = int(X.indptr[sentence]), int(X.indptr[sentence + 1])
    cols = np.asarray(X.indices[lo:hi])
    data = np.asarray(X.data[lo:hi], dtype=np.float64)
    out = np.zeros(len(term_ids))
    for i, t in enumerate(term_ids):
        j = int(np.searchsorted(cols, t))
        if j < len(cols) and cols[j] == t:
            out[i] = data[j]
    return out


def neighbour(index: Index, sentence: int, offset: int) -> int:
    """The sentence ``offset`` away in the same document, or -1."""
    if sentence < 0:
        return -1
    doc = int(index.sent_doc[sentence])
    first, count = int(index.doc_first[doc]), int(index.doc_nsent[doc])
    other = sentence + offset
    return other if first <= other < first + count else -1


def _term_rows(
    index: Index, q: Query, sentence: int, alpha: float | None = None, doc_level: bool = False
) -> list[dict[str, Any]]:
    own = sentence_counts(index, sentence, q.ids)
    if alpha is not None:
        around = [
            sentence_counts(index, n, q.ids) if n >= 0 else np.zeros(len(q.ids))
            for n in (neighbour(index, sentence, -1), neighbour(index, sentence, 1))
        ]
        ctx = own + around[0] + around[1]
    N, freq = (index.D, index.df) if doc_level else (index.N, index.sf)
    rows = []
    for i, (term, t, qf) in enumerate(zip(q.unique, q.ids, q.qtf)):
        c = float(own[i])
        row: dict[str, Any] = {"term": term, "c(t,q)": qf, "c(t,s)": c}
        tf = c
        if alpha is not None:
            row["c(t,ctx)"] = float(ctx[i])
            tf = alpha * c + (1 - alpha) * float(ctx[i])
            row["tf"] = tf
        f = int(freq[t])
        row["df(t)" if doc_level else "sf(t)"] = f
        weight = math.log((N + 1) / (0.5 + f))
        row["idf" if doc_level else "isf"] = weight
        row["log(c(t,q)+1)"] = math.log(qf + 1)
        row["log(tf+1)"] = math.log(tf + 1)
        row["contribution"] = math.log(qf + 1) * math.log(tf + 1) * weight if c > 0 else 0.0
        rows.append(row)
    return rows


def _columns(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return tuple(columns)


def explain_tfisf(index: Index, q: Query, sentence: int, p: NoParams) -> Explained:
    rows = _term_rows(index, q, sentence)
    return Explained(_columns(rows), rows, {}, {})


def explain_idfdoc(index: Index, q: Query, sentence: int, p: NoParams) -> Explained:
    rows = _term_rows(index, q, sentence, doc_level=True)
    return Explained(_columns(rows), rows, {}, {})


def explain_tfmix(index: Index, q: Query, sentence: int, p: TfMixParams) -> Explained:
    rows = _term_rows(index, q, sentence, alpha=p.alpha)
    return Explained(_columns(rows), rows, {}, {})


def explain_tfmix_idfdoc(index: Index, q: Query, sentence: int, p: TfMixParams) -> Explained:
    rows = _term_rows(index, q, sentence, alpha=p.alpha, doc_level=True)
    return Explained(_columns(rows), rows, {}, {})


def _neighbour_weights(index: Index, sentence: int, mu: float, depth: int) -> dict[int, float]:
    """Coefficients of R(s+o) in Rᴸ(s) inside s's document (a missing neighbour's term is 0)."""
    if mu == 0.0 or depth == 0:
        return {0: 1.0}
    doc = int(index.sent_doc[sentence])
    lo = int(index.doc_first[doc]) - sentence
    hi = lo + int(index.doc_nsent[doc]) - 1  # offsets inside the document: lo..hi
    # propagate coefficient vectors: coef[level][x] = weights of R(s+o) in R^level(s+x)
    span = range(max(lo, -depth), min(hi, depth) + 1)
    level: dict[int, dict[int, float]] = {x: {x: 1.0} for x in span}
    for _ in range(depth):
        new: dict[int, dict[int, float]] = {}
        for x in span:
            coef = {x: 1.0 - mu}
            for y in (x - 1, x + 1):
                if y in level:
                    for o, w in level[y].items():
                        coef[o] = coef.get(o, 0.0) + mu * w
            new[x] = coef
        level = new
    return level[0]


def _con_rows(index: Index, q: Query, sentence: int, p: TfIsfConParams, factor: float | None) -> Explained:
    weights = _neighbour_weights(index, sentence, p.mu, p.depth)
    rows = []
    parts = {"R(s)": 0.0, "R^{L-1}(prev)": 0.0, "R^{L-1}(next)": 0.0}
    for offset in sorted(weights):
        other = sentence + offset
        for row in _term_rows(index, q, other):
            r = row.pop("contribution")
            out = {"offset": offset, "sentence": other, **row, "R_t": r, "weight": weights[offset]}
            if factor is not None:
                out["length factor"] = factor
            out["contribution"] = weights[offset] * r * (factor if factor is not None else 1.0)
            rows.append(out)
            if offset == 0:
                parts["R(s)"] += r
    notes = {
        "mu": p.mu,
        "depth": float(p.depth),
        "R(s)": parts["R(s)"],
    }
    if p.mu and p.depth:
        for name, off in (("R^{L-1}(prev)", -1), ("R^{L-1}(next)", 1)):
            other = neighbour(index, sentence, off)
            if other >= 0:
                sub = _neighbour_weights(index, other, p.mu, p.depth - 1)
                notes[name] = sum(
                    w * sum(r["contribution"] for r in _term_rows(index, q, other + o))
                    for o, w in sub.items()
                )
            else:
                notes[name] = 0.0
    if factor is not None:
        notes["length factor"] = factor
    return Explained(_columns(rows), rows, {}, notes)


def explain_con(index: Index, q: Query, sentence: int, p: TfIsfConParams) -> Explained:
    return _con_rows(index, q, sentence, p, None)


def _factor(index: Index, sentence: int) -> float:
    avg = float(index.doc_avsl[int(index.sent_doc[sentence])])
    return float(index.sent_len[sentence]) / avg if avg > 0 else 0.0


def explain_length(index: Index, q: Query, sentence: int, p: NoParams) -> Explained:
    factor = _factor(index, sentence)
    rows = _term_rows(index, q, sentence)
    for row in rows:
        r = row.pop("contribution")
        row.update({"R_t": r, "length factor": factor, "contribution": factor * r})
    return Explained(
        _columns(rows), rows, {}, {"length factor": factor, "|s|": float(index.sent_len[sentence])}
    )


def explain_con_length(index: Index, q: Query, sentence: int, p: TfIsfConParams) -> Explained:
    return _con_rows(index, q, sentence, p, _factor(index, sentence))


# --- registry entries --------------------------------------------------------------------

_R = r"R(s|q)=\sum_{t\in q\cap s}\log(c(t,q)+1)\,\log(c(t,s)+1)\,\log\frac{N+1}{0.5+sf(t)}"
_CON = r"R^{L}(s|q)=(1-\mu)\,R(s|q)+\mu\left[R^{L-1}(prev(s)|q)+R^{L-1}(next(s)|q)\right],\;R^{0}=R"
_LEN = r"\frac{|s|}{avgSentLen(d(s))}"

SPECS = [
    ModelSpec(
        "tfisf.v1",
        "TF-ISF",
        "tfisf",
        NoParams,
        score_tfisf,
        explain_tfisf,
        _R,
        f"{ALLAN}; {PAPER_000} §3.5; {PAPER_003} eq. 1",
        "tf-idf at sentence level: parameter-free, the long-standing sentence-retrieval baseline",
    ),
    ModelSpec(
        "tfmix.v1",
        "TF-ISF tfmix",
        "tfisf",
        TfMixParams,
        score_tfmix,
        explain_tfmix,
        r"\sum_{t\in q\cap s}\log(c(t,q)+1)\,\log(\alpha c(t,s)+(1-\alpha)c(t,ctx)+1)"
        r"\,\log\frac{N+1}{0.5+sf(t)},"
        r"\;ctx=prev(s)+s+next(s)",
        f"{PAPER_000} §4.2.3 (a); {PAPER_003} eq. 6",
        "TF-ISF whose term count mixes the sentence with its previous/next sentences",
    ),
    ModelSpec(
        "idfdoc.v1",
        "TF-ISF idfdoc",
        "tfisf",
        NoParams,
        score_idfdoc,
        explain_idfdoc,
        r"\sum_{t\in q\cap s}\log(c(t,q)+1)\,\log(c(t,s)+1)\,\log\frac{D+1}{0.5+df(t)}",
        f"{PAPER_000} §4.2.3 (b)",
        "TF-ISF with the inverse frequency computed over documents instead of sentences",
    ),
    ModelSpec(
        "tfmix-idfdoc.v1",
        "TF-ISF tfmix + idfdoc",
        "tfisf",
        TfMixParams,
        score_tfmix_idfdoc,
        explain_tfmix_idfdoc,
        r"\sum_{t\in q\cap s}\log(c(t,q)+1)\,\log(\alpha c(t,s)+(1-\alpha)c(t,ctx)+1)"
        r"\,\log\frac{D+1}{0.5+df(t)}",
        f"{PAPER_000} §4.2.3 (c)",
        "tfmix and idfdoc together",
    ),
    ModelSpec(
        "tfisf-con.v1",
        "TF-ISF_con",
        "tfisf",
        TfIsfConParams,
        score_con,
        explain_con,
        _CON,
        f"{PAPER_004} eq. 2; {PAPER_003} eq. 2-3",
        "TF-ISF plus the recursively discounted relevance of the neighbouring sentences",
    ),
    ModelSpec(
        "tfisf-length.v1",
        "TF-ISF_length",
        "tfisf",
        NoParams,
        score_length,
        explain_length,
        _LEN + r"\cdot R(s|q)",
        f"{PAPER_003} eq. 4",
        "TF-ISF promoting sentences longer than their document's average",
    ),
    ModelSpec(
        "tfisf-con-length.v1",
        "TF-ISF_con,length",
        "tfisf",
        TfIsfConParams,
        score_con_length,
        explain_con_length,
        _LEN + r"\cdot R^{L}(s|q)",
        f"{PAPER_003} eq. 5",
        "TF-ISF_con times the sentence-length factor: context and long sentences together",
    ),
]
