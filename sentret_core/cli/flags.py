"""A library error about the caller's arguments, printed with the flags that set them.

The library names an argument as a Python call writes it, with its value (``n_process=0``), and lists it in
:attr:`~sentret_core.errors.SentretError.arguments`; the command that ran knows which of its options stores
into that name (its ``dest``), so ``--n-process 0`` is printed in its place. Nothing here is a table to keep up
to date: the parser is the table.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from sentret_core.errors import SentretError


def command_parser(parser: argparse.ArgumentParser, run: Any) -> argparse.ArgumentParser:
    """The (sub)parser of the command whose ``run`` default is ``run`` (``parser`` itself when none is)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if sub.get_default("run") is run:
                    return command_parser(sub, run)
                found = command_parser(sub, run)
                if found is not sub:
                    return found
    return parser


def flags_of(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option's ``dest`` → its long flag (``n_process`` → ``--n-process``); positionals have none."""
    found: dict[str, str] = {}
    for action in parser._actions:
        long = [option for option in action.option_strings if option.startswith("--")]
        if long and action.dest not in found:
            found[action.dest] = max(long, key=len)
    return found


def with_flags(err: SentretError, parser: argparse.ArgumentParser, run: Any) -> str:
    """``err``'s message, each ``name=`` of an argument it lists written as the flag of the command ``run`` that sets
    it (``--name ``); an argument the command has no option for stays as it is."""
    message = str(err)
    if not err.arguments:
        return message
    flags = flags_of(command_parser(parser, run))
    for name in err.arguments:
        if name in flags:
            message = re.sub(rf"(?<![\w-]){re.escape(name)}= ?", f"{flags[name]} ", message)
    return message
