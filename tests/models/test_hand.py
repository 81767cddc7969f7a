"""Every sentence scorer against a computation by hand on a corpus small enough to count.

The corpus (three documents, eight sentences) and the counts the arithmetic uses:

    D0 "Apple Orchard":  s0 red apple grows | s1 apple apple pie | s2 green pear
    D1 "Pear Market":    s3 pear pie sells  | s4 market stalls open
    D2 "Banana Boat":    s5 banana boat sails | s6 yellow banana | s7 apple crate

    N = 8 sentences, D = 3 documents, |C| = 21 term occurrences, avsl = 21/8
    apple: sf 3 (s0, s1, s7), df 2, cf 4;  pie: sf 2 (s1, s3), df 2, cf 2
    |D0| = 8 (3+3+2), avgSentLen(D0) = 8/3; every title has 2 terms

The query is "apple pie" unless a test says otherwise.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.models import explain, score
from tests.conftest import build_from_texts

FRUIT_DOCS = [
    {"id": "orchard", "title": "Apple Orchard", "text": "Red apple grows. Apple apple pie. Green pear."},
    {"id": "market", "title": "Pear Market", "text": "Pear pie sells. Market stalls open."},
    {"id": "boat", "title": "Banana Boat", "text": "Banana boat sails. Yellow banana. Apple crate."},
]
QUERY = "apple pie"
log = math.log


@pytest.fixture(scope="module")
def fruit(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(Path(tmp_path_factory.mktemp("fruit")), FRUIT_DOCS)


def value(index: Index, model: str, sentence: int, query: str = QUERY, **params: object) -> float:
    """The score of ``sentence``, checked against explain's total on the way."""
    scores = score(index, query, model, **params)
    got = scores.score_of(sentence)
    assert got is not None, f"sentence {sentence} is not a candidate of {model}"
    total = explain(index, query, sentence, model, **params).total
    assert math.isclose(total, got, rel_tol=1e-12, abs_tol=1e-12)
    return got


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def test_the_index_holds_the_terms_counted_above(fruit: Index) -> None:
    sentences = [[fruit.vocab[t] for t in fruit.sequence(s)] for s in range(fruit.N)]
    assert sentences == [
        ["red", "apple", "grows"],
        ["apple", "apple", "pie"],
        ["green", "pear"],
        ["pear", "pie", "sells"],
        ["market", "stalls", "open"],
        ["banana", "boat", "sails"],
        ["yellow", "banana"],
        ["apple", "crate"],
    ]
    assert list(fruit.sent_doc) == [0, 0, 0, 1, 1, 2, 2, 2]
    assert (fruit.N, fruit.D, fruit.total_terms) == (8, 3, 21)
    apple, pie = fruit.term_ids(["apple", "pie"])
    assert (fruit.sf[apple], fruit.df[apple], fruit.cf[apple]) == (3, 2, 4)
    assert (fruit.sf[pie], fruit.df[pie], fruit.cf[pie]) == (2, 2, 2)
    assert fruit.doc_avsl[0] == pytest.approx(8 / 3)
    assert [fruit.titles[d] for d in range(3)] == ["Apple Orchard", "Pear Market", "Banana Boat"]


# --- TF-ISF family ---------------------------------------------------------------------------

# R(s1) = log(c(t,q)+1)·log(c(t,s)+1)·log((N+1)/(0.5+sf)) summed over apple (c=2) and pie (c=1)
R0 = log(2) * log(2) * log(9 / 3.5)  # s0: apple once
R1 = log(2) * log(3) * log(9 / 3.5) + log(2) * log(2) * log(9 / 2.5)
R3 = log(2) * log(2) * log(9 / 2.5)  # s3: pie once
R7 = R0  # s7: apple once


def test_tfisf(fruit: Index) -> None:
    scores = score(fruit, QUERY, "tfisf.v1")
    assert list(scores.ids) == [0, 1, 3, 7]
    assert np.allclose(scores.scores, [R0, R1, R3, R7], rtol=1e-12)
    assert close(value(fruit, "tfisf.v1", 1), R1)


