"""``minilm.v1``: the cosine of transformer sentence embeddings of the query and the sentence.

A text's embedding is the mean of the last layer's token vectors of all-MiniLM-L6-v2 over its word pieces
(special tokens included, as sentence-transformers pools), L2-normalised (Reimers & Gurevych, EMNLP 2019;
the encoder: Wang et al., NeurIPS 2020)::

    cos(q, s) = ê(q) · ê(s),   ê(x) = m(x) / ‖m(x)‖,   m(x) = (1/n_x) Σ_j h_j(x)

The encoder reads the query as it was written, stop words and word order included: "who fought for the
Republic" and "fought republic" are different questions to it. So unlike every lexical model, its score of a
string is not that of the string's terms. The sentences' vectors are computed once per index, an explicit
step (``sentret train minilm INDEX``, :mod:`sentret_core.models.training.sentence_vectors`), and stored as
float16; a query costs one encoding (a few milliseconds) and one float32 product over every sentence: every
sentence is a candidate. On a large index the vectors carry a nearest-neighbour graph
(:mod:`sentret_core.models.minilm.ann`), and its ``candidates`` nearest sentences are the candidates instead,
each scored exactly as the scan scores it. A closed candidate set (a benchmark question's sentences, a
ranker's features) is always scored exactly, every member.

Its explanation is exact: because m(s) is a mean, the cosine is a sum over the sentence's word pieces,
``cos = Σ_j ê(q)·h_j / (n_s ‖m(s)‖)``, one row each, with the query's word piece closest to each (cosine
of their contextual vectors) as the visible reason. The pieces are re-encoded in float32, so their sum
differs from the stored float16 vector's score by its rounding, shown as one more addend.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES
from sentret_core.models.core.params import Params, param
from sentret_core.models.core.registry import register
from sentret_core.models.core.spec import Explained
from sentret_core.models.minilm import ann
from sentret_core.models.minilm.encoder import encoder
from sentret_core.models.training.sentence_vectors import DEFAULT_NAME, KIND, load_vectors

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query

PAPER = ("Reimers & Gurevych, Sentence-BERT, EMNLP 2019; Wang et al., MiniLM, NeurIPS 2020 "
         "(all-MiniLM-L6-v2); Momtazi & Klakow, IP&M 51(4) 2015 (the vocabulary gap)")
ROUNDING = "float16 storage"  # the explanation's addend: stored score − the pieces' float32 sum


FIRST_STAGES = ("auto", "exact")


@dataclass(frozen=True)
class MiniLMParams(Params):
    vectors: str = param(DEFAULT_NAME, "the sentence vectors: a minilm artefact of the index "
                         "(`sentret train minilm INDEX`)", artefact=KIND)
    first_stage: str = param("auto", "which sentences are candidates: all (exact), or the graph's nearest where the "
                             "vectors carry a nearest-neighbour graph (auto; `sentret train minilm --ann`)",
                             choices=FIRST_STAGES)
    candidates: int = param(1000, "auto, with a graph: how many nearest sentences it finds (each scored exactly)",
                            min=1, max=100_000, step=100)


@lru_cache(maxsize=256)
def query_vector(text: str) -> np.ndarray:
    """ê(q), float32 (a support request scores one query under several settings)."""
    vector: np.ndarray = encoder().encode([text])[0]
    vector.setflags(write=False)
    return vector


def _text(q: Query) -> str:
    return q.text or " ".join(q.terms)


def _artefact(index: Index, p: MiniLMParams) -> artefacts.Artefact:
    """The index's sentence vectors, refused when they were encoded by other weights than the query's."""
    found = artefacts.read(index, KIND, p.vectors)
    if found.meta.get("weights") != encoder().checksum:
        raise SentretError(f"the sentence vectors {p.vectors!r} of {index.path} were encoded by other MiniLM "
                           "weights than the installed ones; encode them again: "
                           f"sentret train minilm {index.path} --name {p.vectors} --force")
    return found


def dots(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each row's dot product with ``query``, in float64: einsum's, whose value of a row does not depend on the
    other rows (a BLAS mat-vec's does: its kernels treat a block's last rows apart), so the scan and the
    rescoring of any set agree bit for bit."""
    return np.einsum("ij,j->i", vectors, query).astype(np.float64)


