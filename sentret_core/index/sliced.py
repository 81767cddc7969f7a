"""Slices of a memory-mapped array whose file is checked a block at a time (``Index.slices``).

A query reads a few posting lists of ``XT``: rather than hashing its gigabytes first, each block of the file
(:mod:`sentret_core.index.blocks`) is checked the first time a slice reads a value in it: its sha256, then
the checks that hold value by value (:func:`~sentret_core.index.validate.check_part`: indices in bounds), so
no value from a damaged block is ever returned. Without block digests (an index of an older sentret, or a
file of one block), the first slice checks the whole array as any other first read does.
"""

from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Callable

import numpy as np

from sentret_core.index.blocks import FileBlocks


class Slices:
    """``slices(lo, hi)``: ``array[lo:hi]``, once every block of the file it reads from is checked.

    ``offset`` is where the array's values start in its file; ``values(part)`` checks a block's values;
    ``whole()`` checks the whole array (used instead when there are no ``blocks``)."""

    def __init__(self, array: np.ndarray, offset: int, blocks: FileBlocks | None,
                 values: Callable[[np.ndarray], None], whole: Callable[[], object]) -> None:
        self.array, self.offset, self.blocks, self.values, self.whole = array, offset, blocks, values, whole
        self.itemsize = array.dtype.itemsize
        aligned = blocks is not None and offset % self.itemsize == 0 and blocks.block % self.itemsize == 0
        self.block = blocks.block if blocks is not None and aligned else 0
        self.ready = np.zeros(len(blocks.recorded) if self.block and blocks is not None else 1, dtype=bool)
        self._lock = threading.Lock()
        self._background: threading.Thread | None = None
        self.scattered = False  # read a few values at a time all over: see check_rest_in_background

    def __call__(self, lo: int, hi: int) -> np.ndarray:
        if hi > lo:
            if not self.block:
                if not self.ready[0]:
                    self.whole()
                    self.ready[0] = True
            else:
                first = (self.offset + lo * self.itemsize) // self.block
                last = (self.offset + hi * self.itemsize - 1) // self.block
                if not self.ready[first : last + 1].all():
                    self._check(first, last)
        return self.array[lo:hi]

    def check_rest_in_background(self) -> None:
        """Check every block not checked yet, one at a time, in a daemon thread (once): for an array read in small
        pieces all over (a sentence's terms), so that later reads find their blocks checked. A block that does not
        check is left unchecked and the thread stops: the read that needs it raises the error.

        Such an array's blocks are checked from copies read from the file, whose pages the page cache is then told
        to drop: at 75M sentences the three arrays a support sentence reads hold 10.8 GB, and their pages, kept
        after the checks, pushed the postings and texts that queries read again out of the cache. The pages a
        read maps stay."""
        with self._lock:
            if not self.block or self._background is not None:
                return
            self.scattered = True
            _read_at_random(self.array)
            self._background = threading.Thread(target=self._check_rest, name="sentret-block-checks", daemon=True)
        self._background.start()

    def _check_rest(self) -> None:
        for k in range(len(self.ready)):
            if not self.ready[k]:
                try:
                    self._check(k, k)
                except Exception:  # the read of this block raises it where it matters
                    return

    def _check(self, first: int, last: int) -> None:
        assert self.blocks is not None
        with self._lock:
            self.blocks.check(first * self.block, (last + 1) * self.block)
            for k in range(first, last + 1):
                if not self.ready[k]:
                    start = max(k * self.block - self.offset, 0) // self.itemsize
                    end = max((k + 1) * self.block - self.offset, 0) // self.itemsize
                    self.values(self._copy(start, end) if self.scattered else self.array[start:end])
                    self.ready[k] = True
            if self.scattered:
                self._forget(first, last)

    def _copy(self, start: int, end: int) -> np.ndarray:
        """array[start:end] read from the file (not through the mapping, whose pages would stay)."""
        assert self.blocks is not None
        fd = os.open(self.blocks.path, os.O_RDONLY)
        try:
            raw = os.pread(fd, (end - start) * self.itemsize, self.offset + start * self.itemsize)
        finally:
            os.close(fd)
        return np.frombuffer(raw, dtype=self.array.dtype)

    def _forget(self, first: int, last: int) -> None:
        """Tell the page cache that blocks first..last, just checked, are not needed (pages mapped stay)."""
        assert self.blocks is not None
        if not hasattr(os, "posix_fadvise"):
            return
        fd = os.open(self.blocks.path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, first * self.block, (last + 1 - first) * self.block, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _read_at_random(array: np.ndarray) -> None:
    """No read-around on the faults of ``array``'s file mapping (MADV_RANDOM): a fault reads its own page, not the
    128 kB around it. Read a few values at a time all over, the arrays a support sentence reads had filled the page
    cache with the pages around them (3.3 GB of each after 500 support requests at 75M sentences)."""
    base = array.base
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    if base is not None and hasattr(mmap, "MADV_RANDOM"):
        base.madvise(mmap.MADV_RANDOM)
