"""The ``sentret`` command: thin over the library; each command group lives in its own module and
imports the heavy parts of the library only inside its commands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from sentret_core.cli import eval as eval_commands
from sentret_core.cli import index, judgments, learn, models, search, train
from sentret_core.cli.common import EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return EXIT_USAGE
    from sentret_core.errors import SentretError

    try:
        return int(args.run(args) or 0)
    except SentretError as err:
        print(f"sentret: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("sentret: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sentret", description="Entity support sentences.")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for register in COMMANDS:
        register(sub)
    return parser


COMMANDS: list[Callable[[Any], None]] = [
    index.register,
    search.register,
    models.register,
    train.register,
    eval_commands.register,
    judgments.register,
    learn.register,
]

if __name__ == "__main__":
    raise SystemExit(main())
