"""The command-line conventions users expect: -v/-q on every command, --json on every command
that reports something, and `sentret app`'s settings and checks."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import tomllib

from sentret_core import Index
from sentret_core.cli.app import DEFAULT_HOST, streamlit_command
from sentret_core.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def leaves(parser: argparse.ArgumentParser, path: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [(path, parser)]
    return [leaf for s in subs for name, p in s.choices.items() for leaf in leaves(p, f"{path} {name}".strip())]


def test_every_command_takes_v_and_q() -> None:
    for name, command in leaves(build_parser()):
        options = {o for a in command._actions for o in a.option_strings}
        assert {"-v", "--verbose", "-q", "--quiet"} <= options, name


# Commands without --json: `app` serves the app, `completion` prints a script, `judgments export` prints
# the data itself.
WITHOUT_JSON = {"app", "completion", "judgments export"}


def test_every_command_that_reports_has_json() -> None:
    lacking = {name for name, command in leaves(build_parser())
               if "--json" not in {o for a in command._actions for o in a.option_strings}}
    assert lacking == WITHOUT_JSON


def test_the_log_level_of_a_run(small_index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tPicasso war\nt2\tzzzz qqqq\n", encoding="utf-8")  # t2 matches no sentence
    base = ["run", str(small_index.path), "--topics", str(topics), "--model", "tfisf.v1", "--out"]

    def err_of(*flags: str, before: tuple[str, ...] = ()) -> tuple[str, str]:
        assert main([*before, *base, str(tmp_path / "run.trec"), "--force", *flags]) == 0
        out = capsys.readouterr()
        return out.out, out.err

    out, err = err_of()  # by default: the result on stdout, the note on stderr, as before
    assert out.startswith("wrote ") and err == "sentret: note: no sentence matched 1 topic(s): t2\n"
    quiet_out, quiet_err = err_of("-q")
    assert quiet_out == out and quiet_err == ""
    for verbose in (err_of("-v"), err_of(before=("-v",)), err_of("--verbose")):  # before or after the command
        lines = verbose[1].splitlines()
        assert lines[0] == "sentret: note: no sentence matched 1 topic(s): t2"
        assert lines[-1].startswith("sentret: debug: done in ") and lines[-1].endswith(" s (exit 0)")
    assert err_of("-v", "-q")[1] == err  # they cancel out
    code = main(["-qq", "search", str(tmp_path / "missing"), "q"])  # errors are said whatever the level
    assert code == 2 and capsys.readouterr().err.startswith("sentret: error: ")


def test_json_of_search_models_and_run(small_index: Index, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0
    assert "bm25f.v1" in {row["name"] for row in json.loads(capsys.readouterr().out)}
    assert main(["search", str(small_index.path), "Picasso", "--k", "2", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["hits"]) == 2
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tPicasso\n", encoding="utf-8")
    assert main(["run", str(small_index.path), "--topics", str(topics), "--k", "3",
                 "--out", str(tmp_path / "r.trec"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["lines"] == 3 and summary["topics_without_results"] == []


def test_app_passes_the_repository_settings_as_flags() -> None:
    """`sentret app` has no .streamlit/ folder to read: its flags say what .streamlit/config.toml says."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    command = streamlit_command(Path("main.py"), 8600, DEFAULT_HOST)
    flags = dict(zip(command[5::2], command[6::2]))
    for section, values in config.items():
        for key, value in values.items():
            expected = str(value).lower() if isinstance(value, bool) else str(value)  # TOML's false is "false"
            assert flags[f"--{section}.{key}"] == expected, (section, key)
    assert config["client"]["toolbarMode"] == "viewer"  # no developer Deploy button
    assert config["server"]["fileWatcherType"] == "none"  # make run as sentret app: no watcher flooding the log
    assert flags["--server.address"] == "127.0.0.1" and flags["--server.port"] == "8600"


def test_app_refuses_a_bad_index_or_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app", "--index", str(tmp_path)]) == 2
    assert f"--index {tmp_path}: not a sentret index" in capsys.readouterr().err
    assert main(["app", "--port", "70000"]) == 2
    assert "--port must be" in capsys.readouterr().err


def test_make_run_binds_this_machine_unless_asked() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "HOST ?= 127.0.0.1" in makefile and "--server.address $(HOST)" in makefile
