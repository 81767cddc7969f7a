"""minilm.v1's semantic first stage: a nearest-neighbour graph (usearch) chooses candidates, each scored
exactly; a closed candidate set is always scored exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.cli.main import main
from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.ingest.build import build_index
from sentret_core.learning.features import first_stage_set, scored
from sentret_core.models import score, search, top_k
from sentret_core.models.core.query import prepare
from sentret_core.models.core.registry import get_model
from sentret_core.models.minilm import ann
from sentret_core.models.training.sentence_vectors import KIND, train_minilm
from tests.conftest import SMALL_DOCS

QUERIES = ("Who painted Guernica?", "war in Spain", "religion and music", "zzzz")


@pytest.fixture(scope="module")
def graphed(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """The small corpus, its vectors with a graph (the default name) and without one (``flat``)."""
    folder = tmp_path_factory.mktemp("ann")
    (folder / "small.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in SMALL_DOCS))
    build_index(folder / "small.jsonl", folder / "idx", n_process=1)
    index = Index.load(folder / "idx")
    train_minilm(index, ann=True)
    train_minilm(index, "flat", ann=False)
    return index


def test_the_graph_is_kept_in_the_artefact_and_read_back(graphed: Index) -> None:
    found = artefacts.read(graphed, KIND, "minilm")
    assert found.arrays[ann.ARRAY].dtype == np.uint8 and ann.ARRAY not in artefacts.read(graphed, KIND, "flat").arrays
    graph = ann.graph_of(graphed, found)
    assert len(graph) == graphed.N and graph.ndim == 384


@pytest.mark.parametrize("query", QUERIES)
def test_candidates_are_sentences_of_the_index_scored_as_the_exact_scan_scores_them(graphed: Index,
                                                                                    query: str) -> None:
    exact = score(graphed, query, "minilm.v1", first_stage="exact")
    assert exact.ids.tolist() == list(range(graphed.N))
    for count in (1, 5, graphed.N // 2):
        found = score(graphed, query, "minilm.v1", candidates=count)  # auto: the graph is there
        assert len(found.ids) == count and np.all(np.diff(found.ids) > 0)  # distinct ids, ascending
        assert found.ids.min() >= 0 and found.ids.max() < graphed.N
        assert np.array_equal(found.scores, exact.scores[found.ids])  # bit for bit: one row's dot product
    everything = score(graphed, query, "minilm.v1", candidates=graphed.N)
    assert np.array_equal(everything.ids, exact.ids)  # asked for all, the graph finds all


def test_the_graph_finds_the_exact_top_10_on_the_small_corpus(graphed: Index) -> None:
    """Recall@10 of the graph's 50 candidates against the exact scan: 1 on a graph this small (the
    benchmark measures it where it is not: benchmarks/ann.py)."""
    for query in QUERIES[:3]:
        exact = top_k(score(graphed, query, "minilm.v1", first_stage="exact"), 10)
        approximate = top_k(score(graphed, query, "minilm.v1", candidates=50), 10)
        assert approximate.ids.tolist() == exact.ids.tolist()


def test_search_is_the_top_k_of_the_graphs_candidates(graphed: Index) -> None:
    for query in QUERIES:
        want = top_k(score(graphed, query, "minilm.v1", candidates=20), 7)
        got = search(graphed, query, "minilm.v1", 7, candidates=20)
        assert got.ids.tolist() == want.ids.tolist() and np.array_equal(got.scores, want.scores)


def test_a_closed_candidate_set_is_scored_exactly_every_member(graphed: Index) -> None:
    spec = get_model("minilm.v1")
    q = prepare(graphed, QUERIES[0])
    exact = score(graphed, QUERIES[0], "minilm.v1", first_stage="exact").scores
    few = spec.resolve({"candidates": 3})
    chosen = np.arange(0, graphed.N, 3)  # most of them are not among the graph's 3
    assert np.array_equal(spec.score_at(graphed, q, few, chosen), exact[chosen])
    ids, values = scored(graphed, q, "minilm.v1", among=chosen[::-1].copy())  # a ranker's features
    assert ids.tolist() == chosen.tolist() and np.array_equal(values, exact[chosen])


def test_auto_scans_vectors_without_a_graph(graphed: Index) -> None:
    flat = score(graphed, QUERIES[0], "minilm.v1", vectors="flat", candidates=3)
    assert len(flat.ids) == graphed.N
    assert np.array_equal(flat.scores, score(graphed, QUERIES[0], "minilm.v1", first_stage="exact").scores)


def test_the_semantic_stage_of_a_learned_ranker_is_the_graphs_top(graphed: Index) -> None:
    q = prepare(graphed, "Who painted Guernica?")
    chosen, found = first_stage_set(graphed, q, "bm25f.v1", 5, "minilm.v1")
    lexical = top_k(score(graphed, "Who painted Guernica?", "bm25f.v1"), 5).ids
    semantic = top_k(score(graphed, "Who painted Guernica?", "minilm.v1"), 5).ids
    assert chosen.tolist() == sorted(set(lexical.tolist()) | set(semantic.tolist()))
    assert len(found["minilm.v1"][0]) == 1000 or len(found["minilm.v1"][0]) == graphed.N


def test_a_graph_of_other_vectors_is_refused(graphed: Index, tmp_path: Path) -> None:
    found = artefacts.read(graphed, KIND, "flat")
    vectors = found.arrays["vectors"]
    small = ann.build_graph(vectors[:-1])  # one sentence short
    artefacts.write(graphed, KIND, "short", {"vectors": vectors, ann.ARRAY: small}, dict(found.meta))
    junk = np.frombuffer(b"not a graph" * 8, dtype=np.uint8)
    artefacts.write(graphed, KIND, "junk", {"vectors": vectors, ann.ARRAY: junk}, dict(found.meta))
    try:
        with pytest.raises(SentretError, match=f"holds {graphed.N - 1} vectors"):
            artefacts.read(graphed, KIND, "short")
        with pytest.raises(SentretError, match="not one usearch can read"):
            artefacts.read(graphed, KIND, "junk")
    finally:
        artefacts.remove(graphed.path, "short")
        artefacts.remove(graphed.path, "junk")


def test_train_says_it_built_the_graph(graphed: Index, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        assert main(["train", "minilm", str(graphed.path), "--name", "cli", "--ann"]) == 0
        assert "with a nearest-neighbour graph" in capsys.readouterr().out
        assert ann.ARRAY in artefacts.read(graphed, KIND, "cli").arrays
        assert main(["train", "minilm", str(graphed.path), "--name", "cli", "--no-ann", "--force"]) == 0
        assert "graph" not in capsys.readouterr().out
    finally:
        artefacts.remove(graphed.path, "cli")
