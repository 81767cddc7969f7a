"""`sentret run`: a topics file through any model into a TREC run that reads back exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.cli import main as cli
from sentret_core.cli.runs import docno
from sentret_core.errors import SentretError
from sentret_core.evaluation.topics_file import read_topics
from sentret_core.evaluation.trec_io import read_run
from sentret_core.models import search

TREC_TOPICS = """<top>
<num> Number: 301
<title> Picasso peace
<desc> Description:
Why does Picasso matter to peace?
</top>
<top>
<num> Number: 302
<title> Spanish Civil War
</top>
"""


def test_topics_files_in_both_forms(tmp_path: Path) -> None:
    trec = tmp_path / "topics.301-302"
    trec.write_text(TREC_TOPICS, "utf-8")
    assert [(t.id, t.query, t.entity) for t in read_topics(trec)] == [
        ("301", "Picasso peace", None), ("302", "Spanish Civil War", None)]
    tsv = tmp_path / "topics.tsv"
    tsv.write_text("# qid, query, entity\nq1\tpicasso peace\tPicasso|PERSON\nq2\tlennon religion\n", "utf-8")
    assert [(t.id, t.entity) for t in read_topics(tsv)] == [("q1", "Picasso|PERSON"), ("q2", None)]
    tsv.write_text("q1\tpicasso\nq1\tagain\n", "utf-8")
    with pytest.raises(SentretError, match="topic 'q1' appears twice"):
        read_topics(tsv)
    tsv.write_text("q1 picasso\n", "utf-8")
    with pytest.raises(SentretError, match=r"topics.tsv:1: expected 'qid<TAB>query'"):
        read_topics(tsv)


def test_a_run_holds_the_models_top_k_and_reads_back(
    small_index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topics = tmp_path / "topics.301-302"
    topics.write_text(TREC_TOPICS, "utf-8")
    out = tmp_path / "run.trec"
    code = cli.main(["run", str(small_index.path), "--topics", str(topics), "--model", "bm25.v1", "--k", "3",
                     "--out", str(out), "--json"])
    assert code == 0, capsys.readouterr().err
    summary = json.loads(capsys.readouterr().out)
    assert summary["tag"] == "sentret.bm25.v1.ties-docorder" and summary["topics"] == 2
    run = read_run(out)
    documents = list(small_index.documents["id"])
    for qid, query in (("301", "Picasso peace"), ("302", "Spanish Civil War")):
        best = search(small_index, query, "bm25.v1", 3)
        expected = {docno(documents[int(small_index.sent_doc[s])], int(small_index.sent_pos[s])): float(v)
                    for s, v in zip(best.ids, best.scores)}
        assert run[qid] == expected
    assert all(" " not in line.split()[2] for line in out.read_text().splitlines())


def test_an_entity_column_ranks_only_that_entitys_sentences(
    small_index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tpeace\tPicasso|PERSON\n", "utf-8")
    out = tmp_path / "run.trec"
    assert cli.main(["run", str(small_index.path), "--topics", str(topics), "--out", str(out)]) == 0
    ranked = read_run(out)["q1"]
    assert ranked and all(d.startswith("picasso-") for d in ranked)  # Picasso is mentioned in his document only


def test_the_run_never_overwrites_its_inputs(small_index: Index, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tpeace\n", "utf-8")
    before = topics.read_bytes()
    assert cli.main(["run", str(small_index.path), "--topics", str(topics), "--out", str(topics)]) == 2
    assert topics.read_bytes() == before and "which this command reads" in capsys.readouterr().err
    assert cli.main(["run", str(small_index.path), "--topics", str(topics), "--out",
                     str(small_index.path / "run.trec")]) == 2


def test_docno_percent_encodes_whitespace_and_percent() -> None:
    assert docno("Guernica (Picasso)", 0) == "Guernica%20(Picasso)-0"
    assert docno("100% café", 3) == "100%25%20caf%C3%A9-3"
