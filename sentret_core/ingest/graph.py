"""The entity containment graph G ∈ {0,1}^{|S|×|E|} (Blanco & Zaragoza, SIGIR 2010, §3) and its entity table.

G[s, e] = 1 iff sentence s mentions entity e; an entity is its normalised text plus
its spaCy label, so "Paris/GPE" and "Paris/PERSON" are two entities.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sentret_core.ingest.nlp import Mention

MENTION_COLUMNS = ("sentence", "entity", "token_start", "token_end", "char_start", "char_end")


class GraphBuilder:
    """Collects mentions sentence by sentence and turns them into G, the entity and mention tables."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], int] = {}
        self._columns = {name: array("q") for name in MENTION_COLUMNS}

    def add(self, sentence: int, mentions: Sequence[Mention]) -> None:
        for m in mentions:
            entity = self._ids.setdefault((m.text, m.label), len(self._ids))
            values = (sentence, entity, m.token_start, m.token_end, m.char_start, m.char_end)
            for name, value in zip(MENTION_COLUMNS, values):
                self._columns[name].append(value)

    def finish(self, n_sentences: int) -> tuple[pd.DataFrame, pd.DataFrame, sp.csr_matrix]:
        """Return (entities, mentions, G)."""
        mentions = pd.DataFrame(
            {name: np.frombuffer(col, dtype=np.int64).astype(np.int32) for name, col in self._columns.items()}
        )
        G = containment_matrix(
            mentions["sentence"].to_numpy(), mentions["entity"].to_numpy(), n_sentences, len(self._ids)
        )
        keys = list(self._ids)
        entities = pd.DataFrame(
            {
                "text": [text for text, _ in keys],
                "label": [label for _, label in keys],
                "sf": np.diff(G.tocsc().indptr).astype(np.int32),
            }
        )
        return entities, mentions, G


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
