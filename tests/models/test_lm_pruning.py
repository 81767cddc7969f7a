"""The language models' search() (MaxScore-pruned top-k, models/lm/pruning.py) against top_k(score(...)): the same
ids and scores bit for bit, for every LM, context, window, importance and parameter edge."""

from __future__ import annotations

import itertools
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core import Index
from sentret_core.models import get_model, prepare, score, search, top_k
from sentret_core.models.arrays import maxscore
from sentret_core.models.lm import pruning as lm_pruning
from sentret_core.models.lm.scorer import THREE_MM, TWO_STAGE_INV
from sentret_core.models.lm.scoring import Variant, known_terms
from tests.conftest import build_from_texts, examples
from tests.models.test_pruning import WORDS, same, zipf_docs


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Index]:
    root = Path(tmp_path_factory.mktemp("lm-pruning"))
    return [build_from_texts(root, zipf_docs(seed, n), f"z{seed}") for seed, n in ((1, 40), (2, 90), (3, 15))]


LOCAL = {"context": st.sampled_from(["document", "window"]), "window": st.integers(1, 3)}
MODELS = {
    "lm-jm.v1": {"lam": st.sampled_from([0.05, 0.5, 1.0])},
    "lm-dir.v1": {"mu": st.sampled_from([1e-6, 1.0, 100.0, 5000.0])},
    "lm-3mm.v1": {"lam": st.sampled_from([0.0, 0.3, 0.6]), "gamma": st.sampled_from([0.0, 0.2, 0.39]), **LOCAL},
    "lm-2s.v1": {"lam": st.sampled_from([0.1, 0.5, 0.9]), "mu": st.sampled_from([0.0, 10.0, 1000.0]), **LOCAL},
    "lm-2si.v1": {"lam": st.sampled_from([0.0, 0.5, 1.0]), "mu": st.sampled_from([1e-6, 100.0, 2500.0]), **LOCAL},
    "lm-3mmpds.v1": {"lam": st.sampled_from([0.2, 0.5]), "gamma": st.sampled_from([0.0, 0.3]),
                     "window": st.integers(1, 2)},
}
TERMS = st.lists(st.sampled_from([*WORDS, "river", "nowhere"]), min_size=1, max_size=10)


@st.composite
def model_and_params(draw: st.DrawFn) -> tuple[str, dict[str, object]]:
    model = draw(st.sampled_from(sorted(MODELS)))
    params = {name: draw(values) for name, values in MODELS[model].items()}
    if model != "lm-3mmpds.v1" and draw(st.booleans()):
        params["importance"] = True
    return model, params


@settings(derandomize=True, max_examples=examples(600), deadline=None)
@given(which=st.integers(0, 2), terms=TERMS, k=st.integers(0, 60), chosen=model_and_params(),
       sample=st.sampled_from([1, 2, 5, 4096]), readily=st.sampled_from([0, 8, 2**18]))
def test_lm_search_is_top_k_of_score(corpora: list[Index], which: int, terms: list[str], k: int,
                                     chosen: tuple[str, dict[str, object]], sample: int, readily: int) -> None:
    """Small samples and no minimum, so the pruned path runs on small corpora; ``readily`` 0 and 8 make the terms
    "large" (their maxima read only when they can make the difference)."""
    model, params = chosen
    index = corpora[which]
    with mock.patch.object(maxscore, "SAMPLE", sample), mock.patch.object(maxscore, "PRUNE_FROM", 0), \
            mock.patch.object(lm_pruning, "MAXIMA_READILY", readily):
        got = search(index, terms, model, k, **params)
    same(got, top_k(score(index, terms, model, **params), k))


def local_counts_brute(index: Index, p: object, s: int, terms: list[int]) -> np.ndarray:
    """c(t, l(s)) for each term by summing rows of X over s's document or ±window (a loop: the reference)."""
    doc = int(index.sent_doc[s])
    first, end = int(index.doc_first[doc]), int(index.doc_first[doc] + index.doc_nsent[doc])
    if getattr(p, "context", "document") == "window":
        first, end = max(first, s - p.window), min(end, s + p.window + 1)  # type: ignore[attr-defined]
    X = index.X.toarray()
    return X[first:end, terms].sum(axis=0)


VARIANTS: dict[str, tuple[Variant, dict[str, object]]] = {
    "lm-2si.v1": (TWO_STAGE_INV, {}),
    "lm-2si.v1/window": (TWO_STAGE_INV, {"context": "window", "window": 2}),
    "lm-2si.v1/mu": (TWO_STAGE_INV, {"mu": 5.0, "lam": 0.2}),
    "lm-3mm.v1": (THREE_MM, {"gamma": 0.0}),
    "lm-3mm.v1/window": (THREE_MM, {"context": "window", "importance": True}),
}


