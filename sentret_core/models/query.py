"""The query: normalised by the index's own rules, split into known terms with c(t,q) and unknown ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.ingest.nlp import DEFAULT_MODEL, TermRules, load_pipeline, query_terms

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

NO_TERMS = "the query has no terms after removing stop words and punctuation"
NO_MATCH = "no sentence contains any query term"


@lru_cache(maxsize=4)
def pipeline(model: str) -> tuple[Any, TermRules]:
    """The spaCy pipeline ``model`` and its term rules, loaded once per process."""
    nlp = load_pipeline(model)
    return nlp, TermRules(nlp)


def normalise(index: Index, text: str) -> list[str]:
    """The terms of ``text`` by the index's own rules (its spaCy model's tokenizer)."""
    nlp, rules = pipeline(str(index.manifest.get("model", DEFAULT_MODEL)))
    return query_terms(text, nlp, rules)


@dataclass(frozen=True)
class Query:
    """A normalised query: its terms, and the distinct in-vocabulary ones with ``c(t,q)``."""

    terms: tuple[str, ...]  # every normalised term, in order, with repeats
    unique: tuple[str, ...]  # distinct in-vocabulary terms, in order of first occurrence
    ids: np.ndarray  # their term ids (int64)
    qtf: np.ndarray  # c(t,q) of each (float64)
    oov: tuple[str, ...]  # distinct terms the index has never seen

    @property
    def reason(self) -> str | None:
        """Why nothing can match, when that is already clear before scoring."""
        if not self.terms:
            return NO_TERMS
        if not self.unique:
            return no_match(self)
        return None


def no_match(query: Query) -> str:
    """:data:`NO_MATCH`, naming the query's unknown words."""
    if query.oov:
        return f"{NO_MATCH} (not in the index: {', '.join(query.oov)})"
    return NO_MATCH


def prepare(index: Index, query: str | Sequence[str]) -> Query:
    """Normalise a query string, or take a list of already normalised terms as they are."""
    terms = normalise(index, query) if isinstance(query, str) else [str(t) for t in query]
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    lookup = index.term_index
    unique, ids, qtf, oov = [], [], [], []
    for term, count in counts.items():
        tid = lookup.get(term, -1)
        if tid < 0:
            oov.append(term)
        else:
            unique.append(term)
            ids.append(tid)
            qtf.append(count)
    return Query(
        tuple(terms),
        tuple(unique),
        np.array(ids, dtype=np.int64),
        np.array(qtf, dtype=np.float64),
        tuple(oov),
    )
