"""The entity containment graph G ∈ {0,1}^{|S|×|E|} (Blanco & Zaragoza, SIGIR 2010, §3).

G[s, e] = 1 iff sentence s mentions entity e; an entity is its normalised text plus
its spaCy label, so "Paris/GPE" and "Paris/PERSON" are two entities.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def containment_matrix(
    sentences: np.ndarray, entities: np.ndarray, n_sentences: int, n_entities: int
) -> sp.csr_matrix:
    """G as CSR with one stored 1 per (sentence, entity) pair, however often it is mentioned."""
    G = sp.csr_matrix(
        (np.ones(len(sentences), dtype=np.int8), (sentences, entities)),
        shape=(n_sentences, n_entities),
    )
    G.sum_duplicates()
    G.data[:] = 1
    return G
