"""The compiled BM25 kernel (sentret_core/models/bm25/_saturated.c) against the numpy path it replaces: the same
ids and the same scores bit for bit, for the exhaustive sum and the top k, through the public API and on
posting arrays of every shape and dtype; and the numpy path whenever the extension is absent or declines."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import NamedTuple
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core import Index
from sentret_core.models import score, search, top_k
from sentret_core.models.arrays.postings import Postings
from sentret_core.models.bm25 import compiled, scorer
from sentret_core.models.bm25.formulas import length_norm, query_factor
from sentret_core.models.bm25.sums import saturated_sum
from tests.conftest import build_from_texts, examples
from tests.models.test_pruning import PARAMS, same

needs_kernel = pytest.mark.skipif(not compiled.available(), reason="the extension is not built (pip install -e .)")


def test_the_extension_is_built_and_used_in_a_development_install() -> None:
    """`pip install -e .` compiles it (a C compiler and Python's headers are all it needs)."""
    assert compiled.available(), "sentret_core/models/bm25/_saturated.c is not built: run pip install -e ."


WORDS = ["bridge", "city", "market", "harbour", "castle", "garden", "forest", "meadow", "valley", "tower", "village",
         "church", "school", "bakery", "mill", "farm"]


def docs(seed: int, n_docs: int) -> list[dict[str, str]]:
    """Zipf-ish sentences, many alike (tied scores); "river" in most of them (a negative rsj idf)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(WORDS) + 1) ** 1.1
    out = []
    for d in range(n_docs):
        sentences = []
        for _ in range(rng.integers(1, 6)):
            words = list(rng.choice(WORDS, size=rng.integers(1, 7), p=p / p.sum()))
            words += ["river"] if rng.random() < 0.7 else []
            sentences.append("The " + " and ".join(words) + ".")
        out.append({"id": f"d{d}", "title": str(rng.choice(WORDS)).title(), "text": " ".join(sentences)})
    return out


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Index]:
    root = Path(tmp_path_factory.mktemp("compiled"))
    return [build_from_texts(root, docs(seed, n), f"c{seed}") for seed, n in ((4, 60), (5, 12))]


# repeated terms (c(t,q) > 1 with k3 > 0), unknown ones, and up to 14 distinct terms (a merge of more than 8)
TERMS = st.lists(st.sampled_from([*WORDS, "river", "nowhere", "zzz"]), min_size=1, max_size=30)


@needs_kernel
@settings(derandomize=True, max_examples=examples(400), deadline=None)
@given(which=st.integers(0, 1), terms=TERMS, k=st.sampled_from([0, 1, 2, 3, 10, 50, 10_000]), params=PARAMS,
       maxscore_first=st.booleans())
def test_search_and_score_are_the_numpy_paths_bit_for_bit(
    corpora: list[Index], which: int, terms: list[str], k: int, params: dict[str, object], maxscore_first: bool
) -> None:
    """With maxscore_first, every query goes to MaxScore before the kernel (as one with a long posting list
    does); MaxScore declines on lists this short, and the kernel then scores every candidate."""
    index = corpora[which]
    with mock.patch.object(scorer, "COMPILED_UP_TO", 0 if maxscore_first else scorer.COMPILED_UP_TO):
        got_top, got_all = search(index, terms, "bm25.v1", k, **params), score(index, terms, "bm25.v1", **params)
    with mock.patch.object(compiled, "_saturated", None):
        want_all = score(index, terms, "bm25.v1", **params)
        same(search(index, terms, "bm25.v1", k, **params), top_k(want_all, k))
    same(got_all, want_all)
    same(got_top, top_k(want_all, k))  # ties (many sentences alike here) by sentence id ascending


def numpy_top_k(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """api.best_of's order: score descending, ties by id ascending."""
    order = np.lexsort((ids, -scores))[:k]
    return ids[order].astype(np.int64), scores[order]


class Query(NamedTuple):
    """A query as the kernel takes it: distinct term ids, c(t,q), the idf of every term and k3."""

    terms: np.ndarray
    qtf: np.ndarray
    idf: np.ndarray
    k3: float

    def weights(self) -> np.ndarray:
        return np.asarray(self.idf.take(self.terms) * query_factor(self.qtf, self.k3))  # scorer.term_weights


def run(post: Postings, q: Query, K: tuple[np.ndarray | None, np.ndarray, float], k1: float, k: int) -> object:
    kernel = compiled._saturated
    assert kernel is not None
    return kernel(post.indptr, post.rows, post.vals, q.terms, q.qtf, q.idf, q.k3, *K, k1, k, -1)


@st.composite
def postings_and_query(draw: st.DrawFn) -> tuple[Postings, Query, np.ndarray, float]:
    """A random postings matrix in the dtypes an index may hold, sentence lengths, a query (distinct terms, their
    c(t,q), idf of any sign and size) and k1."""
    n = draw(st.integers(1, 300))
    n_terms = draw(st.integers(1, 20))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.sampled_from([0.01, 0.2, 0.9]))
    rows, vals, indptr = [], [], [0]
    for _ in range(n_terms):
        r = np.flatnonzero(rng.random(n) < density)
        rows.append(r)
        vals.append(rng.integers(0 if draw(st.booleans()) else 1, 4, len(r)))  # sometimes a stored 0
        indptr.append(indptr[-1] + len(r))
    index_type = draw(st.sampled_from([np.int32, np.int64]))
    value_type = draw(st.sampled_from([np.int32, np.int64, np.float32, np.float64]))
    post = Postings(np.array(indptr, dtype=index_type), np.concatenate(rows).astype(index_type),
                    np.concatenate(vals).astype(value_type))
    lengths = rng.integers(0, draw(st.sampled_from([2, 40, 300])), n).astype(np.float64)  # few: ties
    m = draw(st.integers(1, n_terms))
    idf = rng.normal(0.0, draw(st.sampled_from([0.0, 1.0, 1e6])), n_terms) * draw(st.sampled_from([1.0, -1.0]))
    if draw(st.booleans()):
        idf = np.round(idf)  # equal weights: more ties
    q = Query(rng.permutation(n_terms)[:m].astype(np.int64), rng.integers(1, 4, m).astype(np.float64), idf,
              draw(st.sampled_from([0.0, 1.5, 8.0])))
    return post, q, lengths, draw(st.sampled_from([0.0, 0.3, 1.2, 2.0]))


