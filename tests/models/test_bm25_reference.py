"""BM25 against the reference implementations rank_bm25 (BM25Okapi) and bm25s.

Their formulas agree with ours (Fernández et al., Inf. Retr. 2011, §3.5) under these conditions, which the tests
assert rather than assume:

* the same tokenisation: both get our index's own term list of every sentence;
* no query term occurs in more than half the sentences — rank_bm25 floors a negative idf
  at ε·mean(idf) and bm25s's "robertson" idf clamps it at 0, where ours stays negative;
* no repeated query tokens — rank_bm25 adds a repeated token twice, our k3 factor
  (k3+1)·c(t,q)/(k3+c(t,q)) counts it once when k3 = 0;
* bm25s runs method="atire" (the (k1+1)·tf/(tf + k1·B) saturation) with idf_method="robertson"
  and float64 scores.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.models import score
from tests.conftest import build_from_texts

# A real text sample: Wikipedia-style sentences on a few related subjects.
SAMPLE_DOCS = [
    {
        "id": "guernica",
        "title": "Guernica (Picasso)",
        "text": (
            "Guernica is a large oil painting on canvas by Spanish artist Pablo Picasso "
            "completed in June 1937. "
            "It is one of his best-known works, regarded by many art critics as one of the most moving "
            "and powerful anti-war paintings in history. "
            "The painting was made in response to the bombing of Guernica, a Basque town in northern Spain, "
            "by Nazi Germany and Fascist Italy at the request of the Spanish Nationalists. "
            "Upon completion, Guernica was exhibited at the Spanish display at the 1937 "
            "World's Fair in Paris "
            "and then at other venues around the world. "
            "The touring exhibition was used to raise funds for Spanish war relief. "
            "The painting is now housed in the Museo Reina Sofia in Madrid."
        ),
    },
    {
        "id": "civil-war",
        "title": "Spanish Civil War",
        "text": (
            "The Spanish Civil War was fought from 1936 to 1939 between the Republicans "
            "and the Nationalists. "
            "Republicans were loyal to the left-leaning Popular Front government "
            "of the Second Spanish Republic. "
            "The Nationalists were a rebel faction led by General Francisco Franco. "
            "Thousands of foreign volunteers joined the International Brigades to fight for the Republic. "
            "The war ended with the victory of the Nationalists and the exile of thousands of Republicans. "
            "Franco ruled Spain as a dictator until his death in 1975."
        ),
    },
    {
        "id": "orwell",
        "title": "George Orwell",
        "text": (
            "George Orwell was an English novelist, essayist and critic. "
            "He fought in the Spanish Civil War on the Republican side and was wounded by a sniper. "
            "His memoir Homage to Catalonia describes his experiences in Barcelona and on the Aragon front. "
            "Orwell is best known for the novels Animal Farm and Nineteen Eighty-Four. "
            "His work is marked by lucid prose, social criticism and opposition to totalitarianism."
        ),
    },
    {
        "id": "dali",
        "title": "Salvador Dali",
        "text": (
            "Salvador Dali was a Spanish surrealist artist renowned for his technical skill "
            "and striking images. "
            "His best-known work, The Persistence of Memory, was completed in August 1931. "
            "Dali lived in France during the Spanish Civil War before leaving for the United States in 1940. "
            "He returned to Spain in 1948 and lived in Catalonia for the rest of his life."
        ),
    },
]

QUERY_TERMS = [
    "painting", "guernica", "picasso", "war", "civil", "franco", "nationalists", "republicans",
    "orwell", "catalonia", "artist", "dali", "1937", "thousands", "best", "known", "lived",
    "novelist", "museo", "brigades",
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(Path(tmp_path_factory.mktemp("sample")), SAMPLE_DOCS)


@pytest.fixture(scope="module")
def tokens(sample: Index) -> list[list[str]]:
    return [[sample.vocab[t] for t in sample.sequence(s)] for s in range(sample.N)]


def queries() -> list[list[str]]:
    singles = [[t] for t in QUERY_TERMS]
    pairs = [list(p) for p in itertools.combinations(QUERY_TERMS[:12], 2)]
    triples = [list(p) for p in itertools.combinations(QUERY_TERMS[::3], 3)]
    return singles + pairs + triples


def dense(index: Index, query: list[str], **params: object) -> np.ndarray:
    """Our BM25 scores of every sentence (0 for non-candidates, as the references give)."""
    scores = score(index, query, "bm25.v1", **params)
    out = np.zeros(index.N)
    out[scores.ids] = scores.scores
    return out


def test_the_conditions_hold(sample: Index, tokens: list[list[str]]) -> None:
    assert sample.N >= 20
    ids = sample.term_ids(QUERY_TERMS)
    assert (ids >= 0).all(), "every query term is in the index"
    assert (sample.sf[ids] <= sample.N / 2).all(), "no query term in more than half the sentences"
    assert (sample.sf[ids] >= 1).all()
    for query in queries():
        assert len(set(query)) == len(query), "no repeated query tokens"
    assert sum(len(t) for t in tokens) == sample.total_terms


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (1.5, 0.0), (0.9, 1.0), (2.0, 0.3)])
def test_bm25_equals_rank_bm25(sample: Index, tokens: list[list[str]], k1: float, b: float) -> None:
    from rank_bm25 import BM25Okapi

    reference = BM25Okapi(tokens, k1=k1, b=b)
    for query in queries():
        expected = reference.get_scores(query)
        np.testing.assert_allclose(dense(sample, query, k1=k1, b=b), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (1.5, 0.0), (0.5, 1.0)])
def test_bm25_equals_bm25s(sample: Index, tokens: list[list[str]], k1: float, b: float) -> None:
    bm25s = pytest.importorskip("bm25s")
    reference = bm25s.BM25(k1=k1, b=b, method="atire", idf_method="robertson", dtype="float64")
    reference.index(tokens, show_progress=False)
    for query in queries():
        expected = reference.get_scores(query)
        np.testing.assert_allclose(dense(sample, query, k1=k1, b=b), expected, rtol=1e-6, atol=1e-6)


def test_rank_bm25_differs_where_the_conditions_fail(sample: Index, tokens: list[list[str]]) -> None:
    """The conditions matter: a repeated query token counts twice in rank_bm25, once in ours."""
    from rank_bm25 import BM25Okapi

    reference = BM25Okapi(tokens, k1=1.2, b=0.75)  # our defaults (rank_bm25's k1 is 1.5)
    doubled = reference.get_scores(["picasso", "picasso"])
    ours = dense(sample, ["picasso", "picasso"])
    np.testing.assert_allclose(doubled, 2 * ours, rtol=1e-9)
