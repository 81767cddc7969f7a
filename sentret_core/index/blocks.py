"""sha256 of whole files and of their fixed-size blocks (the manifest's ``files`` and ``blocks``).

A file larger than one block (:data:`BLOCK_BYTES`) has, beside its own sha256, the sha256 of each of its
blocks in the manifest. A file read in slices (the postings of a query's terms,
:meth:`Index.slices <sentret_core.index.reader.Index.slices>`) is then checked a block at a time, at the
first read touching the block, so a first query pays for the blocks it reads rather than for whole
files of gigabytes; a file read whole has its blocks hashed on :data:`THREADS` threads (hashlib releases
the GIL). ``sentret verify`` checks the whole file's sha256 and every block's.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

BLOCK_BYTES = 8 * 2**20  # 4-16 MiB hash alike (~2 GB/s a thread); a posting slice rarely spans two
MIN_BLOCK_BYTES = 64  # a block is a multiple of this (as a .npy header is), so no value spans two blocks
THREADS = 2
_CHUNK = 2**20


def count_blocks(size: int, block: int) -> int:
    return -(-size // block)


def _digest(fd: int, lo: int, hi: int) -> str:
    """sha256 of bytes [lo, hi) of the open file ``fd``."""
    digest = hashlib.sha256()
    while lo < hi:
        chunk = os.pread(fd, min(_CHUNK, hi - lo), lo)
        if not chunk:  # shorter than it was: cannot match
            break
        digest.update(chunk)
        lo += len(chunk)
    return digest.hexdigest()


def whole_digest(path: Path) -> str:
    """sha256 of the file, read with pread (a thread of :func:`digests` hashes it beside the blocks)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return _digest(fd, 0, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def block_digests(path: Path, block: int, only: Sequence[int] | None = None) -> list[str]:
    """sha256 of each ``block``-byte block of the file (of the blocks ``only``, if given), on :data:`THREADS`
    threads when there are several."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        wanted = list(range(count_blocks(size, block))) if only is None else list(only)

        def one(k: int) -> str:
            return _digest(fd, k * block, min((k + 1) * block, size))

        if len(wanted) < 2:
            return [one(k) for k in wanted]
        with ThreadPoolExecutor(THREADS) as pool:
            return list(pool.map(one, wanted))
    finally:
        os.close(fd)


def digests(path: Path, block: int) -> tuple[str, list[str]]:
    """The file's sha256 and, when it is larger than one block, its blocks' (empty otherwise): two threads,
    one hashing the whole, the other the blocks, so both cost the time of one."""
    if path.stat().st_size <= block:
        return whole_digest(path), []
    with ThreadPoolExecutor(2) as pool:
        whole = pool.submit(whole_digest, path)
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            blocks = [_digest(fd, lo, min(lo + block, size)) for lo in range(0, size, block)]
        finally:
            os.close(fd)
        return whole.result(), blocks


class FileBlocks:
    """One file's block digests and which blocks this process found to match them (thread-safe).

    ``fail(message)`` makes the error raised for a block that does not match; ``hashed`` counts the blocks
    hashed so far (a test counts them).
    """

    def __init__(self, path: Path, block: int, recorded: Sequence[str], fail: Callable[[str], Exception]) -> None:
        self.path, self.block, self.recorded, self.fail = path, block, list(recorded), fail
        self.sound = np.zeros(len(self.recorded), dtype=bool)
        self.hashed = 0
        self._lock = threading.Lock()

    def check(self, lo: int, hi: int) -> None:
        """Every block holding a byte of [lo, hi) matches its digest; each block is hashed once."""
        if hi <= lo:
            return
        first, last = lo // self.block, min((hi - 1) // self.block, len(self.recorded) - 1)
        if self.sound[first : last + 1].all():
            return
        with self._lock:
            todo = [k for k in range(first, last + 1) if not self.sound[k]]
            found = block_digests(self.path, self.block, todo)
            self.hashed += len(todo)
            for k, digest in zip(todo, found):
                if digest != self.recorded[k]:
                    where = f"block {k + 1:,} of {len(self.recorded):,}, from byte {k * self.block:,}"
                    raise self.fail(f"{self.path.name}: checksum mismatch ({where}; the file was altered or "
                                    "corrupted)")
            self.sound[todo] = True

    def check_all(self) -> None:
        self.check(0, len(self.recorded) * self.block)
