"""The public scoring API: :func:`score`, :func:`top_k`, :func:`search`, :func:`explain`, :func:`distribution`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.checks import (
    ONLY_CONTROL,
    check_instance,
    check_int,
    check_model_name,
    check_query,
    check_sentence,
    query_emptied,
)
from sentret_core.defaults import DEFAULT_K, DEFAULT_RANKER
from sentret_core.errors import ArgumentTypeError, ArgumentValueError, SentretError
from sentret_core.index.loaded import check_index
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.vectors import EMPTY_SCORES
from sentret_core.models.core.families import get_family
from sentret_core.models.core.query import no_match, prepare
from sentret_core.models.core.records import Explanation, Scores
from sentret_core.models.core.registry import get_model
from sentret_core.models.core.spec import RankedTopK

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.params import Params
    from sentret_core.models.core.query import Query
    from sentret_core.models.core.spec import ModelSpec

_EMPTY_IDS = np.zeros(0, dtype=np.int64)


def score(index: Index, query: str | Sequence[str], model: str = DEFAULT_RANKER, /, **params: Any) -> Scores:
    """Score every candidate sentence of ``query`` under ``model`` with ``params``.

    ``index``, ``query`` and ``model`` are positional only, so a model may have a parameter
    named ``model`` (``ltr.v1``). ``query`` is a string (normalised with the index's own rules)
    or a list of terms already normalised. Candidates are the sentences matching a query term in a field the model uses;
    ``ids`` come back sorted ascending. A query with no terms, or none the index knows, gives
    empty Scores with a ``reason`` — never an exception. Query text is cleaned first
    (:func:`sentret_core.checks.clean_text`: lone surrogates and control characters become spaces);
    a query of nothing else gets :data:`~sentret_core.checks.ONLY_CONTROL` as its reason.

    Raises :class:`~sentret_core.errors.ArgumentTypeError` (a ``TypeError``) when ``index`` is not
    an :class:`Index`, ``query`` not a string or list of strings, or ``model`` not a string; and
    :class:`~sentret_core.errors.SentretError` (a ``ValueError``) for an unknown model, parameter or
    a value outside the parameter's declared range. Each message names the argument.
    """
    index, text, spec, resolved = _checked(index, query, model, params)
    q = prepare(index, text)
    if spec.reason(q) is not None:
        return _unmatched(q, spec, resolved, query)
    return _scores(q, spec, resolved, *spec.scorer(index, q, resolved))


def search(
    index: Index, query: str | Sequence[str], model: str = DEFAULT_RANKER, k: int = DEFAULT_K, /, **params: Any
) -> Scores:
    """``top_k(score(index, query, model, **params), k)``, the same Scores bit for bit, faster.

    A model registered with a ``top_k`` path (:attr:`~sentret_core.models.core.spec.ModelSpec.top_k`:
    ``bm25.v1``'s and ``bm25f.v1``'s MaxScore) scores only the sentences that can reach the top k; any other model, or
    a query the pruning cannot help, is scored exhaustively. Raises what :func:`score` and :func:`top_k` raise.
    """
    index, text, spec, resolved = _checked(index, query, model, params)
    return run_search(index, text, spec, resolved, check_int("k", k, 0), asked=query)


def run_search(
    index: Index, text: str | Sequence[str], spec: ModelSpec, resolved: Params, k: int, asked: Any = None
) -> Scores:
    """:func:`search` for a caller whose arguments are checked already (the support engine's query context):
    ``text`` cleaned, ``resolved`` from ``spec.resolve``, ``k ≥ 0``; ``asked``, the query before cleaning
    (default ``text``), says whether cleaning emptied it."""
    q = prepare(index, text)
    if spec.reason(q) is not None:
        return best_of(_unmatched(q, spec, resolved, text if asked is None else asked), k)
    if get_family(spec.family).reads_postings:  # their blocks are checked up front, two files at once
        postings(index).prepare(q.ids)
    found = None if spec.top_k is None else spec.top_k(index, q, resolved, k)
    if found is None:
        return best_of(_scores(q, spec, resolved, *spec.scorer(index, q, resolved)), k)
    ids, values, any_candidate = found
    if not any_candidate:
        return best_of(_scores(q, spec, resolved, _EMPTY_IDS, EMPTY_SCORES), k)
    if isinstance(found, RankedTopK):
        return Scores(ids, values, q.terms, spec.name, resolved, None, q.oov, True)
    return best_of(Scores(ids.astype(np.int64), values, q.terms, spec.name, resolved, None, q.oov), k)


def _checked(index: Any, query: Any, model: Any, params: dict[str, Any]) -> tuple[Index, Any, ModelSpec, Params]:
    index = check_index(index)
    text = check_query(query)
    spec = get_model(check_model_name(model))
    return index, text, spec, spec.resolve(params)


def _unmatched(q: Query, spec: ModelSpec, resolved: Params, query: Any) -> Scores:
    """Empty Scores for a query that cannot match (no terms, none known, or only control characters)."""
    reason = ONLY_CONTROL if query_emptied(query) else q.reason
    return Scores(_EMPTY_IDS, EMPTY_SCORES, q.terms, spec.name, resolved, reason, q.oov)


def _scores(q: Query, spec: ModelSpec, resolved: Params, ids: np.ndarray, values: np.ndarray) -> Scores:
    if len(ids) == 0:
        return Scores(_EMPTY_IDS, EMPTY_SCORES, q.terms, spec.name, resolved, no_match(q), q.oov)
    return Scores(ids.astype(np.int64), values, q.terms, spec.name, resolved, None, q.oov)


def top_k(scores: Scores, k: int) -> Scores:
    """The ``k`` best of ``scores``: by score descending, ties by sentence id ascending.

    Selects among the candidates only (a partition of their scores for the k-th largest, then
    a sort of those at or above it), never over all N sentences. ``k`` may exceed the number of
    candidates (all of them come back, ranked); ``k = 0`` gives none.

    Raises :class:`~sentret_core.errors.ArgumentTypeError` when ``scores`` is not a
    :class:`Scores` or ``k`` is not an integer (``bool``, floats and strings are refused; numpy
    integers are fine), :class:`~sentret_core.errors.ArgumentValueError` when ``k < 0``.
    """
    check_instance("scores", scores, Scores, "Scores (from score())")
    k = check_int("k", k, 0)
    _checked_arrays(scores)
    return best_of(scores, k)


def best_of(scores: Scores, k: int) -> Scores:
    """:func:`top_k` of Scores a scorer made (sound arrays) and a checked ``k``."""
    ids, values = scores.ids, scores.scores
    n = len(ids)
    if scores.ranked:
        chosen = np.arange(min(k, n))
    elif k == 0:
        chosen = _EMPTY_IDS
    else:
        if k < n:
            # everything at or above the k-th largest value; ties at it go by id (ids ascend)
            pool = np.flatnonzero(values >= np.partition(values, n - k)[n - k])
            order = np.lexsort((ids.take(pool), -values.take(pool)))[:k]
            chosen = pool.take(order)
        else:
            chosen = np.lexsort((ids, -values))
    return Scores(
        ids[chosen],
        values[chosen],
        scores.terms,
        scores.model,
        scores.params,
        scores.reason,
        scores.oov,
        True,
    )


def _checked_arrays(scores: Scores) -> tuple[np.ndarray, np.ndarray]:
    """The ids and scores of ``scores`` if they can be ranked: one-dimensional arrays of the same
    length, integer ids, finite scores (an infinite or NaN score has no place in a ranking; every
    model's parameter ranges keep its scores finite)."""
    ids, values = scores.ids, scores.scores
    if not isinstance(ids, np.ndarray) or not isinstance(values, np.ndarray) or ids.ndim != 1 or values.ndim != 1:
        raise ArgumentTypeError("scores.ids and scores.scores must be one-dimensional numpy arrays")
    if len(ids) != len(values):
        raise ArgumentValueError(
            f"scores has {len(ids):,} ids but {len(values):,} scores: each candidate needs exactly one score"
        )
    if ids.dtype.kind not in "iu" or values.dtype.kind not in "iuf":
        raise ArgumentTypeError(
            f"scores.ids must be integers and scores.scores numbers (got {ids.dtype}, {values.dtype})"
        )
    if values.dtype.kind == "f" and not bool(np.isfinite(values).all()):
        bad = int(np.count_nonzero(~np.isfinite(values)))
        raise ArgumentValueError(f"scores holds {bad:,} infinite or NaN score(s): a ranking needs finite scores")
    return ids, values


def explain(
    index: Index, query: str | Sequence[str], sentence_id: int, model: str = DEFAULT_RANKER, /, **params: Any
) -> Explanation:
    """Each query term's contribution to ``sentence_id``'s score under ``model``.

    The rows are computed from the sentence's own index rows (not the scoring path); their
    ``contribution`` column plus ``extra`` sums to ``total``, which equals ``score(...)`` for
    that sentence when it is a candidate.

    Raises what :func:`score` raises, and for ``sentence_id``
    :class:`~sentret_core.errors.ArgumentTypeError` when it is not an integer (Python or numpy;
    not a float, string, bool or None) and :class:`~sentret_core.errors.ArgumentValueError` when
    it is outside ``0 ≤ sentence_id < index.N``.
    """
    index = check_index(index)
    text = check_query(query)
    sentence = check_sentence(index, sentence_id)
    spec = get_model(check_model_name(model))
    resolved = spec.resolve(params)
    q = prepare(index, text)
    parts = spec.explainer(index, q, sentence, resolved)
    total = math.fsum([float(r["contribution"]) for r in parts.rows] + list(parts.extra.values()))
    candidate = False
    if spec.reason(q) is None:
        ids, _ = spec.scorer(index, q, resolved)
        pos = int(np.searchsorted(ids, sentence))
        candidate = pos < len(ids) and int(ids[pos]) == sentence
    return Explanation(
        spec.name,
        sentence,
        resolved,
        q.terms,
        parts.columns,
        tuple(parts.rows),
        total,
        candidate,
        dict(parts.extra),
        dict(parts.notes),
        spec.formula,
    )


def distribution(index: Index, sentence_id: int, model: str, /, **params: Any) -> np.ndarray:
    """p(t|θ_s) over the whole vocabulary for a language model (sums to 1).

    Raises :class:`~sentret_core.errors.ArgumentTypeError` / :class:`~sentret_core.errors.ArgumentValueError`
    for a ``sentence_id`` that is not an integer in ``0 ≤ sentence_id < index.N`` (as :func:`explain`),
    and :class:`~sentret_core.errors.SentretError` for a model that is not a language model, an
    unknown one or a bad parameter.
    """
    index = check_index(index)
    sentence = check_sentence(index, sentence_id)
    spec = get_model(check_model_name(model))
    if spec.distribution is None:
        raise SentretError(f"model {spec.name} is not a language model; it has no term distribution")
    return spec.distribution(index, sentence, spec.resolve(params))