def test_tfmix(fruit: Index) -> None:
    # ctx(s1) = s0+s1+s2: apple 1+2+0 = 3, pie 0+1+0 = 1; tf = α·c(t,s) + (1-α)·c(t,ctx), α = 0.5
    expected = log(2) * log(0.5 * 2 + 0.5 * 3 + 1) * log(9 / 3.5) + log(2) * log(0.5 * 1 + 0.5 * 1 + 1) * log(
        9 / 2.5
    )
    assert close(value(fruit, "tfmix.v1", 1, alpha=0.5), expected)
    # ctx(s0) = s0+s1 (no previous sentence): apple 1+2 = 3; pie is not in s0, so it adds nothing
    assert close(value(fruit, "tfmix.v1", 0, alpha=0.5), log(2) * log(0.5 * 1 + 0.5 * 3 + 1) * log(9 / 3.5))


def test_idfdoc(fruit: Index) -> None:
    # (D+1)/(0.5+df) = 4/2.5 for both terms
    expected = log(2) * log(3) * log(4 / 2.5) + log(2) * log(2) * log(4 / 2.5)
    assert close(value(fruit, "idfdoc.v1", 1), expected)


def test_tfmix_idfdoc(fruit: Index) -> None:
    expected = log(2) * log(0.5 * 2 + 0.5 * 3 + 1) * log(4 / 2.5) + log(2) * log(1 + 1) * log(4 / 2.5)
    assert close(value(fruit, "tfmix-idfdoc.v1", 1, alpha=0.5), expected)


MU = 0.2


def test_tfisf_con(fruit: Index) -> None:
    # s2 contains no query term; its document is s0, s1, s2 (R = R0, R1, 0)
    # R¹(s0) = (1-μ)R0 + μ[0 + R⁰(s1)],  R¹(s2) = (1-μ)·0 + μ[R⁰(s1) + 0]
    # R²(s1) = (1-μ)R1 + μ[R¹(s0) + R¹(s2)],  R³(s2) = (1-μ)·0 + μ[R²(s1) + 0]
    r1_s0 = (1 - MU) * R0 + MU * R1
    r1_s2 = MU * R1
    r2_s1 = (1 - MU) * R1 + MU * (r1_s0 + r1_s2)
    assert close(value(fruit, "tfisf-con.v1", 2, mu=MU), MU * r2_s1)
    # s4 (D1 = s3, s4): R³(s4) = μ·R²(s3), R²(s3) = (1-μ)R3 + μ·R¹(s4), R¹(s4) = μ·R3
    assert close(value(fruit, "tfisf-con.v1", 4, mu=MU), MU * ((1 - MU) * R3 + MU * (MU * R3)))
    # within 3 sentences of a match in the same document: every sentence here
    assert list(score(fruit, QUERY, "tfisf-con.v1").ids) == list(range(8))


def test_tfisf_length(fruit: Index) -> None:
    # |s1| / avgSentLen(D0) = 3 / (8/3)
    assert close(value(fruit, "tfisf-length.v1", 1), 3 / (8 / 3) * R1)


def test_tfisf_con_length(fruit: Index) -> None:
    r1_s0 = (1 - MU) * R0 + MU * R1
    r2_s1 = (1 - MU) * R1 + MU * (r1_s0 + MU * R1)
    assert close(value(fruit, "tfisf-con-length.v1", 2, mu=MU), 2 / (8 / 3) * MU * r2_s1)


# --- BM25 and BM25F ------------------------------------------------------------------------------

IDF_APPLE = log((8 - 3 + 0.5) / (3 + 0.5))
IDF_PIE = log((8 - 2 + 0.5) / (2 + 0.5))


def test_bm25(fruit: Index) -> None:
    k1, b = 1.2, 0.75
    norm = (1 - b) + b * 3 / (21 / 8)  # |s1| = 3
    expected = IDF_APPLE * (k1 + 1) * 2 / (k1 * norm + 2) + IDF_PIE * (k1 + 1) * 1 / (k1 * norm + 1)
    assert close(value(fruit, "bm25.v1", 1), expected)


