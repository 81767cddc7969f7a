"""The class-based LMs' search() (an exact top k by MaxScore over the query terms' classes, Turtle & Flood 1995;
models/lm_class/pruning.py) against top_k(score(...)): the same ids and scores bit for bit, in each of the cap's
cases; the bounds checked against every candidate's exhaustive score."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core import Index
from sentret_core.models import get_model, prepare, score, search, top_k
from sentret_core.models.lm_class import pruning
from sentret_core.models.lm_class.scorer import class_data, class_likelihood, mixture, usable_terms
from sentret_core.models.training.classes import train_classes
from tests.conftest import build_from_texts, examples
from tests.models.test_pruning import WORDS, same, zipf_docs

MODELS = ["lm-class.v1", "lm-class.v2"]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Index]:
    """Three corpora (300, 700 and 90 sentences), each with its default class map (4-6 classes of ~25 words)."""
    root = Path(tmp_path_factory.mktemp("lm-class-pruning"))
    found = []
    for seed, n_docs, n_classes in ((1, 80, 4), (2, 200, 6), (3, 25, 3)):
        index = build_from_texts(root, zipf_docs(seed, n_docs), f"c{seed}")
        train_classes(index, classes=n_classes, min_count=1, seed=seed)
        found.append(index)
    return found


@pytest.fixture(autouse=True)
def prune_at_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pruning is tried at any number of candidates here (on a large index it starts at PRUNE_FROM)."""
    monkeypatch.setattr(pruning, "PRUNE_FROM", 0)


PARAMS = st.fixed_dictionaries(
    {
        "mu": st.sampled_from([1e-6, 1.0, 100.0, 5000.0]),
        "lam": st.sampled_from([0.0, 0.0, 0.3, 0.9, 1.0]),
        "mu_word": st.sampled_from([1e-6, 5.0, 100.0, 2500.0]),
        # 1-40 cap most queries (at W, between, or above W + k); 10⁴ none
        "max_candidates": st.sampled_from([1, 3, 10, 40, 120, 10_000]),
    }
)
TERMS = st.lists(st.sampled_from([*WORDS, "river", "nowhere"]), min_size=1, max_size=8)


@settings(derandomize=True, max_examples=examples(500), deadline=None)
@given(which=st.integers(0, 2), model=st.sampled_from(MODELS), terms=TERMS, k=st.integers(0, 40), params=PARAMS)
def test_search_is_top_k_of_score(corpora: list[Index], which: int, model: str, terms: list[str], k: int,
                                  params: dict[str, object]) -> None:
    index = corpora[which]
    same(search(index, terms, model, k, **params), top_k(score(index, terms, model, **params), k))


def candidates_and_words(index: Index, terms: list[str], p: Any) -> tuple[set[int], set[int]]:
    """Every candidate (a sentence holding a term of a query term's class) and W (those holding a query word), by
    brute force over X."""
    X = index.X.toarray()
    data = class_data(index, p)
    use = [t for t, _ in usable_terms(index, prepare(index, terms))]
    in_class = np.isin(data.cls, [int(data.cls[t]) for t in use])
    cand = np.flatnonzero(X[:, in_class].sum(axis=1) > 0)
    words = np.flatnonzero(X[:, use].sum(axis=1) > 0) if use else np.zeros(0, dtype=np.int64)
    return set(cand.tolist()), set(words.tolist())


def test_every_case_of_the_cap(corpora: list[Index]) -> None:
    """Over a grid of queries, caps and k: the top k is exact, and each case is met — every candidate ranked
    (|W| + k ≤ m, or at most m candidates), W alone (|W| ≥ m), and None between (the scorer's path)."""
    index = corpora[0]
    seen: Counter[str] = Counter()
    rng = np.random.default_rng(3)
    for _ in range(60):
        terms = list(rng.choice([*WORDS[:16], "river"], size=rng.integers(1, 4), replace=False))
        for model, m, k in itertools.product(MODELS, [1, 5, 20, 60, 200, 10_000], [1, 10, 30]):
            spec = get_model(model)
            p = spec.resolve({"max_candidates": m})
            cand, words = candidates_and_words(index, terms, p)
            case = ("all" if len(words) + k <= m or len(cand) <= m else "words" if len(words) >= m else "between")
            found = spec.top_k(index, prepare(index, terms), p, k)  # type: ignore[misc]
            assert (found is None) == (case == "between"), (terms, m, k, case)
            if found is not None:
                assert set(found[0].tolist()) <= (words if case == "words" else cand)
            seen[case] += 1
            want = top_k(score(index, terms, model, max_candidates=m), k)
            same(search(index, terms, model, k, max_candidates=m), want)
    assert min(seen[case] for case in ("all", "words", "between")) > 20, seen


def counting_top_k(scored: list[tuple[int, int]]) -> Any:
    """lm-class's top_k whose likelihood notes (query terms, sentences) of each call."""

    def likelihood(index: Index, p: Any, use: list[tuple[int, float]], ids: np.ndarray, *,
                   candidates: bool) -> tuple[np.ndarray, np.ndarray]:
        scored.append((len(use), len(ids)))
        return class_likelihood(index, p, use, ids, candidates=candidates)

    return pruning.class_top_k(pruning.ClassModel(class_data, likelihood, usable_terms, mixture))


