"""BM25 and BM25F over sentences (SPEC "Sentence scorers"; seed 000 §3.5, seed 002 §5.1).

BM25 (seed 000)::

    Σ_{t∈q∩s} idf(t) · (k1+1)·c(t,s) / (k1·((1-b) + b·|s|/avsl) + c(t,s)) · (k3+1)·c(t,q) / (k3+c(t,q))
    idf(t) = log((N - sf(t) + 0.5) / (sf(t) + 0.5))            ("rsj", the paper's; < 0 when sf > N/2)
           = log(1 + (N - sf(t) + 0.5) / (sf(t) + 0.5))        ("lucene", always > 0)

The sum runs over distinct query terms; a repeated term enters through c(t,q) (with k3 = 0 the
query factor is 1, so repeats do not count).

BM25F (seed 002 §5.1; Robertson & Zaragoza 2009) with three fields per sentence — the sentence,
its context (the ±w sentences around it in its document, s itself excluded) and its
document's title::

    x̃(t,s) = Σ_f w_f · c(t,f_s) / B_f(s),   B_f(s) = (1-b_f) + b_f · len_f(s)/avglen_f
    score  = Σ_{t∈q} idf(t) · (k1+1)·x̃ / (k1+x̃) · (k3+1)·c(t,q) / (k3+c(t,q))

Readings: w_sentence = 1 (seed 002 fixes w1 = 1 without loss of generality); every sentence
is a BM25F "document", so avglen_f is the mean of len_f over all sentences (for the title
field: the mean, over sentences, of their document's title length); idf is BM25's, over
sentences. One tied b by default (seed 002); ``b_sentence``/``b_context``/``b_title``
override it per field (seed 000's BM25f: its α·x_sentence + (1-α)·x_context weighting is
this function with w_context = (1-α)/α and k1/α, a rank-equivalent reparametrisation).
The k3 query factor is seed 000's (its BM25f has it); with k3 = 0 it is 1, as in seed 002.
A field with weight 0 is not used: it neither adds to x̃ nor makes a sentence a candidate, so
BM25F with w_context = w_title = 0 is exactly BM25 with the same k1, b, k3 and idf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.data import (
    Query,
    cached,
    cached_lru,
    context_len,
    field_postings,
    layout,
    postings,
    title_len,
    union_sum,
)
from sentret_core.models.params import Params, grid_range, param
from sentret_core.models.spec import Explained, ModelSpec
from sentret_core.models.tfisf import PAPER_000, neighbour, sentence_counts

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

PAPER_002 = "Blanco & Zaragoza, Finding support sentences for entities, SIGIR 2010 (seed 002) §5.1"
ROBERTSON = "Robertson & Zaragoza, The probabilistic relevance framework: BM25 and beyond, 2009"

_K1 = dict(symbol="k_1", min=0.0, max=10.0, step=0.01, grid=grid_range(1.0, 2.0, 0.1))
_B = dict(symbol="b", min=0.0, max=1.0, step=0.01, grid=grid_range(0.0, 1.0, 0.1))
_K3 = dict(symbol="k_3", min=0.0, max=1000.0, step=1.0, grid=(0.0, 1.0, 10.0, 100.0, 1000.0))
_IDF = dict(choices=("rsj", "lucene"))
_W = dict(min=0.0, max=10.0, step=0.01, grid=grid_range(0.0, 1.0, 0.1))
_BF = dict(min=0.0, max=1.0, step=0.01, grid=grid_range(0.0, 1.0, 0.1), nullable=True)


@dataclass(frozen=True)
class BM25Params(Params):
    k1: float = param(1.2, "term-frequency saturation (0: binary match)", **_K1)  # type: ignore[arg-type]
    b: float = param(0.75, "sentence-length normalisation (0: none, 1: full)", **_B)  # type: ignore[arg-type]
    k3: float = param(
        0.0,
        "query-term-frequency saturation (0: repeated query terms count once)",
        **_K3,  # type: ignore[arg-type]
    )
    idf: str = param(
        "rsj",
        "idf variant: 'rsj' log((N-sf+0.5)/(sf+0.5)) as in the paper (negative above N/2), "
        "'lucene' log(1+(N-sf+0.5)/(sf+0.5))",
        **_IDF,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class BM25FParams(Params):
    k1: float = param(0.26, "term-frequency saturation of the combined pseudo-frequency", **_K1)  # type: ignore[arg-type]
    b: float = param(0.15, "length normalisation tied across fields (seed 002)", **_B)  # type: ignore[arg-type]
    w_context: float = param(
        0.23,
        "weight of the context field (the ±window sentences around s)",
        symbol="w_{context}",
        **_W,  # type: ignore[arg-type]
    )
    w_title: float = param(
        0.23,
        "weight of the title field (the document's title)",
        symbol="w_{title}",
        **_W,  # type: ignore[arg-type]
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
        **_BF,  # type: ignore[arg-type]
    )
    b_context: float | None = param(
        None,
        "b of the context field (None: the tied b)",
        symbol="b_{context}",
        **_BF,  # type: ignore[arg-type]
    )
    b_title: float | None = param(
        None,
        "b of the title field (None: the tied b)",
        symbol="b_{title}",
        **_BF,  # type: ignore[arg-type]
    )
    k3: float = param(0.0, "query-term-frequency saturation (0: repeats count once)", **_K3)  # type: ignore[arg-type]
    idf: str = param("rsj", "idf variant over sentences: 'rsj' or 'lucene'", **_IDF)  # type: ignore[arg-type]

    def field_b(self) -> tuple[float, float, float]:
        b = self.b
        return (
            b if self.b_sentence is None else self.b_sentence,
            b if self.b_context is None else self.b_context,
            b if self.b_title is None else self.b_title,
        )


# --- query-independent pieces ------------------------------------------------------------


def idf(index: Index, variant: str) -> np.ndarray:
    def build() -> np.ndarray:
        sf = np.asarray(index.sf, dtype=np.float64)
        ratio = (index.N - sf + 0.5) / (sf + 0.5)
        return np.log1p(ratio) if variant == "lucene" else np.log(ratio)

    return cached(index, f"models.bm25.idf/{variant}", build)


def query_factor(qf: float, k3: float) -> float:
    """(k3+1)·c(t,q) / (k3+c(t,q))."""
    return (k3 + 1.0) * qf / (k3 + qf)


def inverse_norm(index: Index, field: str, b: float, window: int = 0) -> np.ndarray:
    """1 / B_f(s) for every sentence, B_f = (1-b) + b·len_f(s)/avglen_f (0 where B_f = 0)."""

    def build() -> np.ndarray:
        if field == "sentence":
            lengths = layout(index).sent_len
        elif field == "context":
            lengths = context_len(index, window)
        else:
            lengths = title_len(index)
        avg = float(lengths.mean()) if len(lengths) else 0.0
        norm = (1.0 - b) + b * (lengths / avg if avg > 0 else np.zeros(len(lengths)))
        out = np.zeros(len(lengths))
        np.divide(1.0, norm, out=out, where=norm > 0)
        return out

    return cached_lru(index, "models.bm25.invB", (field, window, b), build)


def sentence_k(index: Index, k1: float, b: float) -> np.ndarray:
    """k1·((1-b) + b·|s|/avsl) for every sentence."""

    def build() -> np.ndarray:
        lengths = layout(index).sent_len
        avsl = index.avsl
        ratio = lengths / avsl if avsl > 0 else np.zeros(len(lengths))
        return k1 * ((1.0 - b) + b * ratio)

    return cached_lru(index, "models.bm25.K", (k1, b), build)


# --- scorers -----------------------------------------------------------------------------


def score_bm25(index: Index, q: Query, p: BM25Params) -> tuple[np.ndarray, np.ndarray]:
    post = postings(index)
    K = sentence_k(index, p.k1, p.b)
    weights = idf(index, p.idf)
    scale = p.k1 + 1.0
    rows, vals = [], []
    for t, qf in zip(q.ids, q.qtf):
        r, c = post(t)
        if len(r):
            rows.append(r)
            vals.append((weights[t] * scale * query_factor(qf, p.k3)) * c / (c + K.take(r)))
    return union_sum(rows, vals)


def field_weights(index: Index, p: BM25FParams) -> np.ndarray:
    """N×3: w_f / B_f(s) of every sentence for the sentence, context and title fields
    (0 for a field of weight 0)."""

    def build() -> np.ndarray:
        b_s, b_c, b_t = p.field_b()
        out = np.zeros((index.N, 3))
        out[:, 0] = inverse_norm(index, "sentence", b_s)
        if p.w_context > 0:
            out[:, 1] = p.w_context * inverse_norm(index, "context", b_c, p.window)
        if p.w_title > 0:
            out[:, 2] = p.w_title * inverse_norm(index, "title", b_t)
        return out

    key = (p.field_b(), p.w_context, p.w_title, p.window)
    return cached_lru(index, "models.bm25f.weights", key, build)


_ONES = np.ones(3)


def score_bm25f(index: Index, q: Query, p: BM25FParams) -> tuple[np.ndarray, np.ndarray]:
    fp = field_postings(index, p.window)
    fw = field_weights(index, p)
    unused = p.w_context == 0 or p.w_title == 0  # rows may match only in a field of weight 0
    weights = idf(index, p.idf)
    k1 = p.k1
    rows, vals = [], []
    for t, qf in zip(q.ids, q.qtf):
        r, counts = fp(t)
        if len(r) == 0:
            continue
        x = (counts * fw.take(r, axis=0)) @ _ONES  # x̃(t,s) = Σ_f w_f·c(t,f_s)/B_f(s)
        if unused:
            keep = x > 0
            r, x = r[keep], x[keep]
        rows.append(r)
        vals.append((weights[t] * (k1 + 1.0) * query_factor(qf, p.k3)) * (x / (x + k1) if k1 > 0 else x > 0))
    return union_sum(rows, vals)


# --- explanations ------------------------------------------------------------------------


def _idf_value(index: Index, t: int, variant: str) -> float:
    sf = float(index.sf[t])
    ratio = (index.N - sf + 0.5) / (sf + 0.5)
    return math.log1p(ratio) if variant == "lucene" else math.log(ratio)


def explain_bm25(index: Index, q: Query, sentence: int, p: BM25Params) -> Explained:
    counts = sentence_counts(index, sentence, q.ids)
    length = float(index.sent_len[sentence])
    avsl = index.avsl
    norm = (1 - p.b) + p.b * (length / avsl if avsl > 0 else 0.0)
    rows = []
    for term, t, qf, c in zip(q.unique, q.ids, q.qtf, counts):
        w = _idf_value(index, int(t), p.idf)
        tf = (p.k1 + 1) * c / (p.k1 * norm + c) if c > 0 else 0.0
        qpart = query_factor(qf, p.k3)
        rows.append(
            {
                "term": term,
                "c(t,q)": qf,
                "c(t,s)": c,
                "sf(t)": int(index.sf[t]),
                "idf": w,
                "|s|/avsl": length / avsl if avsl > 0 else 0.0,
                "tf part": tf,
                "query part": qpart,
                "contribution": w * tf * qpart,
            }
        )
    columns = (
        "term",
        "c(t,q)",
        "c(t,s)",
        "sf(t)",
        "idf",
        "|s|/avsl",
        "tf part",
        "query part",
        "contribution",
    )
    return Explained(columns, rows, {}, {"|s|": length, "avsl": avsl, "B(s)": norm})


def _title_counts(index: Index, sentence: int, term_ids: np.ndarray) -> np.ndarray:
    T = index.title_X
    doc = int(index.sent_doc[sentence])
    lo, hi = int(T.indptr[doc]), int(T.indptr[doc + 1])
    cols = np.asarray(T.indices[lo:hi])
    data = np.asarray(T.data[lo:hi], dtype=np.float64)
    return np.array([float(data[cols == t].sum()) for t in term_ids])


def explain_bm25f(index: Index, q: Query, sentence: int, p: BM25FParams) -> Explained:
    b_s, b_c, b_t = p.field_b()
    around = [neighbour(index, sentence, o) for o in range(-p.window, p.window + 1) if o]
    around = [n for n in around if n >= 0]
    c_s = sentence_counts(index, sentence, q.ids)
    c_c = sum((sentence_counts(index, n, q.ids) for n in around), np.zeros(len(q.ids)))
    c_t = _title_counts(index, sentence, q.ids)
    lens = {
        "sentence": float(index.sent_len[sentence]),
        "context": float(sum(float(index.sent_len[n]) for n in around)),
        "title": float(title_len(index)[sentence]),
    }
    avgs = {
        "sentence": index.avsl,
        "context": float(context_len(index, p.window).mean()) if index.N else 0.0,
        "title": float(title_len(index).mean()) if index.N else 0.0,
    }

    def norm(field: str, b: float) -> float:
        return (1 - b) + b * (lens[field] / avgs[field] if avgs[field] > 0 else 0.0)

    B = {"sentence": norm("sentence", b_s), "context": norm("context", b_c), "title": norm("title", b_t)}
    w = {"sentence": 1.0, "context": p.w_context, "title": p.w_title}
    counts = {"sentence": c_s, "context": c_c, "title": c_t}
    rows = []
    for i, (term, t, qf) in enumerate(zip(q.unique, q.ids, q.qtf)):
        row: dict[str, Any] = {"term": term, "c(t,q)": qf}
        x = 0.0
        for f in ("sentence", "context", "title"):
            c = float(counts[f][i])
            part = w[f] * c / B[f] if (w[f] > 0 and c > 0) else 0.0
            row[f"c(t,{f})"] = c
            row[f"w·c/B ({f})"] = part
            x += part
        weight = _idf_value(index, int(t), p.idf)
        sat = (p.k1 + 1) * x / (p.k1 + x) if x > 0 else 0.0
        qpart = query_factor(qf, p.k3)
        row.update(
            {"x̃": x, "idf": weight, "tf part": sat, "query part": qpart, "contribution": weight * sat * qpart}
        )
        rows.append(row)
    columns = tuple(rows[0]) if rows else ("term", "contribution")
    notes = (
        {f"B_{f}": B[f] for f in B}
        | {f"len_{f}": lens[f] for f in lens}
        | {f"avglen_{f}": avgs[f] for f in avgs}
    )
    return Explained(columns, rows, {}, notes)


# --- registry entries --------------------------------------------------------------------

SPECS = [
    ModelSpec(
        "bm25.v1",
        "BM25",
        "bm25",
        BM25Params,
        score_bm25,
        explain_bm25,
        r"\sum_{t\in q\cap s}\log\frac{N-sf(t)+0.5}{sf(t)+0.5}\cdot"
        r"\frac{(k_1+1)\,c(t,s)}{k_1\left((1-b)+b\frac{|s|}{avsl}\right)+c(t,s)}\cdot"
        r"\frac{(k_3+1)\,c(t,q)}{k_3+c(t,q)}",
        f"{PAPER_000} §3.5; {ROBERTSON}",
        "Okapi BM25 with the sentence as the document",
    ),
    ModelSpec(
        "bm25f.v1",
        "BM25F (sentence, context, title)",
        "bm25",
        BM25FParams,
        score_bm25f,
        explain_bm25f,
        r"\sum_{t\in q} idf(t)\,\frac{(k_1+1)\,\tilde{x}}{k_1+\tilde{x}},\;"
        r"\tilde{x}=\sum_{f}\frac{w_f\,c(t,f_s)}{(1-b_f)+b_f\,len_f(s)/avglen_f}",
        f"{PAPER_002}; {ROBERTSON}; {PAPER_000} §4.2.3",
        "BM25 over three weighted fields: the sentence, its ±w surrounding sentences, its document's title",
    ),
]