def k_of(lengths: np.ndarray, k1: float, b: float, coded: bool) -> tuple[np.ndarray | None, np.ndarray, float]:
    """(codes, K by length, K_min) as compiled.tables_of makes them, or (None, K of every sentence, K_min)."""
    avg = float(lengths.mean())
    K = k1 * length_norm(lengths, avg, b)  # scorer.sentence_k
    if not coded:
        return None, K, float(K.min())
    by_length = k1 * length_norm(np.arange(int(lengths.max()) + 1, dtype=np.float64), avg, b)
    return lengths.astype(np.uint16), by_length, float(K.min())


@needs_kernel
@settings(derandomize=True, max_examples=examples(600), deadline=None)
@given(case=postings_and_query(), b=st.sampled_from([0.0, 0.75, 1.0]), coded=st.booleans(),
       k=st.sampled_from([0, 1, 2, 5, 10, 10_000]))
def test_the_kernel_is_the_numpy_path_on_any_postings(
    case: tuple[Postings, Query, np.ndarray, float], b: float, coded: bool, k: int
) -> None:
    """Every candidate (merged), and the top k: of one term, of up to 8 (a hash table and the longest list read
    in order, its sentences skipped when they cannot reach the k-th best), of more (merged)."""
    post, q, lengths, k1 = case
    with np.errstate(invalid="ignore"):  # 0/0, below
        want_ids, want_scores = saturated_sum(post, k_of(lengths, k1, b, False)[1], k1, q.terms, q.weights(),
                                              range(len(q.terms)))
    found = run(post, q, k_of(lengths, k1, b, coded), k1, -1)
    assert isinstance(found, tuple)
    assert found[0] == want_ids.astype(np.int32).tobytes() and found[1] == want_scores.tobytes()
    assert found[2] == (len(want_ids) > 0)
    best = run(post, q, k_of(lengths, k1, b, coded), k1, k)
    if k > 0 and np.isnan(want_scores).any():  # 0/0: a stored 0 count where K(s) = 0 (b = 1, |s| = 0)
        assert best is None  # a NaN has no place in a ranking: the numpy path decides
        return
    assert isinstance(best, tuple)
    ids, scores = numpy_top_k(want_ids, want_scores, k)
    assert best[0] == ids.tobytes() and best[1] == scores.tobytes() and best[2] == (len(want_ids) > 0)


@needs_kernel
@pytest.mark.parametrize("n_terms", [2, 9, 140])
def test_long_queries_and_long_lists_add_up_as_numpy_does(n_terms: int) -> None:
    """Every sentence in every term: runs of up to 140 values (numpy's pairwise blocks of 8 and its halving
    above 128), and lists too long for the hash table (the merge then runs for the top k too)."""
    n = 70_000 if n_terms == 2 else 300
    rng = np.random.default_rng(n_terms)
    post = Postings(np.arange(n_terms + 1, dtype=np.int64) * n, np.tile(np.arange(n, dtype=np.int32), n_terms),
                    rng.integers(1, 5, n * n_terms).astype(np.float64))
    q = Query(np.arange(n_terms, dtype=np.int64), np.ones(n_terms),
              rng.normal(0, 1, n_terms) * 10.0 ** rng.integers(-6, 6, n_terms), 0.0)
    K = rng.uniform(0.1, 3.0, n)
    want_ids, want_scores = saturated_sum(post, K, 1.2, q.terms, q.weights(), range(n_terms))
    found = run(post, q, (None, K, float(K.min())), 1.2, -1)
    assert isinstance(found, tuple) and found[1] == want_scores.tobytes()
    for k in (1, 10, n + 1):
        best = run(post, q, (None, K, float(K.min())), 1.2, k)
        ids, scores = numpy_top_k(want_ids, want_scores, k)
        assert isinstance(best, tuple) and best[0] == ids.tobytes() and best[1] == scores.tobytes()


