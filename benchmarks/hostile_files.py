"""Hostile files and paths on the command line: does any command lose data, crash, hang or answer wrong?

    .venv/bin/python benchmarks/hostile_files.py [--index data/indexes/demo] [--verbose]

Each case builds its files in a fresh folder, runs ``sentret_core.cli.main.main(argv)`` in-process and is
counted as one of:

* **lost** — a file that existed before the command changed (every byte of the folder is hashed before
  and after, links by their targets);
* **raw** — a traceback, or ``internal error`` for what is a user's mistake;
* **hang** — it took longer than its budget (a bound on work, not a timing: 20× what the linear code takes);
* **wrong** — it ended otherwise than the case expects (accepted what it must refuse, or refused what is
  valid);
* **clear** — refused with one ``sentret: error:`` line (exit 2), nothing changed; **ok** — a valid
  input, done.

The cases are those a review found (an output that replaces an input under a derived, linked or journal
name; a huge grade, a lone surrogate, a string where a size belongs, a 5,000-deep settings file; a reader
quadratic in a question's candidates; a tiny file naming positions that build millions of empty sentences;
an artefact or ranker replaced without ``--force``) and their neighbours. ``tests/cli/test_hostile_files.py``
runs the whole matrix and asserts 0 lost, 0 raw, 0 hang, 0 wrong.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
OUTCOMES = ("clear", "ok", "lost", "raw", "hang", "wrong")


class Case(NamedTuple):
    label: str
    setup: Callable[[Path, Path], list[str]]  # (folder, index) -> argv; files made inside folder
    expect: str  # "refuse" | "valid" | "report" (sentret verify: the problems found, exit 1)
    budget_s: float = 60.0


def _candidates(path: Path, questions: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), "utf-8")
    return path


def _question(qid: str, *candidates: tuple[str, int, str, int]) -> dict[str, object]:
    return {"id": qid, "question": "who painted guernica",
            "candidates": [{"doc": d, "position": p, "text": t, "label": label} for d, p, t, label in candidates]}


def _data(folder: Path, name: str = "my.jsonl") -> Path:
    return _candidates(folder / name, [_question("q1", ("d1", 0, "Guernica is a painting.", 0),
                                                 ("d1", 1, "Picasso painted it in 1937.", 1))])


def _run_over_derived(folder: Path, index: Path) -> list[str]:
    data = _data(folder, "my.tfisf.v1.jsonl")  # the run --run-out my.jsonl would write for tfisf.v1
    return ["eval", "candidates", "--data", str(data), "--models", "tfisf.v1", "--run-out", str(folder / "my.jsonl")]


def _run_over_hard_link(folder: Path, index: Path) -> list[str]:
    topics = folder / "topics.tsv"
    topics.write_text("t1\tpicasso\n", "utf-8")
    os.link(topics, folder / "run.trec")
    return ["run", str(index), "--topics", str(topics), "--out", str(folder / "run.trec"), "--force"]


def _export_over_journal(folder: Path, index: Path) -> list[str]:
    db = folder / "j.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + bytes(100))
    (folder / "j.sqlite-wal").write_bytes(b"the write-ahead log")
    return ["judgments", "export", str(db), "--session", "s", "--format", "csv", "--out", f"{db}-wal"]


def _import_into_its_file(folder: Path, index: Path) -> list[str]:
    qrels = folder / "grades.qrels"
    qrels.write_text("t1 0 d1-0 1\n", "utf-8")
    return ["judgments", "import", str(qrels), "--session", "s", "--format", "qrels", str(qrels)]


def _qrels_over_data_link(folder: Path, index: Path) -> list[str]:
    data = _data(folder)
    (folder / "q.txt").symlink_to(data)
    return ["eval", "candidates", "--data", str(data), "--models", "tfisf.v1", "--qrels-out", str(folder / "q.txt")]


def _run_over_a_users_file(folder: Path, index: Path) -> list[str]:
    topics = folder / "topics.tsv"
    topics.write_text("t1\tpicasso\n", "utf-8")
    (folder / "notes.md").write_text("# my notes\n", "utf-8")
    return ["run", str(index), "--topics", str(topics), "--out", str(folder / "notes.md"), "--force"]


def _artefact_again(folder: Path, index: Path) -> list[str]:
    copy = folder / "idx"
    (copy / "artefacts" / "classes").mkdir(parents=True)
    (copy / "artefacts" / "classes" / "artefact.json").write_text('{"kind": "classes"}', "utf-8")
    return ["train", "classes", str(copy)]


def _ranker_again(folder: Path, index: Path) -> list[str]:
    store = folder / "rankers"
    (store / "mine").mkdir(parents=True)
    (store / "mine" / "artefact.json").write_text('{"kind": "ranker"}', "utf-8")
    os.environ["SENTRET_RANKERS"] = str(store)
    return ["learn", "candidates", "--data", str(_data(folder)), "--folds", "2", "--out", "mine"]


def _huge_grade(folder: Path, index: Path) -> list[str]:
    (folder / "q.txt").write_text("t1 0 d1-0 " + "1" * 31 + "\n", "utf-8")
    (folder / "r.txt").write_text("t1 Q0 d1-0 1 1.0 x\n", "utf-8")
    return ["eval-run", "--qrels", str(folder / "q.txt"), "--run", str(folder / "r.txt")]


def _surrogate_candidates(folder: Path, index: Path) -> list[str]:
    line = ('{"id": "q1", "question": "who \\ud800 painted guernica", "candidates": [{"doc": "d1", "position": 0, '
            '"text": "Picasso \\udc00 painted Guernica.", "label": 1}, {"doc": "d1", "position": 1, "text": "x", '
            '"label": 0}]}\n')
    (folder / "s.jsonl").write_text(line, "utf-8")
    return ["eval", "candidates", "--data", str(folder / "s.jsonl"), "--models", "tfisf.v1",
            "--cache", str(folder / "cache")]


def _sizes_a_string(folder: Path, index: Path) -> list[str]:
    copy = folder / "idx"
    shutil.copytree(index, copy, ignore=shutil.ignore_patterns("artefacts"))
    manifest = json.loads((copy / "manifest.json").read_text("utf-8"))
    manifest["sizes"] = {name: "many" for name in manifest.get("sizes", {"x": 1})}
    (copy / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    return ["verify", str(copy)]


def _deep_settings(folder: Path, index: Path) -> list[str]:
    (folder / "sentret.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", "utf-8")
    os.chdir(folder)
    return ["models"]


def _many_candidates(folder: Path, index: Path) -> list[str]:
    many = [("d1", i, f"sentence number {i}", 0) for i in range(20_000)]
    bad: dict[str, object] = {"id": "q2", "question": "x",
                              "candidates": [{"doc": "d9", "position": 0, "text": "a", "label": 7}]}
    path = _candidates(folder / "many.jsonl", [_question("q1", *many), bad])  # read whole, refused at its end
    return ["eval", "candidates", "--data", str(path), "--models", "tfisf.v1", "--cache", str(folder / "cache")]


def _sparse_positions(folder: Path, index: Path) -> list[str]:
    questions = [_question(f"q{i}", (f"d{i}", 0, "a", 1), (f"d{i}", 100_000, "b", 0)) for i in range(20)]
    path = _candidates(folder / "sparse.jsonl", questions)
    return ["eval", "candidates", "--data", str(path), "--models", "tfisf.v1", "--cache", str(folder / "cache")]


CASES = (
    Case("eval --run-out: a derived run name is the --data file", _run_over_derived, "refuse"),
    Case("run --out: a hard link to the topics, --force", _run_over_hard_link, "refuse"),
    Case("judgments export --out: the database's -wal file", _export_over_journal, "refuse"),
    Case("judgments import: into the file it imports", _import_into_its_file, "refuse"),
    Case("eval --qrels-out: a symbolic link to --data", _qrels_over_data_link, "refuse"),
    Case("run --out: a user's notes, --force", _run_over_a_users_file, "refuse"),
    Case("train classes: an artefact of that name, no --force", _artefact_again, "refuse"),
    Case("learn --out: a stored ranker's name, no --force", _ranker_again, "refuse"),
    Case("eval-run: a 31-digit grade", _huge_grade, "refuse"),
    Case("eval candidates: lone surrogates in a line", _surrogate_candidates, "valid", 120.0),
    Case("verify: manifest sizes are strings", _sizes_a_string, "report"),
    Case("any command: a 5,000-deep sentret.toml", _deep_settings, "refuse"),
    Case("eval candidates: 20,000 candidates in a question", _many_candidates, "refuse", 20.0),
    Case("eval candidates: 4 KB naming positions 0 and 100,000", _sparse_positions, "refuse", 20.0),
)


def fingerprint(folder: Path) -> dict[str, str]:
    found = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        if key.startswith("cache"):  # the benchmark cache the valid cases build
            continue
        found[key] = ("-> " + os.readlink(path)) if path.is_symlink() else (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "folder")
    return found


def classify(case: Case, index: Path) -> tuple[str, str]:
    from sentret_core.cli.main import main

    with tempfile.TemporaryDirectory() as name:
        folder, cwd, environ = Path(name), os.getcwd(), dict(os.environ)
        err = io.StringIO()
        try:
            argv = case.setup(folder, index)
            before = fingerprint(folder)
            started = time.process_time()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                try:
                    code = main(argv)
                except Exception as exc:  # what we count
                    return "raw", f"{type(exc).__name__}: {exc}"
            seconds = time.process_time() - started
            changed = fingerprint(folder) != before
        finally:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(environ)
    said = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else ""
    if changed:
        return "lost", said
    if "Traceback" in err.getvalue() or "internal error" in err.getvalue():
        return "raw", said
    if seconds > case.budget_s:
        return "hang", f"{seconds:.1f} CPU-s: {said}"
    if case.expect == "valid":
        return ("ok" if code == 0 else "wrong"), said
    if case.expect == "report":
        return ("clear" if code == 1 and said else "wrong"), said
    one_line = err.getvalue().count("sentret: error:") == 1
    return ("clear" if code == 2 and one_line else "wrong"), said


def matrix(index: Path) -> list[tuple[str, str, str]]:
    """Every case: (label, outcome, the last line said)."""
    return [(case.label, *classify(case, index)) for case in CASES]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=str(ROOT / "data" / "indexes" / "demo"))
    parser.add_argument("--verbose", action="store_true", help="print every case and its outcome")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = matrix(Path(args.index))
    if args.verbose:
        for label, outcome, said in rows:
            print(f"{outcome:>6}  {label:<58} {said[:100]!r}")
    counts = Counter(outcome for _, outcome, _ in rows)
    print(", ".join(f"{counts[k]} {k}" for k in OUTCOMES) + f" of {len(rows)} cases in "
          f"{time.perf_counter() - started:.1f} s")
    return 0 if all(counts[k] == 0 for k in ("lost", "raw", "hang", "wrong")) else 1


if __name__ == "__main__":
    sys.exit(main())
