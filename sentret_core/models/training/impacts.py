"""``sentret train impacts``: the impact lists of an index's most frequent terms
(:mod:`~sentret_core.models.arrays.impacts`), for BM25F, TF-ISF and the language models, with the parameters given
(the defaults unless said): a term in more than N/``share`` sentences (and more than ``length``) gets, per
model and variant, the ``length`` sentences of the largest key, best first, ties by sentence id.

A term is keyed over its whole reach one range of documents at a time (:mod:`~sentret_core.models.arrays.
ranges`), by the code its model scores with: BM25F by x̃ (:func:`~sentret_core.models.bm25.scorer.
pseudo_frequency`), TF-ISF by c(t,s) (:func:`~sentret_core.models.tfisf.pruning.listed_top_k`), an LM by its own
part of the score plus Q·log h₀(|s|) for Q = 0 … VARIANTS-1 (:func:`~sentret_core.models.lm.pruning.listed_top_k`).
The maxima of the terms of many postings are stored with them (:mod:`~sentret_core.models.arrays.maxima`), whatever
the models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.models.arrays import maxima
from sentret_core.models.arrays.impacts import KIND, MAXIMA, NAME
from sentret_core.models.arrays.layout import layout
from sentret_core.models.arrays.postings import postings, term_fields
from sentret_core.models.arrays.ranges import Span, best_k, document_ranges
from sentret_core.models.arrays.vectors import between
from sentret_core.models.bm25.scorer import only_weighted, order_params, pseudo_frequency
from sentret_core.models.core.query import prepare
from sentret_core.models.core.registry import get_model
from sentret_core.models.lm.pruning import LISTABLE, VARIANTS
from sentret_core.models.lm.scoring import by_length, lm_scores
from sentret_core.models.tfisf.pruning import LISTS as TFISF_LISTS

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

MODELS = ("bm25f.v1", "lm-2si.v1", "tfisf.v1")  # the support sentences' default models (BM25F the default ranker)
LENGTH = 16_384  # entries per list: a top k of up to LENGTH/2 can be read from them
SHARE = 128  # a term in more than N/SHARE sentences is listed
# (sentence ids ascending, their keys: one row per variant) of one term in one range of documents
Keys = Callable[[int, Span], tuple[np.ndarray, np.ndarray]]


def listed_terms(index: Index, length: int = LENGTH, share: int = SHARE) -> np.ndarray:
    """The terms that get lists: in more than ``length`` sentences and more than N/``share``."""
    sizes = _posting_sizes(index)
    return np.flatnonzero((sizes > length) & (sizes * share > index.N)).astype(np.int64)


def _posting_sizes(index: Index) -> np.ndarray:
    """Every term's number of sentences (its postings)."""
    return np.diff(np.asarray(index.array("XT.indptr"), dtype=np.int64))


def train_impacts(
    index: Index, *, name: str = NAME, models: Sequence[str] = MODELS, length: int = LENGTH, share: int = SHARE,
    params: Mapping[str, Mapping[str, Any]] | None = None, progress: Callable[[int, int], None] | None = None,
) -> artefacts.Artefact:
    """Build and write the impact lists of ``index`` (artefact ``name``) for ``models`` with ``params`` (a model
    name -> its parameters; the defaults otherwise); ``progress(done, total)`` after each term of each model."""
    if not 1 <= length <= 2**24 or not 1 <= share <= 2**20:
        raise SentretError(f"length must be 1 to {2**24:,} and share 1 to {2**20:,}")
    terms = listed_terms(index, length, share)
    arrays: dict[str, np.ndarray] = {"terms": terms}
    recorded: dict[str, dict[str, Any]] = {}
    total, done = len(terms) * len(models), 0
    spans = document_ranges(index)
    for model in models:
        spec = get_model(model)
        p = spec.resolve((params or {}).get(spec.name))
        keys, recorded[spec.name] = _keys(index, spec.name, p)
        lists = np.zeros((len(terms), _variants(spec.name), length), dtype=np.int32)
        for row, term in enumerate(terms.tolist()):
            lists[row] = _best((keys(term, span) for span in spans), length)
            done += 1
            if progress is not None:
                progress(done, total)
        arrays[f"lists/{spec.name}"] = lists
    arrays.update(_maxima(index))
    meta = {"models": recorded, "length": length, "share": share}
    return artefacts.write(index, KIND, name, arrays, meta)


