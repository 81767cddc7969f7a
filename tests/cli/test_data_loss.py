"""No command deletes or overwrites a user's data.

Each case was exit 0 with no word on the code before this test: the judgments database overwritten by its
own export, documents deleted with the index they were kept in, a user's file in an index folder removed
by --force, and a look-alike of a staging folder swept (that one is in ingest/test_build_safety.py). Each is now
refused before anything is written, and the test checks that every byte is still there.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.cli import main as cli
from sentret_core.errors import SentretError
from sentret_core.ingest import targets

TOKEN = "data-loss-token"


def run(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main([str(a) for a in argv])
    return code, capsys.readouterr().err


def fingerprint(folder: Path) -> dict[str, str]:
    """sha256 of every file below ``folder``, by relative path: equal before and after means untouched."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def index_copy(small_index: Index, tmp_path: Path) -> Path:
    """A whole index of our own to try to destroy (a copy of the session's small index)."""
    out = tmp_path / "idx"
    shutil.copytree(small_index.path, out)
    return out


def test_an_export_never_overwrites_the_judgments_database(
    small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    db = tmp_path / "j.sqlite"
    topics = tmp_path / "topics.tsv"
    topics.write_text("picasso peace\tPicasso|PERSON\n", "utf-8")
    code, err = run(["judgments", "create", db, "--session", "s", "--index", small_index.path, "--topics", topics,
                     "--pool-depth", "2", "--top-entities", "1", "--annotators", "ann"], capsys)
    assert code == 0, err
    before = db.read_bytes()
    link = tmp_path / "link.csv"
    link.symlink_to(db)
    for out in (db, link, Path(f"{db}-wal")):
        code, err = run(["judgments", "export", db, "--session", "s", "--format", "csv", "--out", out], capsys)
        assert code == 2 and "which this command reads" in err and "nothing was written" in err, err
        assert db.read_bytes() == before
    code, err = run(["judgments", "export", db, "--session", "s", "--format", "jsonl"], capsys)
    assert code == 0, err  # the database still opens: every grade is still there


def test_documents_inside_the_index_being_replaced_are_refused(
    index_copy: Path, small_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = index_copy / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Pablo Picasso painted Guernica in 1937.\n", "utf-8")
    inside_file = index_copy / "src.jsonl"
    shutil.copy(small_corpus, inside_file)
    before = fingerprint(index_copy)
    for argv in (["index", docs, "--out", index_copy, "--force"],  # the folder of documents inside --out
                 ["index", inside_file, "--out", index_copy, "--force"],  # a source file inside --out
                 ["add", index_copy, inside_file],  # add replaces the index it reads documents from
                 ["parse", docs, "--out", index_copy, "--force"],
                 ["build", index_copy / "shards", "--out", index_copy, "--force"]):
        code, err = run([*argv, "--n-process", "1"] if argv[0] in ("index", "add", "parse") else argv, capsys)
        assert code == 2, (argv, err)
        assert "Traceback" not in err and ("inside" in err or "not part of it" in err), err
        assert fingerprint(index_copy) == before


def test_force_keeps_a_users_own_file_in_the_index_folder(
    index_copy: Path, small_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = index_copy / "README-my-notes.txt"
    notes.write_text("my notes on this index\n", "utf-8")
    before = fingerprint(index_copy)
    code, err = run(["index", small_corpus, "--out", index_copy, "--force", "--n-process", "1"], capsys)
    assert code == 2 and "README-my-notes.txt" in err and "nothing was changed" in err, err
    extra = small_corpus.parent / "more.jsonl"
    extra.write_text(json.dumps({"id": "new-1", "text": "Joan Miró lived in Barcelona."}) + "\n", "utf-8")
    code, err = run(["add", index_copy, extra, "--n-process", "1"], capsys)
    assert code == 2 and "README-my-notes.txt" in err, err
    assert fingerprint(index_copy) == before


def test_foreign_files_are_named_at_every_level_of_an_index(index_copy: Path) -> None:
    assert targets.foreign_files(index_copy) == []  # a whole index (with trained artefacts) is all its own
    (index_copy / "shards" / "mine.parquet").write_bytes(b"not a shard of this index")
    (index_copy / "artefacts" / "notes.txt").write_text("x", "utf-8")
    (index_copy / ".hidden").write_text("x", "utf-8")
    assert targets.foreign_files(index_copy) == [".hidden", "artefacts/notes.txt", "shards/mine.parquet"]


def test_a_file_put_in_the_index_during_a_build_stops_the_swap(index_copy: Path, tmp_path: Path) -> None:
    """The check runs again at the moment of the swap: the new build stays aside, the old index and the file stay."""
    staged = tmp_path / "staged"
    shutil.copytree(index_copy, staged)
    late = index_copy / "added-while-building.txt"
    late.write_text("keep me", "utf-8")
    with pytest.raises(SentretError, match=r"added-while-building\.txt"):
        targets.replace(staged, index_copy)
    assert late.read_text("utf-8") == "keep me" and Index.load(index_copy).N > 0
    targets.replace(staged, tmp_path / "elsewhere")  # an unused target takes it as before
    assert Index.load(tmp_path / "elsewhere").N > 0


def test_force_replaces_a_pure_index_as_before(index_copy: Path, small_corpus: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["index", small_corpus, "--out", index_copy, "--force", "--n-process", "1"], capsys)
    assert code == 0, err
    assert Index.load(index_copy).N > 0


# --- sentret eval --run-out: one run per model, at names derived from the one typed ----------------------


@pytest.fixture
def wikiqa_file(tmp_path: Path) -> Path:
    from tests.evaluation.test_benchmarks import write_wikiqa

    return write_wikiqa(tmp_path / "my.tsv")


def _eval(data: Path, run_out: Path, cache: Path, *extra: str) -> list[str]:
    return ["eval", "wikiqa", "--data", str(data), "--models", "bm25.v1", "--cache", str(cache),
            "--run-out", str(run_out), *extra]


def test_a_derived_run_name_that_is_the_input_is_refused(
    wikiqa_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hostile case: ``--data my.bm25.v1.tsv --run-out my.tsv`` wrote bm25.v1's run over its own input
    (exit 0). The input is reached also through a symlink and a hard link."""
    data = tmp_path / "my.bm25.v1.tsv"
    shutil.copy(wikiqa_file, data)
    soft, hard = tmp_path / "soft.tsv", tmp_path / "hard.tsv"
    soft.symlink_to(data)
    hard.hardlink_to(data)
    before = fingerprint(tmp_path)
    for given in (data, soft, hard):
        code, err = run(_eval(given, tmp_path / "my.tsv", tmp_path / "cache"), capsys)
        assert code == 2 and "--run-out" in err and "my.bm25.v1.tsv" in err and "nothing was written" in err, err
        assert fingerprint(tmp_path) == before  # no run of another model written either, no cache made


def test_a_derived_run_name_never_replaces_a_file_sentret_did_not_write(
    wikiqa_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "runs.random.tsv"  # random is evaluated beside every model: its run goes there
    mine.write_text("my own notes\n", "utf-8")
    before = fingerprint(tmp_path)
    code, err = run(_eval(wikiqa_file, tmp_path / "runs.tsv", tmp_path / "cache"), capsys)
    assert code == 2 and "runs.random.tsv, which exists" in err and "Add --force" in err, err
    code, err = run([*_eval(wikiqa_file, tmp_path / "runs.tsv", tmp_path / "cache"), "--force"], capsys)
    assert code == 2 and "runs.random.tsv, which exists and is not a TREC run" in err, err  # --force: runs only
    assert fingerprint(tmp_path) == before
    mine.unlink()
    for force in ([], ["--force"]):  # its own runs, from a first evaluation, are replaced by a second with --force
        code, err = run([*_eval(wikiqa_file, tmp_path / "runs.tsv", tmp_path / "cache"), *force], capsys)
        assert code == 0, err
    written = sorted(p.name for p in tmp_path.glob("runs.*"))
    assert written == ["runs.bm25.v1.tsv", "runs.doc-order.tsv", "runs.random.tsv"]


def test_the_qrels_may_not_take_a_runs_name(
    wikiqa_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = fingerprint(tmp_path)
    code, err = run(_eval(wikiqa_file, tmp_path / "runs.tsv", tmp_path / "cache",
                          "--qrels-out", str(tmp_path / "runs.bm25.v1.tsv")), capsys)
    assert code == 2 and "would both write" in err, err
    assert fingerprint(tmp_path) == before
