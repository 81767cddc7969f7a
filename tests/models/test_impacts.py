"""A top k read from impact lists (models/arrays/impacts.py, built by models/training/impacts.py) is top_k(score(...))
bit for bit: for BM25F and every language model, with lists of the query's parameters, with MaxScore on or off, lists
short or long, read from a depth of 1 (so the depth doubles) or whole. And the lists are what they say: each one the
term's sentences of the largest keys, best first; lists of other parameters, or damaged ones, are not used."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.reader import verify
from sentret_core.models import score, search, top_k
from sentret_core.models.arrays import impacts, maxima, maxscore
from sentret_core.models.arrays.impacts import impact_lists
from sentret_core.models.arrays.postings import postings
from sentret_core.models.bm25 import pruning as bm25_pruning
from sentret_core.models.training.impacts import listed_terms, train_impacts
from tests.conftest import build_from_texts, examples
from tests.models.test_lm_pruning import model_and_params
from tests.models.test_pruning import BM25F_PARAMS, TERMS, WORDS, same, zipf_docs


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Index]:
    root = Path(tmp_path_factory.mktemp("impacts"))
    return [build_from_texts(root, zipf_docs(seed, n), f"i{seed}") for seed, n in ((7, 60), (8, 120))]


def searched(index: Index, terms: list[str], model: str, k: int, params: dict[str, object], prune: bool,
             first: int, several_first: int = bm25_pruning.SEVERAL_FIRST_FROM,
             shared_first: float = bm25_pruning.SHARED_FIRST_UP_TO) -> tuple[object, int]:
    """search() with MaxScore on or off, lists read from depth ``first`` (BM25F's several lists before MaxScore from
    k = ``several_first``, for shared documents estimated at ``shared_first`` sentences at most); and how many tops
    the lists gave."""
    used = []
    real = impacts.listed_top_k

    def counted(*args: object, **kwargs: object) -> object:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        used.append(found is not None)
        return found

    with mock.patch.object(impacts, "listed_top_k", counted), mock.patch.object(impacts, "FIRST_DEPTH", first), \
            mock.patch.object(maxscore, "PRUNE_FROM", 0 if prune else 10**9), \
            mock.patch.object(maxscore, "SAMPLE", 2), \
            mock.patch.object(bm25_pruning, "SEVERAL_FIRST_FROM", several_first), \
            mock.patch.object(bm25_pruning, "SHARED_FIRST_UP_TO", shared_first):
        got = search(index, terms, model, k, **params)
    return got, sum(used)


@st.composite
def frequent_with_rarer(draw: st.DrawFn) -> list[str]:
    """One or two frequent terms and up to three rarer ones, in any order: the queries the lists are for."""
    frequent = draw(st.lists(st.sampled_from(["river", *WORDS[:6]]), min_size=1, max_size=2, unique=True))
    rare = draw(st.lists(st.sampled_from([*WORDS[12:], "nowhere"]), max_size=3))
    return list(draw(st.permutations([*frequent, *rare])))


QUERIES = st.one_of(TERMS, frequent_with_rarer(), frequent_with_rarer())  # two in three: what the lists are for
K = st.one_of(st.integers(0, 6), st.integers(0, 24))
LISTS = {"length": st.sampled_from([8, 16, 40, 64]), "first": st.sampled_from([1, 1024]), "prune": st.booleans(),
         "several_first": st.sampled_from([0, 2048]), "shared_first": st.sampled_from([0.0, 600_000.0])}


@settings(derandomize=True, max_examples=examples(400), deadline=None)
@given(which=st.integers(0, 1), terms=QUERIES, k=K, params=BM25F_PARAMS, lists=st.fixed_dictionaries(LISTS))
def test_bm25f_from_impact_lists_is_top_k_of_score(
    corpora: list[Index], which: int, terms: list[str], k: int, params: dict[str, object], lists: dict[str, object]
) -> None:
    index = corpora[which]
    train_impacts(index, models=["bm25f.v1"], length=int(lists["length"]), share=1000, params={"bm25f.v1": params})
    got, used = searched(index, terms, "bm25f.v1", k, params, bool(lists["prune"]), int(lists["first"]),
                         int(lists["several_first"]), float(lists["shared_first"]))
    event(f"read from the lists: {used > 0}")
    same(got, top_k(score(index, terms, "bm25f.v1", **params), k))


@settings(derandomize=True, max_examples=examples(400), deadline=None)
@given(which=st.integers(0, 1), terms=QUERIES, k=K, chosen=model_and_params(),
       lists=st.fixed_dictionaries(LISTS))
def test_a_language_model_from_impact_lists_is_top_k_of_score(
    corpora: list[Index], which: int, terms: list[str], k: int, chosen: tuple[str, dict[str, object]],
    lists: dict[str, object],
) -> None:
    model, params = chosen
    index = corpora[which]
    train_impacts(index, models=[model], length=int(lists["length"]), share=1000, params={model: params})
    got, used = searched(index, terms, model, k, params, bool(lists["prune"]), int(lists["first"]))
    event(f"read from the lists: {used > 0}")
    same(got, top_k(score(index, terms, model, **params), k))


@settings(derandomize=True, max_examples=examples(400), deadline=None)
@given(which=st.integers(0, 1), terms=QUERIES, k=K, model=st.sampled_from(["tfisf.v1", "idfdoc.v1"]),
       lists=st.fixed_dictionaries(LISTS))
def test_tfisf_from_impact_lists_is_top_k_of_score(
    corpora: list[Index], which: int, terms: list[str], k: int, model: str, lists: dict[str, object]
) -> None:
    """TF-ISF's key is a count: most sentences tie, and the ties at the list's last read entry are settled by id."""
    index = corpora[which]
    train_impacts(index, models=["tfisf.v1"], length=int(lists["length"]), share=1000)
    got, used = searched(index, terms, model, k, {}, bool(lists["prune"]), int(lists["first"]))
    event(f"read from the lists: {used > 0}")
    same(got, top_k(score(index, terms, model), k))


def test_lm_lists_without_a_weighted_local_model_read_candidates_only(corpora: list[Index]) -> None:
    """With the document model weightless (λ = 0), only a sentence holding a query term is a candidate: the shared
    documents' other sentences, scored from the lists, once entered the top k (a sentence of neither term with a
    large p(d|s)). Found by Hypothesis."""
    index = corpora[0]
    params = {"lam": 0.0, "mu": 100.0, "context": "document", "importance": True}
    train_impacts(index, models=["lm-2si.v1"], length=8, share=1000, params={"lm-2si.v1": params})
    for k in (1, 3, 4):
        got, used = searched(index, ["river", "city"], "lm-2si.v1", k, params, False, 1)
        same(got, top_k(score(index, ["river", "city"], "lm-2si.v1", **params), k))
        assert used == 1


@pytest.mark.parametrize(("model", "frequent"), [(model, frequent) for model in ("bm25f.v1", "lm-2si.v1")
                                                  for frequent in (["river"], ["river", "bridge"])]
                         + [("tfisf.v1", ["river"]), ("idfdoc.v1", ["bridge"])])
def test_the_lists_give_most_tops_of_a_frequent_term_with_rarer_ones(
    corpora: list[Index], model: str, frequent: list[str]
) -> None:
    """Not a path that always declines: with MaxScore off, one or two frequent terms with a rarer one, k = 4 from
    lists of 16, are read from the lists (and equal to the exhaustive top k, as above)."""
    index = corpora[1]
    params = {"idf": "lucene"} if model == "bm25f.v1" else {}  # rsj's idf of "river", in most sentences, is < 0
    train_impacts(index, models=["tfisf.v1" if model == "idfdoc.v1" else model], length=16, share=1000)
    assert set(frequent) <= {index.vocab[t] for t in listed_terms(index, 16, 1000)}
    rare = [w for w in index.vocab if postings(index).size(index.term_index[w]) <= 3][:20]
    hits = 0
    for word in rare:
        got, used = searched(index, [*frequent, word], model, 4, params, False, 1)
        same(got, top_k(score(index, [*frequent, word], model, **params), 4))
        hits += used
    assert hits >= len(rare) // 2, (hits, len(rare))


@pytest.mark.parametrize("model", ["tfisf.v1", "idfdoc.v1"])
def test_tfisf_ties_at_the_bound_settle_from_the_lists(corpora: list[Index], model: str) -> None:
    """A frequent term alone, k past its sentences holding it twice or more: the k-th best is a sentence holding it
    once, tied with every sentence past the entries read (only the order of the list, by id, settles it). The top
    k still comes from the lists, equal to the exhaustive one."""
    index = corpora[1]
    train_impacts(index, models=["tfisf.v1"], length=64, share=1000)
    counts = postings(index)(index.term_index["river"])[1]
    several = int(np.count_nonzero(counts >= 2))
    for k in (several + 1, several + 5, 32):
        want = top_k(score(index, ["river"], model), k)
        assert want.scores[-1] == want.scores.min() == score(index, ["river"], model).scores.min()  # a tie at k
        got, used = searched(index, ["river"], model, k, {}, True, 1)
        same(got, want)
        assert used == 1, k


def test_shared_estimate_is_the_independent_documents_share(corpora: list[Index]) -> None:
    """Two terms in shares a and b of the documents: N·a·b; three: N·(ab + ac + bc - 2abc); one: 0."""
    index = corpora[1]
    ids = np.array([index.term_index[w] for w in ("river", "bridge", "city")])
    a, b, c = (float(index.df[t]) / index.D for t in ids)
    assert impacts.shared_estimate(index, ids[:2]) == pytest.approx(index.N * a * b)
    assert impacts.shared_estimate(index, ids) == pytest.approx(index.N * (a * b + a * c + b * c - 2 * a * b * c))
    assert impacts.shared_estimate(index, ids[:1]) == pytest.approx(0.0, abs=1e-9)


def test_each_list_is_its_terms_best_sentences_by_key(corpora: list[Index]) -> None:
    """BM25F's key is x̃ (with w_context = w_title = 0 it is c(t,s)/B(s), whose largest values a brute force
    over the term's postings finds); LM-2S-I's of variant 0 is the term's own score; TF-ISF's the count."""
    index = corpora[0]
    found = train_impacts(index, models=["bm25f.v1", "lm-2si.v1", "tfisf.v1"], length=8, share=1000,
                          params={"bm25f.v1": {"w_context": 0.0, "w_title": 0.0, "b": 1.0}})
    terms = found.arrays["terms"]
    assert len(terms) > 3
    lengths = np.asarray(index.array("sent_len"), dtype=np.float64)
    for row, term in enumerate(terms.tolist()):
        rows, counts = postings(index)(term)
        x = counts / (lengths[rows] / lengths.mean())
        best_first(found.arrays["lists/bm25f.v1"][row, 0], rows, x)
        single = score(index, [index.vocab[term]], "lm-2si.v1")
        best_first(found.arrays["lists/lm-2si.v1"][row, 0], single.ids, single.scores)
        by_count = found.arrays["lists/tfisf.v1"][row, 0]  # count descending, ties by id: what settles ties
        assert by_count.tolist() == rows[np.lexsort((rows, -counts))][: len(by_count)].tolist()


def best_first(listed: np.ndarray, ids: np.ndarray, keys: np.ndarray) -> None:
    """``listed`` are distinct ``ids`` of the largest ``keys``, in descending order (equal up to rounding: c/len and
    2c/2len are one number computed two ways)."""
    tol = 1e-12 * float(np.abs(keys).max())
    at = dict(zip(ids.tolist(), keys.tolist()))
    got = np.array([at[i] for i in listed.tolist()])
    assert len(set(listed.tolist())) == len(listed)
    assert np.all(np.diff(got) <= tol)
    others = np.array([v for i, v in at.items() if i not in set(listed.tolist())])
    assert others.max(initial=-np.inf) <= got.min() + tol


def test_lists_of_other_parameters_or_damaged_are_not_used(corpora: list[Index]) -> None:
    index = corpora[1]
    train_impacts(index, models=["bm25f.v1"], length=16, share=1000, params={"bm25f.v1": {"w_title": 1.0}})
    for params, expected in (({"w_title": 1.0, "k1": 2.0, "idf": "lucene"}, 1), ({"idf": "lucene"}, 0),
                             ({"w_title": 1.0, "window": 3, "idf": "lucene"}, 0)):
        got, used = searched(index, ["river", "theatre"], "bm25f.v1", 4, params, False, 1)
        same(got, top_k(score(index, ["river", "theatre"], "bm25f.v1", **params), 4))
        assert used == expected, params
    lists = artefacts.folder_of(index.path, "impacts")
    record = json.loads((lists / artefacts.META).read_text())
    record["models"]["bm25f.v1"]["w_title"] = 0.0  # edited: its checksum no longer matches
    (lists / artefacts.META).write_text(json.dumps(record))
    assert impact_lists(index) is None
    got, used = searched(index, ["river", "theatre"], "bm25f.v1", 4, {"w_title": 1.0, "idf": "lucene"}, False, 1)
    assert used == 0
    same(got, top_k(score(index, ["river", "theatre"], "bm25f.v1", w_title=1.0, idf="lucene"), 4))


def test_lists_holding_ids_outside_the_index_are_refused(corpora: list[Index]) -> None:
    index = corpora[0]
    found = train_impacts(index, models=["bm25f.v1"], length=8, share=1000)
    arrays = dict(found.arrays)
    arrays["lists/bm25f.v1"] = arrays["lists/bm25f.v1"] + index.N  # resealed: its hashes match, its ids do not
    artefacts.write(index, "impacts", "impacts", arrays, {k: found.meta[k] for k in ("models", "length", "share")})
    with pytest.raises(SentretError, match="outside"):
        artefacts.read(index, "impacts", "impacts")
    assert impact_lists(index) is None
    assert any("artefacts/impacts" in problem and "outside" in problem for problem in verify(index.path))


def test_stored_maxima_are_those_of_the_postings_and_are_read(corpora: list[Index],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Every term of more than STORED_FROM postings gets its maxima stored with the lists, equal to those read
    from its postings; a fresh process then reads them (never the postings) for the LMs' and TF-ISF's bounds."""
    index = corpora[0]
    monkeypatch.setattr(maxima, "STORED_FROM", 0)
    train_impacts(index, models=["lm-2si.v1"], length=8, share=1000)
    fresh = Index.load(index.path)
    found = impact_lists(fresh)
    assert found is not None and found.maxima is not None
    sizes = np.array([postings(fresh).size(t) for t in range(fresh.V)])
    assert found.maxima.terms.tolist() == np.flatnonzero(sizes > 0).tolist()
    for term in found.maxima.terms.tolist():
        kept = maxima.stored(fresh, term)
        assert kept is not None
        assert kept[0].tolist() == maxima.by_length_of(fresh, term).tolist()
        assert kept[1] == maxima.document_ratio_of(fresh, term)
    reads = []
    real = maxima.stored

    def counted(at: Index, term: int) -> object:
        reads.append(term)
        return real(at, term)

    rng = np.random.default_rng(3)
    with mock.patch.object(maxima, "stored", counted), \
            mock.patch.object(maxima, "by_length_of", side_effect=AssertionError("read from the postings")), \
            mock.patch.object(maxima, "document_ratio_of", side_effect=AssertionError("read from the postings")), \
            mock.patch.object(maxscore, "PRUNE_FROM", 0), mock.patch.object(maxscore, "SAMPLE", 2):
        for _ in range(60):
            terms = list(rng.choice([*WORDS[:10], "river"], size=rng.integers(2, 5)))
            k = int(rng.integers(1, 6))
            for model in ("lm-2si.v1", "lm-dir.v1", "tfisf.v1"):
                same(search(fresh, terms, model, k), top_k(score(fresh, terms, model), k))
    assert len(set(reads)) > 5