def test_bm25_lucene_idf_and_k3(fruit: Index) -> None:
    k1, b, k3 = 1.2, 0.75, 1.0
    norm = (1 - b) + b * 3 / (21 / 8)
    # "apple apple pie": c(apple,q) = 2 → (k3+1)·2/(k3+2); c(pie,q) = 1 → 1
    expected = log(1 + 5.5 / 3.5) * (k1 + 1) * 2 / (k1 * norm + 2) * (k3 + 1) * 2 / (k3 + 2) + log(
        1 + 6.5 / 2.5
    ) * (k1 + 1) * 1 / (k1 * norm + 1)
    assert close(value(fruit, "bm25.v1", 1, "apple apple pie", idf="lucene", k3=k3), expected)


def test_bm25f(fruit: Index) -> None:
    k1, b, w_c, w_t = 0.26, 0.15, 0.23, 0.23
    # s2 "green pear": no query term itself. Context (±2 in D0) = s0, s1: apple 3, pie 1, length 6.
    # Context lengths of s0..s7: 5, 5, 6, 3, 3, 4, 5, 5 → mean 36/8 = 4.5. Title "Apple Orchard":
    # apple 1, length 2; every title has 2 terms → mean 2.
    b_ctx = (1 - b) + b * 6 / 4.5
    b_title = (1 - b) + b * 2 / 2
    x_apple = w_c * 3 / b_ctx + w_t * 1 / b_title
    x_pie = w_c * 1 / b_ctx
    expected = IDF_APPLE * (k1 + 1) * x_apple / (k1 + x_apple) + IDF_PIE * (k1 + 1) * x_pie / (k1 + x_pie)
    assert close(value(fruit, "bm25f.v1", 2), expected)
    # s5 "banana boat sails": context s6, s7 (length 4) holds apple once; its title has neither term
    x = w_c * 1 / ((1 - b) + b * 4 / 4.5)
    assert close(value(fruit, "bm25f.v1", 5), IDF_APPLE * (k1 + 1) * x / (k1 + x))
    # s4 matches only through its context (s3 has pie)
    assert list(score(fruit, QUERY, "bm25f.v1").ids) == list(range(8))


def test_bm25f_per_field_b(fruit: Index) -> None:
    k1, b_s, b_c, b_t = 1.0, 0.0, 0.5, 1.0
    # s1: sentence apple 2, pie 1 (B = 1); context s0, s2 (length 5): apple 1, pie 0; title apple 1
    b_ctx = (1 - b_c) + b_c * 5 / 4.5
    b_title = (1 - b_t) + b_t * 2 / 2
    x_apple = 2 / 1 + 0.5 * 1 / b_ctx + 0.1 * 1 / b_title
    x_pie = 1 / 1
    expected = IDF_APPLE * (k1 + 1) * x_apple / (k1 + x_apple) + IDF_PIE * (k1 + 1) * x_pie / (k1 + x_pie)
    got = value(
        fruit,
        "bm25f.v1",
        1,
        k1=k1,
        b=0.3,
        b_sentence=b_s,
        b_context=b_c,
        b_title=b_t,
        w_context=0.5,
        w_title=0.1,
    )
    assert close(got, expected)


# --- language models -----------------------------------------------------------------------------

P_APPLE, P_PIE = 4 / 21, 2 / 21  # collection model p(t) = cf/|C|
LAM, GAMMA, MU_LM = 0.5, 0.3, 100.0


def test_jm(fruit: Index) -> None:
    expected = log((1 - LAM) * 2 / 3 + LAM * P_APPLE) + log((1 - LAM) * 1 / 3 + LAM * P_PIE)
    assert close(value(fruit, "lm-jm.v1", 1, lam=LAM), expected)
    assert list(score(fruit, QUERY, "lm-jm.v1").ids) == [0, 1, 3, 7]


def test_jm_with_importance(fruit: Index) -> None:
    # log p(d|s1) = Σ_{t∈s1} c(t,s1)·(log p(t|D0) − log p(t)): apple twice (3/8 vs 4/21), pie (1/8 vs 2/21)
    pds = 2 * (log(3 / 8) - log(4 / 21)) + (log(1 / 8) - log(2 / 21))
    expected = log((1 - LAM) * 2 / 3 + LAM * P_APPLE) + log((1 - LAM) * 1 / 3 + LAM * P_PIE) + pds
    assert close(value(fruit, "lm-jm.v1", 1, lam=LAM, importance=True), expected)


