"""The one output rule (sentret_core/cli/outputs.py), as a property: for every command that writes, every
path alias of one of its inputs given as an output — the same name, ``./name``, ``x/../name``, a symbolic
link, a hard link, a journal file of the database, a name that a derived run name turns into the input,
a folder inside the input or one that holds it — and a user's own file that is no input at all, with and
without ``--force``: the command ends in one ``sentret: error:`` line (exit 2) and not one byte of any
file changes.

The rule runs before a command reads anything, so the inputs need not be valid of their kind (an index
folder here holds one file): a command that got past the rule would fail on them, and the message is
checked to be the rule's own.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sentret_core.cli.main import main
from sentret_core.index import artefacts
from tests.conftest import examples

ALIASES = ("same", "relative", "dotdot", "symlink", "hardlink", "journal", "derived", "inside", "parent", "foreign")
RULE_SAID = ("which this command reads", "nothing was changed", "which exists", "exists and is not",
             "exists, is not empty", "is not a folder", "nothing was written", "where the documents are",
             "which it belongs in")


@dataclass(frozen=True)
class Case:
    """A command: its inputs (made in ``in/``) and its argv with the output in the slot ``OUT``."""

    name: str
    inputs: dict[str, str]  # name in in/ -> "file" | "folder" | "db"
    argv: tuple[str, ...]  # "IN:<name>" is an input's path, "OUT" the output under test
    output_kind: str = "file"  # what the output is: a file or a folder (an index, shards)


CASES = (
    Case("run", {"idx": "folder", "topics.tsv": "file"},
         ("run", "IN:idx", "--topics", "IN:topics.tsv", "--model", "tfisf.v1", "--out", "OUT")),
    Case("eval --run-out", {"my.jsonl": "file"},
         ("eval", "candidates", "--data", "IN:my.jsonl", "--models", "tfisf.v1", "--run-out", "OUT")),
    Case("eval --qrels-out", {"my.jsonl": "file"},
         ("eval", "candidates", "--data", "IN:my.jsonl", "--models", "tfisf.v1", "--qrels-out", "OUT")),
    Case("judgments export", {"j.sqlite": "db"},
         ("judgments", "export", "IN:j.sqlite", "--session", "s", "--format", "csv", "--out", "OUT")),
    Case("judgments import", {"grades.qrels": "file"},
         ("judgments", "import", "OUT", "--session", "s", "--format", "qrels", "IN:grades.qrels")),
    Case("judgments suggest", {"grades.qrels": "file"},
         ("judgments", "suggest", "OUT", "--session", "s", "--file", "IN:grades.qrels", "--format", "qrels")),
    Case("judgments create", {"idx": "folder", "topics.tsv": "file"},
         ("judgments", "create", "OUT", "--session", "s", "--index", "IN:idx", "--topics", "IN:topics.tsv")),
    Case("index", {"docs.jsonl": "file"}, ("index", "IN:docs.jsonl", "--out", "OUT"), "folder"),
    Case("index a folder", {"docs": "folder"}, ("index", "IN:docs", "--out", "OUT"), "folder"),
    Case("parse", {"docs.jsonl": "file"}, ("parse", "IN:docs.jsonl", "--out", "OUT"), "folder"),
    Case("build", {"shards": "folder"}, ("build", "IN:shards", "--out", "OUT"), "folder"),
    Case("add", {"docs.jsonl": "file"}, ("add", "OUT", "IN:docs.jsonl"), "folder"),
)


def fingerprint(root: Path) -> dict[str, str]:
    """Every file's bytes (by hash) and every link's target below ``root``."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[key] = "-> " + os.readlink(path)
        elif path.is_file():
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def make_inputs(root: Path, case: Case) -> dict[str, Path]:
    made = {}
    for name, kind in case.inputs.items():
        path = root / "in" / name
        if kind == "folder":
            path.mkdir(parents=True)
            (path / "kept.txt").write_text(f"what {name} holds\n", "utf-8")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) if kind == "db" else
                             f'{{"id": "q1", "text": "the bytes of {name}"}}\n'.encode())
        made[name] = path
    return made


def alias_of(alias: str, target: Path, root: Path, case: Case) -> str | None:
    """The output path ``alias`` makes of the input ``target``; None where it does not apply."""
    kind = case.inputs[target.name]
    if alias == "same":
        return str(target)
    if alias == "relative":
        return os.path.join(".", os.path.relpath(target, root))
    if alias == "dotdot":
        return str(target.parent / "elsewhere" / ".." / target.name)
    if alias == "symlink":
        (root / "link").symlink_to(target)
        return str(root / "link")
    if alias == "hardlink" and kind != "folder":
        os.link(target, root / "hard")
        return str(root / "hard")
    if alias == "journal" and kind == "db":
        return f"{target}-wal"
    if alias == "derived" and case.name == "eval --run-out":  # my.jsonl's run for tfisf.v1 is my.tfisf.v1.jsonl
        derived = target.with_name(f"{target.stem}.tfisf.v1{target.suffix}")
        target.rename(derived)
        return str(target)
    if alias == "inside" and kind == "folder":
        return str(target / "out.x")
    if alias == "parent":
        return str(target.parent)
    if alias == "foreign":  # a user's own file (or folder of files) that the command does not read
        notes = root / ("notes" if case.output_kind == "folder" else "notes.txt")
        if notes.suffix:
            notes.write_text("my notes, not sentret's\n", "utf-8")
        else:
            notes.mkdir()
            (notes / "mine.txt").write_text("mine\n", "utf-8")
        return str(notes)
    return None


