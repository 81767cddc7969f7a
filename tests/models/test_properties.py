"""Properties every scorer keeps, checked with Hypothesis over queries and parameters.

* every smoothed p(t|θ_s) is a distribution over the vocabulary (sums to 1), including for a
  sentence with no terms at all (its maximum-likelihood model is the collection's);
* scores are finite for any query (unknown words, repeats) under every model's defaults;
* an empty or stop-word-only query has no candidates and says why, never raises;
* explain's total equals the score, for every registered model and any parameters;
* top_k ranks by score, then sentence id, and agrees with a full sort.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.models import (
    NO_TERMS,
    Scores,
    distribution,
    explain,
    get_model,
    list_models,
    score,
    top_k,
)
from sentret_core.models.core.params import ParamSpec
from tests.conftest import build_from_texts, examples, train_default_artefacts

# its tests score ltr.v1 under its default ranker name, or count on the app offering it
pytestmark = pytest.mark.usefixtures("default_ranker")

# Includes a sentence with no terms ("And so it was.") between two that have some, documents of
# one and of several sentences, and a title word that no sentence uses ("Estuary").
DOCS = [
    {
        "id": "rivers",
        "title": "Rivers Estuary",
        "text": (
            "Rivers flow from the mountains to the sea. And so it was. "
            "The sea is salty and the river water is fresh. "
            "Salmon swim up the river to spawn in the mountains. "
            "Bears catch salmon in shallow water."
        ),
    },
    {"id": "sea", "title": "Sea", "text": "The sea covers most of the planet."},
    {
        "id": "mountains",
        "title": "Mountain ranges",
        "text": (
            "Mountains form where tectonic plates collide. "
            "Snow on the mountains feeds rivers in spring. "
            "Goats climb steep rocks. Eagles nest on high cliffs."
        ),
    },
]
ALL = [spec.name for spec in list_models()]
LMS = [spec.name for spec in list_models() if spec.distribution is not None]
OOV = ["zyzzyva", "quux", "estuaryx"]
PROFILE = settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def test_the_profile_keeps_the_derandomized_default() -> None:
    assert PROFILE.derandomize and PROFILE.max_examples == examples(100)


@pytest.fixture(scope="module")
def nature(tmp_path_factory: pytest.TempPathFactory) -> Index:
    index = build_from_texts(Path(tmp_path_factory.mktemp("nature")), DOCS)
    train_default_artefacts(index)
    return index


def test_the_index_has_an_empty_sentence(nature: Index) -> None:
    assert nature.texts[1] == "And so it was."
    assert nature.sent_len[1] == 0
    assert nature.sf[nature.term_ids(["estuary"])[0]] == 0  # a title-only term


def value_strategy(spec: ParamSpec) -> st.SearchStrategy[Any]:
    if spec.choices is not None:
        return st.sampled_from(spec.choices)
    if spec.artefact is not None:  # the artefact the fixture trained
        return st.just(spec.default)
    if spec.contextual:  # ltr.v1's entity: none, or the nature index's one entity (id 0)
        return st.sampled_from([None, 0])
    if spec.type is bool:
        return st.booleans()
    if spec.type is int:
        return st.integers(int(spec.min or 0), int(spec.max if spec.max is not None else 10))
    lo, hi = spec.min or 0.0, spec.max if spec.max is not None else 1e3
    floats = st.floats(lo, min(hi, 1e4), allow_nan=False, exclude_min=spec.above_min)
    if spec.min_positive is not None:  # 0, or at least min_positive
        floats = st.just(0.0) | st.floats(spec.min_positive, min(hi, 1e4), allow_nan=False)
    values = floats | st.sampled_from(spec.grid or (spec.default,))
    return st.none() | values if spec.nullable else values


@st.composite
def model_and_params(draw: st.DrawFn, names: list[str]) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(names))
    params = {p.name: draw(value_strategy(p)) for p in get_model(name).param_specs()}
    try:
        get_model(name).resolve(params)
    except SentretError:  # e.g. 3MM's λ + γ > 1
        assume(False)
    return name, params


def terms_strategy(index: Index) -> st.SearchStrategy[list[str]]:
    words = sorted(set(index.vocab) | set(OOV))
    return st.lists(st.sampled_from(words), min_size=1, max_size=6)


@PROFILE
@given(data=st.data())
def test_every_smoothed_model_is_a_distribution(nature: Index, data: st.DataObject) -> None:
    name, params = data.draw(model_and_params(LMS))
    sentence = data.draw(st.integers(0, nature.N - 1))
    p = distribution(nature, sentence, name, **params)
    assert p.shape == (nature.V,)
    assert (p >= 0).all()
    assert math.isclose(float(p.sum()), 1.0, rel_tol=0, abs_tol=1e-9)


@pytest.mark.parametrize("name", LMS)
def test_the_empty_sentence_is_a_distribution_too(nature: Index, name: str) -> None:
    for context in ("document", "window"):
        params = {"context": context} if "context" in get_model(name).params.names() else {}
        assert math.isclose(float(distribution(nature, 1, name, **params).sum()), 1.0, abs_tol=1e-9)


def test_the_distribution_agrees_with_explain(nature: Index) -> None:
    p = distribution(nature, 2, "lm-2si.v1", lam=0.3, mu=25)
    rows = explain(nature, "river sea", 2, "lm-2si.v1", lam=0.3, mu=25).rows
    for row in rows:
        assert math.isclose(p[nature.term_index[row["term"]]], row["p(t|θ)"], rel_tol=1e-12)


def test_only_language_models_have_a_distribution(nature: Index) -> None:
    with pytest.raises(SentretError, match="not a language model"):
        distribution(nature, 0, "bm25.v1")


@PROFILE
@given(data=st.data())
def test_scores_are_finite_for_any_query(nature: Index, data: st.DataObject) -> None:
    terms = data.draw(terms_strategy(nature))
    for name in ALL:
        scores = score(nature, terms, name)
        assert np.isfinite(scores.scores).all(), (name, terms)
        assert scores.ids.dtype == np.int64 and scores.scores.dtype == np.float64
        assert (np.diff(scores.ids) > 0).all(), "ids are sorted and distinct"
        assert (scores.reason is None) == (len(scores) > 0)


@PROFILE
@given(text=st.text(max_size=40))
def test_any_text_is_a_query(nature: Index, text: str) -> None:
    for name in ("bm25.v1", "lm-3mmpds.v1", "tfisf-con.v1"):
        scores = score(nature, text, name)
        assert np.isfinite(scores.scores).all()
        assert (scores.reason is None) == (len(scores) > 0)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("query", ["", "   ", "the of and", "!!! ... ???", "And so it was.", []])
def test_a_query_without_terms_has_a_reason(nature: Index, name: str, query: Any) -> None:
    scores = score(nature, query, name)
    assert len(scores) == 0 and scores.reason == NO_TERMS
    assert len(top_k(scores, 10)) == 0


@pytest.mark.parametrize("name", [n for n in ALL if not get_model(n).open_vocabulary])
def test_a_query_of_unknown_words_has_a_reason(nature: Index, name: str) -> None:
    scores = score(nature, "zyzzyva quux", name)
    assert len(scores) == 0
    assert (
        scores.reason is not None and "no sentence contains" in scores.reason and "zyzzyva" in scores.reason
    )
    assert scores.oov == ("zyzzyva", "quux")


@pytest.mark.parametrize("name", [n for n in ALL if get_model(n).open_vocabulary])
def test_a_model_with_an_open_vocabulary_scores_unknown_words(nature: Index, name: str) -> None:
    scores = score(nature, "zyzzyva quux", name)
    assert len(scores) > 0 and scores.reason is None and scores.oov == ("zyzzyva", "quux")


def test_a_title_only_word(nature: Index) -> None:
    # BM25F matches it through the title field; the sentence models have nothing to match
    assert len(score(nature, "estuary", "bm25f.v1")) == 5
    for name in ("bm25.v1", "tfisf.v1", "lm-3mm.v1"):
        scores = score(nature, "estuary", name)
        assert len(scores) == 0 and scores.reason == "no sentence contains any query term"


def test_a_string_and_its_terms_score_alike(nature: Index) -> None:
    """Every model but those that read the query as written (minilm.v1: tests/models/test_minilm.py)."""
    for name in (n for n in ALL if not get_model(n).reads_text):
        a = score(nature, "Salmon swim in the river, the RIVER!", name)
        b = score(nature, ["salmon", "swim", "river", "river"], name)
        assert a.terms == b.terms == ("salmon", "swim", "river", "river")
        assert a.ids.tolist() == b.ids.tolist() and np.array_equal(a.scores, b.scores)


def assert_explained(index: Index, query: list[str], name: str, params: dict[str, Any]) -> None:
    scores = score(index, query, name, **params)
    tolerance = get_model(name).explain_tolerance  # 1e-6 for a float32 score (embed.v1), else 1e-9
    for sentence, value in zip(scores.ids.tolist(), scores.scores.tolist()):
        e = explain(index, query, sentence, name, **params)
        assert e.candidate
        assert math.isclose(e.total, value, rel_tol=tolerance, abs_tol=tolerance), (
            name,
            params,
            sentence,
            e.total,
            value,
        )
        frame = e.to_frame()
        assert list(frame.columns) == list(e.columns)
        assert math.isclose(
            frame["contribution"].sum() + sum(e.extra.values()), e.total, rel_tol=1e-9, abs_tol=1e-9
        )


@pytest.mark.parametrize("name", ALL)
def test_explain_total_equals_score_with_defaults(small_index: Index, nature: Index, name: str) -> None:
    for query in (["war", "peace"], ["picasso", "spanish", "war", "war"], ["religion"], ["george", "orwell"]):
        assert_explained(small_index, query, name, {})
    for query in (["river", "sea"], ["mountains", "salmon", "estuary"], ["water", "water", "snow"]):
        assert_explained(nature, query, name, {})


@pytest.mark.parametrize("name", ALL)
@settings(  # lm-trigger's mixture weights must sum to at most 1: most of its draws are refused
    PROFILE,
    max_examples=examples(40),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_explain_total_equals_score_for_any_parameters(nature: Index, name: str, data: st.DataObject) -> None:
    """Every registered model, on its own Hypothesis draws of parameters and queries."""
    _, params = data.draw(model_and_params([name]))
    query = data.draw(terms_strategy(nature))
    assert_explained(nature, query, name, params)


def test_a_subnormal_dirichlet_prior_is_refused_naming_the_range(nature: Index) -> None:
    # Hypothesis found lm-2s.v1 with λ = 0, μ = 2.2e-311 scoring NaN (1/μ overflows) where explain
    # gave -2.944: μ is 0 or at least 1e-6, and anything between is refused with the range
    with pytest.raises(SentretError, match=r"lm-2s\.v1: parameter 'mu' = 2\.2e-311 .* 0 or a number with 1e-06 ≤ mu"):
        score(nature, ["river", "sea"], "lm-2s.v1", lam=0.5, mu=2.2e-311)
    for spec in list_models():
        for p in spec.param_specs():
            if p.min_positive is not None:
                with pytest.raises(SentretError, match=f"{p.name!r} = 2.2e-311"):
                    spec.resolve({p.name: 2.2e-311})
    assert {s.name for s in list_models() if "mu" in s.params.names()} >= {"lm-dir.v1", "lm-2s.v1", "lm-2si.v1"}
    for name in ("lm-dir.v1", "lm-2s.v1", "lm-2si.v1"):
        spec = next(p for p in get_model(name).param_specs() if p.name == "mu")
        # 2S's local μ may be 0; DIR's and 2S-I's collection μ may not (log 0)
        assert (spec.min_positive, spec.min) == ((1e-6, 0.0) if name == "lm-2s.v1" else (None, 1e-6))
    # the edges either side of the gap are allowed, and score what explain says
    for mu in (0.0, 1e-6):
        assert_explained(nature, ["river", "sea", "estuary"], "lm-2s.v1", {"lam": 0.1, "mu": mu})


def test_explain_of_a_non_candidate(nature: Index) -> None:
    e = explain(nature, "salmon", 0, "bm25.v1")
    assert not e.candidate and e.total == 0.0
    with pytest.raises(SentretError, match="out of range"):
        explain(nature, "salmon", nature.N, "bm25.v1")


def test_explain_shows_the_parts(small_index: Index, nature: Index) -> None:
    frame = explain(nature, "river sea", 3, "bm25f.v1").to_frame()
    for column in ("c(t,sentence)", "c(t,context)", "c(t,title)", "x̃", "idf", "contribution"):
        assert column in frame.columns
    frame = explain(nature, "river sea", 3, "lm-3mm.v1").to_frame()
    for column in ("c(t,d)", "|d|", "p(t|d)", "λ·p(t|s)", "γ·p(t|d)", "(1-λ-γ)·p(t)", "p(t|θ)", "log p(t|θ)"):
        assert column in frame.columns
    e = explain(nature, "river sea", 3, "lm-3mmpds.v1")
    assert "log p(d|s)" in e.extra
    assert "γ·p(t|c_s)" in e.columns and "|c_s|" in e.columns
    e = explain(nature, "salmon", 4, "tfisf-con.v1")
    frame = e.to_frame()
    assert set(frame["offset"]) == {-3, -2, -1, 0}  # the document ends at sentence 4
    assert {"R(s)", "R^{L-1}(prev)", "R^{L-1}(next)"} <= set(e.notes)
    mu = e.params.mu  # type: ignore[attr-defined]
    assert math.isclose(
        e.total, (1 - mu) * e.notes["R(s)"] + mu * (e.notes["R^{L-1}(prev)"] + e.notes["R^{L-1}(next)"])
    )


# --- top_k -----------------------------------------------------------------------------------


def fake(ids: list[int], values: list[float]) -> Scores:
    params = get_model("bm25.v1").defaults()
    return Scores(np.array(ids, dtype=np.int64), np.array(values), (), "bm25.v1", params)


@given(
    values=st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.0, -1.0]), min_size=0, max_size=60),
    k=st.integers(0, 70),
)
def test_top_k_orders_by_score_then_id(values: list[float], k: int) -> None:
    ids = list(range(3, 3 + 2 * len(values), 2))
    best = top_k(fake(ids, values), k)
    expected = sorted(zip(ids, values), key=lambda iv: (-iv[1], iv[0]))[:k]
    assert best.ids.tolist() == [i for i, _ in expected]
    assert best.scores.tolist() == [v for _, v in expected]
    assert best.ranked and len(top_k(best, 3)) == min(3, len(best))


def test_top_k_of_real_scores(nature: Index) -> None:
    scores = score(nature, "river sea mountains", "bm25f.v1")
    best = top_k(scores, 3)
    order = np.lexsort((scores.ids, -scores.scores))[:3]
    assert best.ids.tolist() == scores.ids[order].tolist()
    assert best.to_frame()["rank"].tolist() == [1, 2, 3]
    assert best.score_of(int(best.ids[1])) == best.scores[1]
    with pytest.raises(SentretError, match="k must be"):
        top_k(scores, -1)
