"""Entity scores from the top-k sentences of a query (Blanco & Zaragoza, SIGIR 2010, §3.1, eqs. 9-12).

Given S_q (the top-k sentence ids), the statistics come from the rows of the entity
containment graph G for those sentences only — ``G[S_q]`` and a bincount — never from a
dense pass over all entities.

* frequency   E_FREQ(q,e)  = |S_qe|                                   (eq. 9)
* rarity      E_RARITY(e)  = log(|S| / Σ_s G[s,e])                    (eq. 10)
* combination E_COMB(q,e)  = E_FREQ · E_RARITY                         (eq. 11)
* KLD         E_KLD(q,e)   = P(e|θ_q) · log(P(e|θ_q) / P(e|θ_S)),     (eqs. 12-13)
              P(e|θ_q) = |S_qe| / |S_q|,  P(e|θ_S) = Σ_s G[s,e] / |S|
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.index.reader import Index

ENTITY_SCORES = ("frequency", "rarity", "combination", "kld")


@dataclass(frozen=True)
class EntityStats:
    """The four entity scores of every entity mentioned in S_q (arrays aligned with ``ids``)."""

    ids: np.ndarray  # entity ids, ascending
    frequency: np.ndarray  # |S_qe|
    rarity: np.ndarray
    combination: np.ndarray
    kld: np.ndarray
    n_top: int  # |S_q|

    def score(self, name: str) -> np.ndarray:
        check_entity_score(name)
        return np.asarray(getattr(self, name), dtype=np.float64)

    def __len__(self) -> int:
        return len(self.ids)


def check_entity_score(name: str) -> None:
    if name not in ENTITY_SCORES:
        raise SentretError(f"unknown entity score {name!r}; choose one of {', '.join(ENTITY_SCORES)}")


def rarity(index: Index, entities: np.ndarray) -> np.ndarray:
    """E_RARITY(e) = log(|S| / Σ_s G[s,e]) (eq. 10)."""
    return np.log(index.N / entity_sf(index)[entities])


def entity_sf(index: Index) -> np.ndarray:
    """Σ_s G[s,e] for every entity, as float64 (cached on the index)."""
    return index.cache.get("support.entity_sf", lambda: index.entity_sf.astype(np.float64))


def entity_sentences(index: Index, entity: int) -> np.ndarray:
    """The sentences mentioning ``entity``, ascending (a column of G)."""
    GT = index.GT
    return np.asarray(GT.indices[GT.indptr[entity] : GT.indptr[entity + 1]], dtype=np.int64)


def entity_stats(index: Index, top: np.ndarray) -> EntityStats:
    """Frequency, rarity, combination and KLD of the entities mentioned in the sentences ``top`` (S_q)."""
    top = np.asarray(top, dtype=np.int64)
    mentioned = np.asarray(index.G[top].indices)  # one entry per (sentence, entity) pair
    ids, frequency = np.unique(mentioned, return_counts=True)
    freq = frequency.astype(np.float64)
    rare = rarity(index, ids)
    p_query = freq / max(len(top), 1)
    p_corpus = entity_sf(index)[ids] / index.N
    kld = p_query * np.log(p_query / p_corpus)
    return EntityStats(ids.astype(np.int64), freq, rare, freq * rare, kld, len(top))