def run_quietly(argv: list[str], cwd: Path) -> tuple[int, str]:
    err, before = io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
    finally:
        os.chdir(before)
    return code, err.getvalue()


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), alias=st.sampled_from(ALIASES), force=st.booleans(), data=st.data())
def test_no_output_ever_replaces_an_input_or_a_users_file(case: Case, alias: str, force: bool,
                                                         data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        inputs = make_inputs(root, case)
        target = inputs[data.draw(st.sampled_from(sorted(inputs)), label="input")]
        out = alias_of(alias, target, root, case)
        assume(out is not None)
        assert out is not None
        argv = [out if part == "OUT" else str(inputs[part[3:]]) if part.startswith("IN:") else part
                for part in case.argv]
        if force and case.name not in ("judgments import", "judgments create", "judgments suggest", "add"):
            argv.append("--force")
        if alias == "derived":
            argv[argv.index(str(target))] = str(target.with_name(f"{target.stem}.tfisf.v1{target.suffix}"))
        before = fingerprint(root)
        code, err = run_quietly(argv, root)
        assert fingerprint(root) == before, f"{argv}: changed files"
        assert code == 2 and err.count("\n") == 1 and err.startswith("sentret: error: "), (argv, err)
        if case.name != "eval --run-out" or alias == "derived":  # --run-out my.jsonl itself writes my.<model>.jsonl
            assert any(said in err for said in RULE_SAID), (argv, err)


def test_every_writing_command_is_in_the_property() -> None:
    """A command that declares its files (cli/outputs.declare) is one the property above drives, or the
    artefact commands below: a new writing command must be added to one of them."""
    from sentret_core.cli.main import build_parser

    declared = set()

    def walk(parser: object, words: tuple[str, ...]) -> None:
        import argparse

        assert isinstance(parser, argparse.ArgumentParser)
        if parser.get_default("files") is not None and parser.get_default("run") is not None:
            declared.add(" ".join(words))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*words, name))

    walk(build_parser(), ())
    driven = {case.argv[0] if case.argv[0] not in ("judgments",) else " ".join(case.argv[:2]) for case in CASES}
    from sentret_core.evaluation.benchmarks import list_benchmarks

    by_name = {"train classes", "train triggers", "train minilm", "train impacts", "learn judgments",
               *(f"learn {spec.name}" for spec in list_benchmarks() if spec.learnable)}
    assert declared - driven - by_name == set()


# --- artefacts and rankers: named, not typed as paths; what they write must not hold what they read ------


def artefact_argv(kind: str, index: Path, qa: Path) -> list[str]:
    extra = ["--qa-pairs", str(qa)] if kind == "triggers" else []
    return ["train", kind, str(index), *extra] if kind != "impacts" else ["train", "impacts", str(index)]


@pytest.mark.parametrize("force", [False, True])
def test_an_artefact_never_replaces_the_file_it_is_trained_from(tmp_path: Path, force: bool) -> None:
    index = tmp_path / "idx"
    qa = artefacts.folder_of(index, "triggers") / "qa.tsv"  # the QA pairs kept inside the artefact's folder
    qa.parent.mkdir(parents=True)
    qa.write_text("who?\tsomeone\n", "utf-8")
    before = fingerprint(tmp_path)
    code, err = run_quietly([*artefact_argv("triggers", index, qa), *(["--force"] if force else [])], tmp_path)
    assert code == 2 and fingerprint(tmp_path) == before
    assert "holds" in err and "which this command reads" in err


@pytest.mark.parametrize("kind", ["classes", "triggers", "minilm", "impacts"])
def test_an_artefact_of_that_name_is_replaced_only_with_force(tmp_path: Path, kind: str) -> None:
    index = tmp_path / "idx"
    name = "impacts" if kind == "impacts" else kind
    trained = artefacts.folder_of(index, name)
    trained.mkdir(parents=True)
    (trained / "artefact.json").write_text('{"kind": "x"}', "utf-8")
    before = fingerprint(tmp_path)
    code, err = run_quietly(artefact_argv(kind, index, tmp_path / "qa.tsv"), tmp_path)
    assert code == 2 and fingerprint(tmp_path) == before
    assert "which exists; nothing was written. Add --force" in err


def ranker_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Callable[..., list[str]]]:
    store = tmp_path / "rankers"
    monkeypatch.setenv(artefacts.STORE_ENV, str(store))
    return store, lambda data, *more: ["learn", "candidates", "--data", str(data), "--folds", "2", "--out", "mine",
                                       *more]


@pytest.mark.parametrize("force", [False, True])
def test_a_ranker_never_replaces_its_training_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   force: bool) -> None:
    store, argv = ranker_case(tmp_path, monkeypatch)
    data = store / "mine" / "train.jsonl"  # kept where the ranker named "mine" would be stored
    data.parent.mkdir(parents=True)
    data.write_text("{}\n", "utf-8")
    before = fingerprint(tmp_path)
    code, err = run_quietly(argv(data, *(["--force"] if force else [])), tmp_path)
    assert code == 2 and fingerprint(tmp_path) == before and "which this command reads" in err


def test_a_stored_ranker_is_replaced_only_with_force_and_a_users_folder_never(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, argv = ranker_case(tmp_path, monkeypatch)
    data = tmp_path / "train.jsonl"
    data.write_text("{}\n", "utf-8")
    (store / "mine").mkdir(parents=True)
    (store / "mine" / "artefact.json").write_text('{"kind": "ranker"}', "utf-8")
    before = fingerprint(tmp_path)
    code, err = run_quietly(argv(data), tmp_path)
    assert code == 2 and "Add --force" in err and fingerprint(tmp_path) == before
    (store / "mine" / "artefact.json").write_text('{"kind": "classes"}', "utf-8")  # not a ranker: never replaced
    before = fingerprint(tmp_path)
    code, err = run_quietly(argv(data, "--force"), tmp_path)
    assert code == 2 and "is not a learned ranker" in err and fingerprint(tmp_path) == before