def _cosines(index: Index, q: Query, p: MiniLMParams, ids: np.ndarray) -> np.ndarray:
    """The exact score of each sentence of ``ids``: the scan's values."""
    ids = np.asarray(ids, dtype=np.int64)
    text = _text(q)
    if not text.strip() or not len(ids):
        return np.zeros(len(ids))
    return dots(_artefact(index, p).arrays["vectors"][ids].astype(np.float32), query_vector(text))


def _subset(index: Index, q: Query, p: MiniLMParams, among: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ids = np.unique(np.asarray(among, dtype=np.int64))
    return ids, _cosines(index, q, p, ids)


def _uses_graph(found: artefacts.Artefact, p: MiniLMParams) -> bool:
    return p.first_stage == "auto" and ann.ARRAY in found.arrays


def _explain(index: Index, q: Query, sentence: int, p: MiniLMParams) -> Explained:
    columns = ("term", "closest query piece", "cos(h_j, h_q)", "contribution")
    stored = float(_cosines(index, q, p, np.array([sentence]))[0])
    pieces, states = encoder().token_states(index.texts[sentence])
    q_pieces, q_states = encoder().token_states(_text(q))
    mean = states.astype(np.float64).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    e_q = query_vector(_text(q)).astype(np.float64)
    shares = states.astype(np.float64) @ e_q / (len(pieces) * norm) if norm else np.zeros(len(pieces))
    unit = states / np.maximum(np.linalg.norm(states, axis=1, keepdims=True), 1e-30)
    q_unit = q_states / np.maximum(np.linalg.norm(q_states, axis=1, keepdims=True), 1e-30)
    pairs = unit @ q_unit.T
    closest = pairs.argmax(axis=1)
    rows = [{"term": piece, "closest query piece": q_pieces[int(c)], "cos(h_j, h_q)": float(pairs[j, c]),
             "contribution": float(shares[j])} for j, (piece, c) in enumerate(zip(pieces, closest))]
    total = float(shares.sum())
    return Explained(columns, rows, {ROUNDING: stored - total}, {"‖m(s)‖": norm, "word pieces": float(len(pieces))})


@register(
    "minilm.v1",
    display_name="MiniLM cosine",
    family="minilm",
    params=MiniLMParams,
    explainer=_explain,
    closed=_cosines,
    subset=_subset,
    formula=r"\cos(q,s)=\hat e(q)\cdot\hat e(s),\;\hat e(x)=\frac{m(x)}{\lVert m(x)\rVert},"
            r"\;m(x)=\frac{1}{n_x}\sum_j h_j(x)",
    paper=PAPER,
    open_vocabulary=True,
    reads_text=True,
    explain_tolerance=1e-6,  # a float32 dot product; the explanation adds the same float32 values in float64
    description="Cosine of transformer sentence embeddings (all-MiniLM-L6-v2, run in numpy): reads the whole "
    "question, stop words and word order included, and reaches sentences that share no word with it.",
)
def score_minilm(index: Index, q: Query, p: MiniLMParams) -> tuple[np.ndarray, np.ndarray]:
    text = _text(q)
    if not text.strip():
        return EMPTY_IDS, EMPTY_SCORES
    found = _artefact(index, p)
    if _uses_graph(found, p):
        ids = ann.nearest(ann.graph_of(index, found), query_vector(text), p.candidates)
        return ids, _cosines(index, q, p, ids)
    return np.arange(index.N, dtype=np.int64), dots(load_vectors(index, found), query_vector(text))
