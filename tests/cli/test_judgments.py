"""``sentret judgments …`` end to end: create → import → export → agreement, and bad input → exit 2."""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import topic_label
from sentret_core.annotation.store import JudgmentStore
from sentret_core.cli import main as cli
from sentret_core.cli.judgments import register
from sentret_core.errors import SentretError

TOKEN = "cli-test-token"


def run(argv: Sequence[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """``sentret`` with the judgments command registered (added to COMMANDS here if it is not there yet)."""
    parser = cli._parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if "judgments" not in subs.choices:
        monkeypatch.setattr(cli, "COMMANDS", [*cli.COMMANDS, register])
    return cli.main(list(argv))


@pytest.fixture
def setup(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    topics = tmp_path / "topics.tsv"
    topics.write_text("# query<TAB>entity\npicasso peace\tPicasso|PERSON\nlennon religion\n", "utf-8")
    return tmp_path / "j.sqlite", topics


def test_create_import_export_agreement(
    setup: tuple[Path, Path], small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db, topics = setup
    create = ["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path),
              "--topics", str(topics), "--pool-depth", "3", "--top-entities", "2", "--seed", "5",
              "--annotators", "ann,bea"]
    code = run(create, monkeypatch)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "created session 's'" in out.out and "seed 5" in out.out
    printed = re.findall(r"annotator '(\w+)': link (\S+)  passphrase (\S+)", out.out)
    found = {name: passphrase for name, _, passphrase in printed}
    links = {name: link for name, link, _ in printed}
    assert sorted(found) == ["ann", "bea"] and links["ann"].startswith("http://localhost:8501/annotate?session=s&token=")
    token = links["ann"].split("token=")[1]
    with JudgmentStore(db) as store:
        info = store.session("s")
        assert info.settings.depth == 3 and info.settings.seed == 5
        assert info.entities[0][1] == "Picasso|PERSON" and len(info.entities) == 3
        assert store.sign_in_with_token("s", token).annotator == "ann"
        with pytest.raises(SentretError, match="wrong name or passphrase"):
            store.sign_in("s", "ann", found["bea"])  # bea's passphrase is not ann's
        handle = store.sign_in("s", "ann", found["ann"])
        while (item := handle.next_item()) is not None:
            handle.grade(item.item_id, 4 if item.position % 2 == 0 else 2)
        ann_qrels = store.admin(TOKEN).export_qrels("s", rule="annotator", annotator="ann")
    # import a second opinion as qrels: ann's grades with the first line changed
    lines = ann_qrels.splitlines()
    topic, _, sid, grade = lines[0].split()
    lines[0] = f"{topic} 0 {sid} {1 if grade != '1' else 3}"
    qrels_file = tmp_path / "gold.qrels"
    qrels_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = run(["judgments", "import", str(db), "--session", "s", "--format", "qrels", str(qrels_file),
                "--annotator", "gold"], monkeypatch)
    assert code == 0 and f"{len(lines)} judgment(s)" in capsys.readouterr().out

    # export: qrels by each rule, CSV and JSONL
    assert run(["judgments", "export", str(db), "--session", "s", "--format", "qrels",
                "--adjudicate", "gold"], monkeypatch) == 0
    assert capsys.readouterr().out.splitlines() == lines
    out_file = tmp_path / "out.csv"
    assert run(["judgments", "export", str(db), "--session", "s", "--format", "csv", "--out", str(out_file)],
               monkeypatch) == 0
    rows = list(csv.DictReader(io.StringIO(out_file.read_text(encoding="utf-8"))))
    assert len(rows) == 2 * len(lines) and {r["annotator"] for r in rows} == {"ann", "gold"}
    capsys.readouterr()
    assert run(["judgments", "export", str(db), "--session", "s", "--format", "jsonl"], monkeypatch) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 2 * len(lines) and records[0]["topic_id"].startswith("picasso%20peace:")

    # agreement: ann and gold agree on every item but one
    assert run(["judgments", "agreement", str(db), "--session", "s", "--json"], monkeypatch) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["session"] == "s" and summary["annotators"] == ["ann", "gold"]
    assert summary["shared_items"] == len(lines) == summary["complete_items"]
    (pair,) = summary["cohen_kappa"]
    assert pair["a"] == "ann" and pair["b"] == "gold" and pair["n"] == len(lines) < 10
    assert pair["value"] is None and pair["note"] == f"too few shared items (n = {len(lines)} < 10)"
    # raw agreement still given: every item but the first has the same grade
    (percent,) = summary["percent_agreement"]
    assert percent == {"a": "ann", "b": "gold", "value": (len(lines) - 1) / len(lines), "agreed": len(lines) - 1,
                       "n": len(lines)}
    assert run(["judgments", "agreement", str(db), "--session", "s"], monkeypatch) == 0
    same = f"{100 * (len(lines) - 1) / len(lines):.1f}% ({len(lines) - 1} of {len(lines)} shared items)"
    assert (f"Cohen's κ  ann × gold: — (too few shared items (n = {len(lines)} < 10)); same grade on {same}"
            in capsys.readouterr().out)

    # the 1-4 scale on request: every grade one more than on the default trec scale
    assert run(["judgments", "export", str(db), "--session", "s", "--format", "qrels", "--adjudicate", "gold",
                "--scale", "1-4"], monkeypatch) == 0
    shifted = [line.rsplit(" ", 1) for line in capsys.readouterr().out.splitlines()]
    assert [f"{head} {int(grade) - 1}" for head, grade in shifted] == lines


def _one_error(code: int, capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("sentret: error: "), err
    return err[0]


def test_bad_input_exits_2_with_one_message(
    setup: tuple[Path, Path], small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db, topics = setup
    base = ["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path)]
    assert "cannot read the topics file" in _one_error(
        run([*base, "--topics", str(tmp_path / "missing.tsv")], monkeypatch), capsys)
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\tc\td\n", encoding="utf-8")
    assert "topics line 1" in _one_error(run([*base, "--topics", str(bad)], monkeypatch), capsys)
    assert "unknown model" in _one_error(
        run([*base, "--topics", str(topics), "--models", "nope"], monkeypatch), capsys)
    assert not db.exists() or JudgmentStore(db).sessions() == []
    assert run([*base, "--topics", str(topics)], monkeypatch) == 0
    capsys.readouterr()
    assert "already exists" in _one_error(run([*base, "--topics", str(topics)], monkeypatch), capsys)

    assert run(["judgments"], monkeypatch) == 2 and "create" in capsys.readouterr().err  # usage
    export = ["judgments", "export", str(db), "--session", "s", "--format", "qrels"]
    csv_export = ["judgments", "export", str(db), "--session", "s", "--format", "csv"]
    assert "--adjudicate, --scale and --ids apply to --format qrels only" in _one_error(
        run([*csv_export, "--adjudicate", "mean"], monkeypatch), capsys)
    assert "no judgments database" in _one_error(
        run(["judgments", "export", str(tmp_path / "none.sqlite"), "--session", "s", "--format", "csv"],
            monkeypatch), capsys)
    unknown = ["judgments", "export", str(db), "--session", "x", "--format", "csv"]
    assert "no session named 'x'" in _one_error(run(unknown, monkeypatch), capsys)
    assert "no annotator named 'zed'" in _one_error(run([*export, "--adjudicate", "zed"], monkeypatch),
                                                    capsys)
    assert "wrong admin token" in _one_error(run([*export, "--token", "nope"], monkeypatch), capsys)
    monkeypatch.delenv(ADMIN_TOKEN_ENV)
    assert "needs the admin token" in _one_error(run(export, monkeypatch), capsys)
    assert run([*export, "--token", "any"], monkeypatch) == 0  # no token set: the file is the boundary
    capsys.readouterr()
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)

    qrels = tmp_path / "x.qrels"
    qrels.write_text("picasso%20peace:Picasso|PERSON 0 999 3\n", encoding="utf-8")
    imp = ["judgments", "import", str(db), "--session", "s", "--format", "qrels", str(qrels)]
    assert "needs --annotator" in _one_error(run(imp, monkeypatch), capsys)
    assert "not in the pool" in _one_error(run([*imp, "--annotator", "gold"], monkeypatch), capsys)
    with JudgmentStore(db) as store:
        assert store.admin(TOKEN).all_judgments("s") == []  # nothing written


def test_annotators_command_adds_renames_disables_and_removes(
    setup: tuple[Path, Path], small_index: Index, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    db, topics = setup
    base = ["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path), "--topics", str(topics)]
    assert run(base, monkeypatch) == 0
    capsys.readouterr()
    people = ["judgments", "annotators", str(db), "--session", "s"]
    assert run([*people, "--add", "Alice", "--add", "bob", "--url", "https://team.example/app/"], monkeypatch) == 0
    out = capsys.readouterr().out
    assert "annotator 'Alice': link https://team.example/app/annotate?session=s&token=" in out
    assert "  Alice  annotator  active  0 graded" in out and "  bob  annotator  active  0 graded" in out
    assert "already has an annotator named 'ALICE'" in _one_error(run([*people, "--add", " ALICE "], monkeypatch),
                                                                  capsys)
    assert run([*people, "--rename", "bob", "Bob B", "--disable", "alice"], monkeypatch) == 0
    out = capsys.readouterr().out
    assert "  Alice  annotator  disabled  0 graded" in out and "  Bob B  annotator  active  0 graded" in out
    assert run([*people, "--remove", "bob b"], monkeypatch) == 0
    assert "1 annotator(s)" in capsys.readouterr().out
    assert run([*people, "--add-reviewer", "Rita", "--add-admin", "Sam", "--role", "alice", "reviewer", "--json"],
               monkeypatch) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in summary["new_secrets"]] == ["Rita", "Sam"]
    assert {w["name"]: w["role"] for w in summary["annotators"]} == {"Alice": "reviewer", "Rita": "reviewer",
                                                                      "Sam": "admin"}
    assert "a role is one of annotator, reviewer, admin; got 'boss'" in _one_error(
        run([*people, "--role", "Rita", "boss"], monkeypatch), capsys)
    assert "wrong admin token" in _one_error(run([*people, "--token", "nope"], monkeypatch), capsys)


def test_import_sniffs_the_scale_and_says_what_it_chose(
    setup: tuple[Path, Path], small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The CLI names the scale of every export and import; ``--scale auto`` (the default) sniffs."""
    from sentret_core.evaluation.trec_io import topic_id

    db, topics = setup
    create = ["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path),
              "--topics", str(topics), "--pool-depth", "3", "--top-entities", "5"]
    assert run(create, monkeypatch) == 0
    with sqlite3.connect(db) as conn:
        items = conn.execute("SELECT query, entity, sentence_id FROM pool_items ORDER BY position").fetchall()
    assert len(items) >= 4
    items = items[:4]

    def write(name: str, grades: list[int]) -> str:
        lines = [f"{topic_id(q, e)} 0 {sid} {g}" for (q, e, sid), g in zip(items, grades)]
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(tmp_path / name)

    imp = ["judgments", "import", str(db), "--session", "s", "--format", "qrels"]
    capsys.readouterr()
    # values 0-3: the trec scale, stored as grade + 1
    assert run([*imp, write("t.qrels", [0, 1, 2, 3]), "--annotator", "t"], monkeypatch) == 0
    assert "sentret: values 0-3 found: read as trec scale, relevant ≥ 2" in capsys.readouterr().err
    # values 1-4: the 1-4 scale, stored as they are
    assert run([*imp, write("f.qrels", [1, 2, 3, 4]), "--annotator", "f"], monkeypatch) == 0
    assert "sentret: values 1-4 found: read as 1-4 scale, relevant ≥ 3" in capsys.readouterr().err
    # only 1-3: ambiguous, read as trec and said so; --scale 1-4 reads it the other way, unsniffed
    assert run([*imp, write("a.qrels", [1, 2, 3]), "--annotator", "a"], monkeypatch) == 0
    assert "(they also fit the 1-4 scale" in capsys.readouterr().err
    assert run([*imp, write("b.qrels", [1, 2, 3]), "--annotator", "b", "--scale", "1-4"], monkeypatch) == 0
    assert "found" not in capsys.readouterr().err
    with JudgmentStore(db) as store:
        judged = store.admin(TOKEN).all_judgments("s")
    stored = {who: [next(j.grade for j in judged if j.annotator == who and (j.query, j.entity, j.sentence_id) == it)
                    for it in items[:n]] for who, n in (("t", 4), ("f", 4), ("a", 3), ("b", 3))}
    assert stored == {"t": [1, 2, 3, 4], "f": [1, 2, 3, 4], "a": [2, 3, 4], "b": [1, 2, 3]}
    # an export names its scale and threshold on standard error
    export = ["judgments", "export", str(db), "--session", "s", "--format", "qrels"]
    assert run(export, monkeypatch) == 0
    assert "sentret: qrels on the trec scale (0-3), relevant ≥ 2 (trec_eval -l 2)" in capsys.readouterr().err
    assert run([*export, "--scale", "1-4"], monkeypatch) == 0
    assert "sentret: qrels on the 1-4 scale, relevant ≥ 3 (trec_eval -l 3)" in capsys.readouterr().err
    # values on no scale (0 is not 1-4, 4 is not trec): read as trec, the line off it named, nothing written
    assert "qrels line 2: grade 4 is not on the trec scale" in _one_error(
        run([*imp, write("x.qrels", [0, 4]), "--annotator", "x"], monkeypatch), capsys)


def test_create_preview_prints_the_pairs_and_stores_nothing(
    setup: tuple[Path, Path], small_index: Index, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """The pooled pairs are seen before creating; "Lennon" restates "lennon religion" and
    is left out (as on Explore), while the named "Picasso" is pooled although it restates "picasso peace"."""
    db, topics = setup
    create = ["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path),
              "--topics", str(topics), "--pool-depth", "1", "--top-entities", "3",
              "--k", "1000", "--entity-weighting", "none"]  # Blanco & Zaragoza's S_q and counts
    assert run([*create, "--preview"], monkeypatch) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[:4] == [
        "picasso peace · Picasso (PERSON)\t1 item",
        "lennon religion · John Lennon (PERSON)\t1 item",
        "lennon religion · English (NORP)\t1 item",
        "lennon religion · George Harrison (PERSON)\t1 item",
    ]
    assert ("preview of session 's': 4 items over 4 (query, entity) pairs; a bare query's entities by kld over "
            "the top 1,000 sentences of bm25f.v1, each sentence once; nothing stored") in out.out
    assert "'lennon religion' / Lennon|PERSON: it only restates the query" in out.err
    assert not db.exists()
    assert run(create, monkeypatch) == 0  # the same pairs, stored
    with JudgmentStore(db) as store:
        assert [e for _, e in store.session("s").entities] == [
            "Picasso|PERSON", "John Lennon|PERSON", "English|NORP", "George Harrison|PERSON"
        ]


def test_create_ranks_a_bare_querys_entities_as_explore_and_takes_guidelines(
    setup: tuple[Path, Path], small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from sentret_core.annotation.session_setup import build_pool

    db, topics = setup
    guidelines = tmp_path / "guidelines.md"
    guidelines.write_text("Grade 4 only when the sentence says *why*.\r\n", encoding="utf-8")
    create = ["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path),
              "--topics", str(topics), "--pool-depth", "1", "--top-entities", "3", "--json"]
    assert run([*create, "--preview"], monkeypatch) == 0
    preview = json.loads(capsys.readouterr().out)
    assert preview["ranking"] == {"ranker": "bm25f.v1", "k": 100, "score": "kld", "weighting": "score"}
    explore = build_pool(small_index, topics.read_text("utf-8"), depth=1, top_entities=3)  # Explore's ranking
    assert [p["topic"] for p in preview["pairs"]] == [topic_label(t.topic_id) for t in explore.topics]
    assert run([*create, "--guidelines", str(guidelines)], monkeypatch) == 0
    assert json.loads(capsys.readouterr().out)["ranking"]["k"] == 100
    with JudgmentStore(db) as store:
        assert store.guidelines("s") == "Grade 4 only when the sentence says *why*."
    guidelines.write_bytes(b"\xff\xfe bad")
    assert run([*create[:4], "t", *create[5:], "--guidelines", str(guidelines)], monkeypatch) == 2
    assert "the guidelines file is not UTF-8 text" in capsys.readouterr().err


def test_create_with_an_overlap(
    setup: tuple[Path, Path], small_index: Index, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sentret_core.annotation.item_order import ItemOrder

    db, topics = setup
    create = ["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path),
              "--topics", str(topics), "--seed", "3", "--graders", "2", "--overlap", "25"]
    assert run(create, monkeypatch) == 0
    assert "25% of the items graded by 2 annotators, the rest by one annotator each" in capsys.readouterr().out
    with JudgmentStore(db) as store:
        assert store.session("s").item_order == ItemOrder(overlap=25, graders=2, shuffle=True, seed=3)
    bad = ["judgments", "create", str(db), "--session", "t", "--index", str(small_index.path),
           "--topics", str(topics), "--overlap", "120"]
    assert run(bad, monkeypatch) == 2
    assert "overlap must be an integer from 0 to 100 (got 120)" in capsys.readouterr().err


def test_create_annotators_and_import_print_json(
    setup: tuple[Path, Path], small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    db, topics = setup
    base = ["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path), "--topics",
            str(topics), "--pool-depth", "3", "--seed", "5"]
    assert run([*base, "--preview", "--json"], monkeypatch) == 0
    preview = json.loads(capsys.readouterr().out)
    assert preview["stored"] is False and sum(p["items"] for p in preview["pairs"]) == preview["items"] > 0
    assert run([*base, "--annotators", "ann", "--json"], monkeypatch) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["session"] == "s" and created["seed"] == 5 and created["items"] == preview["items"]
    assert [a["name"] for a in created["annotators"]] == ["ann"] and "token=" in created["annotators"][0]["link"]
    assert run(["judgments", "annotators", str(db), "--session", "s", "--add", "bob", "--json"], monkeypatch) == 0
    people = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in people["annotators"]] == ["ann", "bob"] and people["new_secrets"][0]["name"] == "bob"
    with JudgmentStore(db) as store:  # ann grades every item 2; the import says 4 to each of them
        handle = store.sign_in_with_token("s", created["annotators"][0]["link"].split("token=")[1])
        while (item := handle.next_item()) is not None:
            handle.grade(item.item_id, 2)
        lines = store.admin(TOKEN).export_qrels("s", rule="annotator", annotator="ann", scale="1-4").splitlines()
    qrels = tmp_path / "gold.qrels"
    qrels.write_text("".join(line.rsplit(" ", 1)[0] + " 4\n" for line in lines), "utf-8")
    argv = ["judgments", "import", str(db), "--session", "s", "--format", "qrels", str(qrels), "--annotator", "gold"]
    assert run([*argv, "--scale", "1-4", "--json"], monkeypatch) == 0
    assert json.loads(capsys.readouterr().out) == {"file": str(qrels), "session": "s", "changed": len(lines),
                                                   "scale": "1-4"}


def test_export_and_import_label_studio_and_hugging_face(
    setup: tuple[Path, Path], small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db, topics = setup
    assert run(["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path), "--topics",
                str(topics), "--pool-depth", "1", "--top-entities", "1"], monkeypatch) == 0
    with JudgmentStore(db) as store:
        handle = store.sign_in("s", "ann", store.admin(TOKEN).add_annotator("s", "ann").passphrase)
        while (item := handle.next_item()) is not None:
            handle.grade(item.item_id, 3)
    capsys.readouterr()
    files = {"label-studio": tmp_path / "s.json", "hf-jsonl": tmp_path / "s.jsonl"}
    for kind, out in files.items():
        assert run(["judgments", "export", str(db), "--session", "s", "--format", kind, "--out", str(out)],
                   monkeypatch) == 0
    for kind, changed in (("label-studio", 2), ("hf-jsonl", 0)):  # as "ann (imported)"; the same grades again
        assert run(["judgments", "import", str(db), "--session", "s", "--format", kind, str(files[kind])],
                   monkeypatch) == 0
        assert f"{changed} judgment(s) added or changed" in capsys.readouterr().out
    assert run(["judgments", "import", str(db), "--session", "s", "--format", "hf-jsonl", "--annotator", "x",
                str(tmp_path / "s.jsonl")], monkeypatch) == 2
    assert "--annotator and --scale apply to qrels only: hf-jsonl names its annotators" in capsys.readouterr().err


def test_suggest_from_a_model_and_from_a_file(
    setup: tuple[Path, Path], small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db, topics = setup
    assert run(["judgments", "create", str(db), "--session", "s", "--index", str(small_index.path), "--topics",
                str(topics), "--pool-depth", "1", "--top-entities", "1"], monkeypatch) == 0
    base = ["judgments", "suggest", str(db), "--session", "s"]
    assert run([*base, "--model", "bm25f.v1"], monkeypatch) == 0  # the session's own index
    assert "stored 2 suggestion(s) from 'bm25f.v1' in session 's'" in capsys.readouterr().err
    from sentret_core.evaluation.trec_io import topic_id

    with JudgmentStore(db) as store:
        assert store.admin(TOKEN).all_judgments("s") == []  # suggestions are not grades
    with JudgmentStore(db) as store:
        first = store.sign_in("s", "ann", store.admin(TOKEN).add_annotator("s", "ann").passphrase).next_item()
    assert first is not None
    gold = tmp_path / "gold.qrels"
    gold.write_text(f"{topic_id(first.query, first.entity)} 0 {first.sentence_id} 3\n", encoding="utf-8")
    assert run([*base, "--file", str(gold), "--format", "qrels", "--scale", "trec"], monkeypatch) == 0
    assert "stored 1 suggestion(s) from 'gold.qrels'" in capsys.readouterr().err
    assert run([*base, "--file", str(gold)], monkeypatch) == 2
    assert "--file needs --format qrels or jsonl" in capsys.readouterr().err
    assert run([*base, "--model", "no-such-model"], monkeypatch) == 2
    assert "no-such-model" in capsys.readouterr().err
