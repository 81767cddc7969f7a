"""The command line end to end on a small folder, and its exit codes for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sentret_core.cli.main import main
from sentret_core.index import artefacts
from tests.conftest import SMALL_DOCS


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    for doc in SMALL_DOCS:
        (root / f"{doc['id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n")
    return root


def test_index_info_verify_end_to_end(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "idx"
    assert main(["index", str(folder), "--out", str(out), "--n-process", "1"]) == 0
    summary = capsys.readouterr().out
    assert "indexed 3 documents, 12 sentences" in summary and "words/s" in summary
    assert main(["info", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["counts"]["documents"] == 3 and info["counts"]["sentences"] == 12
    assert info["labels"]["PERSON"]["entities"] >= 4
    assert main(["info", str(out)]) == 0
    assert "PERSON" in capsys.readouterr().out
    assert main(["verify", str(out)]) == 0
    (out / "sent_doc.npy").write_bytes(b"garbage")
    (out / "cache-classes-0123.npz").write_bytes(b"old")  # left by a sentret that trained on first use
    (out / "notes.txt").write_text("mine")
    assert main(["verify", str(out)]) == 1
    err = capsys.readouterr().err
    assert "sent_doc.npy: checksum mismatch" in err
    assert "cache-classes-0123.npz: a cache of an older sentret (safe to delete)" in err
    assert "notes.txt: not part of the index" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["index", "{tmp}/missing", "--out", "{tmp}/o"], "no such file or folder"),
        (["index", "{tmp}/empty", "--out", "{tmp}/o"], "no .txt or .md files"),
        (["index", "{tmp}/bin.txt", "--out", "{tmp}/o"], "binary file"),
        (["index", "{tmp}/bad.jsonl", "--out", "{tmp}/o"], "line 2: not valid JSON"),
        (["index", "{folder}", "--out", "{tmp}/busy"], "not empty and is not an index"),
        (["index", "{folder}", "--out", "{tmp}/o", "--n-process", "0"], "must be at least 1"),
        (["index", "{folder}", "--out", "{tmp}/o", "--model", "no_such_model"], "is not installed"),
        (["info", "{tmp}/empty"], "not a sentret index"),
        (["verify", "{tmp}/missing"], "no such index folder"),
    ],
)
def test_bad_input_exits_2_with_one_message(
    args: list[str], message: str, folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01\x02")
    (tmp_path / "bad.jsonl").write_text('{"text": "fine"}\n{oops\n')
    argv = [a.format(tmp=tmp_path, folder=folder) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_console_script_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sentret_core", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "index" in done.stdout


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"sentret {version('sentret')}"


def test_train_list_verify_and_remove_artefacts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import build_from_texts

    index = build_from_texts(tmp_path, SMALL_DOCS)
    path = str(index.path)
    assert main(["artefacts", path]) == 0
    assert "no artefacts" in capsys.readouterr().out
    assert main(["search", path, "spanish war", "--model", "lm-class.v1"]) == 2
    assert "sentret train classes" in capsys.readouterr().err  # scoring never trains
    assert main(["train", "classes", path, "--classes", "5", "--min-count", "1"]) == 0
    assert "word classes classes@" in capsys.readouterr().out
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("when did the war end\tThe Spanish Civil War was fought from 1936 to 1939.\n")
    assert main(["train", "triggers", path, "--name", "qa", "--qa-pairs", str(pairs), "--min-count", "1"]) == 0
    assert "trigger tables qa@" in capsys.readouterr().out
    assert main(["artefacts", path, "--json"]) == 0
    records = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert records["classes"]["kind"] == "classes" and records["classes"]["params"]["classes"] == 5
    assert records["qa"]["kind"] == "triggers" and records["qa"]["qa_pairs"].endswith("pairs.tsv")
    assert main(["search", path, "spanish war", "--model", "lm-class.v1"]) == 0
    capsys.readouterr()
    assert main(["verify", path]) == 0
    capsys.readouterr()
    assert main(["train", "classes", path, "--name", "Bad/Name"]) == 2
    assert "is not allowed" in capsys.readouterr().err
    before = records["qa"]["sha256"]
    assert main(["train", "classes", path, "--name", "qa", "--classes", "5", "--min-count", "1"]) == 2
    # not replaced without --force
    assert "artefacts/qa (triggers), which exists; nothing was written" in capsys.readouterr().err
    assert [r["sha256"] for r in artefacts.available(path) if r["name"] == "qa"] == [before]
    assert main(["train", "classes", path, "--classes", "6", "--min-count", "1", "--force"]) == 0
    assert "6 classes" in capsys.readouterr().out
    assert main(["artefacts", path, "--remove", "qa"]) == 0
    assert main(["artefacts", path, "--remove", "qa"]) == 2
    assert "no artefact named 'qa'" in capsys.readouterr().err
    assert main(["train"]) == 2  # no kind: one message, not a traceback
    assert "sentret train classes INDEX" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # argparse's own one-line usage error
        main(["train", path])
    assert usage.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_train_impacts_lists_the_frequent_terms_and_refuses_what_it_cannot_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sentret_core.index.reader import Index
    from sentret_core.models.arrays.impacts import impact_lists
    from tests.conftest import build_from_texts

    path = str(build_from_texts(tmp_path, SMALL_DOCS).path)
    assert main(["train", "impacts", path]) == 0  # nothing this small is frequent enough: no terms, lists sound
    assert "impact lists impacts@" in capsys.readouterr().out and impact_lists(Index.load(path)) is not None
    assert main(["train", "impacts", path, "--length", "2", "--share", "100000", "--json"]) == 2  # trained already
    assert "artefacts/impacts (impacts), which exists; nothing was written" in capsys.readouterr().err
    assert main(["train", "impacts", path, "--length", "2", "--share", "100000", "--json", "--force"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["kind"] == "impacts" and record["length"] == 2
    assert set(record["models"]) == {"bm25f.v1", "lm-2si.v1", "tfisf.v1"}
    found = impact_lists(Index.load(path))
    assert found is not None and len(found.terms) > 0
    assert main(["train", "impacts", path, "--models", "bm25.v1", "--force"]) == 2
    assert "bm25.v1 has no impact lists" in capsys.readouterr().err
    assert main(["train", "impacts", path, "--length", "0", "--force"]) == 2
    assert "length must be 1" in capsys.readouterr().err
    assert main(["verify", path]) == 0


def test_models_show_where_each_formula_lives(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    for name in ("lm-class.v1", "lm-trigger.v1", "bm25f.v1"):
        file, line = rows[name]["source"].rsplit(":", 1)
        assert Path(file).is_file() and int(line) > 0
    assert rows["lm-class.v1"]["source"].split(":")[0].endswith("models/lm_class/scorer.py")
    assert "artefact" in rows["lm-trigger.v1"]["params"]["tables"]["allowed"]


def test_a_large_build_says_how_to_make_its_impact_lists(capsys: pytest.CaptureFixture[str]) -> None:
    from types import SimpleNamespace

    from sentret_core.cli.index import LISTS_HELP_FROM, print_built

    counts = {"documents": 9, "words": 99, "terms": 9, "entities": 9, "seconds": 1.0, "words_per_second": 99.0,
              "notes": (), "path": "big"}
    for sentences, hinted in ((LISTS_HELP_FROM - 1, False), (LISTS_HELP_FROM, True)):
        print_built(SimpleNamespace(sentences=sentences, **counts))
        assert ("sentret train impacts big" in capsys.readouterr().err) == hinted
