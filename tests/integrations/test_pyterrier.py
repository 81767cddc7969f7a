"""sentret in PyTerrier pipelines and ir_measures: the transformer retrieves exactly what
`search()` ranks, re-ranks any results frame by a model's own scores, and its frames score in
ir_measures and pt.Experiment as a hand computation says — without a JVM."""

from __future__ import annotations

import subprocess
import sys

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import AP, P

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.index.docnos import docno, sentence_docnos, sentence_ids
from sentret_core.integrations.frames import rerank, retrieve, to_ir_measures
from sentret_core.models import get_model, search
from sentret_core.models.core.query import prepare

pt = pytest.importorskip("pyterrier")  # the test extra installs python-terrier
from sentret_core.integrations.pyterrier import SentretRetriever  # noqa: E402

TOPICS = pd.DataFrame({"qid": ["q1", "q2"], "query": ["Picasso war", "peace religion"]})


def test_retrieval_is_search_in_pyterriers_columns(small_index: Index) -> None:
    got = SentretRetriever(small_index, "tfisf.v1", k=4)(TOPICS)
    assert list(got.columns) == ["qid", "query", "docno", "score", "rank", "text"]
    names = sentence_docnos(small_index)
    for qid, query in TOPICS.itertuples(index=False):
        found = search(small_index, query, "tfisf.v1", 4)
        rows = got[got.qid == qid]
        assert list(rows.docno) == [names[int(s)] for s in found.ids]
        assert list(rows.score) == [float(v) for v in found.scores] and list(rows["rank"]) == list(range(len(rows)))
        assert (rows["query"] == query).all()
        assert list(rows.text) == [small_index.texts[int(s)] for s in found.ids]  # what a neural re-ranker reads
    assert not pt.java.started()  # PyTerrier's Python core only: no JVM, no Terrier jar


def test_rerank_orders_the_given_sentences_by_the_models_scores(small_index: Index) -> None:
    first = SentretRetriever(small_index, "tfisf.v1", k=6)(TOPICS[:1])
    second = SentretRetriever(small_index, "bm25f.v1")(first)
    assert sorted(second.docno) == sorted(first.docno)  # the same sentences, none added or lost
    ids = np.asarray(sentence_ids(small_index, list(first.docno)))
    spec = get_model("bm25f.v1")
    expected = spec.score_at(small_index, prepare(small_index, "Picasso war"), spec.resolve(), ids)
    by_docno = dict(zip(first.docno, expected.tolist()))
    assert np.isfinite(expected).all()
    assert [by_docno[d] for d in second.docno] == list(second.score)
    # by score descending, ties in sentence order
    keys = [(-by_docno[d], int(i)) for d, i in zip(second.docno, sentence_ids(small_index, list(second.docno)))]
    assert keys == sorted(keys) and list(second["rank"]) == list(range(len(second)))


def test_a_pipeline_with_a_cutoff_and_an_experiment(small_index: Index) -> None:
    first = SentretRetriever(small_index, "bm25f.v1", k=8)
    pipeline = first >> SentretRetriever(small_index, "lm-2si.v1") % 2
    got = pipeline(TOPICS)
    assert got.groupby("qid").size().to_dict() == {"q1": 2, "q2": 2}
    again = rerank(small_index, first(TOPICS), "lm-2si.v1")  # the pipeline is the two steps, cut at 2
    assert list(got.docno) == list(again[again["rank"] < 2].docno)
    ranked = first(TOPICS[:1])
    scores = list(ranked.score)
    assert scores[0] > scores[1] > scores[2] > scores[3], "the test needs untied scores at the top"
    # q1's relevant sentences: first's rank 0 and rank 2 → AP = (1/1 + 2/3) / 2 = 5/6, P@2 = 1/2
    qrels = pd.DataFrame({"qid": ["q1", "q1"], "docno": [ranked.docno[0], ranked.docno[2]], "label": [1, 1]})
    measured = ir_measures.calc_aggregate([AP, P @ 2], qrels.rename(columns={"qid": "query_id", "docno": "doc_id",
                                          "label": "relevance"}), to_ir_measures(ranked))
    assert measured[AP] == pytest.approx(5 / 6) and measured[P @ 2] == pytest.approx(1 / 2)
    table = pt.Experiment([first], TOPICS[:1], qrels, eval_metrics=[AP, P @ 2], names=["bm25f"])
    assert table["AP"][0] == pytest.approx(5 / 6) and table["P@2"][0] == pytest.approx(1 / 2)


def test_the_entity_column_keeps_that_entitys_sentences(small_index: Index) -> None:
    topics = pd.DataFrame({"qid": ["e"], "query": ["war"], "entity": ["Picasso"]})
    got = retrieve(small_index, topics, "tfisf.v1", k=10)
    texts = [small_index.texts[i] for i in sentence_ids(small_index, list(got.docno))]
    assert texts and all("Picasso" in t for t in texts)


def test_bad_frames_and_docnos_are_one_clear_message(small_index: Index) -> None:
    with pytest.raises(SentretError, match="lacks the column"):
        retrieve(small_index, pd.DataFrame({"qid": ["1"], "text": ["x"]}), "tfisf.v1")
    with pytest.raises(SentretError, match="name no sentence of the index"):
        rerank(small_index, pd.DataFrame({"qid": ["1"], "query": ["x"], "docno": ["nope-0"]}), "tfisf.v1")
    with pytest.raises(SentretError, match="k1"):
        SentretRetriever(small_index, "bm25f.v1", params={"k1": -1})
    assert docno("Guernica (Picasso)", 0) == "Guernica%20(Picasso)-0"


def test_without_pyterrier_the_import_names_the_extra() -> None:
    code = ("import sys; sys.modules['pyterrier'] = None\n"
            "try:\n    import sentret_core.integrations.pyterrier\n"
            "except ImportError as err:\n    print(err)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "pip install 'sentret[pyterrier]'" in done.stdout, done.stderr


def test_a_pipeline_step_reads_the_text_column(small_index: Index) -> None:
    """SentretRetriever >> pt.apply on ``text``: a stand-in for a neural re-ranker, scoring by the sentence's
    length in characters, ranks exactly as that length says."""
    first = SentretRetriever(small_index, "bm25f.v1", k=6)
    by_length = first >> pt.apply.doc_score(lambda row: float(len(row["text"])))
    got = by_length(TOPICS[:1])
    assert len(got) == 6 and list(got.score) == [float(len(t)) for t in got.text]
    assert got.sort_values("rank").score.tolist() == sorted(got.score, reverse=True)  # ranked by it
    again = SentretRetriever(small_index, "lm-2si.v1")(first(TOPICS[:1]).drop(columns="text"))
    assert list(again.text) == [small_index.texts[i] for i in sentence_ids(small_index, list(again.docno))]


def test_docnos_are_built_once_per_index(small_index: Index) -> None:
    assert sentence_docnos(small_index) is sentence_docnos(small_index)  # not N strings a query
    assert sentence_ids(small_index, [sentence_docnos(small_index)[3]]) == [3]
