"""Where a build may write: never over the documents it reads, never over what is not its own kind.

``--force`` (and ``sentret add``) replace a folder only when everything in it is a file the index or
the shards folder consists of: a user's own file kept there makes the command refuse and name it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sentret_core.errors import SentretError
from sentret_core.index.artefacts import FOLDER as ARTEFACTS
from sentret_core.index.format import MANIFEST, SHARDS, is_index
from sentret_core.ingest.shards import FORMAT as SHARDS_FORMAT
from sentret_core.ingest.shards import MANIFEST as SHARDS_MANIFEST

ARTEFACTS_LOCK = ".lock"  # the artefacts' swap lock (index/artefacts.py)
_NAMED = 5  # foreign files named in a message; the rest are counted
_MANIFEST_BYTES = 64 * 1024 * 1024  # a manifest larger than this is not one of ours


def is_shards(path: Path) -> bool:
    manifest = _manifest(path / SHARDS_MANIFEST)
    return manifest is not None and manifest.get("format") == SHARDS_FORMAT


def check_target(out: Path, force: bool, is_ours: Callable[[Path], bool], what: str) -> None:
    """``out`` may be written: it is new, an empty folder, or (with ``force``) ``what`` ``is_ours`` says it is.

    ``force`` replaces such a folder and nothing else: never a file, a folder of other things, the
    current folder or the home folder, nor one that also holds files of the user's own.
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
        check_only_ours(out)
        return
    if any(out.iterdir()):
        raise SentretError(
            f"{out}: exists, is not empty and is not {what}; choose another --out (--force replaces only {what})"
        )


def check_only_ours(folder: Path) -> None:
    """Refuse to replace ``folder`` while it holds anything that is not part of the index or shards in it."""
    foreign = foreign_files(folder)
    if foreign:
        more = len(foreign) - _NAMED
        named = ", ".join(foreign[:_NAMED]) + (f" and {more} more" if more > 0 else "")
        raise SentretError(
            f"{folder}: holds files that are not part of it ({named}); replacing it would delete them, "
            "so nothing was changed. Move them out of the folder first."
        )


def foreign_files(folder: Path) -> list[str]:
    """The entries of ``folder`` (relative paths, sorted) that a sentret index or shards folder does not consist of."""
    if is_index(folder):
        manifest = _manifest(folder / MANIFEST) or {}
        files = manifest.get("files")
        own = {MANIFEST, SHARDS, ARTEFACTS, *(name for name in (files if isinstance(files, dict) else ())
                                               if isinstance(name, str) and "/" not in name)}
        found = [name for name in _entries(folder) if name not in own]
        if (folder / SHARDS).is_dir() and not (folder / SHARDS).is_symlink():
            found += [f"{SHARDS}/{name}" for name in _foreign_shards(folder / SHARDS)]
        trained = folder / ARTEFACTS
        if trained.is_dir() and not trained.is_symlink():  # each artefact is a folder of its own
            found += [f"{ARTEFACTS}/{name}" for name in _entries(trained) if name != ARTEFACTS_LOCK
                      and (not (trained / name).is_dir() or (trained / name).is_symlink())]
        return sorted(found)
    if is_shards(folder):
        return _foreign_shards(folder)
    return _entries(folder)


def _foreign_shards(folder: Path) -> list[str]:
    manifest = _manifest(folder / SHARDS_MANIFEST) or {}
    listed = manifest.get("shards")
    shards = listed if isinstance(listed, list) else []
    own = {SHARDS_MANIFEST, *(shard.get("file") for shard in shards if isinstance(shard, dict))}
    return [name for name in _entries(folder) if name not in own]


def _entries(folder: Path) -> list[str]:
    try:
        return sorted(entry.name for entry in os.scandir(folder))
    except OSError:
        return []


def _manifest(file: Path) -> dict[str, Any] | None:
    try:
        if not file.is_file() or file.stat().st_size > _MANIFEST_BYTES:
            return None
        found = json.loads(file.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None


def check_not_the_source(out: Path, source: Path) -> None:
    """The output must not be written over the documents it reads, inside them, or around them
    (replacing ``out`` would delete documents kept inside it)."""
    try:
        out, source = out.resolve(), source.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise SentretError(f"{source}: cannot follow its path ({exc})") from None
    if out == source or source in out.parents:
        raise SentretError(f"{out}: that is where the documents are; choose an --out outside {source}")
    if out in source.parents:
        raise SentretError(
            f"{source}: the documents are inside {out}, which this command replaces; "
            f"move them out of {out} first (nothing was changed)"
        )


def replace(tmp: Path, out: Path) -> None:
    """Move the finished build into place; the old folder goes only once the new one is there, and only
    when it holds nothing but its own files (checked again here: a file may have been put there since)."""
    old = None
    if out.exists():
        check_only_ours(out)
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(old)
    tmp.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink()
