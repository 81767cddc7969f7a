"""What every command module shares: the exit code for user errors, subcommand setup (with ``-v/-q``),
the log on stderr, --param pairs."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

EXIT_USAGE = 2  # a user error: one message on stderr
EXIT_BUG = 1  # an internal error (a bug): one message asking for a report
PROGRESS_S = 5.0  # a long command says how far it is at most this often, on a terminal or in a log file


def command(
    sub: Any, name: str, help: str, run: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help)
    parser.set_defaults(run=run)
    return parser


# --- the log: notes, warnings and (with -v) details on stderr; the result itself goes to stdout ---------

LOGGERS = ("sentret_core", "sentret")  # the library's modules and the app's stage log
LEVELS = {-2: logging.ERROR, -1: logging.WARNING, 0: logging.INFO, 1: logging.DEBUG}  # -qq … -v
WORDS = {logging.DEBUG: "debug", logging.INFO: "note", logging.WARNING: "warning"}


def verbosity_options(parser: argparse.ArgumentParser, top: bool = False) -> None:
    """``-v/--verbose`` and ``-q/--quiet``, counted; on a command they add to those given before it."""
    default = 0 if top else argparse.SUPPRESS  # a command's own must not reset what came before it
    parser.add_argument("-v", "--verbose", action="count", default=default,
                        help="say more on stderr (-vv: the libraries' debug messages too)")
    parser.add_argument("-q", "--quiet", action="count", default=default,
                        help="say less on stderr: no notes (-qq: no warnings either); errors always")


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        word = WORDS.get(record.levelno, record.levelname.lower())
        return f"sentret: {word}: {record.getMessage()}"


@contextlib.contextmanager
def logging_to_stderr(verbosity: int) -> Iterator[logging.Logger]:
    """sentret's loggers on stderr at the level ``verbosity`` asks for (0: notes and warnings, what the
    commands have always said), put back as they were on leaving (tests call ``main`` in one process)."""
    level = LEVELS[max(-2, min(1, verbosity))]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter())
    loggers = [logging.getLogger(name) for name in LOGGERS]
    saved = [(logger.level, logger.propagate) for logger in loggers]
    root, root_level = logging.getLogger(), logging.getLogger().level
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
    if verbosity >= 2:  # -vv: every library's debug messages (spaCy, Streamlit, …) as well
        root.addHandler(handler)
        root.setLevel(logging.DEBUG)
    try:
        yield logging.getLogger("sentret_core.cli")
    finally:
        for logger, (old_level, old_propagate) in zip(loggers, saved):
            logger.removeHandler(handler)
            logger.setLevel(old_level)
            logger.propagate = old_propagate
        root.removeHandler(handler)
        root.setLevel(root_level)


def every(seconds: float, command: str, verb: str, unit: str, *, quiet_when_quick: bool = False
          ) -> Callable[[int, int], None]:
    """A progress callback that says ``done of total`` on stderr at most every ``seconds`` (and at the end),
    whether stderr is a terminal or a log file; ``quiet_when_quick``: nothing at all for work done within
    ``seconds``."""
    import time

    started = time.monotonic()
    last = [started if quiet_when_quick else 0.0]

    def say(done: int, total: int) -> None:
        now = time.monotonic()
        if (done < total or quiet_when_quick) and now - last[0] < seconds:
            return
        last[0] = now
        print(f"sentret {command}: {verb} {done:,} of {total:,} {unit}", file=sys.stderr, flush=True)

    return say


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


def write_output(out: str, text: str) -> None:
    """Write ``text`` to ``out`` atomically: a failed write leaves any old file as it was."""
    from sentret_core.files import write_text_atomic

    write_text_atomic(out, text)
