"""Lookups of many close ids through an array over their span (``vectors.dense_span``) give what binary searches
give, bit for bit and dtype for dtype: gather, scatter and Postings.found, then whole models' top k."""

from __future__ import annotations

from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core import Index
from sentret_core.models import score, search, top_k
from sentret_core.models.arrays import vectors
from sentret_core.models.arrays.postings import Postings
from tests.conftest import examples
from tests.models.test_pruning import corpora, same  # noqa: F401  (corpora: the shared fixture)

ALWAYS = {"DENSE_FROM": 0, "DENSE_SPAN": 10**9}  # every lookup through the span's arrays
NEVER = {"DENSE_FROM": 10**9}  # every lookup by binary search


def dense(paths: dict[str, int]) -> Any:
    return mock.patch.multiple(vectors, **paths)


@st.composite
def postings_and_targets(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    space = draw(st.integers(1, 300))
    rows = np.array(sorted(draw(st.sets(st.integers(0, space - 1), max_size=space))), dtype=np.int32)
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64]))
    vals = np.array(draw(st.lists(st.integers(1, 9), min_size=len(rows), max_size=len(rows))), dtype=dtype)
    targets = np.array(draw(st.lists(st.integers(0, space - 1), min_size=1, max_size=200)), dtype=np.int64)
    return rows, vals, targets


def identical(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (a, b)


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(case=postings_and_targets(), ordered=st.booleans())
def test_gather_is_the_binary_searchs(case: tuple[np.ndarray, np.ndarray, np.ndarray], ordered: bool) -> None:
    rows, vals, targets = case
    targets = np.sort(targets) if ordered else targets  # gather's targets need not be sorted
    with dense(ALWAYS):
        got = vectors.gather(rows, vals, targets)
    with dense(NEVER):
        identical(got, vectors.gather(rows, vals, targets))


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(case=postings_and_targets())
def test_scatter_and_found_are_the_binary_searchs(case: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    rows, vals, targets = case
    cand = np.union1d(rows, targets).astype(np.int32)
    post = Postings(np.array([0, len(rows)], dtype=np.int64), rows, vals)
    sorted_targets = np.sort(targets)  # found's targets are sorted, repeats allowed
    with dense(ALWAYS):
        spread, (hit, at) = vectors.scatter(cand, rows, vals), post.found(0, sorted_targets)
    with dense(NEVER):
        identical(spread, vectors.scatter(cand, rows, vals))
        want_hit, want_at = post.found(0, sorted_targets)
    identical(hit, want_hit)
    identical(at, want_at)


def test_the_span_rule() -> None:
    many = np.arange(0, 4 * vectors.DENSE_FROM, 4)
    assert vectors.dense_span(many) == (0, int(many[-1]) + 1)
    assert vectors.dense_span(many * 2) is None  # spread too thin: binary searches
    assert vectors.dense_span(many[:10]) is None  # too few to be worth an array


@pytest.mark.parametrize("model", ["bm25f.v1", "lm-2si.v1", "lm-dir.v1", "tfisf.v1", "lm-3mm.v1"])
def test_models_top_k_with_every_lookup_dense(corpora: list[Index], model: str) -> None:  # noqa: F811
    for terms in (["river", "bridge", "city"], ["castle", "river"], ["mill", "orchard", "lake"]):
        for k in (1, 5, 1000):
            with dense(ALWAYS):
                got = search(corpora[1], terms, model, k)
            with dense(NEVER):
                same(got, top_k(score(corpora[1], terms, model), k))
