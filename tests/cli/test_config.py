"""A config file: `sentret.toml` in the working directory, else `[tool.sentret]` in its
pyproject.toml, gives the defaults a user would otherwise repeat; a flag on the command line wins, and a
malformed file gives one message naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.cli.main import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def hits(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[int]:
    code, out, err = run(argv, capsys)
    assert code == 0, err
    return [hit["sentence"] for hit in json.loads(out)["hits"]]


def test_the_file_gives_index_and_k_and_flags_win(small_index: Index, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    full = hits(["search", str(small_index.path), "Picasso war", "--json"], capsys)  # no file: k = 10
    assert len(full) > 2
    (tmp_path / "sentret.toml").write_text(f'index = "{small_index.path}"\n[search]\nk = 2\n')
    assert hits(["search", "Picasso war", "--json"], capsys) == full[:2]  # INDEX and --k from the file
    assert hits(["search", "Picasso war", "--k", "1", "--json"], capsys) == full[:1]  # the flag wins
    other = tmp_path / "no-index-here"
    code, _, err = run(["search", str(other), "Picasso war", "--json"], capsys)  # an INDEX given wins too
    assert code == 2 and str(other) in err


def test_a_repeatable_flag_replaces_the_files_list_and_leaves_it_unchanged(tmp_path: Path) -> None:
    """`--param` given on the command line is the whole list, as any flag wins over the file; without it the
    file's list holds, and a parse never grows the file's list for the next one."""
    from sentret_core.cli.config import Config, apply_config
    from sentret_core.cli.main import build_parser

    parser = build_parser()
    listed = ["bm25f.v1.k1=0.9", "bm25f.v1.b=0.5"]
    apply_config(parser, Config(tmp_path / "sentret.toml", "sentret.toml", {"eval": {"param": list(listed)}}))
    wikiqa = ["eval", "wikiqa", "--data", "x.tsv"]
    assert parser.parse_args(wikiqa).param == listed
    assert parser.parse_args([*wikiqa, "--param", "lm-dir.v1.mu=100"]).param == ["lm-dir.v1.mu=100"]
    assert parser.parse_args([*wikiqa, "--param", "a.b=1", "--param", "c.d=2"]).param == ["a.b=1", "c.d=2"]
    assert parser.parse_args(wikiqa).param == listed  # the file's list is as it was


def test_pyproject_tool_table_and_support_models_as_a_list(small_index: Index, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "mine"\n\n[tool.sentret]\n'
        f'index = "{small_index.path}"\n[tool.sentret.support]\nmodels = ["tfisf.v1", "bm25f.v1"]\nk = 5\n'
    )
    code, out, err = run(["support", "Picasso war", "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["models"] == ["tfisf.v1", "bm25f.v1"] and result["k"] == 5
    (tmp_path / "sentret.toml").write_text("[support]\nk = 3\n")  # sentret.toml is read first, alone
    code, out, err = run(["support", str(small_index.path), "Picasso war", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["k"] == 3 and len(json.loads(out)["models"]) == 3  # the built-in three models


@pytest.mark.parametrize(("text", "message"), [
    ("[search\nk = 2\n", "sentret.toml: not valid TOML: "),
    ("[search]\nkk = 2\n", "sentret.toml: [search] kk: `sentret search` has no option --kk (its options: "),
    ("[search]\nk = \"ten\"\n", "sentret.toml: [search] k: expected an integer, got 'ten'"),
    ("[support]\nentity-score = \"loud\"\n", "sentret.toml: [support] entity-score: 'loud' is not one of kld, "),
    ("[search]\njson = 1\n", "sentret.toml: [search] json: expected true or false, got 1"),
    ("[serch]\nk = 2\n", "sentret.toml: serch: not a setting: the top level takes 'index' and a table per command"),
    ("index = 3\n", "sentret.toml: index: expected the path of an index folder as text, got 3"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "sentret.toml: nested too deeply to be a settings file"),
])
def test_a_malformed_file_is_one_message_naming_file_and_key(text: str, message: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sentret.toml").write_text(text)
    code, out, err = run(["models"], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"sentret: error: {message}") and err.count("\n") == 1, err
    with pytest.raises(SystemExit) as version:  # --version and --help still answer
        main(["--version"])
    assert version.value.code == 0 and capsys.readouterr().out.startswith("sentret ")


def test_a_required_index_option_is_satisfied_by_the_file(small_index: Index, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from sentret_core.cli.config import apply_config, find_config
    from sentret_core.cli.main import build_parser

    monkeypatch.chdir(tmp_path)
    (tmp_path / "sentret.toml").write_text(f'index = "{small_index.path}"\n')
    parser = build_parser()
    config = find_config()
    assert config is not None
    applied = apply_config(parser, config)
    assert {"[app] index", "[learn judgments] index", "[run] index", "[info] index"} <= set(applied)
    args = parser.parse_args(["learn", "judgments", "db.sqlite", "--session", "s", "--out", "r"])
    assert args.index == str(small_index.path)


def test_the_nearest_file_above_the_working_directory_is_read(small_index: Index, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """As ruff: the nearest folder up with sentret.toml (or pyproject.toml with [tool.sentret]) wins; a
    pyproject.toml without the table is passed by; its relative index is read from the file's folder."""
    project = tmp_path / "project"
    deep = project / "notebooks" / "week1"
    deep.mkdir(parents=True)
    (tmp_path / "sentret.toml").write_text("[search]\nk = 1\n")  # farther up: not read
    (project / "indexes").symlink_to(small_index.path.parent)
    (project / "sentret.toml").write_text(f'index = "indexes/{small_index.path.name}"\n[search]\nk = 2\n')
    (project / "notebooks" / "pyproject.toml").write_text('[project]\nname = "nb"\n')  # no [tool.sentret]
    monkeypatch.chdir(deep)
    full = hits(["search", str(small_index.path), "Picasso war", "--k", "10", "--json"], capsys)
    assert hits(["search", "Picasso war", "--json"], capsys) == full[:2]  # project/sentret.toml, its index
    (deep / "pyproject.toml").write_text("[tool.sentret.search]\nk = 3\n")  # nearer still: it wins, alone
    with pytest.raises(SystemExit) as stopped:  # this file names no index, and argparse asks for it
        main(["search", "Picasso war", "--json"])
    assert stopped.value.code == 2 and "index" in capsys.readouterr().err
