"""The language models for one sentence: explain's rows and the distribution p(t|θ_s).

Their inputs (c(t,s), c(t,l), |s|, |l| over the whole vocabulary) come from the sentence's and
its local context's own rows, independently of the postings the scorers use; the arithmetic is
the model's mixture, the same function the scorers' coefficients are read from.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays.layout import collection_model, sentence_row
from sentret_core.models.core.spec import Explained
from sentret_core.models.lm.params import ThreeMMPDSParams
from sentret_core.models.lm.scoring import Variant, probability

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query


def dense_counts(index: Index, sentences: Any) -> np.ndarray:
    """c(t, ·) over the vocabulary, summed over ``sentences``."""
    out = np.zeros(index.V)
    for s in sentences:
        cols, data = sentence_row(index, int(s))
        np.add.at(out, cols, data)
    return out


def document_of(index: Index, sentence: int) -> range:
    """The sentences of ``sentence``'s document."""
    return range(int(index.sent_doc_first[sentence]), int(index.sent_doc_end[sentence]))


def _local_dense(index: Index, sentence: int, context: str, window: int) -> np.ndarray:
    if context == "window":
        return dense_counts(index, index.neighbours(sentence, window))
    return dense_counts(index, document_of(index, sentence))


def _ml(counts: np.ndarray, length: float, p_c: np.ndarray) -> np.ndarray:
    """The maximum-likelihood model of a text; the collection's for an empty text."""
    return counts / length if length > 0 else p_c


def sentence_inputs(index: Index, sentence: int, p: Any, variant: Variant) -> dict[str, Any]:
    """c(t,s), |s|, p(t|s), p(t|l), p(t) over the whole vocabulary for one sentence."""
    p_c = collection_model(index)
    c_s = dense_counts(index, [sentence])
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
        return np.asarray(probability(variant.mixture(p, x["c_s"], n_s, x["p_s"], x["p_l"], x["p_c"])))

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
            one = slice(t, t + 1)
            comps = variant.mixture(p, x["c_s"][one], np.array([x["n_s"]]), x["p_s"][one], x["p_l"][one], x["p_c"][one])
            prob = float(np.asarray(probability(comps))[0])
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
            extra["log p(d|s)"] = log_pds_of(index, sentence)
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


def log_pds_of(index: Index, sentence: int) -> float:
    """log p(d|s) of one sentence from its own and its document's rows."""
    doc_counts = dense_counts(index, document_of(index, sentence))
    n_d = doc_counts.sum()
    p_c = collection_model(index)
    cols, data = sentence_row(index, sentence)
    return float(sum(c * (math.log(doc_counts[t] / n_d) - math.log(p_c[t])) for t, c in zip(cols, data)))
