"""`sentret completion bash|zsh`: a script generated from the argparse parser, run by the real
shells: bash's `complete` registers it and its function answers what a Tab press would get."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sentret_core.cli.completion import completion_script
from sentret_core.cli.main import build_parser, main

BASH_CALL = """source {script}
complete -p sentret
ask() {{ COMP_WORDS=("$@"); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _sentret; echo "${{COMPREPLY[*]}}"; }}
"""


def answers(shell_lines: list[list[str]], script: Path) -> list[str]:
    calls = "\n".join("ask " + " ".join(f"'{w}'" for w in words) for words in shell_lines)
    done = subprocess.run(["bash", "--norc", "-c", BASH_CALL.format(script=script) + calls],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.fixture
def bash_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["completion", "bash"]) == 0
    path = tmp_path / "sentret.bash"
    path.write_text(capsys.readouterr().out)
    return path


def test_bash_completes_commands_options_and_choices(bash_script: Path) -> None:
    lines = answers([
        ["sentret", "se"],                                   # a command: "search" is the only one starting "se"
        ["sentret", "search", "idx", "--j"],                 # an option of the command typed
        ["sentret", "support", "idx", "q", "--entity-score", ""],  # an option's choices, as argparse has them
        ["sentret", "learn", "w"],                           # a subcommand
        ["sentret", "learn", "wikiqa", "--lea"],             # its option
        ["sentret", "completion", ""],                       # a positional's choices
        ["sentret", "index", "--out", ""],                   # a value to type: nothing, so the shell lists files
        ["sentret", "-"],                                    # the top level's options
    ], bash_script)
    assert lines[0] == "complete -o default -F _sentret sentret"
    assert lines[1:8] == ["search", "--json", "kld frequency rarity combination", "wikiqa", "--learner", "bash zsh",
                          ""]
    assert set(lines[8].split()) == {"-h", "--help", "--version", "--debug", "-v", "--verbose", "-q", "--quiet"}


def test_every_command_and_option_of_the_parser_is_in_the_script() -> None:
    parser = build_parser()
    script = completion_script(parser, "bash")
    sub = next(a for a in parser._actions if a.dest == "==SUPPRESS==" and hasattr(a, "choices") and a.choices)
    for name, command in sub.choices.items():
        assert f'"{name}") echo "' in script
        for option in (o for a in command._actions for o in a.option_strings):
            assert option in script, (name, option)


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (apt-get install zsh; .ci/run does)")
def test_zsh_runs_the_same_function_through_bashcompinit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "zsh"]) == 0
    script = tmp_path / "sentret.zsh"
    script.write_text(capsys.readouterr().out)
    # zsh's compgen emulation runs _sentret with bash's COMP_WORDS/COMP_CWORD, as a Tab press does
    program = f"""autoload -U compinit && compinit -u
source {script}
complete -p sentret
ask() {{ local -a COMP_WORDS; local COMP_CWORD; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
  print -r -- "${{(j: :)${{(f)$(compgen -F _sentret -- "${{@[-1]}}")}}}}"; }}
ask sentret completion ''
ask sentret support idx q --entity-score ''
"""
    done = subprocess.run(["zsh", "-f", "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()  # zsh's `complete -p` lists every registration, bash's own too
    assert "complete -o default -F _sentret sentret" in lines[:-2]
    assert lines[-2:] == ["bash zsh", "kld frequency rarity combination"]
