"""Identities between models: each a special case of another, checked on a real index."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.models import score
from tests.conftest import build_from_texts

# One long document, so a sentence has three neighbours on each side (Doko et al., IP&M 2015, eq. 3), and a
# short one for the boundaries. Query terms: river, bridge, city.
LONG_DOCS = [
    {
        "id": "town",
        "title": "Old Town",
        "text": (
            "The river runs through the old city. "
            "Merchants built houses along the river bank. "
            "A stone bridge crosses the river near the market. "
            "Farmers sell vegetables every morning. "
            "The cathedral stands on a small hill. "
            "Tourists photograph the bridge at sunset. "
            "The city council restored the bridge in 1990. "
            "Boats carry visitors down the river to the city harbour. "
            "Fishermen repair nets on the quay."
        ),
    },
    {
        "id": "hamlet",
        "title": "Hamlet",
        "text": "A quiet hamlet lies upstream. The bridge there is wooden. Goats graze nearby.",
    },
]
QUERY = "river bridge city"


@pytest.fixture(scope="module")
def town(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(Path(tmp_path_factory.mktemp("town")), LONG_DOCS)


def as_dict(index: Index, query: str, model: str, **params: object) -> dict[int, float]:
    scores = score(index, query, model, **params)
    return dict(zip(scores.ids.tolist(), scores.scores.tolist()))


def test_the_long_document_is_as_written(town: Index) -> None:
    assert list(town.doc_nsent) == [9, 3]
    assert town.sent_doc.tolist() == [0] * 9 + [1] * 3


@pytest.mark.parametrize("mu", [0.1, 0.2, 0.5, 0.9])
def test_tfisf_con_depth_3_is_seed_003_eq_3(town: Index, mu: float) -> None:
    R = as_dict(town, QUERY, "tfisf.v1")  # R(s|q); 0 for sentences without a query term
    con = as_dict(town, QUERY, "tfisf-con.v1", mu=mu, depth=3)
    for s in range(3, 6):  # three neighbours on each side inside document 0
        S = R.get(s, 0.0)
        P1, P2, P3 = (R.get(s - i, 0.0) for i in (1, 2, 3))
        N1, N2, N3 = (R.get(s + i, 0.0) for i in (1, 2, 3))
        # Doko et al., IP&M 2015, eq. 3, written out as printed
        eq3 = (1 - mu) * S + mu * (
            (1 - mu) * P1
            + mu * ((1 - mu) * P2 + mu * (P1 + P3) + (1 - mu) * S + mu * (P1 + N1))
            + (1 - mu) * N1
            + mu * ((1 - mu) * S + mu * (P1 + N1) + (1 - mu) * N2 + mu * (N1 + N3))
        )
        assert math.isclose(con.get(s, 0.0), eq3, rel_tol=1e-12, abs_tol=1e-15)


def test_tfisf_con_at_a_document_boundary(town: Index) -> None:
    """At a boundary the recursion is the definition: a missing neighbour's whole term is 0."""
    mu = 0.3
    R = as_dict(town, QUERY, "tfisf.v1")
    con = as_dict(town, QUERY, "tfisf-con.v1", mu=mu, depth=3)
    r = [R.get(s, 0.0) for s in range(9)]  # document 0: sentences 0..8

    def level(s: int, depth: int) -> float:
        if not 0 <= s < 9:
            return 0.0
        if depth == 0:
            return r[s]
        return (1 - mu) * r[s] + mu * (level(s - 1, depth - 1) + level(s + 1, depth - 1))

    for s in (0, 1, 2, 6, 7, 8):
        assert math.isclose(con.get(s, 0.0), level(s, 3), rel_tol=1e-12, abs_tol=1e-15)


def test_tfisf_con_with_mu_0_is_tfisf(town: Index) -> None:
    assert as_dict(town, QUERY, "tfisf-con.v1", mu=0.0) == as_dict(town, QUERY, "tfisf.v1")


@pytest.mark.parametrize("params", [{}, {"k1": 0.9, "b": 0.3}, {"k1": 2.0, "b": 1.0, "idf": "lucene"}])
def test_bm25f_without_context_and_title_is_bm25(town: Index, params: dict[str, object]) -> None:
    k1 = params.get("k1", 1.2)
    b = params.get("b", 0.75)
    bm25 = score(town, QUERY, "bm25.v1", k1=k1, b=b, k3=0, idf=params.get("idf", "rsj"))
    bm25f = score(town, QUERY, "bm25f.v1", w_context=0, w_title=0, k1=k1, b=b, idf=params.get("idf", "rsj"))
    assert bm25.ids.tolist() == bm25f.ids.tolist()
    np.testing.assert_allclose(bm25f.scores, bm25.scores, rtol=1e-12)


