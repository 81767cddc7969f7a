"""Entities that only restate the query: "Spanish" and "Spanish Civil War" for "Spanish Civil War".

Such an entity is in nearly every sentence of S_q *because* the ranker retrieved sentences with the
query's words, so it ranks high under every entity score while telling the reader nothing new. An
entity *restates* the query when its name, normalised by the index's own rules (its tokenizer, stop
words and case folding: the same as the query's terms), has at least one term and every one of its
terms is a term of the query. "Civil War" restates "Spanish Civil War"; "Francisco Franco" does not,
nor does "Spain": the rule compares terms, not meanings.

The app sets these entities apart (shown in their own group, never deleted); the support results
themselves are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sentret_core.index.reader import Index
from sentret_core.models.core.query import text_terms
from sentret_core.support.records import EntitySupport

ENTITY_TERMS_KEPT = 4096  # entities' names held per index: far more than the entities of a few queries


def entity_terms(index: Index, entity: int) -> tuple[str, ...]:
    """The terms of an entity's name by the index's rules (cached on the index for the entities used last)."""
    return index.cache.get_lru("support.entity_terms", entity,
                               lambda: tuple(text_terms(index, index.entity_texts[entity])),  # a name: never capped
                               size=ENTITY_TERMS_KEPT)


def restates(index: Index, query_terms: Iterable[str], entity: int) -> bool:
    """Does ``entity``'s name consist only of ``query_terms`` (the query's normalised terms)?"""
    terms = entity_terms(index, entity)
    return bool(terms) and set(terms) <= set(query_terms)


def split_restating(
    index: Index, query_terms: Iterable[str], entities: Sequence[EntitySupport]
) -> tuple[list[EntitySupport], list[EntitySupport]]:
    """``entities`` in their order, split into (kept, restating the query)."""
    wanted = frozenset(query_terms)
    kept: list[EntitySupport] = []
    restating: list[EntitySupport] = []
    for es in entities:
        (restating if restates(index, wanted, es.entity.entity) else kept).append(es)
    return kept, restating
