"""The hidden folder a build writes into: made with its owner recorded, swept when abandoned, disk-full named.

A build writes ``.<name>.building-XXXX`` beside its target and records who owns it (host, pid and the
process's start time, so a recycled pid is not mistaken for the owner) in a small file inside, marked as
sentret's own with the folder's build id ``XXXX``. A build removes such folders whose owner is no longer
running, and nothing else: a folder without that marker and matching id is never touched, however much
its name looks like one of ours (an empty one a killed build may leave costs nothing).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any

from sentret_core.errors import SentretError
from sentret_core.ingest.interrupt import signals_deferred

OWNER = ".sentret-build.json"
MARKER = "sentret-build-staging"
_BUILDING = ".building-"


def make_staging(out: Path) -> tuple[Path, list[str]]:
    """A new staging folder beside ``out`` with its owner recorded, and notes on the stale ones removed."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        notes = remove_stale(out.parent)
        with signals_deferred():  # never a folder without its owner file
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
            try:
                owner = {"kind": MARKER, "build_id": _build_id(tmp), **_me()}
                (tmp / OWNER).write_text(json.dumps(owner), encoding="utf-8")
            except OSError:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    except OSError as exc:
        raise write_error(exc, out, 0) from None
    return tmp, notes


def release(tmp: Path) -> None:
    """Drop the owner file: the folder is about to become an index."""
    (tmp / OWNER).unlink(missing_ok=True)


def remove_stale(parent: Path) -> list[str]:
    """Remove the staging folders in ``parent`` whose build is no longer running; say which."""
    notes = []
    for folder in sorted(parent.glob(f".*{_BUILDING}*")):
        if folder.is_dir() and not folder.is_symlink() and _abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            notes.append(f"removed {folder}, left behind by a build that is no longer running")
    return notes


def disk_full(exc: OSError) -> bool:
    """A full disk or quota (pyarrow's errors carry no errno, only the system's message)."""
    return exc.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(exc)


def write_error(exc: OSError, out: Path, written: int) -> SentretError:
    """One message for a failed write: a full disk names the folder and how much the build had written."""
    if disk_full(exc):
        kept = " (the existing index is unchanged)" if out.exists() else ""
        had = f"the build had written {_size(written)} when it ran out, and needs more: " if written else ""
        return SentretError(
            f"{out}: the disk is full ({_size(_free(out.parent))} free in {out.parent}); {had}"
            f"free some space or choose another --out. Nothing was left behind{kept}."
        )
    return SentretError(f"{out}: cannot write the index in {out.parent}: {exc.strerror or exc}")


def folder_size(folder: Path) -> int:
    """Bytes held by the files below ``folder`` (0 if it is gone)."""
    total = 0
    for here, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(here, name)).st_size
    return total


def claim(folder: Path, kind: str) -> None:
    """Record this process as ``folder``'s owner, marked ``kind`` (a folder another running process owns
    is refused before: see :func:`running_owner`)."""
    (folder / OWNER).write_text(json.dumps({"kind": kind, **_me()}), encoding="utf-8")


def owner_of(folder: Path, kind: str) -> dict[str, Any] | None:
    """``folder``'s owner record when it is one of ours marked ``kind`` (a small regular file with a host and
    a pid), else None: anything else is not ours to judge."""
    owner_file = folder / OWNER
    try:
        if owner_file.is_symlink() or not owner_file.is_file() or owner_file.stat().st_size > 4096:
            return None
        owner = dict(json.loads(owner_file.read_text(encoding="utf-8")))
        if owner.get("kind") != kind or not isinstance(owner.get("host"), str):
            return None
        owner["pid"] = int(owner["pid"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    return owner


def running_owner(folder: Path, kind: str) -> int | None:
    """The pid of the running process on this host that owns ``folder`` as ``kind``, or None."""
    owner = owner_of(folder, kind)
    if owner is None or owner["host"] != socket.gethostname():
        return None
    return owner["pid"] if _running(owner["pid"], owner.get("started")) else None


def _me() -> dict[str, object]:
    return {"host": socket.gethostname(), "pid": os.getpid(), "started": _start_time(os.getpid())}


def _build_id(folder: Path) -> str:
    return folder.name.rpartition(_BUILDING)[2]


def _abandoned(folder: Path) -> bool:
    """Ours (marker and build id match the folder) and its owner is gone; anything else is not ours to judge."""
    owner = owner_of(folder, MARKER)
    if owner is None or owner.get("build_id") != _build_id(folder):
        return False
    return owner["host"] == socket.gethostname() and not _running(owner["pid"], owner.get("started"))


def _running(pid: int, started: object) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's
    state = _proc_stat(pid)
    if state is None:
        return True
    return state[0] != "Z" and (started is None or state[1] == started)


def _start_time(pid: int) -> int | None:
    state = _proc_stat(pid)
    return state[1] if state else None


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks since boot) from Linux's /proc; None elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces and parentheses
    return fields[0], int(fields[19])


def _free(folder: Path) -> int:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return 0


def _size(n: int) -> str:
    if n < 1024:
        return f"{n:,} bytes"
    value, unit = n / 1024, "KB"
    for bigger in ("MB", "GB", "TB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:,.1f} {unit}"
