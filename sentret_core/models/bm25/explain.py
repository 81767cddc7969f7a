"""BM25 and BM25F explained for one sentence: each query term's addend, from the sentence's own rows.

The inputs (c(t,s), the context's and title's counts, the field lengths) are looked up per
sentence, independently of the scorers' postings; the arithmetic is :mod:`bm25_formulas`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays.layout import mean_context_len, mean_title_len, sentence_counts, title_len
from sentret_core.models.bm25.formulas import (
    BM25FParams,
    BM25Params,
    idf_of,
    length_norm,
    query_factor,
    saturation,
)
from sentret_core.models.core.spec import Explained, ExplanationParts

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

_BM25_COLUMNS = ("term", "c(t,q)", "c(t,s)", "sf(t)", "idf", "|s|/avsl", "tf part", "query part", "contribution")
FIELDS = ("sentence", "context", "title")


def _field_column(field: str) -> str:
    return f"w·c/B ({field})"


# the saturation k1 acts on x̃ = Σ_f w_f·c(t,f)/B_f, so a term's contribution is the fields' in proportion to x̃
BM25F_PARTS = ExplanationParts(
    split="field",
    whole="x̃",
    columns=tuple((_field_column(f), f) for f in FIELDS),
    note="BM25F saturates the fields' combined pseudo-frequency x̃, so each term's contribution is "
    "shared among the fields in proportion to their share of x̃",
)


def explain_bm25(index: Index, q: Query, sentence: int, p: BM25Params) -> Explained:
    counts = sentence_counts(index, sentence, q.ids)
    length = float(index.sent_len[sentence])
    avsl = index.avsl
    norm = float(length_norm(length, avsl, p.b))
    rows = []
    for term, t, qf, c in zip(q.unique, q.ids, q.qtf, counts):
        w = float(idf_of(index.N, float(index.sf[t]), p.idf))
        tf = float(saturation(c, p.k1 * norm, p.k1)) if c > 0 else 0.0
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
    return Explained(_BM25_COLUMNS, rows, {}, {"|s|": length, "avsl": avsl, "B(s)": norm})


def title_counts(index: Index, sentence: int, term_ids: np.ndarray) -> np.ndarray:
    """c(t, title(d(s))) for each of ``term_ids``."""
    T = index.title_X
    doc = int(index.sent_doc[sentence])
    lo, hi = int(T.indptr[doc]), int(T.indptr[doc + 1])
    cols = np.asarray(T.indices[lo:hi])
    data = np.asarray(T.data[lo:hi], dtype=np.float64)
    return np.array([float(data[cols == t].sum()) for t in term_ids])


def explain_bm25f(index: Index, q: Query, sentence: int, p: BM25FParams) -> Explained:
    around = [int(n) for n in index.neighbours(sentence, p.window) if n != sentence]
    counts = {
        "sentence": sentence_counts(index, sentence, q.ids),
        "context": sum((sentence_counts(index, n, q.ids) for n in around), np.zeros(len(q.ids))),
        "title": title_counts(index, sentence, q.ids),
    }
    lens = {
        "sentence": float(index.sent_len[sentence]),
        "context": float(sum(float(index.sent_len[n]) for n in around)),
        "title": float(title_len(index, np.array([sentence]))[0]),
    }
    avgs = {
        "sentence": index.avsl,
        "context": mean_context_len(index, p.window),
        "title": mean_title_len(index),
    }
    B = {f: float(length_norm(lens[f], avgs[f], b)) for f, b in zip(FIELDS, p.field_b())}
    w = {"sentence": 1.0, "context": p.w_context, "title": p.w_title}
    rows = []
    for i, (term, t, qf) in enumerate(zip(q.unique, q.ids, q.qtf)):
        row: dict[str, Any] = {"term": term, "c(t,q)": qf}
        x = 0.0
        for f in FIELDS:
            c = float(counts[f][i])
            part = w[f] * c / B[f] if (w[f] > 0 and c > 0) else 0.0
            row[f"c(t,{f})"] = c
            row[_field_column(f)] = part
            x += part
        weight = float(idf_of(index.N, float(index.sf[t]), p.idf))
        sat = float(saturation(x, p.k1, p.k1)) if x > 0 else 0.0
        qpart = query_factor(qf, p.k3)
        row[BM25F_PARTS.whole] = x
        row.update({"idf": weight, "tf part": sat, "query part": qpart, "contribution": weight * sat * qpart})
        rows.append(row)
    columns = tuple(rows[0]) if rows else ("term", "contribution")
    notes = {f"B_{f}": B[f] for f in B} | {f"len_{f}": lens[f] for f in lens} | {f"avglen_{f}": avgs[f] for f in avgs}
    return Explained(columns, rows, {}, notes)
