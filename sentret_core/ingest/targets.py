"""Where a build may write: never over the documents it reads, never over what is not its own kind."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from sentret_core.errors import SentretError
from sentret_core.ingest.shards import FORMAT as SHARDS_FORMAT
from sentret_core.ingest.shards import MANIFEST as SHARDS_MANIFEST


def is_shards(path: Path) -> bool:
    try:
        return json.loads((path / SHARDS_MANIFEST).read_bytes()).get("format") == SHARDS_FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def check_target(out: Path, force: bool, is_ours: Callable[[Path], bool], what: str) -> None:
    """``out`` may be written: it is new, an empty folder, or (with ``force``) ``what`` ``is_ours`` says it is.

    ``force`` replaces such a folder and nothing else: never a file, a folder of other things, the
    current folder or the home folder.
    """
    if not out.exists():
        return
    where = out.resolve()
    if where in (Path.cwd().resolve(), Path.home().resolve()) or where == Path(where.anchor):
        raise SentretError(f"{out}: refusing to build into the current, home or root folder; choose a new --out")
    if not out.is_dir():
        raise SentretError(f"{out}: exists and is not a folder; choose another --out (--force replaces only {what})")
    if is_ours(out):
        if not force:
            raise SentretError(f"{out}: {what} is already there; pass --force to replace it")
        return
    if any(out.iterdir()):
        raise SentretError(
            f"{out}: exists, is not empty and is not {what}; choose another --out (--force replaces only {what})"
        )


def check_not_the_source(out: Path, source: Path) -> None:
    """The output must not be written over (or inside) the documents it reads."""
    out, source = out.resolve(), source.resolve()
    if out == source or source in out.parents:
        raise SentretError(f"{out}: that is where the documents are; choose an --out outside {source}")


def replace(tmp: Path, out: Path) -> None:
    """Move the finished build into place; the old folder goes only once the new one is there."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(old)
    tmp.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink()