@pytest.mark.parametrize("model", MODELS)
def test_pruning_happens_and_drops_candidates(corpora: list[Index], model: str) -> None:
    """On most queries the pruned path scores exactly (with every query term) under half the candidates, and its
    top k is the exhaustive one."""
    index = corpora[1]
    spec = get_model(model)
    rng = np.random.default_rng(5)
    pruned = 0
    for _ in range(60):
        terms = list(rng.choice([*WORDS[:12], "river"], size=rng.integers(2, 5), replace=False))
        k = int(rng.integers(1, 6))
        scored: list[tuple[int, int]] = []
        q = prepare(index, terms)
        found = counting_top_k(scored)(index, q, spec.resolve({"max_candidates": 10**6}), k)
        full = score(index, terms, model, max_candidates=10**6)
        assert found is not None
        ids, values, _ = found
        assert set(ids.tolist()) <= set(full.ids.tolist())
        best = np.lexsort((ids, -values))[:k]
        want = top_k(full, k)
        assert ids[best].tolist() == want.ids.tolist() and values[best].tobytes() == want.scores.tobytes()
        exact = sum(n for terms_used, n in scored if terms_used == len(usable_terms(index, q)))
        pruned += exact < len(full) // 2
    assert pruned > 30, pruned


def test_class_maxima_are_the_largest_class_counts(corpora: list[Index]) -> None:
    """M_C(n) against a loop over the sentences."""
    index = corpora[1]
    p = get_model("lm-class.v1").defaults()
    data = class_data(index, p)
    X = index.X.toarray()
    by_class = np.stack([X[:, data.cls == c].sum(axis=1) for c in range(len(data.p_class))])
    lengths = np.asarray(index.sent_len)
    want = np.zeros((len(data.p_class), int(lengths.max()) + 1))
    for s in range(index.N):
        want[:, lengths[s]] = np.maximum(want[:, lengths[s]], by_class[:, s])
    assert np.array_equal(pruning.class_maxima(index, data), want)


BOUND_PARAMS = [{}, {"lam": 0.4}, {"lam": 1.0}, {"mu": 1.0, "lam": 0.2, "mu_word": 5.0}, {"mu": 5000.0}]


@pytest.mark.parametrize("with_words", [False, True])
@pytest.mark.parametrize("params", BOUND_PARAMS)
def test_the_bounds_hold_for_every_candidate(corpora: list[Index], params: dict[str, object], with_words: bool) -> None:
    """For each set R of the query's classes: every candidate holding no query word (or any, ``with_words``) and no
    class outside R scores at most bound(R) (and bound(R) is not far above the best of them); every such candidate
    scores between its exact part over the classes outside R plus R's ``absent`` and plus R's ``present`` at its
    length."""
    index = corpora[1]
    X = index.X.toarray()
    lengths = np.asarray(index.sent_len).astype(np.intp)
    rng = np.random.default_rng(7)
    checked = tight = 0
    for _ in range(25):
        terms = list(rng.choice([*WORDS[:14], "river"], size=rng.integers(2, 5)))  # repeats: c(t,q) > 1
        full = score(index, terms, "lm-class.v1", max_candidates=10**6, **params)
        p = full.params
        data = class_data(index, p)
        use = usable_terms(index, prepare(index, terms))
        classes = np.array([int(data.cls[t]) for t, _ in use])
        groups = np.unique(classes)
        bounds = pruning.Bounds(index, p, pruning.ClassModel(class_data, class_likelihood, usable_terms, mixture),
                                data, use, classes, groups, with_words=with_words)
        ids = full.ids
        holds = np.stack([X[np.ix_(ids, np.flatnonzero(data.cls == c))].sum(axis=1) > 0 for c in groups], axis=1)
        outside = X[np.ix_(ids, [t for t, _ in use])].sum(axis=1) == 0
        if with_words:
            outside[:] = True
        for size in range(1, len(groups) + 1):
            for rest in itertools.combinations(range(len(groups)), size):
                rest_ = np.array(rest)
                others = [g for g in range(len(groups)) if g not in rest]
                lacking = outside & ~holds[:, others].any(axis=1)
                if lacking.any():
                    checked += 1
                    best = float(full.scores[lacking].max())
                    assert best <= bounds.bound(rest_), (terms, rest, params)
                    tight += bounds.bound(rest_) < best + 1.0
                ess = [u for u, c in zip(use, classes) if c not in set(groups[rest_].tolist())]
                part = class_likelihood(index, p, ess, ids, candidates=False)[0] if ess else np.zeros(len(ids))
                n = lengths[ids]
                upper = part + bounds.present[rest_].sum(axis=0)[n]
                lower = part + bounds.absent[rest_].sum(axis=0)[n]
                slack = 1e-9 * np.abs(full.scores)
                assert (full.scores[outside] <= upper[outside] + slack[outside]).all(), (terms, rest, params)
                assert (full.scores[outside] >= lower[outside] - slack[outside]).all(), (terms, rest, params)
    assert checked > 40 and tight > 10, (checked, tight)


def test_importance_orders_the_classes_and_rest_below_is_monotone(corpora: list[Index]) -> None:
    """rest_below(θ) grows with θ, and is every class once θ is above the bound of all of them."""
    index = corpora[1]
    p = get_model("lm-class.v2").defaults()
    data = class_data(index, p)
    use = usable_terms(index, prepare(index, ["bridge", "city", "castle", "river"]))
    classes = np.array([int(data.cls[t]) for t, _ in use])
    groups = np.unique(classes)
    bounds = pruning.Bounds(index, p, pruning.ClassModel(class_data, class_likelihood, usable_terms, mixture),
                            data, use, classes, groups)
    everything = bounds.bound(np.arange(len(groups)))
    sizes = [len(bounds.rest_below(theta)) for theta in np.linspace(everything - 20.0, everything + 1.0, 50)]
    assert sizes == sorted(sizes) and sizes[-1] == len(groups)
    assert len(bounds.rest_below(-np.inf)) == 0
