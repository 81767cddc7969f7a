"""The CLI never shows a traceback: a user error is one line and exit 2, a bug one line
asking for a report and exit 1, ``--debug`` (or ``SENTRET_DEBUG=1``) lets a bug through with its
traceback; real processes with undecodable argv bytes and lone surrogates exit cleanly."""

from __future__ import annotations

import argparse
import errno
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.cli import search as cli_search
from sentret_core.cli.main import main

SENTRET = [sys.executable, "-m", "sentret_core"]


def _raise(exc: BaseException) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        raise exc

    return run


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_bug_is_one_line_and_exit_1(
    small_index: Index, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_search, "_run_search", _raise(RuntimeError("boom\nsecond line")))
    assert main(["search", str(small_index.path), "peace"]) == 1
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("sentret: internal error: RuntimeError: boom second line — this is a bug")
    assert "please report it" in line and "--debug" in line


def test_debug_lets_a_bug_through(
    small_index: Index, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_search, "_run_search", _raise(RuntimeError("boom")))
    with pytest.raises(RuntimeError, match="boom"):
        main(["--debug", "search", str(small_index.path), "peace"])
    monkeypatch.setenv("SENTRET_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        main(["search", str(small_index.path), "peace"])
    monkeypatch.setenv("SENTRET_DEBUG", "0")
    assert main(["search", str(small_index.path), "peace"]) == 1


@pytest.mark.parametrize(
    ("exc", "code", "message"),
    [
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "/x/y.trec"), 2,
         "sentret: error: /x/y.trec: No such file or directory"),
        (OSError(errno.ENOSPC, "No space left on device"), 2, "sentret: error: No space left on device"),
        (KeyboardInterrupt(), 130, "sentret: interrupted"),
        (MemoryError(), 1, "sentret: error: out of memory"),
    ],
)
def test_user_and_environment_errors(
    small_index: Index,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    exc: BaseException,
    code: int,
    message: str,
) -> None:
    monkeypatch.setattr(cli_search, "_run_search", _raise(exc))
    assert main(["search", str(small_index.path), "peace"]) == code
    assert _one_line(capsys.readouterr().err).startswith(message)


def test_a_broken_pipe_exits_quietly(
    small_index: Index, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_search, "_run_search", _raise(BrokenPipeError()))
    assert main(["search", str(small_index.path), "peace"]) == 141
    assert capsys.readouterr().err == ""


def test_argument_errors_from_the_library_are_user_errors(
    small_index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["support", str(small_index.path), "peace", "--per-entity", "0"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line == "sentret: error: per_entity must be an integer with 1 ≤ per_entity ≤ 100 (got 0)"
    assert main(["support", str(small_index.path), "peace", "--models", " , "]) == 2
    assert _one_line(capsys.readouterr().err) == "sentret: error: models is empty: choose at least one support model"


def test_eval_checks_numbers_before_loading_the_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "never-read.tsv"
    data.write_text("not a WikiQA file\n")
    cache = tmp_path / "cache"
    for option, value, message in [
        ("--k", "0", "--k must be an integer with 1 ≤ --k ≤ 1,000,000 (got 0)"),
        ("--window", "11", "--window must be an integer with 0 ≤ --window ≤ 10 (got 11)"),
        ("--seed", "-1", "--seed must be an integer ≥ 0 (got -1)"),
        ("--n-process", "0", "--n-process must be an integer ≥ 1 (got 0)"),
        ("--min-candidates", "0", "--min-candidates must be an integer ≥ 1 (got 0)"),
    ]:
        argv = ["eval", "wikiqa", "--data", str(data), "--cache", str(cache), option, value]
        assert main(argv) == 2
        assert _one_line(capsys.readouterr().err) == f"sentret: error: {message}"
    assert not cache.exists()  # refused before any index was built


# --- real processes ------------------------------------------------------------------------------


def _run(argv: list[str | bytes], **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*SENTRET, *argv], capture_output=True, timeout=120, check=False, env={**os.environ, **env})


def test_real_process_with_undecodable_argv_bytes(small_index: Index) -> None:
    """Bytes that are not UTF-8 arrive as lone surrogates (surrogateescape); spaCy cannot hash them."""
    done = _run(["search", str(small_index.path), b"Picasso \xff\xfe peace", "--json"])
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    result = json.loads(done.stdout)
    assert result["terms"] == ["picasso", "peace"] and result["query"] == "Picasso    peace"
    done = _run(["support", str(small_index.path), b"Picasso\xc3 peace", "--k", "10"])
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert b"query: Picasso  peace" in done.stdout


def test_real_process_in_an_ascii_locale_prints_escapes_not_a_traceback(small_index: Index) -> None:
    done = _run(["support", str(small_index.path), "Picasso peace", "--k", "10"], PYTHONIOENCODING="ascii")
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert b"|\\u015c_q|" in done.stdout  # "Ŝ_q" written as an escape


def test_real_process_user_error_and_bug(small_index: Index, tmp_path: Path) -> None:
    done = _run(["support", str(small_index.path), "peace", "--top-entities", "5000"])
    assert done.returncode == 2 and done.stdout == b""
    assert _one_line(done.stderr.decode()).startswith("sentret: error: top_entities must be an integer")
    # a bug, through a real interpreter: a command that fails in a way nobody planned for
    script = (
        "import sys, sentret_core.cli.search as s\n"
        "s._run_search = lambda args: [][1]\n"
        "from sentret_core.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    argv = ["search", str(small_index.path), "peace"]
    bug = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, timeout=120, check=False)
    assert bug.returncode == 1
    assert _one_line(bug.stderr.decode()).startswith("sentret: internal error: IndexError: list index out of range")
    debug = subprocess.run([sys.executable, "-c", script, "--debug", *argv], capture_output=True, timeout=120,
                           check=False)
    assert debug.returncode == 1 and b"Traceback" in debug.stderr and b"IndexError" in debug.stderr
