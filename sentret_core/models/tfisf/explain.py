"""TF-ISF explained for one sentence: each query term's addend, from the sentence's own row.

The inputs (c(t,s), the neighbours' counts, sf(t)) are looked up per sentence, independently of
the scorers' postings; the arithmetic is the shared formulas of :mod:`tfisf_formulas`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays.layout import sentence_counts
from sentret_core.models.core.spec import Explained
from sentret_core.models.tfisf.formulas import (
    TfIsfConParams,
    TfMixParams,
    inverse_frequency,
    length_factor,
    mixed_count,
    term_score,
)

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.params import NoParams
    from sentret_core.models.core.query import Query


def term_rows(
    index: Index, q: Query, sentence: int, alpha: float | None = None, doc_level: bool = False
) -> list[dict[str, Any]]:
    """One row per query term: its counts, weights and ``contribution`` to R(s|q)."""
    own = sentence_counts(index, sentence, q.ids)
    if alpha is not None:  # c(t, prev(s)+s+next(s))
        ctx = sum((sentence_counts(index, int(n), q.ids) for n in index.neighbours(sentence, 1)), np.zeros(len(q.ids)))
    N, freq = (index.D, index.df) if doc_level else (index.N, index.sf)
    rows = []
    for i, (term, t, qf) in enumerate(zip(q.unique, q.ids, q.qtf)):
        c = float(own[i])
        row: dict[str, Any] = {"term": term, "c(t,q)": qf, "c(t,s)": c}
        tf = c
        if alpha is not None:
            row["c(t,ctx)"] = float(ctx[i])
            tf = float(mixed_count(alpha, c, float(ctx[i])))
            row["tf"] = tf
        f = int(freq[t])
        row["df(t)" if doc_level else "sf(t)"] = f
        weight = float(inverse_frequency(N, f))
        row["idf" if doc_level else "isf"] = weight
        row["log(c(t,q)+1)"] = math.log(qf + 1.0)
        row["log(tf+1)"] = float(np.log1p(tf))
        row["contribution"] = float(term_score(qf, weight, tf)) if c > 0 else 0.0
        rows.append(row)
    return rows


def columns_of(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    """Every column of ``rows``, in order of first appearance."""
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return tuple(columns)


def _explained(rows: list[dict[str, Any]]) -> Explained:
    return Explained(columns_of(rows), rows, {}, {})


def explain_tfisf(index: Index, q: Query, sentence: int, p: NoParams) -> Explained:
    return _explained(term_rows(index, q, sentence))


def explain_idfdoc(index: Index, q: Query, sentence: int, p: NoParams) -> Explained:
    return _explained(term_rows(index, q, sentence, doc_level=True))


def explain_tfmix(index: Index, q: Query, sentence: int, p: TfMixParams) -> Explained:
    return _explained(term_rows(index, q, sentence, alpha=p.alpha))


def explain_tfmix_idfdoc(index: Index, q: Query, sentence: int, p: TfMixParams) -> Explained:
    return _explained(term_rows(index, q, sentence, alpha=p.alpha, doc_level=True))


def neighbour_weights(index: Index, sentence: int, mu: float, depth: int) -> dict[int, float]:
    """Coefficients of R(s+o) in Rᴸ(s) inside s's document (a missing neighbour's term is 0)."""
    if mu == 0.0 or depth == 0:
        return {0: 1.0}
    lo = int(index.sent_doc_first[sentence]) - sentence
    hi = int(index.sent_doc_end[sentence]) - 1 - sentence  # offsets inside the document: lo..hi
    # propagate coefficient vectors: level[x] = weights of R(s+o) in R^level(s+x)
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
    weights = neighbour_weights(index, sentence, p.mu, p.depth)
    rows = []
    own = 0.0
    for offset in sorted(weights):
        other = sentence + offset
        for row in term_rows(index, q, other):
            r = row.pop("contribution")
            out = {"offset": offset, "sentence": other, **row, "R_t": r, "weight": weights[offset]}
            if factor is not None:
                out["length factor"] = factor
            out["contribution"] = weights[offset] * r * (factor if factor is not None else 1.0)
            rows.append(out)
            if offset == 0:
                own += r
    notes = {"mu": p.mu, "depth": float(p.depth), "R(s)": own}
    if p.mu and p.depth:
        for name, other in (("R^{L-1}(prev)", index.prev[sentence]), ("R^{L-1}(next)", index.next[sentence])):
            notes[name] = 0.0
            if other >= 0:
                sub = neighbour_weights(index, int(other), p.mu, p.depth - 1)
                notes[name] = sum(
                    w * sum(r["contribution"] for r in term_rows(index, q, int(other) + o)) for o, w in sub.items()
                )
    if factor is not None:
        notes["length factor"] = factor
    return Explained(columns_of(rows), rows, {}, notes)


def explain_con(index: Index, q: Query, sentence: int, p: TfIsfConParams) -> Explained:
    return _con_rows(index, q, sentence, p, None)


def explain_length(index: Index, q: Query, sentence: int, p: NoParams) -> Explained:
    factor = float(length_factor(index)[sentence])
    rows = term_rows(index, q, sentence)
    for row in rows:
        r = row.pop("contribution")
        row.update({"R_t": r, "length factor": factor, "contribution": factor * r})
    return Explained(columns_of(rows), rows, {}, {"length factor": factor, "|s|": float(index.sent_len[sentence])})


def explain_con_length(index: Index, q: Query, sentence: int, p: TfIsfConParams) -> Explained:
    return _con_rows(index, q, sentence, p, float(length_factor(index)[sentence]))
