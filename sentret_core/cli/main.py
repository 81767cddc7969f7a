"""The ``sentret`` command: thin over the library; each command group lives in its own module and
imports the heavy parts of the library only inside its commands.

Nothing escapes :func:`main` as a traceback (issue 16). A user error — a
:class:`~sentret_core.errors.SentretError` (bad argument, file, query, index) or an ``OSError``
(a missing file, a folder that cannot be written, a full disk) — is one line
``sentret: error: …`` and exit code 2. Anything else is a bug: one line ``sentret: internal error: …``
asking for a report, and exit code 1; ``sentret --debug COMMAND`` (or ``SENTRET_DEBUG=1``) lets it
through with its traceback instead. Ctrl-C exits 130; a closed pipe (``sentret search … | head``)
exits 141 quietly. Unencodable characters in the output (a terminal that is not UTF-8) are
written as backslash escapes rather than failing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from sentret_core.cli import eval as eval_commands
from sentret_core.cli import index, judgments, learn, models, runs, search, shards, train
from sentret_core.cli.common import EXIT_BUG, EXIT_USAGE

EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return EXIT_USAGE
    from sentret_core.errors import SentretError

    debug = bool(args.debug) or os.environ.get("SENTRET_DEBUG", "") not in ("", "0")
    for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 terminal gets \u escapes, not a crash
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")
    try:
        return int(args.run(args) or 0)
    except SentretError as err:
        if debug:
            raise
        _say(f"sentret: error: {err}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _say("sentret: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as err:  # the user's files and folders: missing, not writable, a full disk
        if debug:
            raise
        where = f"{err.filename}: " if err.filename else ""
        _say(f"sentret: error: {where}{err.strerror or err}")
        return EXIT_USAGE
    except MemoryError:
        if debug:
            raise
        _say("sentret: error: out of memory; try a smaller input or a smaller --k")
        return EXIT_BUG
    except Exception as err:  # a bug: one line, never a traceback unless --debug
        if debug:
            raise
        detail = " ".join(str(err).split())[:500]
        _say(
            f"sentret: internal error: {type(err).__name__}: {detail} — this is a bug in sentret; please "
            "report it with the command you ran (`sentret --debug …` shows the traceback)"
        )
        return EXIT_BUG


def _version() -> str:
    """The installed distribution's version, read without importing the library."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sentret")
    except PackageNotFoundError:
        return "(not installed)"


def _say(message: str) -> None:
    """One line on stderr, whatever the terminal can encode."""
    with contextlib.suppress(Exception):
        print(message, file=sys.stderr, flush=True)


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush is quiet."""
    with contextlib.suppress(Exception):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sentret", description="Entity support sentences.")
    parser.add_argument("--version", action="version", version=f"sentret {_version()}")
    parser.add_argument(
        "--debug", action="store_true", help="let an unexpected error through with its traceback (or SENTRET_DEBUG=1)"
    )
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for register in COMMANDS:
        register(sub)
    return parser


COMMANDS: list[Callable[[Any], None]] = [
    index.register,
    shards.register,
    search.register,
    models.register,
    train.register,
    eval_commands.register,
    runs.register,
    judgments.register,
    learn.register,
]

if __name__ == "__main__":
    raise SystemExit(main())
