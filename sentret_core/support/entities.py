"""Entity labels, and eq. 7's aggregation over a sentence's entities of the entity scores of Blanco & Zaragoza
§3.1 (eqs. 9-12, computed in :mod:`sentret_core.support.entity_stats`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from sentret_core.defaults import DEFAULT_EXCLUDED_LABELS
from sentret_core.errors import SentretError
from sentret_core.index.reader import Index
from sentret_core.support.entity_stats import EntityStats, entity_sf

AGGREGATORS = ("sum", "avg")


def resolve_labels(index: Index, include: Iterable[str] | None) -> frozenset[str]:
    """The labels to keep: ``include`` checked against the index's labels, or all but CARDINAL and ORDINAL."""
    known = frozenset(index.entity_labels.names)
    if include is None:
        return frozenset(known - DEFAULT_EXCLUDED_LABELS)
    include = frozenset(include)
    unknown = include - known
    if unknown:
        raise SentretError(
            f"unknown entity label(s) {', '.join(sorted(unknown))}; this index has {', '.join(sorted(known))}"
        )
    return include


def label_mask(index: Index, labels: frozenset[str]) -> np.ndarray:
    """A boolean per entity: does it carry one of ``labels``? (cached per label set)."""

    def build() -> np.ndarray:
        return index.entity_labels.mask(sorted(labels))

    mask: np.ndarray = index.cache.get_lru("label_mask", ",".join(sorted(labels)), build)  # the last few label sets
    return mask


def aggregate(
    index: Index, sentences: np.ndarray, stats: EntityStats, score: str, how: str, allowed: np.ndarray
) -> np.ndarray:
    """Eq. 7: Σ (or mean) of E(q,e') over the entities e' of each sentence.

    Entities outside S_q have frequency 0 and so contribute 0, except under rarity, which is
    query-independent. Only entities with ``allowed[e]`` (the label filter) count, in the sum
    and in the average's denominator.
    """
    if how not in AGGREGATORS:
        raise SentretError(f"unknown aggregator {how!r}; choose one of {', '.join(AGGREGATORS)}")
    if score == "rarity":
        values = np.log(index.N / entity_sf(index))
    else:
        values = np.zeros(index.E, dtype=np.float64)
        values[stats.ids] = stats.score(score)
    values = np.where(allowed, values, 0.0)
    rows = index.G[np.asarray(sentences, dtype=np.int64)]
    counts = np.diff(rows.indptr)
    owners = np.repeat(np.arange(len(counts)), counts)
    total = np.bincount(owners, weights=values[rows.indices], minlength=len(counts))
    if how == "sum":
        return total
    kept = np.bincount(owners, weights=allowed[rows.indices].astype(np.float64), minlength=len(counts))
    # out is float64: bincount of no sentence at all (an entity outside Ŝ_q) is an int64 array
    return np.divide(total, kept, out=np.zeros(len(counts)), where=kept > 0)
