"""One sentence id everywhere: a session's exports name sentences by docno, as `sentret run` does, so a team's
judgments score sentret's runs; imports read docnos and internal ids; old sessions find their docnos."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.annotation.admin import Admin
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, ItemView
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.cli.main import main
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import topic_id
from sentret_core.index.docnos import sentence_docnos
from tests.conftest import SMALL_DOCS, build_from_texts

TOKEN = "docnos-test-token"
TOPICS = "picasso peace\tPicasso|PERSON\nSpanish Civil War\tFrancisco Franco|PERSON\nLennon and religion"


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[JudgmentStore, Index]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    index = build_from_texts(tmp_path, SMALL_DOCS)
    store = JudgmentStore(tmp_path / "j.sqlite")
    create_session(store, "s", index, TOPICS, depth=5, seed=0)
    return store, index


def cli_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert main(args) == 0
    found: dict[str, object] = json.loads(capsys.readouterr().out)
    return found


def test_a_sessions_qrels_score_a_sentret_run_of_its_topics(
        session: tuple[JudgmentStore, Index], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The run's longest prefix of pooled sentences graded relevant, every other pooled sentence not: the
    session's qrels give the run MAP 1.0. The same qrels with internal ids share no sentence with it: 0."""
    store, index = session
    folder, db = tmp_path, str(tmp_path / "j.sqlite")
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    assert main(["judgments", "export", db, "--session", "s", "--format", "topics", "--out",
                 str(folder / "topics.tsv")]) == 0
    assert main(["run", str(index.path), "--topics", str(folder / "topics.tsv"), "--model", "bm25f.v1", "--k", "50",
                 "--out", str(folder / "run.trec")]) == 0
    ranked: dict[str, list[str]] = {}
    for line in (folder / "run.trec").read_text().splitlines():
        qid, _, docno, *_ = line.split()
        ranked.setdefault(qid, []).append(docno)

    admin = store.admin(TOKEN)
    ann = store.sign_in("s", "ann", admin.add_annotator("s", "ann").passphrase)
    names = sentence_docnos(index)
    items = []
    while (item := ann.next_item()) is not None:
        items.append(item)
        ann.grade(item.item_id, 1)  # not relevant, until the prefix below says otherwise
    by_topic: dict[str, set[str]] = {}
    for item in items:
        by_topic.setdefault(topic_id(item.query, item.entity), set()).add(names[item.sentence_id])
    assert set(ranked) == set(by_topic)  # the run's qids are the session's topic ids
    prefixes = {}
    for tid, docnos in ranked.items():
        prefix = next((docnos[:at] for at, d in enumerate(docnos) if d not in by_topic[tid]), docnos)
        assert prefix, f"{tid}: the run's best sentence was pooled"
        prefixes[tid] = set(prefix)
    for item in items:
        if names[item.sentence_id] in prefixes[topic_id(item.query, item.entity)]:
            ann.grade(item.item_id, 4)

    for ids, expected in (("docno", 1.0), ("internal", 0.0)):
        assert main(["judgments", "export", db, "--session", "s", "--format", "qrels", "--ids", ids, "--out",
                     str(folder / f"{ids}.qrels")]) == 0
        result = cli_json(["eval-run", "--qrels", str(folder / f"{ids}.qrels"), "--run", str(folder / "run.trec"),
                           "--metrics", "map", "--json"], capsys)
        means = result["means"]
        assert isinstance(means, dict)
        assert means["tie-aware"]["map"] == pytest.approx(expected), ids
        assert means["as exported (trec_eval -c)"]["map"] == pytest.approx(expected), ids


def first_graded(store: JudgmentStore, grade: int) -> tuple[Admin, ItemView]:
    """The admin, and the first item, which annotator ``ann`` grades ``grade``."""
    admin = store.admin(TOKEN)
    ann = store.sign_in("s", "ann", admin.add_annotator("s", "ann").passphrase)
    first = ann.next_item()
    assert first is not None
    ann.grade(first.item_id, grade)
    return admin, first


def test_qrels_and_jsonl_import_by_docno_and_by_internal_id(session: tuple[JudgmentStore, Index]) -> None:
    store, index = session
    admin, first = first_graded(store, 3)
    by_docno = admin.export_qrels("s", rule="annotator", annotator="ann")
    by_id = admin.export_qrels("s", rule="annotator", annotator="ann", ids="internal")
    docno = sentence_docnos(index)[first.sentence_id]
    assert by_docno.split()[2] == docno and by_id.split()[2] == str(first.sentence_id)
    assert admin.import_qrels("s", by_docno.splitlines(), "by-docno") == 1
    assert admin.import_qrels("s", by_id.splitlines(), "by-id") == 1
    assert admin.export_qrels("s", rule="annotator", annotator="by-docno") == by_docno
    assert admin.export_qrels("s", rule="annotator", annotator="by-id") == by_docno
    with pytest.raises(SentretError, match="line 2: repeats the judgment of line 1"):  # one item, named twice
        admin.import_qrels("s", [by_docno.strip(), by_id.strip()], "twice")
    [record] = [json.loads(line) for line in admin.export_jsonl("s").splitlines() if '"ann"' in line]
    assert record["docno"] == docno and record["sentence_id"] == first.sentence_id
    only_docno = {k: v for k, v in record.items() if k != "sentence_id"}
    assert admin.import_jsonl("s", [json.dumps(only_docno)]) == 1  # as "ann (imported)"
    with pytest.raises(SentretError, match="not in the pool"):
        admin.import_qrels("s", [by_docno.replace(docno, "nowhere-0")], "stray")


def test_a_session_pooled_before_docnos_finds_them_in_its_index(
        session: tuple[JudgmentStore, Index]) -> None:
    store, _ = session
    admin, _ = first_graded(store, 4)
    expected = admin.export_qrels("s")
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE pool_items SET docno = NULL")  # as a session made by an earlier sentret
    conn.close()
    assert admin.export_qrels("s") == expected  # found from the index, its sentence's text checked
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE pool_items SET text = 'another text'")  # as if the index was rebuilt since
    conn.close()
    with pytest.raises(SentretError, match=r"no longer the one pooled .* export internal ids instead"):
        admin.export_qrels("s")
