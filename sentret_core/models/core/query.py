"""The query: normalised by the index's own rules, split into known terms with c(t,q) and unknown ones."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.checks import clean_text
from sentret_core.defaults import MAX_QUERY_CHARS, MAX_QUERY_TERMS
from sentret_core.errors import QueryError
from sentret_core.ingest.nlp import DEFAULT_PIPELINE, QueryTokenizer, TermRules, load_pipeline, load_tokenizer

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

NO_TERMS = "the query has no terms after removing stop words and punctuation"
NO_MATCH = "no sentence contains any query term"

# Question words are stop words for retrieval, but they say what type of answer is wanted (the
# named-entity triggers of Momtazi & Klakow, IP&M 2015, §6.5). normalise() keeps each as a marker
# term "?<word>", which no index term can equal (the tokenizer splits "?" off); prepare() sets them
# apart from the terms.
MARKER = "?"
_PLACE = r"(?:country|countries|county|counties|state|states|city|cities|continent|province|region)"
_QUESTION = re.compile(
    rf"\b(who|whom|whose|when|where|how\s+(?:many|much|long|old)|what\s+year|(?:what|which)\s+{_PLACE})\b",
    re.IGNORECASE,
)
ANSWER_TYPES: dict[str, frozenset[str]] = {
    "?who": frozenset({"PERSON", "ORG", "NORP"}),
    "?when": frozenset({"DATE", "TIME"}),
    "?where": frozenset({"GPE", "LOC", "FAC"}),
    "?how-many": frozenset({"CARDINAL", "QUANTITY", "MONEY", "PERCENT"}),
    "?how-long": frozenset({"DATE", "TIME", "QUANTITY"}),
    "?how-old": frozenset({"DATE", "CARDINAL"}),
}
_SAME = {"?whom": "?who", "?whose": "?who", "?what-year": "?when", "?how-much": "?how-many"}
_PLACE_QUESTION = re.compile(rf"\?(?:what|which)-{_PLACE}")  # "what country" asks where


@lru_cache(maxsize=4)
def pipeline(model: str) -> tuple[Any, TermRules]:
    """The spaCy pipeline ``model`` and its term rules, loaded once per process."""
    nlp = load_pipeline(model)
    return nlp, TermRules(nlp)


@lru_cache(maxsize=4)
def query_tokenizer(model: str) -> QueryTokenizer:
    """The tokenizer of ``model`` for queries: it never grows the pipeline's vocabulary (see
    :class:`~sentret_core.ingest.nlp.QueryTokenizer`)."""
    return QueryTokenizer(load_tokenizer(model))


class Terms(tuple[str, ...]):
    """A query's normalised terms that remember the text they came from (:func:`normalise`), so that a
    caller who normalises once and scores many times (an evaluation, a support request) still gives a
    model that reads the text as written (minilm.v1) the words the terms leave out."""

    text: str

    def __new__(cls, terms: Sequence[str], text: str) -> Terms:
        made = super().__new__(cls, terms)
        made.text = text
        return made


def normalise(index: Index, text: str) -> Terms:
    """The terms of ``text`` by the index's own rules (its spaCy model's tokenizer), then the
    markers of its question words (:func:`question_markers`)."""
    if isinstance(text, str) and len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query has {len(text):,} characters; at most {MAX_QUERY_CHARS:,} are allowed "
                         "(shorten it to the words that matter)")
    text = clean_text(text).text  # spaCy cannot hash a lone surrogate (sentret_core.checks)
    return Terms(check_length(text_terms(index, text)) + question_markers(text), text)


def text_terms(index: Index, text: str) -> list[str]:
    """The terms of ``text`` by the index's rules, of any length and without question markers: for
    the index's own texts (an entity's name), which a visitor does not choose."""
    tokenizer = query_tokenizer(str(index.manifest.get("model", DEFAULT_PIPELINE)))
    return tokenizer.terms(clean_text(text).text)


def check_length(terms: list[str]) -> list[str]:
    """``terms``, or a QueryError when there are more than :data:`MAX_QUERY_TERMS` of them (every model's
    cost grows with a query's terms)."""
    count = sum(not is_marker(t) for t in terms)  # the question-word markers are never scored
    if count > MAX_QUERY_TERMS:
        raise QueryError(f"the query has {count:,} terms; at most {MAX_QUERY_TERMS} are allowed "
                         "(shorten it to the words that matter)")
    return terms


def question_markers(text: str) -> list[str]:
    """The distinct question words of ``text`` as marker terms, in order: ``?who``, ``?when``,
    ``?where``, ``?how-many``, ``?how-long``, ``?how-old`` (whom/whose → who, what year → when,
    how much → how-many, what/which country, state, city … → where)."""
    found = (MARKER + "-".join(m.group(1).lower().split()) for m in _QUESTION.finditer(text))
    return list(dict.fromkeys(_same(marker) for marker in found))


def _same(marker: str) -> str:
    return "?where" if _PLACE_QUESTION.fullmatch(marker) else _SAME.get(marker, marker)


def is_marker(term: str) -> bool:
    return term.startswith(MARKER)


def retrieval_terms(terms: Sequence[str]) -> tuple[str, ...]:
    """``terms`` without the question-word markers (what a page shows as the query's terms)."""
    return tuple(t for t in terms if not is_marker(t))


def expected_labels(asks: Sequence[str]) -> frozenset[str]:
    """The entity labels that answer the question words ``asks`` (empty for none)."""
    return frozenset().union(*(ANSWER_TYPES.get(a, frozenset()) for a in asks))


@dataclass(frozen=True)
class Query:
    """A normalised query: its terms, and the distinct in-vocabulary ones with ``c(t,q)``."""

    terms: tuple[str, ...]  # every normalised term, in order, with repeats
    unique: tuple[str, ...]  # distinct in-vocabulary terms, in order of first occurrence
    ids: np.ndarray  # their term ids (int64)
    qtf: np.ndarray  # c(t,q) of each (float64)
    oov: tuple[str, ...]  # distinct terms the index has never seen
    asks: tuple[str, ...] = ()  # the question-word markers (``?when`` …), never scored as terms
    # the query as written (control characters and lone surrogates made spaces), for a model that reads
    # every word, stop words and order included (minilm.v1); a list of terms stands for itself, joined
    text: str = ""

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
    given = normalise(index, query) if isinstance(query, str) else check_length([str(t) for t in query])
    terms = [t for t in given if not is_marker(t)]
    asks = tuple(dict.fromkeys(t for t in given if is_marker(t)))
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
        asks,
        written_text(query),
    )


def written_text(query: str | Sequence[str]) -> str:
    """The query as written: the string itself (cleaned), the text a :class:`Terms` came from, or a list of
    terms joined (without question-word markers)."""
    if isinstance(query, str):
        return clean_text(query).text
    if isinstance(query, Terms):
        return query.text
    return " ".join(str(t) for t in query if not is_marker(str(t)))
