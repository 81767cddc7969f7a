"""Impact lists: for each frequent term, its sentences best first by that term's own part of a model's score,
built once with the index (:mod:`~sentret_core.models.training.impacts`, ``sentret train impacts``), so that a
query pairing a frequent term with rarer ones reads a few thousand of the frequent term's sentences, not millions.

Where MaxScore cannot leave a frequent term out (the query's other terms reach fewer than k sentences), every
sentence the frequent term reaches was scored. With the term's list, ordered by a *key* whose value at a sentence
bounds that sentence's score when no other query term reaches it, the top k is exact from

* ``base``: every sentence the query's unlisted terms reach, and every sentence of a document where two or
  more of its listed terms occur (:func:`shared_documents`);
* the first ``depth`` sentences of each listed term's list,

all scored exactly by the model's own scorer at those sentences. A sentence outside them is reached by one
listed term at most (a sentence's score reads only its own document) and by no unlisted one, so it scores at
most that term's key at its list's last read entry (plus what the absent terms add): ``bound(depth)``, the
largest over the listed terms, raised by :func:`~sentret_core.models.arrays.maxscore.margin`. Once the k-th best
score read is above it, no other sentence can be in the top k — even one tied with it (the bound is strict).
Otherwise the depth doubles, up to the lists' length, and then the model goes on as without lists (None). (A
bound summing the listed terms' keys, with no shared documents read, stayed above the k-th score down the whole
lists for every query with two frequent terms at 10M.)

The keys are each model's (BM25F: :mod:`~sentret_core.models.bm25.pruning`; the language models:
:mod:`~sentret_core.models.lm.pruning`); a list holds for the parameters it was built with (recorded with it)
and is not read for others.

How the exact top k fits together, with a worked example: docs/topk.md.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.models.arrays.local import document_sentences
from sentret_core.models.arrays.vectors import EMPTY_IDS, run_starts, union

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

KIND = NAME = "impacts"
FIRST_DEPTH = 1024  # entries of each list read first (at least 2k)
MAXIMA = ("terms", "by_length", "document")  # the stored maxima's arrays (maxima/<name>)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredMaxima:
    """Term maxima stored with the lists (:mod:`~sentret_core.models.arrays.maxima`): ``terms`` (sorted ids), per
    term the largest count of each sentence length (``by_length``, terms × lengths) and the largest c(t,d)/|d|
    (``document``)."""

    terms: np.ndarray
    by_length: np.ndarray
    document: np.ndarray

    def row(self, term: int) -> int | None:
        """The position of ``term`` in :attr:`terms`, None if none are stored for it."""
        return _position(self.terms, term)


@dataclass(frozen=True)
class ImpactLists:
    """The lists of one index: ``terms`` (sorted term ids), and per model the parameters its lists hold for and an
    array (terms × variants × length) of sentence ids, best first (a variant is a key's form, e.g. an LM's number
    of other query terms)."""

    terms: np.ndarray
    lists: dict[str, np.ndarray]
    params: dict[str, dict[str, Any]]
    maxima: StoredMaxima | None = None  # lists built before the maxima were stored have none

    def row(self, term: int) -> int | None:
        """The position of ``term`` in :attr:`terms`, None if it has no list."""
        return _position(self.terms, term)

    def of(self, model: str, params: dict[str, Any]) -> np.ndarray | None:
        """The lists of ``model`` if they were built for ``params`` (a model's :meth:`Params.to_dict`), else None."""
        found = self.lists.get(model)
        return found if found is not None and self.params.get(model) == params else None


def _position(terms: np.ndarray, term: int) -> int | None:
    at = int(np.searchsorted(terms, term))
    return at if at < len(terms) and int(terms[at]) == term else None


def impact_lists(index: Index) -> ImpactLists | None:
    """The index's impact lists, None without them. Lists that do not check (damaged, of another build) are not
    used — every model then scores its candidates as without them (the same scores) — and said once in the log."""
    record = index.cache.get("models.impacts.record",
                             lambda: str(artefacts.folder_of(index.path, NAME) / artefacts.META))
    try:
        os.stat(record)  # an index without lists: one stat a query (a failed read cost 15 µs, twice a query)
    except OSError:
        return None
    try:
        found = artefacts.read(index, KIND, NAME)
    except SentretError as err:  # there, but not sound
        _warn_once(index, str(err))
        return None
    return index.cache.get_stamped("models.impacts", found.sha256, lambda: _lists(found))


def _warn_once(index: Index, problem: str) -> None:
    index.cache.get(f"models.impacts.unused/{problem}", lambda: log.warning("impact lists not used: %s", problem))


def _lists(found: artefacts.Artefact) -> ImpactLists:
    arrays = found.arrays
    models = found.meta["models"]
    maxima = StoredMaxima(*(arrays[f"maxima/{part}"] for part in MAXIMA)) if f"maxima/{MAXIMA[0]}" in arrays else None
    return ImpactLists(arrays["terms"], {m: arrays[f"lists/{m}"] for m in models}, dict(models), maxima)


Found = tuple[np.ndarray, np.ndarray, bool]  # a top k's candidates, their scores, and whether any was found


def around_maxscore(listed: Callable[[bool], Found | None], pruned: Callable[[], Found | None]) -> Found | None:
    """A model's top k from its lists where they go first (``listed(True)``, :func:`goes_first`), else by MaxScore
    (``pruned``), else from its lists where they go after it (``listed(False)``); None when none of them can."""
    found = listed(True)
    if found is None:
        found = pruned()
    if found is None:
        found = listed(False)
    return found


def goes_first(sizes: Sequence[int], length: int) -> bool:
    """Whether the lists are tried before MaxScore: when the query's unlisted terms are in ``length`` sentences or
    fewer in all (their reach, part of ``base``, is then small; a mid-frequency one is cheaper for MaxScore to look
    up at a few candidates than to score all of: at 10M, BM25F's top 10 took 35-445 ms from a list against 5-19 ms).
    BM25F also waits for a large k with two frequent terms (:data:`~sentret_core.models.bm25.pruning.
    SEVERAL_FIRST_FROM`)."""
    return sum(sizes) <= length


def shared_documents(index: Index, docs: Sequence[np.ndarray]) -> np.ndarray:
    """The sentences (sorted) of the documents in two or more of ``docs`` (each the sorted distinct documents where a
    listed term occurs): a sentence elsewhere is reached by one listed term at most."""
    if len(docs) < 2:
        return EMPTY_IDS
    every = np.concatenate(docs)
    every.sort(kind="stable")
    starts = run_starts(every)
    counts = np.diff(np.append(starts, len(every)))
    return document_sentences(index, every.take(starts[counts >= 2]))


def shared_estimate(index: Index, terms: np.ndarray) -> float:
    """The sentences of the documents holding two or more of ``terms`` (their shared documents), estimated as if the
    terms were in documents independently (df/D each) and every document had the mean length: no posting is read.
    On the scale benchmark's corpus the estimate is 0.55-0.6 of the true number (long documents hold more terms)."""
    shares = np.asarray(index.df, dtype=np.float64)[np.asarray(terms, dtype=np.int64)] / max(index.D, 1)
    none = float(np.prod(1.0 - shares))
    one = sum(float(share * np.prod(np.delete(1.0 - shares, i))) for i, share in enumerate(shares))
    return max(0.0, 1.0 - none - one) * index.N


def listed_top_k(
    k: int, base: np.ndarray, lists: Sequence[np.ndarray],
    score_at: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], bound: Callable[[int], float],
    ties_settle: Callable[[int], bool] | None = None,
) -> Found | None:
    """The exact top-k candidates (ids ascending, their scores) from ``base`` and the first entries of ``lists``
    (as the module says): ``score_at(ids)`` gives sorted ids' exact scores (ids, scores), ``bound(depth)`` a bound
    (already raised by its margin) of the score of a sentence in neither. None when the lists' whole length does not
    reach a k-th score above the bound, or is too short for k.

    ``ties_settle(depth)`` True says that ``bound(depth)`` is exact, that a sentence in neither scores below it or,
    tied with it, has an id above the entries read that tie with it, and that those entries score at least the
    bound (TF-ISF of one listed term: a count keys its list, and most sentences hold the term once). A k-th best
    equal to the bound then settles the top k too: the at least 2k entries read rank before any such sentence."""
    length = min((len(entries) for entries in lists), default=0)
    if k <= 0 or 2 * k > length:
        return None
    depth = min(length, max(FIRST_DEPTH, 2 * k))
    while True:
        ids, scores = score_at(union([base, *(entries[:depth] for entries in lists)]))
        kth = np.partition(scores, len(scores) - k)[len(scores) - k] if len(scores) >= k else -np.inf
        limit = bound(depth)
        if kth > limit or (kth == limit and ties_settle is not None and ties_settle(depth)):  # a NaN never is
            return ids, scores, True
        if depth == length:
            return None
        depth = min(length, 2 * depth)
