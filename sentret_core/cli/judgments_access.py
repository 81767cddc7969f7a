"""What the ``judgments`` commands share: the database opened as they need it, the admin as the token
allows (see :mod:`sentret_core.cli.judgments` on the token), and their input files read as text."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sentret_core.annotation.admin import Admin
    from sentret_core.annotation.store import JudgmentStore


def open_store(path: str, *, create: bool = False, read_only: bool = False) -> JudgmentStore:
    """The store; ``read_only`` for the commands that only read (they never wait for the write lock)."""
    from sentret_core.annotation.topics import open_store
    from sentret_core.errors import SentretError

    if not create and not Path(path).is_file():
        raise SentretError(f"no judgments database at {path} (`sentret judgments create` makes one)")
    return open_store(path, read_only=read_only)


def admin_of(store: JudgmentStore, args: argparse.Namespace) -> Admin:
    from sentret_core.annotation.records import ADMIN_TOKEN_ENV
    from sentret_core.errors import SentretError

    given = args.token
    if not os.environ.get(ADMIN_TOKEN_ENV, "").strip():
        if not given:
            raise SentretError(f"this command needs the admin token: set {ADMIN_TOKEN_ENV} or pass --token")
        os.environ[ADMIN_TOKEN_ENV] = given  # see the module docstring
    return store.admin(given if given is not None else os.environ[ADMIN_TOKEN_ENV])


def read_file(path: str, what: str) -> str:
    """A UTF-8 input file's text (``-``: standard input), or one message saying why it cannot be read."""
    from sentret_core.errors import SentretError

    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SentretError(f"cannot read the {what} file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SentretError(f"{path}: the {what} file is not UTF-8 text") from None
