"""``align.v1``: each query term aligned to its closest word of the sentence, in the same static word
vectors as ``embed.v1`` (WordLlama)::

    align(q, s) = Σ_{t∈q} c(t,q) · max_{w∈s} cos(v_t, v_w) / Σ_{t∈q} c(t,q)

the similarity side of the relaxed word mover's distance (Kusner et al., ICML 2015: every word travels to
its nearest word in the other text) with cosine as the cost, from the query to the sentence only. An
exact match aligns at 1, "founded" to "settled" somewhat less, so the score is a soft query-term coverage:
where ``embed.v1`` averages a sentence's words into one vector (and one long, off-topic word list can
drown the match), alignment keeps the best word per query term. Every sentence with a term is a
candidate; query words the index never saw are embedded on the spot (as in ``embed.v1``).

Cost: one mat-vec of the vocabulary's unit vectors per query term, then a gather over the sentences'
term lists and a segmented maximum, in blocks of rows so memory stays bounded on a large index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES
from sentret_core.models.core.params import NoParams
from sentret_core.models.core.registry import register
from sentret_core.models.core.spec import Explained
from sentret_core.models.embed.scorer import PAPER as EMBED_PAPER
from sentret_core.models.embed.scorer import query_vector, term_vectors

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

PAPER = f"Kusner et al., From word embeddings to document distances, ICML 2015 (relaxed WMD); {EMBED_PAPER}"
BLOCK = 4_000_000  # term occurrences gathered at once (× query terms × 4 bytes)


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def vocabulary_units(index: Index) -> np.ndarray:
    """``v_t / ‖v_t‖`` of every index term, ``(V, dim)`` float32."""
    return index.cache.get("models.align/units", lambda: _unit(term_vectors(index)).astype(np.float32))


def term_similarities(index: Index, q: Query) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(the query's distinct terms, their weights c(t,q)/Σc, ``(V, |q|)`` cos(v_w, v_t) for every index term w)."""
    words, counts, vectors = query_vector(index, q)
    weights = counts.astype(np.float64) / max(float(counts.sum()), 1.0)
    return words, weights, vocabulary_units(index) @ _unit(vectors.astype(np.float32)).T


def best_alignments(index: Index, ids: np.ndarray, similarities: np.ndarray) -> np.ndarray:
    """``(len(ids), |q|)``: per sentence of ``ids`` (each with ≥ 1 term) and query term, the best cosine."""
    X = index.X
    starts = X.indptr[ids].astype(np.int64)
    lengths = X.indptr[ids + 1].astype(np.int64) - starts
    ends = np.cumsum(lengths)  # where each sentence's terms end in the gathered list
    out = np.empty((len(ids), similarities.shape[1]), dtype=np.float32)
    first = 0
    while first < len(ids):
        done = int(ends[first - 1]) if first else 0
        last = max(int(np.searchsorted(ends, done + BLOCK, side="right")), first + 1)
        offsets = ends[first:last] - lengths[first:last] - done  # each sentence's first term, block-relative
        positions = np.repeat(starts[first:last] - offsets, lengths[first:last]) + np.arange(int(ends[last - 1]) - done)
        out[first:last] = np.maximum.reduceat(similarities[X.indices[positions]], offsets, axis=0)
        first = last
    return out


def _with_terms(index: Index) -> np.ndarray:
    return index.cache.get("models.align/ids", lambda: np.flatnonzero(np.diff(index.X.indptr) > 0).astype(np.int64))


def _explain(index: Index, q: Query, sentence: int, p: Any) -> Explained:
    words, weights, sims = term_similarities(index, q)
    columns = ("term", "c(t,q)/Σc", "closest sentence word", "cos(v_t, v_w)", "contribution")
    seq = index.sequence(sentence)
    terms = np.unique(seq[seq >= 0])
    rows = []
    if len(terms) == 0 or not words:
        rows = [{"term": w, "c(t,q)/Σc": float(c), "closest sentence word": "", "cos(v_t, v_w)": 0.0,
                 "contribution": 0.0} for w, c in zip(words, weights)]
        return Explained(columns, rows, {}, {})
    best = best_alignments(index, np.array([sentence], dtype=np.int64), sims)[0]
    closest = terms[np.argmax(sims[terms], axis=0)]
    for j, (w, c) in enumerate(zip(words, weights)):
        rows.append({"term": w, "c(t,q)/Σc": float(c), "closest sentence word": index.vocab[int(closest[j])],
                     "cos(v_t, v_w)": float(best[j]), "contribution": float(c) * float(best[j])})
    return Explained(columns, rows, {}, {})


def _scores(index: Index, q: Query, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    words, weights, sims = term_similarities(index, q)
    if not words or len(ids) == 0:
        return EMPTY_IDS, EMPTY_SCORES
    # a sum per row (not a mat-vec): a sentence's score does not depend on which others are scored with it
    return ids, (best_alignments(index, ids, sims).astype(np.float64) * weights).sum(axis=1)


def _subset(index: Index, q: Query, p: NoParams, among: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    among = np.unique(np.asarray(among, dtype=np.int64))
    return _scores(index, q, among[index.X.indptr[among + 1] > index.X.indptr[among]])


@register(
    "align.v1",
    display_name="Word alignment",
    family="embed",
    params=NoParams,
    explainer=_explain,
    formula=r"\mathrm{align}(q,s)=\sum_{t\in q}\frac{c(t,q)}{\sum_{t'} c(t',q)}\,\max_{w\in s}\cos(v_t,v_w)",
    paper=PAPER,
    open_vocabulary=True,
    subset=_subset,
    description="Each query word matched to its closest sentence word in WordLlama's word vectors (a soft "
    "term coverage): 'founded' finds 'settled'. Unseen query words count too.",
)
def score_align(index: Index, q: Query, p: NoParams) -> tuple[np.ndarray, np.ndarray]:
    return _scores(index, q, _with_terms(index))