def test_dirichlet(fruit: Index) -> None:
    expected = log((2 + MU_LM * P_APPLE) / (3 + MU_LM)) + log((1 + MU_LM * P_PIE) / (3 + MU_LM))
    assert close(value(fruit, "lm-dir.v1", 1, mu=MU_LM), expected)


def test_three_mixture(fruit: Index) -> None:
    # document model of D0: apple 3/8, pie 1/8
    expected = log(LAM * 2 / 3 + GAMMA * 3 / 8 + (1 - LAM - GAMMA) * P_APPLE) + log(
        LAM * 1 / 3 + GAMMA * 1 / 8 + (1 - LAM - GAMMA) * P_PIE
    )
    assert close(value(fruit, "lm-3mm.v1", 1, lam=LAM, gamma=GAMMA), expected)
    # s2 holds neither term; its document does
    expected = log(GAMMA * 3 / 8 + (1 - LAM - GAMMA) * P_APPLE) + log(
        GAMMA * 1 / 8 + (1 - LAM - GAMMA) * P_PIE
    )
    assert close(value(fruit, "lm-3mm.v1", 2, lam=LAM, gamma=GAMMA), expected)
    # every document holds a query term, so every sentence is a candidate
    assert list(score(fruit, QUERY, "lm-3mm.v1").ids) == list(range(8))


def test_three_mixture_window(fruit: Index) -> None:
    # window of s0 = s0, s1 (no previous sentence): apple 1+2 = 3, pie 1, length 6
    expected = log(LAM * 1 / 3 + GAMMA * 3 / 6 + (1 - LAM - GAMMA) * P_APPLE) + log(
        GAMMA * 1 / 6 + (1 - LAM - GAMMA) * P_PIE
    )
    assert close(value(fruit, "lm-3mm.v1", 0, lam=LAM, gamma=GAMMA, context="window"), expected)


def test_two_stage(fruit: Index) -> None:
    expected = log((1 - LAM) * (2 + MU_LM * 3 / 8) / (3 + MU_LM) + LAM * P_APPLE) + log(
        (1 - LAM) * (1 + MU_LM * 1 / 8) / (3 + MU_LM) + LAM * P_PIE
    )
    assert close(value(fruit, "lm-2s.v1", 1, lam=LAM, mu=MU_LM), expected)


def test_two_stage_inverted(fruit: Index) -> None:
    beta = MU_LM / (3 + MU_LM)
    expected = log((1 - beta) * ((1 - LAM) * 2 / 3 + LAM * 3 / 8) + beta * P_APPLE) + log(
        (1 - beta) * ((1 - LAM) * 1 / 3 + LAM * 1 / 8) + beta * P_PIE
    )
    assert close(value(fruit, "lm-2si.v1", 1, lam=LAM, mu=MU_LM), expected)


def test_3mmpds(fruit: Index) -> None:
    # s0 = red, apple, grows; window s0+s1: apple 3, pie 1, length 6; D0: red 1/8, apple 3/8, grows 1/8
    pds = (log(1 / 8) - log(1 / 21)) + (log(3 / 8) - log(4 / 21)) + (log(1 / 8) - log(1 / 21))
    expected = (
        log(LAM * 1 / 3 + GAMMA * 3 / 6 + (1 - LAM - GAMMA) * P_APPLE)
        + log(GAMMA * 1 / 6 + (1 - LAM - GAMMA) * P_PIE)
        + pds
    )
    assert close(value(fruit, "lm-3mmpds.v1", 0, lam=LAM, gamma=GAMMA), expected)
    # candidates: sentences whose ±1 window holds apple or pie (s5's window is s5, s6: neither)
    assert list(score(fruit, QUERY, "lm-3mmpds.v1").ids) == [0, 1, 2, 3, 4, 6, 7]
