"""Which training of an index runs now, and about how long it has left.

A process that trains (``sentret train``, the app's Train buttons) holds an exclusive lock on a marker
file named after the index (in the temporary folder, so a read-only index can be trained from) and
writes into it what it trains, when it started and how long it is expected to take. Another process
(the app) asks :func:`running`: a marker whose lock nobody holds is stale (its process ended or
died: the system releases a dead process's lock), so it is never believed. One training of an index
at a time: a second one gets a clear error.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentret_core.errors import SentretError

BUSY = "another training of this index is running; try again when it is done"

# Seconds per term occurrence of the index, measured on the demo corpus (433,221 term occurrences) under
# `nice -n 10` on a 2-core machine shared with other work: word classes 43 s at a load average of 6.5-8.3
# and 26 s at 4.2-4.8 (20 exchange passes either way; the busier figure is used, so a training ends
# early rather than late); trigger tables about 1 s of counting; minilm's sentence vectors 182 s at a load of
# 1.5-2 (36,307 sentences: 0.00042 s an occurrence, rounded up). A busier machine takes longer still.
SECONDS_PER_OCCURRENCE = {"classes": 0.0001, "triggers": 0.000003, "impacts": 0.0000005, "minilm": 0.0005}
MIN_SECONDS = 1.0


def marker_path(index_path: str | os.PathLike[str]) -> Path:
    """The marker of ``index_path``'s trainings (one per index, whatever its kind)."""
    digest = hashlib.sha256(str(Path(index_path).resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Path(tempfile.gettempdir()) / f"sentret-train-{digest}.lock"


def expected_seconds(manifest: dict[str, Any], kinds: Sequence[str]) -> float:
    """About how long training ``kinds`` takes on an index of this size (its term occurrences)."""
    occurrences = float((manifest.get("counts") or {}).get("term_occurrences", 0))
    return sum(max(MIN_SECONDS, SECONDS_PER_OCCURRENCE.get(kind, 0.0) * occurrences) for kind in kinds)


@dataclass(frozen=True)
class Running:
    """A training that holds an index's marker: the kinds of artefact it trains, since when, for how long."""

    kinds: tuple[str, ...]
    started: float  # time.time()
    expected: float  # seconds

    def seconds_left(self, now: float | None = None) -> float:
        return max(0.0, self.started + self.expected - (time.time() if now is None else now))


@contextmanager
def training(
    index_path: str | os.PathLike[str], kinds: Sequence[str], expected: float, clock: Callable[[], float] = time.time
) -> Iterator[None]:
    """Hold ``index_path``'s marker while the block trains ``kinds`` (about ``expected`` seconds, from
    ``clock()``); a SentretError when another training holds it."""
    fd = os.open(marker_path(index_path), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SentretError(BUSY) from None
        record = {"kinds": list(kinds), "started": clock(), "expected": float(expected), "pid": os.getpid()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode("utf-8"), 0)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def running(index_path: str | os.PathLike[str]) -> Running | None:
    """The training that holds ``index_path``'s marker now, or None (no marker, or nobody holds it)."""
    try:
        fd = os.open(marker_path(index_path), os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: a training runs
            return _parse(os.pread(fd, 4096, 0))
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _parse(raw: bytes) -> Running:
    """The marker's record; one still being written (or damaged) reads as a training of unknown kinds."""
    try:
        record = json.loads(raw.decode("utf-8"))
        return Running(tuple(str(k) for k in record["kinds"]), float(record["started"]), float(record["expected"]))
    except (ValueError, KeyError, TypeError):
        return Running((), time.time(), 0.0)