def test_damaged_maxima_are_refused(corpora: list[Index], monkeypatch: pytest.MonkeyPatch) -> None:
    index = corpora[0]
    monkeypatch.setattr(maxima, "STORED_FROM", 0)
    found = train_impacts(index, models=["bm25f.v1"], length=8, share=1000)
    meta = {k: found.meta[k] for k in ("models", "length", "share")}
    for name, damaged, problem in (("by_length", lambda a: a - 1000, "negative"),
                                   ("document", lambda a: a[:-1], "one finite"),
                                   ("terms", lambda a: a[::-1], "ascending")):
        arrays = dict(found.arrays)
        arrays[f"maxima/{name}"] = damaged(arrays[f"maxima/{name}"])  # resealed: its hashes match
        artefacts.write(index, "impacts", "impacts", arrays, meta)
        with pytest.raises(SentretError, match=problem):
            artefacts.read(index, "impacts", "impacts")
        assert impact_lists(index) is None
        assert any("artefacts/impacts" in p and problem in p for p in verify(index.path))
    artefacts.write(index, "impacts", "impacts", dict(found.arrays), meta)
    assert impact_lists(index) is not None


def test_a_model_without_lists_is_refused_in_a_clear_message(corpora: list[Index]) -> None:
    with pytest.raises(SentretError, match=r"bm25\.v1 has no impact lists"):
        train_impacts(corpora[0], models=["bm25.v1"], length=8, share=1000)
    with pytest.raises(SentretError, match=r"tfisf\.v1 \(which idfdoc\.v1 reads too\)"):
        train_impacts(corpora[0], models=["idfdoc.v1"], length=8, share=1000)