@pytest.mark.parametrize("readily", [0, 2**18])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_bound_is_above_every_candidate_lacking_the_essential_terms(corpora: list[Index], name: str,
                                                                         readily: int) -> None:
    """bounds(...) says a candidate holding none of the query terms outside R scores below θ only when every such
    candidate does (in s or, when the local model reaches candidates, in l(s)): checked against the exhaustive
    scores, candidate by candidate, at θ just above and just below their best."""
    variant, params = VARIANTS[name]
    model = name.split("/")[0]
    index = corpora[1]
    X = index.X.toarray()
    rng = np.random.default_rng(7)
    checked = said_below = 0
    for _ in range(25):
        terms = list(rng.choice([*WORDS[:12], "river"], size=rng.integers(2, 5), replace=False))
        full = score(index, terms, model, **params)
        p = full.params
        use = known_terms(index, prepare(index, terms))
        ids = [t for t, _ in use]
        with mock.patch.object(lm_pruning, "MAXIMA_READILY", readily):
            below = lm_pruning.Bounds(index, p, variant, use).below
        reach = variant.local and p.local_weighted()  # type: ignore[attr-defined]
        held = X[np.ix_(full.ids, ids)] > 0
        if reach:
            held |= np.array([local_counts_brute(index, p, int(s), ids) for s in full.ids]) > 0
        for size in range(1, len(ids)):
            for rest in itertools.combinations(range(len(ids)), size):
                others = [i for i in range(len(ids)) if i not in rest]
                lacking = ~held[:, others].any(axis=1)
                if lacking.any():
                    checked += 1
                    best = full.scores[lacking].max()
                    assert not below(np.array(rest), best), (terms, rest)  # θ at the best: not below it
                    said_below += below(np.array(rest), best + 1.0)
    assert checked > 20 and (said_below > 0 or params.get("importance"))  # log p(d|s)'s bound is loose


def test_term_maxima_are_the_largest_ratios(corpora: list[Index]) -> None:
    """term_maxima against a loop over the term's sentences and documents."""
    index = corpora[1]
    X = index.X.toarray()
    lengths = np.asarray(index.sent_len)
    doc_len = np.bincount(np.asarray(index.sent_doc), weights=lengths, minlength=index.D)
    for word in ["river", "castle", "bridge", "theatre"]:
        t = index.term_index[word]
        s_max, l_doc = lm_pruning.term_maxima(index, t, "document")
        want = np.zeros(int(lengths.max()) + 1)
        for s in np.flatnonzero(X[:, t]):
            want[lengths[s]] = max(want[lengths[s]], X[s, t] / lengths[s])
        assert np.array_equal(s_max, want)
        per_doc = np.bincount(np.asarray(index.sent_doc), weights=X[:, t], minlength=index.D)
        assert l_doc == max(per_doc[d] / doc_len[d] for d in np.flatnonzero(per_doc))
        assert lm_pruning.term_maxima(index, t, "window")[1] == want.max()
        assert lm_pruning.term_maxima(index, t, "")[1] == 0.0


@pytest.mark.parametrize("model", ["lm-2si.v1", "lm-dir.v1", "lm-3mm.v1"])
def test_pruning_happens_and_drops_candidates(corpora: list[Index], model: str) -> None:
    """The pruned path runs, and returns fewer candidates than score, on most of these queries."""
    rng = np.random.default_rng(5)
    spec = get_model(model)
    pruned = 0
    for _ in range(100):
        terms = list(rng.choice([*WORDS[:10], "river"], size=rng.integers(2, 5)))
        k = int(rng.integers(1, 6))
        with mock.patch.object(maxscore, "SAMPLE", 1), mock.patch.object(maxscore, "PRUNE_FROM", 0):
            found = spec.top_k(index := corpora[1], prepare(index, terms), spec.resolve({}), k)  # type: ignore[misc]
            got = search(index, terms, model, k)
        full = score(index, terms, model)
        same(got, top_k(full, k))
        if found is not None and len(found[0]) < len(full):
            pruned += 1
            assert set(found[0].tolist()) <= set(full.ids.tolist())
    assert pruned > 50


@pytest.mark.parametrize("params", [{}, {"mu": 5.0, "lam": 0.2}, {"importance": True}, {"lam": 1.0}])
def test_the_documents_cut_keeps_every_document_where_a_sentence_lacking_the_essential_terms_reaches_theta(
        corpora: list[Index], params: dict[str, object]) -> None:
    """Under the document model, a sentence holding no essential term itself is a candidate through its document:
    _documents_reaching must keep its document whenever its exact score reaches θ (checked against the exhaustive
    scores at θ = each such sentence's score), and it drops documents once θ is above them all."""
    index = corpora[1]
    X = index.X.toarray()
    sent_doc = np.asarray(index.sent_doc)
    rng = np.random.default_rng(11)
    checked = dropped = 0
    for _ in range(20):
        terms = list(rng.choice([*WORDS[:12], "river"], size=rng.integers(2, 5), replace=False))
        full = score(index, terms, "lm-2si.v1", **params)
        p = full.params
        use = known_terms(index, prepare(index, terms))
        ids = [t for t, _ in use]
        bounds = lm_pruning.Bounds(index, p, TWO_STAGE_INV, use)
        for size in range(1, len(ids)):
            for essential in itertools.combinations(range(len(ids)), size):
                rest = np.array([i for i in range(len(ids)) if i not in essential], dtype=np.int64)
                holding = X[:, [ids[i] for i in essential]].sum(axis=1) > 0
                held = np.flatnonzero(holding).astype(np.int32)
                in_docs = np.isin(sent_doc[full.ids], sent_doc[held])
                lacking = in_docs & ~holding[full.ids]
                if not lacking.any():
                    continue
                for theta in np.unique(full.scores[lacking]):
                    found = maxscore.Split(np.array(essential), rest, float(theta))
                    kept = lm_pruning._documents_reaching(index, p, TWO_STAGE_INV, use, found, bounds, held,
                                                          float(theta))
                    reaching = full.ids[lacking & (full.scores >= theta)]
                    assert set(sent_doc[reaching].tolist()) <= set(kept.tolist()), (terms, essential, theta)
                    checked += 1
                above = float(full.scores[lacking].max()) + 1.0
                kept = lm_pruning._documents_reaching(index, p, TWO_STAGE_INV, use, found, bounds, held, above)
                dropped += len(kept) < len(np.unique(sent_doc[held]))
    assert checked > 100 and dropped > 0, (checked, dropped)
