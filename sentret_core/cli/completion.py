"""``sentret completion bash|zsh``: a shell completion script generated from the command's own argparse
parser, so it never lists a command or an option that does not exist.

The script completes commands and subcommands, the options of the command being typed, and the
values of options with a fixed set of choices; after any other option that takes a value, and for
positional arguments, the shell completes file names. zsh runs the same function through its
``bashcompinit`` layer, after loading ``compinit`` itself where no ~/.zshrc has (``zsh -f``).
(argparse offers no completion of its own; argcomplete would be a new dependency that runs Python
on every Tab press, where this script is plain shell.)
"""

from __future__ import annotations

import argparse
from typing import Any

from sentret_core.cli.common import command

SHELLS = ("bash", "zsh")


def register(sub: Any) -> None:
    p = command(sub, "completion", "Print a shell completion script: eval \"$(sentret completion bash)\" "
                "in ~/.bashrc (zsh: in ~/.zshrc).", _run_completion)
    p.add_argument("shell", choices=SHELLS, help="the shell the script is for")
    p.set_defaults(reads_models=False)  # the script is the parser's words: no model is registered for it


def _run_completion(args: argparse.Namespace) -> int:
    print(completion_script(args.root, args.shell), end="")
    return 0


def _quote(words: list[str]) -> str:
    """Words for a double-quoted shell string: no word of argparse's has a quote, `$` or a backslash."""
    text = " ".join(words)
    if any(c in text for c in "\"$`\\"):
        raise ValueError(f"a word unsafe in a completion script: {text!r}")
    return text


def _tree(parser: argparse.ArgumentParser, path: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_tree(sub, f"{path} {name}".strip()))
    return found


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for ``shell`` (bash, or zsh through bashcompinit)."""
    prog = parser.prog
    fn = f"_{prog.replace('-', '_')}"
    commands, words, options, values, choices = [], [], [], [], []
    for path, node in _tree(parser):
        subs = [n for a in node._actions if isinstance(a, argparse._SubParsersAction) for n in a.choices]
        fixed = [str(c) for a in node._actions if not a.option_strings and a.choices and a.nargs != argparse.PARSER
                 for c in a.choices]  # a positional with choices: `sentret completion bash|zsh`
        opts = [o for a in node._actions for o in a.option_strings]
        commands.append(f'    "{path}") echo "{_quote(subs)}" ;;')
        words.append(f'    "{path}") echo "{_quote(subs + fixed)}" ;;')
        options.append(f'    "{path}") echo "{_quote(opts)}" ;;')
        for action in node._actions:
            if not action.option_strings or action.nargs == 0:
                continue
            patterns = "|".join(f'"{path}|{o}"' for o in action.option_strings)
            if action.choices:
                choices.append(f'    {patterns}) echo "{_quote([str(c) for c in action.choices])}" ;;')
            values.append(patterns)
    takes_value = f"    {'|'.join(values)}) return 0 ;;" if values else ""
    script = f"""# {prog} {shell} completion, generated from the command's parser: eval "$({prog} completion {shell})"
{fn}_commands() {{
  case "$1" in
{chr(10).join(commands)}
  esac
}}
{fn}_words() {{
  case "$1" in
{chr(10).join(words)}
  esac
}}
{fn}_options() {{
  case "$1" in
{chr(10).join(options)}
  esac
}}
{fn}_choices() {{
  case "$1" in
{chr(10).join(choices)}
    *) return 1 ;;
  esac
}}
{fn}_takes_value() {{
  case "$1" in
{takes_value}
  esac
  return 1
}}
{fn}() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="" path="" word i
  [ "$COMP_CWORD" -gt 0 ] && prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${{COMP_WORDS[i]}}"
    case " $({fn}_commands "$path") " in
      *" $word "*) path="${{path:+$path }}$word" ;;
    esac
  done
  COMPREPLY=()
  local listed
  if listed="$({fn}_choices "$path|$prev")"; then
    COMPREPLY=($(compgen -W "$listed" -- "$cur"))
    return 0
  fi
  if {fn}_takes_value "$path|$prev"; then
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$({fn}_options "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$({fn}_words "$path")" -- "$cur"))
  fi
  return 0
}}
"""
    if shell == "zsh":
        # bashcompinit's `complete` calls compdef, which only compinit defines: a bare `zsh -f` has run neither
        script += "(( $+functions[compdef] )) || { autoload -Uz compinit && compinit -u }\n"
        script += "autoload -U +X bashcompinit && bashcompinit\n"
    return script + f"complete -o default -F {fn} {prog}\n"
