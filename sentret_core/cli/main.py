"""The ``sentret`` command: thin over the library; each command group lives in its own module and
imports the heavy parts of the library only inside its commands.

Nothing escapes :func:`main` as a traceback. A user error — a
:class:`~sentret_core.errors.SentretError` (bad argument, file, query, index) or an ``OSError``
(a missing file, a folder that cannot be written, a full disk) — is one line
``sentret: error: …`` and exit code 2. Anything else is a bug: one line ``sentret: internal error: …``
asking for a report, and exit code 1; ``sentret --debug COMMAND`` (or ``SENTRET_DEBUG=1``) lets it
through with its traceback instead. Ctrl-C exits 130; a closed pipe (``sentret search … | head``)
exits 141 quietly. Unencodable characters in the output (a terminal that is not UTF-8) are
written as backslash escapes rather than failing.

``-v`` (more: ``-vv``) and ``-q`` (less: ``-qq``), before or after the command, set how much is said
on stderr besides the result (:func:`~sentret_core.cli.common.logging_to_stderr`); defaults come from
``sentret.toml`` or ``[tool.sentret]`` (:mod:`sentret_core.cli.config`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from sentret_core.cli import app, completion, index, judgments, learn, models, reproduce, runs, search, shards, train
from sentret_core.cli import eval as eval_commands
from sentret_core.cli.common import EXIT_BUG, EXIT_USAGE, logging_to_stderr, verbosity_options
from sentret_core.cli.config import apply_config, find_config

EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away


def main(argv: Sequence[str] | None = None) -> int:
    from sentret_core.errors import SentretError

    parser = build_parser()
    config, config_error = None, None
    try:  # the config file's defaults, before parsing: a flag given on the command line wins
        config = find_config()
        applied = apply_config(parser, config) if config is not None else []
    except SentretError as err:  # reported below, once we know a command was asked for (not for --help)
        config_error, parser = err, build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return EXIT_USAGE
    if config_error is not None:
        _say(f"sentret: error: {config_error}")
        return EXIT_USAGE
    for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 terminal gets \u escapes, not a crash
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")
    if getattr(args, "reads_models", True):
        import sentret_core.learning.scorer  # noqa: F401  registers ltr.v1 (after parsing: --help and --version never wait)

    with logging_to_stderr(getattr(args, "verbose", 0) - getattr(args, "quiet", 0)) as log:
        if config is not None:
            log.debug("read %s: %s", config.path, ", ".join(applied) or "nothing that applies")
        return _run(args, log, parser)


def _run(args: argparse.Namespace, log: logging.Logger, parser: argparse.ArgumentParser) -> int:
    """The command, with every way it can end turned into an exit code and at most one line."""
    from sentret_core.errors import SentretError

    debug = bool(args.debug) or os.environ.get("SENTRET_DEBUG", "") not in ("", "0")
    try:
        started = time.perf_counter()
        files = getattr(args, "files", None)
        if files is not None:  # what it writes, checked before it reads or writes anything (cli/outputs.py)
            from sentret_core.cli.outputs import check_files

            check_files(files(args))
        code = int(args.run(args) or 0)
        log.debug("done in %.2f s (exit %d)", time.perf_counter() - started, code)
        return code
    except SentretError as err:
        if debug:
            raise
        from sentret_core.cli.flags import with_flags

        _say(f"sentret: error: {with_flags(err, parser, args.run)}")
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


def build_parser() -> argparse.ArgumentParser:
    """The ``sentret`` parser with every command (``sentret completion`` generates its script from it)."""
    parser = argparse.ArgumentParser(prog="sentret", description="Entity support sentences.")
    parser.add_argument("--version", action="version", version=f"sentret {_version()}")
    parser.add_argument(
        "--debug", action="store_true", help="let an unexpected error through with its traceback (or SENTRET_DEBUG=1)"
    )
    verbosity_options(parser, top=True)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for register in COMMANDS:
        register(sub)
    if "completion" in sub.choices:  # the script is generated from this very parser
        sub.choices["completion"].set_defaults(root=parser)
    _verbosity_everywhere(parser)
    return parser


def _verbosity_everywhere(parser: argparse.ArgumentParser) -> None:
    """-v/-q on every command and subcommand too, so they may come after the command's name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                verbosity_options(command)
                _verbosity_everywhere(command)


_parser = build_parser  # the name tests used before

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
    reproduce.register,
    app.register,
    completion.register,
]

if __name__ == "__main__":
    raise SystemExit(main())