@needs_kernel
def test_a_term_with_more_postings_than_asked_for_is_left_to_maxscore() -> None:
    kernel = compiled._saturated
    assert kernel is not None
    args = (np.array([0, 3, 4]), np.array([0, 1, 2, 1], dtype=np.int32), np.ones(4), np.array([0, 1]), np.ones(2),
            np.ones(2), 0.0, None, np.ones(3), 1.0, 1.2, 10)
    assert kernel(*args, 2) is False
    assert isinstance(kernel(*args, 3), tuple) and isinstance(kernel(*args, -1), tuple)


@needs_kernel
def test_the_kernel_declines_what_it_does_not_take() -> None:
    """Unsorted or repeated postings (the numpy path puts them in order), rows past the sentences, a term
    past the matrix, other dtypes: None, never a crash nor a wrong number."""
    kernel = compiled._saturated
    assert kernel is not None
    K = np.ones(4)

    def call(indptr: object, rows: object, vals: object, terms: object = None, table: object = K,
             codes: object = None, qtf: object = None, idf: object = None) -> object:
        t = np.zeros(1, dtype=np.int64) if terms is None else terms
        return kernel(indptr, rows, vals, t, np.ones(1) if qtf is None else qtf, np.ones(1) if idf is None else idf,
                      0.0, codes, table, 1.0, 1.2, 10, -1)

    ok = (np.array([0, 2]), np.array([1, 3], dtype=np.int32), np.array([1, 1]))
    assert call(*ok) is not None
    assert call(ok[0], np.array([3, 1], dtype=np.int32), ok[2]) is None  # unsorted
    assert call(ok[0], np.array([1, 1], dtype=np.int32), ok[2]) is None  # repeated
    assert call(ok[0], np.array([1, 4], dtype=np.int32), ok[2]) is None  # no such sentence
    assert call(ok[0], np.array([-1, 1], dtype=np.int32), ok[2]) is None
    assert call(np.array([0, 3]), *ok[1:]) is None  # a slice past the arrays
    assert call(*ok, terms=np.array([1])) is None  # no such term
    assert call(*ok, idf=np.ones(0)) is None  # no idf for it
    assert call(*ok, qtf=np.ones(2)) is None  # a c(t,q) too many
    assert call(ok[0], ok[1].astype(np.uint32), ok[2]) is None
    assert call(ok[0], ok[1], ok[2].astype(np.complex128)) is None
    assert call(ok[0], np.array([1, 9, 3, 9], dtype=np.int32)[::2], ok[2]) is None  # not contiguous
    assert call(*ok, table=K.astype(np.float32)) is None
    assert call(*ok, codes=np.array([0, 0, 0, 9], np.uint8)) is None  # a length past the table
    assert call(*ok, idf=np.array([np.nan])) is None  # a NaN has no place in a ranking: the numpy path decides


def test_without_the_extension_the_numpy_path_runs(corpora: list[Index]) -> None:
    """An install without a C compiler has no _saturated module: compiled imports all the same, says it is not
    available, and every score comes from numpy."""
    index, terms = corpora[0], ["castle", "river", "mill"]
    want = score(index, terms, "bm25.v1"), search(index, terms, "bm25.v1", 5)
    try:
        with mock.patch.dict(sys.modules, {"sentret_core.models.bm25._saturated": None}):  # its import fails
            importlib.reload(compiled)
            assert not compiled.available()
            got = score(index, terms, "bm25.v1"), search(index, terms, "bm25.v1", 5)
    finally:
        importlib.reload(compiled)
    same(got[0], want[0])
    same(got[1], want[1])


def test_a_kernel_that_adds_otherwise_than_numpy_is_not_used() -> None:
    """The check run at import: a kernel whose sums differ from numpy's in the last bit (another numpy's
    summation order, say) is left unused."""

    def off_by_an_ulp(*args: object) -> object:
        ids, scores, found = compiled._kernel.saturated(*args) if compiled._kernel else (b"\0" * 8, b"\0" * 8, True)
        values = np.frombuffer(scores, dtype=np.float64).copy()
        values[-1:] = np.nextafter(values[-1:], np.inf)
        return ids, bytearray(values.tobytes()), found

    assert not compiled._agrees_with_numpy(off_by_an_ulp)
    if compiled._kernel is not None:
        assert compiled._agrees_with_numpy(compiled._kernel.saturated)
