"""What every command module shares: the exit code for user errors, subcommand setup, --param pairs."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

EXIT_USAGE = 2  # a user error: one message on stderr
EXIT_BUG = 1  # an internal error (a bug): one message asking for a report


def command(
    sub: Any, name: str, help: str, run: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help)
    parser.set_defaults(run=run)
    return parser


def param_pairs(items: Sequence[str], *, qualified: bool) -> dict[str, Any]:
    """``name=value`` (or ``model.name=value`` when ``qualified``) pairs; values stay strings."""
    from sentret_core.errors import SentretError

    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SentretError(f"--param {item!r}: expected {'model.' if qualified else ''}name=value")
        if qualified:
            model, dot, name = key.rpartition(".")
            if not dot or not model:
                raise SentretError(f"--param {item!r}: expected model.name=value, e.g. bm25f.v1.k1=0.9")
            parsed.setdefault(model, {})[name] = value
        else:
            parsed[key] = value
    return parsed
