"""`sentret completion bash|zsh`: a script generated from the argparse parser, run by the real
shells: bash's `complete` registers it and its function answers what a Tab press would get."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
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


ZSH = pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (apt-get install zsh; .ci/run does)")


def _zsh_env(home: Path) -> dict[str, str]:
    """A user with no zsh files at all: compinit's dump goes to ``home``, never to the real one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZDOTDIR", "FPATH"))}
    return dict(env, HOME=str(home), ZDOTDIR=str(home), TERM="vt100")


@ZSH
def test_the_zsh_script_works_in_a_bare_zsh_without_compinit(tmp_path: Path) -> None:
    # the command a user puts in ~/.zshrc, run by the installed `sentret`, in `zsh -f`: no rc file, no compinit
    sentret = Path(sys.executable).with_name("sentret")
    program = f"""whence -w compdef || print 'no compdef'
eval "$({sentret} completion zsh)" || exit 3
whence -w _sentret compdef
print -r -- "$_comps[sentret]"
eval "$({sentret} completion zsh)" || exit 4
"""
    done = subprocess.run(["zsh", "-f", "-c", program], cwd=tmp_path, env=_zsh_env(tmp_path), capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")  # a second eval is as quiet as the first
    assert done.stdout.splitlines() == ["compdef: none", "no compdef", "_sentret: function", "compdef: function",
                                        "_bash_complete -o default -F _sentret"]


def _prompted(screen: bytes) -> bool:
    """Whether the terminal ends in zsh's prompt (``host% ``, root's ``host# ``), its escape sequences aside."""
    return re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|\x00", b"", screen).rstrip().endswith((b"#", b"%"))  # NUL: padding


def tab_presses(script: Path, typed: list[str], home: Path, timeout: float = 90) -> list[str]:
    """The command line after typing each of ``typed`` and pressing Tab, in an interactive ``zsh -f`` on a
    pseudo-terminal: zle runs the completion as for a person, then a widget bound to Ctrl-T writes the line
    down and clears it. Every wait is on the shell's own state: its prompt, a file zle-line-init writes."""
    buffers, editing, setup = home / "buffers", home / "editing", home / "setup.zsh"
    setup.write_text(f"""eval "$(<{script})"
_show() {{ print -r -- "[$BUFFER]" >> {buffers}; BUFFER= }}
zle -N _show
bindkey '^T' _show
zle-line-init() {{ : > {editing} }}
zle -N zle-line-init
""")
    main, child = pty.openpty()
    shell = subprocess.Popen(["zsh", "-f", "-i"], stdin=child, stdout=child, stderr=child, cwd=home,
                             env=_zsh_env(home), start_new_session=True)
    os.close(child)
    screen = bytearray()
    deadline = time.monotonic() + timeout

    def read_until(done: Callable[[], bool]) -> None:
        while not done():
            assert time.monotonic() < deadline, f"zsh did not get there; its terminal: {bytes(screen)!r}"
            if select.select([main], [], [], 0.1)[0]:
                try:
                    screen.extend(os.read(main, 65536))
                except OSError:  # the shell has gone
                    assert shell.poll() is None, screen.decode(errors="replace")

    try:
        read_until(lambda: _prompted(bytes(screen)))  # zle is reading: keys typed now reach it
        os.write(main, f"source {setup}\r".encode())
        read_until(editing.exists)
        os.write(main, "".join(f"{line}\t\x14" for line in typed).encode())
        read_until(lambda: buffers.exists() and len(buffers.read_text().splitlines()) == len(typed))
        os.write(main, b"exit\r")
        shell.wait(timeout=30)
    finally:
        if shell.poll() is None:
            shell.kill()
            shell.wait()
        os.close(main)
    return [line[1:-1] for line in buffers.read_text().splitlines()]


@ZSH
def test_a_tab_press_in_an_interactive_bare_zsh_completes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "zsh"]) == 0
    script = tmp_path / "sentret.zsh"
    script.write_text(capsys.readouterr().out)
    home = tmp_path / "home"
    home.mkdir()
    (home / "corpus_only_one_here").mkdir()
    lines = tab_presses(script, [
        "sentret compl",                               # a command
        "sentret completion z",                        # a positional's choices
        "sentret support idx q --entity-score fr",     # an option's choices
        "sentret learn wikiqa --lea",                  # a subcommand's option
        "sentret index --out corpus_on",               # a value to type: the shell's file names (-o default)
    ], home)
    assert [line.rstrip() for line in lines] == [
        "sentret completion", "sentret completion zsh", "sentret support idx q --entity-score frequency",
        "sentret learn wikiqa --learner", "sentret index --out corpus_only_one_here/"]
