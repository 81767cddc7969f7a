"""minilm.v1's semantic first stage: an approximate nearest-neighbour graph over the sentence vectors.

An exact scan costs one product over every sentence (about 130 ms at a million on two cores); a
hierarchical navigable small-world graph (HNSW: Malkov & Yashunin, IEEE TPAMI 42(4) 2020) finds a query's
nearest sentences by visiting a few thousand. The graph is usearch's (Apache-2.0), with the vectors
quantised to int8 inside it (384 bytes a sentence) and ``CONNECTIVITY`` links a node; it is built with the
sentence vectors (``sentret train minilm``: by default from ``ANN_MIN_SENTENCES`` sentences on) and kept in
the same artefact, as the bytes usearch serialises. The graph only chooses candidates: each is then
scored exactly, from the stored vectors, as the exact scan scores it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.index import artefacts
    from sentret_core.index.reader import Index

ARRAY = "ann"  # the artefact's array holding the serialised graph (uint8)
CONNECTIVITY = 12  # links a node (M); 16 gains little recall here and costs 32 bytes a sentence
EXPANSION_ADD = 128  # candidates kept while linking a new node (efConstruction)
EXPANSION_SEARCH = 64  # the least a search keeps (efSearch)
EXPANSION_PER_CANDIDATE = 2  # a search for n keeps 2n: recall@100 0.927 → 0.956 at a million, 9 → 18 ms p95
QUANTISATION = "i8"


def build_graph(vectors: np.ndarray, threads: int = 0) -> np.ndarray:
    """The serialised graph of unit ``vectors`` (float16 or float32, one row per sentence id), as uint8."""
    from usearch.index import Index as Graph

    graph = Graph(ndim=vectors.shape[1], metric="cos", dtype=QUANTISATION, connectivity=CONNECTIVITY,
                  expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)
    if len(vectors):
        graph.add(np.arange(len(vectors), dtype=np.uint64), np.asarray(vectors, dtype=np.float32), threads=threads)
    saved = graph.save()
    assert saved is not None  # save() with no path returns the bytes
    return np.frombuffer(bytes(saved), dtype=np.uint8)


def _restore(found: artefacts.Artefact) -> tuple[Any, np.ndarray]:
    """The graph, viewing the artefact's bytes in place (kept beside it: they must live as long as it)."""
    from usearch.index import Index as Graph

    serialised = np.ascontiguousarray(found.arrays[ARRAY])
    graph = Graph.restore(serialised.data, view=True)
    if graph is None:
        raise SentretError(f"the nearest-neighbour graph of the sentence vectors {found.name!r} cannot be read; "
                           "encode them again with `sentret train minilm … --force`")
    return graph, serialised


def graph_of(index: Index, found: artefacts.Artefact) -> Any:
    """The usearch graph of ``found`` (a minilm artefact with a graph), restored once per loaded index."""
    return index.cache.get(f"models.minilm.ann/{found.reference}", lambda: _restore(found))[0]


def nearest(graph: Any, query: np.ndarray, count: int) -> np.ndarray:
    """The ids (ascending) of the ``count`` sentences the graph finds nearest to the unit vector ``query``."""
    if count <= 0 or len(graph) == 0:
        return np.zeros(0, dtype=np.int64)
    graph.expansion_search = max(EXPANSION_SEARCH, EXPANSION_PER_CANDIDATE * count)
    found = graph.search(np.asarray(query, dtype=np.float32), count, threads=1)
    return np.unique(np.asarray(found.keys, dtype=np.int64))