def _maxima(index: Index) -> dict[str, np.ndarray]:
    """The maxima of every term of more than :data:`~sentret_core.models.arrays.maxima.STORED_FROM` postings,
    stored with the lists (arrays ``maxima/<name>``, :data:`~sentret_core.models.arrays.impacts.MAXIMA`)."""
    terms = np.flatnonzero(_posting_sizes(index) > maxima.STORED_FROM).astype(np.int64)
    by_length = np.zeros((len(terms), maxima.lengths(index)), dtype=np.int32)
    document = np.zeros(len(terms))
    for row, term in enumerate(terms.tolist()):
        by_length[row] = maxima.by_length_of(index, term)
        document[row] = maxima.document_ratio_of(index, term)
    return dict(zip((f"maxima/{name}" for name in MAXIMA), (terms, by_length, document)))


def _variants(model: str) -> int:
    return VARIANTS if model in LISTABLE else 1


def _keys(index: Index, model: str, p: Any) -> tuple[Keys, dict[str, Any]]:
    """How ``model`` keys a term's sentences in a range, and what its lists record as the parameters they hold for."""
    if model == "bm25f.v1":
        x_of, only = pseudo_frequency(index, p), only_weighted(p)

        def fields_keys(term: int, span: Span) -> tuple[np.ndarray, np.ndarray]:
            rows, counts = term_fields(index, p.window, term, span)
            x = x_of(rows, counts)
            keep = x > 0 if only else slice(None)
            return rows[keep], x[keep][None, :]

        return fields_keys, order_params(p)
    if model == TFISF_LISTS:
        def count_keys(term: int, span: Span) -> tuple[np.ndarray, np.ndarray]:
            rows, counts = between(*postings(index).raw(term), *span)
            return np.asarray(rows), np.asarray(counts, dtype=np.float64)[None, :]

        return count_keys, p.to_dict()
    if model not in LISTABLE:
        raise SentretError(f"{model} has no impact lists: they are built for bm25f.v1, {TFISF_LISTS} (which "
                           f"idfdoc.v1 reads too) and the language models ({', '.join(sorted(LISTABLE))})")
    variant, as_params = LISTABLE[model]
    mixture = as_params(p) if as_params else p
    log_h0 = np.log(by_length(index, mixture, variant)[2])
    extra = np.arange(VARIANTS, dtype=np.float64)[:, None]

    def lm_keys(term: int, span: Span) -> tuple[np.ndarray, np.ndarray]:
        ids, own = lm_scores(index, prepare(index, [index.vocab[term]]), mixture, variant, span)
        return ids, own[None, :] + extra * log_h0[layout(index).sent_len.take(ids)][None, :]

    return lm_keys, p.to_dict()


def _best(found: Iterator[tuple[np.ndarray, np.ndarray]], length: int) -> np.ndarray:
    """Per variant (row of the keys), the ``length`` ids of the largest keys, best first, ties by id."""
    kept_ids: list[np.ndarray] = []
    kept_keys: list[np.ndarray] = []
    for ids, keys in found:  # each range's own best per variant first: the memory of one range
        keep = np.zeros(len(ids), dtype=bool)
        for row in keys:
            keep |= best_k(row, length)
        kept_ids.append(ids[keep])
        kept_keys.append(keys[:, keep])
    ids, keys = np.concatenate(kept_ids), np.concatenate(kept_keys, axis=1)
    if len(ids) < length:
        raise SentretError(f"a listed term reaches {len(ids)} sentences, fewer than the lists' length {length}")
    return np.stack([ids[np.lexsort((ids, -row))[:length]] for row in keys]).astype(np.int32)
