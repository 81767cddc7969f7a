"""`--json` on every command that reports something: parse, build, add, index, verify, train."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.cli.main import main
from tests.conftest import SMALL_DOCS


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_build_commands_and_verify_print_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(json.dumps(d) + "\n" for d in SMALL_DOCS[:2]), "utf-8")
    parsed = run_json(["parse", str(source), "--out", str(tmp_path / "shards"), "--n-process", "1", "--json"], capsys)
    assert parsed["counts"]["documents"] == 2 and parsed["shards"] == 1  # type: ignore[index]
    built = run_json(["build", str(tmp_path / "shards"), "--out", str(tmp_path / "idx"), "--json"], capsys)
    assert built["documents"] == 2 and built["path"] == str(tmp_path / "idx")
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps(SMALL_DOCS[2]) + "\n", "utf-8")
    added = run_json(["add", str(tmp_path / "idx"), str(more), "--n-process", "1", "--json"], capsys)
    assert added["documents"] == 3
    assert run_json(["verify", str(tmp_path / "idx"), "--json"], capsys) == {
        "index": str(tmp_path / "idx"), "ok": True, "problems": [], "notes": []}


def test_verify_json_reports_problems_with_exit_1(small_index: Index, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "idx"
    shutil.copytree(small_index.path, copy)
    with (copy / "X.data.npy").open("r+b") as handle:
        handle.seek(-1, 2)
        handle.write(b"\x01")
    assert main(["verify", str(copy), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and any("X.data.npy" in p for p in report["problems"])


def test_train_prints_the_artefacts_record(small_index: Index, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "idx"
    shutil.copytree(small_index.path, copy)
    record = run_json(["train", "triggers", str(copy), "--name", "t2", "--json"], capsys)
    assert record["name"] == "t2" and record["kind"] == "triggers" and "sha256" in record
