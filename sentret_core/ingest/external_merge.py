"""The external merge of a column-major copy (``XT`` from ``X``, ``GT`` from ``G``): each shard's rows are
spilled to disk column-major (a run), then merged a block of columns at a time, so the memory it takes is a
block's, whatever the corpus's size (``tests/ingest/test_external_merge.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from sentret_core.index.format import save_array
from sentret_core.ingest.streamed import NpyWriter

MERGE_POSTINGS = 2**25  # entries held at once while a column-major copy is merged from its runs


def add_counts(total: np.ndarray, part: np.ndarray) -> np.ndarray:
    """``total + part``, the shorter padded with zeros (counts over a vocabulary that grows shard by shard)."""
    if len(part) > len(total):
        total = np.pad(total, (0, len(part) - len(total)))
    total[: len(part)] += part
    return total


class Run(NamedTuple):
    """One shard's rows of a matrix, spilled column-major: its entries' row ids and values in files (``stem``),
    and which columns it holds, with where each one's entries end (in memory: 8 bytes per column it holds,
    rather than an offset for every column seen so far — at 75M sentences the entities grow to 24M)."""

    stem: Path
    first_row: int
    columns: np.ndarray  # int32, ascending
    ends: np.ndarray  # int32


class Runs:
    """A matrix's rows, shard by shard, spilled to disk column-major with their local row ids, to be merged
    into its column-major copy (``XT`` from ``X``, ``GT`` from ``G``): a column's entries from shard k follow
    shard k-1's, so each run's are put in place without sorting anything corpus-wide."""

    def __init__(self, out: Path, name: str) -> None:
        self.out, self.name = out, name
        self.runs: list[Run] = []
        self.counts = np.zeros(0, dtype=np.int64)
        self.rows = 0

    def add(self, k: int, matrix: sp.csr_matrix) -> None:
        csc = matrix.tocsc()
        csc.sort_indices()
        stem = self.out / f".run-{self.name}-{k:05d}"
        for suffix, values in (("indices", csc.indices.astype(np.int32)), ("data", csc.data.astype(np.int32))):
            values.tofile(stem.with_suffix(f".{suffix}"))
        counts = np.diff(csc.indptr).astype(np.int64)
        held = np.flatnonzero(counts)
        self.runs.append(Run(stem, self.rows, held.astype(np.int32), np.cumsum(counts[held]).astype(np.int32)))
        self.counts = add_counts(self.counts, counts)
        self.rows += matrix.shape[0]

    def column_counts(self, columns: int) -> np.ndarray:
        return np.pad(self.counts, (0, columns - len(self.counts)))

    def merge(self, name: str, columns: int, dtype: Any, budget: int = 0) -> None:
        """``name``'s indptr, indices (and data, but for GT) from the runs, a block of columns at a time: one
        column, or as many as hold at most ``budget`` entries. The runs are removed."""
        budget = budget or MERGE_POSTINGS
        indptr = np.concatenate([[0], np.cumsum(self.column_counts(columns))]).astype(np.int64)
        save_array(self.out, f"{name}.indptr", indptr.astype(dtype))
        parts = {"indices": dtype, "data": np.int32} if name == "XT" else {"indices": dtype}
        writers = {part: NpyWriter(self.out, f"{name}.{part}", kind, int(indptr[-1])) for part, kind in parts.items()}
        v0 = 0
        while v0 < columns:
            v1 = max(int(np.searchsorted(indptr, indptr[v0] + budget, side="right")) - 1, v0 + 1)
            blocks = {part: np.empty(int(indptr[v1] - indptr[v0]), dtype=kind) for part, kind in parts.items()}
            cursor = indptr[v0:v1] - indptr[v0]  # where each column's next entries go in the block
            for run in self.runs:
                a, b = np.searchsorted(run.columns, (v0, v1))
                if a == b:
                    continue
                lo, ends = (int(run.ends[a - 1]) if a else 0), run.ends[a:b].astype(np.int64)
                counts, at = np.diff(ends, prepend=lo), run.columns[a:b] - v0
                where = np.repeat(cursor[at] - (ends - counts - lo), counts) + np.arange(ends[-1] - lo)
                blocks["indices"][where] = read_run(run.stem, "indices", np.int32, lo, int(ends[-1])) + run.first_row
                if "data" in blocks:
                    blocks["data"][where] = read_run(run.stem, "data", np.int32, lo, int(ends[-1]))
                cursor[at] += counts
            for part, writer in writers.items():
                writer.extend(blocks[part])
            v0 = v1
        for writer in writers.values():
            writer.close()
        for run in self.runs:
            for suffix in ("indices", "data"):
                run.stem.with_suffix(f".{suffix}").unlink()


def read_run(stem: Path, suffix: str, dtype: Any, lo: int, hi: int) -> np.ndarray:
    """Values ``lo:hi`` of a run's raw file, read without mapping it."""
    return np.fromfile(stem.with_suffix(f".{suffix}"), dtype=dtype, count=hi - lo, offset=lo * np.dtype(dtype).itemsize)