def test_tfmix_with_alpha_1_is_tfisf(town: Index) -> None:
    tfisf = score(town, QUERY, "tfisf.v1")
    tfmix = score(town, QUERY, "tfmix.v1", alpha=1.0)
    assert tfmix.ids.tolist() == tfisf.ids.tolist()
    np.testing.assert_allclose(tfmix.scores, tfisf.scores, rtol=1e-12)
    idfdoc = score(town, QUERY, "idfdoc.v1")
    mixed = score(town, QUERY, "tfmix-idfdoc.v1", alpha=1.0)
    np.testing.assert_allclose(mixed.scores, idfdoc.scores, rtol=1e-12)


def test_tfisf_length_is_tfisf_times_the_length_factor(town: Index) -> None:
    tfisf = as_dict(town, QUERY, "tfisf.v1")
    length = as_dict(town, QUERY, "tfisf-length.v1")
    for s, r in tfisf.items():
        factor = town.sent_len[s] / town.doc_avsl[town.sent_doc[s]]
        assert math.isclose(length[s], factor * r, rel_tol=1e-12)


def test_jm_with_lambda_0_is_maximum_likelihood(town: Index) -> None:
    # sentence 7 "Boats carry visitors down the river to the city harbour": river and city
    query = ["river", "city"]
    s = 7
    terms = [town.vocab[t] for t in town.sequence(s)]
    assert "river" in terms and "city" in terms
    ml = sum(math.log(terms.count(t) / len(terms)) for t in query)
    # λ below 1e-6 is refused (a candidate missing a query term would score log 0, or underflow to it);
    # λ → 0 tends to maximum likelihood: log((1-λ)·ml_t + λ·p(t)) differs from log ml_t by
    # about λ·(1 + p(t)/ml_t)
    jm = as_dict(town, " ".join(query), "lm-jm.v1", lam=1e-6)
    assert math.isclose(jm[s], ml, rel_tol=1e-4)
    with pytest.raises(SentretError, match=r"'lam' = 0\.0 is not allowed; it must be a number with 1e-06 ≤ lam ≤ 1"):
        score(town, query, "lm-jm.v1", lam=0.0)


def test_dirichlet_tends_to_maximum_likelihood_and_mu_0_is_refused(town: Index) -> None:
    terms = [town.vocab[t] for t in town.sequence(7)]
    ml = math.log(terms.count("river") / len(terms)) + math.log(terms.count("city") / len(terms))
    assert math.isclose(as_dict(town, "river city", "lm-dir.v1", mu=1e-6)[7], ml, rel_tol=1e-6)
    with pytest.raises(SentretError, match=r"'mu' = 0\.0 is not allowed; it must be a number with 1e-06 ≤ mu"):
        score(town, "river city", "lm-dir.v1", mu=0.0)


def test_3mm_without_local_model_is_jm(town: Index) -> None:
    # 3MM with γ = 0 and λ = 1 - λ_JM is JM (and the local model then adds no candidates)
    jm = score(town, QUERY, "lm-jm.v1", lam=0.4)
    mm = score(town, QUERY, "lm-3mm.v1", lam=0.6, gamma=0.0)
    assert mm.ids.tolist() == jm.ids.tolist()
    np.testing.assert_allclose(mm.scores, jm.scores, rtol=1e-12)


def test_3mmpds_is_3mm_window_with_importance(town: Index) -> None:
    pds = score(town, QUERY, "lm-3mmpds.v1", lam=0.4, gamma=0.4)
    mm = score(town, QUERY, "lm-3mm.v1", lam=0.4, gamma=0.4, context="window", importance=True)
    assert pds.ids.tolist() == mm.ids.tolist()
    np.testing.assert_allclose(pds.scores, mm.scores, rtol=1e-12)


def test_importance_adds_log_p_d_given_s(town: Index) -> None:
    plain = as_dict(town, QUERY, "lm-2si.v1")
    more = as_dict(town, QUERY, "lm-2si.v1", importance=True)
    assert plain.keys() == more.keys()
    for s in plain:
        doc = town.sent_doc[s]
        first, n = town.doc_first[doc], town.doc_nsent[doc]
        doc_terms = [t for i in range(first, first + n) for t in town.sequence(i).tolist()]
        expected = sum(
            math.log(doc_terms.count(t) / len(doc_terms)) - math.log(town.cf[t] / town.total_terms)
            for t in town.sequence(s).tolist()
        )
        assert math.isclose(more[s] - plain[s], expected, rel_tol=1e-9, abs_tol=1e-9)
