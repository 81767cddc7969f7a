"""search() (MaxScore-pruned top-k) against top_k(score(...)): same ids, scores bit for bit, order and fields."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core import Index
from sentret_core.errors import ArgumentTypeError, ArgumentValueError, SentretError
from sentret_core.models import Scores, get_model, prepare, score, search, top_k
from sentret_core.models.arrays import maxscore
from sentret_core.models.bm25 import scorer as bm25_scorer
from tests.conftest import build_from_texts, examples

# a Zipf-ish vocabulary; "river" is in most sentences (sf > N/2: a negative rsj idf)
WORDS = ["bridge", "city", "market", "harbour", "castle", "garden", "forest", "meadow", "valley", "tower", "village",
         "church", "school", "bakery", "mill", "farm", "orchard", "lake", "island", "mountain", "station", "museum",
         "library", "theatre"]


def zipf_docs(seed: int, n_docs: int) -> list[dict[str, str]]:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(WORDS) + 1) ** 1.1
    p /= p.sum()
    docs = []
    for d in range(n_docs):
        sentences = []
        for _ in range(rng.integers(1, 7)):
            words = list(rng.choice(WORDS, size=rng.integers(1, 9), p=p))
            if rng.random() < 0.7:
                words.insert(int(rng.integers(0, len(words) + 1)), "river")
            sentences.append("The " + " and ".join(words) + ".")
        docs.append({"id": f"d{d}", "title": str(rng.choice(WORDS)).title(), "text": " ".join(sentences)})
    return docs


@pytest.fixture(autouse=True)
def maxscore_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """BM25 tries MaxScore before its compiled kernel at any length here (the kernel: test_bm25_compiled.py)."""
    monkeypatch.setattr(bm25_scorer, "COMPILED_UP_TO", 0)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Index]:
    root = Path(tmp_path_factory.mktemp("pruning"))
    return [build_from_texts(root, zipf_docs(seed, n), f"z{seed}") for seed, n in ((1, 40), (2, 90), (3, 15))]


def same(got: Scores, want: Scores) -> None:
    """The same Scores, bit for bit (a -0.0 is not a 0.0 here)."""
    assert got.ids.dtype == want.ids.dtype and got.scores.dtype == want.scores.dtype
    assert got.ids.tobytes() == want.ids.tobytes(), (got.ids, want.ids)
    assert got.scores.tobytes() == want.scores.tobytes(), (got.scores, want.scores)
    assert (got.terms, got.model, got.params, got.reason, got.oov, got.ranked) == (
        want.terms, want.model, want.params, want.reason, want.oov, want.ranked,
    )


PARAMS = st.fixed_dictionaries(
    {
        "k1": st.sampled_from([0.0, 0.3, 1.2, 2.0]),
        "b": st.sampled_from([0.0, 0.75, 1.0]),
        "k3": st.sampled_from([0.0, 1.5, 8.0]),
        "idf": st.sampled_from(["rsj", "lucene"]),  # rsj: "river" is in most sentences, a negative idf
    }
)
TERMS = st.lists(st.sampled_from([*WORDS, "river", "nowhere"]), min_size=1, max_size=12)


@settings(derandomize=True, max_examples=examples(400), deadline=None)
@given(
    which=st.integers(0, 2), terms=TERMS, k=st.integers(0, 60), params=PARAMS, sample=st.sampled_from([1, 2, 5, 4096])
)
def test_search_is_top_k_of_score(
    corpora: list[Index], which: int, terms: list[str], k: int, params: dict[str, object], sample: int
) -> None:
    index = corpora[which]
    # small samples and no minimum: the pruned path runs on small corpora
    with mock.patch.object(maxscore, "SAMPLE", sample), mock.patch.object(maxscore, "PRUNE_FROM", 0):
        got = search(index, terms, "bm25.v1", k, **params)
    same(got, top_k(score(index, terms, "bm25.v1", **params), k))


BM25F_PARAMS = st.fixed_dictionaries(
    {
        "k1": st.sampled_from([0.0, 0.26, 1.2, 2.0]),
        "b": st.sampled_from([0.0, 0.15, 1.0]),
        "k3": st.sampled_from([0.0, 8.0]),
        "idf": st.sampled_from(["rsj", "lucene"]),
        "w_context": st.sampled_from([0.0, 0.3, 1.0]),
        "w_title": st.sampled_from([0.0, 0.5, 2.0]),
        "window": st.integers(1, 3),
        "b_context": st.sampled_from([None, 0.0, 1.0]),
    }
)


@settings(derandomize=True, max_examples=examples(400), deadline=None)
@given(
    which=st.integers(0, 2), terms=TERMS, k=st.integers(0, 60), params=BM25F_PARAMS, sample=st.sampled_from([1, 2, 5]),
    per_target=st.sampled_from([0, 4, 10**9]), compiled=st.booleans(),
)
def test_bm25f_search_is_top_k_of_score(
    corpora: list[Index], which: int, terms: list[str], k: int, params: dict[str, object], sample: int,
    per_target: int, compiled: bool,
) -> None:
    """BM25F's MaxScore: the rarer terms' fields built, the others' counts looked up for the candidates only
    (sentence, ±window context and title), or read from their whole fields where those are cheap beside the
    candidates (``per_target``), and fields of weight 0 reaching no sentence; by the compiled passes or numpy."""
    from sentret_core.models.arrays import postings as postings_module
    from sentret_core.models.arrays import vectors

    index = corpora[which]
    with mock.patch.object(maxscore, "SAMPLE", sample), mock.patch.object(maxscore, "PRUNE_FROM", 0), \
            mock.patch.object(postings_module, "FIELDS_PER_TARGET", per_target), \
            mock.patch.object(vectors, "_sorted", vectors._sorted if compiled else None):
        got = search(index, terms, "bm25f.v1", k, **params)
    same(got, top_k(score(index, terms, "bm25f.v1", **params), k))


def test_bm25f_pruning_happens_and_builds_no_field_of_a_non_essential_term(corpora: list[Index]) -> None:
    """On these queries the pruned path runs, returns fewer candidates than score, and never builds the fields
    of "river" (in most sentences: the smallest idf, a non-essential term)."""
    from sentret_core.models.arrays import postings as postings_module

    index = corpora[1]
    river = index.term_index["river"]
    built: list[int] = []
    cheap: list[list[str]] = []  # queries where river's whole fields were read: cheap beside their candidates
    term_fields = postings_module.term_fields
    bm25f_top_k = get_model("bm25f.v1").top_k
    assert bm25f_top_k is not None
    with mock.patch.object(postings_module, "term_fields",
                           lambda i, w, t, *span: (built.append(t), term_fields(i, w, t, *span))[1]):
        for terms in (["river", "castle"], ["river", "bakery", "mill"], ["river", "orchard"]):
            fresh = Index.load(index.path)  # nothing cached: every field built is this query's
            # no term counts as cheap to build beside its candidates (here, with ~100 sentences, every one would)
            with mock.patch.object(maxscore, "SAMPLE", 1), mock.patch.object(maxscore, "PRUNE_FROM", 0), \
                    mock.patch.object(postings_module, "FIELDS_PER_TARGET", 0):
                found = bm25f_top_k(fresh, prepare(fresh, terms), get_model("bm25f.v1").resolve({}), 2)
                assert found is not None and river not in built, terms
                full = score(index, terms, "bm25f.v1")
                assert len(found[0]) < len(full)
                built.clear()
                same(search(Index.load(index.path), terms, "bm25f.v1", 2), top_k(full, 2))
                assert river not in built, terms
            built.clear()
            with mock.patch.object(maxscore, "SAMPLE", 1), mock.patch.object(maxscore, "PRUNE_FROM", 0):
                same(search(Index.load(index.path), terms, "bm25f.v1", 2), top_k(full, 2))
            cheap.extend(terms for t in built if t == river)
            built.clear()
    assert cheap  # with its default rule, river's fields were read whole where its candidates were many


def test_pruning_happens_and_drops_candidates(corpora: list[Index]) -> None:
    """The pruned path runs (and returns fewer candidates than score) on many of these queries."""
    rng = np.random.default_rng(5)
    pruned = 0
    bm25_top_k = get_model("bm25.v1").top_k  # MaxScore, registered with bm25.v1
    assert bm25_top_k is not None
    for _ in range(300):
        index = corpora[1]
        terms = list(rng.choice([*WORDS[:8], "river"], size=rng.integers(2, 5)))
        k = int(rng.integers(1, 6))
        params = {"idf": str(rng.choice(["rsj", "lucene"]))}
        with mock.patch.object(maxscore, "SAMPLE", 1), mock.patch.object(maxscore, "PRUNE_FROM", 0):
            q = prepare(index, terms)
            found = bm25_top_k(index, q, score(index, terms, "bm25.v1", **params).params, k)
            got = search(index, terms, "bm25.v1", k, **params)
        full = score(index, terms, "bm25.v1", **params)
        same(got, top_k(full, k))
        if found is not None and len(found[0]) < len(full):
            pruned += 1
            assert set(found[0].tolist()) <= set(full.ids.tolist())
    assert pruned > 50


@settings(derandomize=True, max_examples=examples(400), deadline=None)
@given(lower=st.lists(st.floats(-50, 50), max_size=40), extra=st.lists(st.floats(0, 10), min_size=40, max_size=40),
       k=st.integers(1, 45), theta=st.floats(-60, 60))
def test_raised_theta_is_at_most_the_kth_best_score(lower: list[float], extra: list[float], k: int,
                                                    theta: float) -> None:
    """Scores at least their lower bounds: the raised θ never passes the k-th best of them (brute force), and
    is the k-th largest bound when that is above θ."""
    bounds = np.array(lower)
    scores = bounds + np.array(extra[: len(lower)])
    got = maxscore.raised(theta, bounds, k)
    if len(bounds) < k:
        assert got == theta
    else:
        assert got == max(theta, sorted(lower)[-k])
        assert got == theta or got <= sorted(scores)[-k]  # what it adds to θ is a lower bound of the k-th best


def test_raised_theta_drops_more_candidates(corpora: list[Index]) -> None:
    """Raising θ by the candidates' essential parts keeps fewer candidates than the sample's θ alone, and the
    top k is the same (bit for bit)."""
    rng = np.random.default_rng(11)
    queries = [(list(rng.choice([*WORDS[:8], "river"], size=rng.integers(2, 5))), int(rng.integers(1, 6)))
               for _ in range(200)]
    raised, not_raised = (_candidates_kept(corpora[1], queries, on) for on in (True, False))
    assert 0 < raised < not_raised


def _candidates_kept(index: Index, queries: list[tuple[list[str], int]], raise_theta: bool) -> int:
    """The candidates BM25's MaxScore scores in all at ``queries`` (after the cut by θ), θ raised or not."""
    kept: list[int] = []
    original, additive = maxscore.raised, maxscore.additive_top_k

    def counted(theta: float, lower: np.ndarray, k: int) -> float:
        return original(theta, lower, k) if raise_theta else theta

    def spied(k: int, bounds, post, terms, partial, floors=None):
        def wrapped(positions: np.ndarray, cand: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
            if cand is not None:
                kept.append(len(cand))
            return partial(positions, cand)

        return additive(k, bounds, post, terms, wrapped, floors)

    with mock.patch.object(maxscore, "SAMPLE", 1), mock.patch.object(maxscore, "PRUNE_FROM", 0), \
            mock.patch.object(maxscore, "raised", counted), mock.patch.object(maxscore, "additive_top_k", spied):
        for terms, k in queries:
            same(search(index, terms, "bm25.v1", k), top_k(score(index, terms, "bm25.v1"), k))
    return sum(kept)


def test_sf_above_half_of_the_sentences_is_in_the_corpora(corpora: list[Index]) -> None:
    for index in corpora:
        assert index.sf[index.term_index["river"]] > index.N / 2


@pytest.mark.parametrize("model", ["bm25f.v1", "tfisf.v1", "lm-dir.v1"])
def test_other_models_are_top_k_of_score(corpora: list[Index], model: str) -> None:
    for terms in (["river", "bridge", "city"], ["castle"], ["nowhere"]):
        for k in (0, 1, 5, 1000):
            same(search(corpora[1], terms, model, k), top_k(score(corpora[1], terms, model), k))


@pytest.mark.parametrize("query", ["", "\x00\x01", "the of and", "nowhere", "river bridge", "Bridges of the city?"])
@pytest.mark.parametrize("k", [0, 3, 10_000])
def test_text_queries_and_empty_ones(corpora: list[Index], query: str, k: int) -> None:
    with mock.patch.object(maxscore, "SAMPLE", 1), mock.patch.object(maxscore, "PRUNE_FROM", 0):
        same(search(corpora[1], query, "bm25.v1", k), top_k(score(corpora[1], query, "bm25.v1"), k))


def test_bad_arguments_raise_as_score_and_top_k_do(corpora: list[Index]) -> None:
    index = corpora[0]
    with pytest.raises(ArgumentValueError):
        search(index, "river", "bm25.v1", -1)
    with pytest.raises(ArgumentTypeError):
        search(index, "river", "bm25.v1", 2.0)  # type: ignore[arg-type]
    with pytest.raises(SentretError):
        search(index, "river", "no-such-model.v1", 3)
    with pytest.raises(SentretError):
        search(index, "river", "bm25.v1", 3, k1=-1.0)
    with pytest.raises(ArgumentTypeError):
        search("not an index", "river", "bm25.v1", 3)  # type: ignore[arg-type]


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(which=st.integers(0, 2), terms=TERMS, k=st.integers(0, 60), model=st.sampled_from(["tfisf.v1", "idfdoc.v1"]),
       sample=st.sampled_from([1, 2, 5, 4096]))
def test_tfisf_search_is_top_k_of_score(corpora: list[Index], which: int, terms: list[str], k: int, model: str,
                                        sample: int) -> None:
    """TF-ISF's MaxScore (models/tfisf/pruning.py), its bound the term's largest count in its postings."""
    index = corpora[which]
    with mock.patch.object(maxscore, "SAMPLE", sample), mock.patch.object(maxscore, "PRUNE_FROM", 0):
        got = search(index, terms, model, k)
    same(got, top_k(score(index, terms, model), k))


@pytest.mark.parametrize("model", ["tfisf.v1", "idfdoc.v1"])
def test_tfisf_pruning_happens_and_drops_candidates(corpora: list[Index], model: str) -> None:
    rng = np.random.default_rng(6)
    spec = get_model(model)
    assert spec.top_k is not None
    pruned = 0
    for _ in range(100):
        index = corpora[1]
        terms = list(rng.choice([*WORDS[:8], "river"], size=rng.integers(2, 5)))
        k = int(rng.integers(1, 6))
        with mock.patch.object(maxscore, "SAMPLE", 1), mock.patch.object(maxscore, "PRUNE_FROM", 0):
            found = spec.top_k(index, prepare(index, terms), spec.resolve({}), k)
            same(search(index, terms, model, k), top_k(score(index, terms, model), k))
        if found is not None and len(found[0]) < len(score(index, terms, model)):
            pruned += 1
    assert pruned > 30
