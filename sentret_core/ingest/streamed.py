"""Index files written front to back, as their parts arrive: ``.npy`` arrays, CSR matrices and Parquet
tables, each the bytes ``np.save``, :func:`save_matrix` and ``pq.write_table`` write for the whole.

No memory maps: the pages written are the page cache's, never the writing process's, so a build's
memory does not grow with the files it writes (ingest.assemble).
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

_INT32_MAX = np.iinfo(np.int32).max
ROW_GROUP = 1024 * 1024  # rows per Parquet row group: pyarrow's default, so a table streamed in parts is written
#                          byte for byte as save_table writes the whole (pq.write_table)


def index_dtype(count: int) -> Any:
    """The index dtype save_matrix chooses for a matrix of ``count`` stored values."""
    return np.int32 if count < _INT32_MAX else np.int64


class NpyWriter:
    """A 1-d ``.npy`` written front to back through a file, the bytes ``np.save`` writes for the whole array.

    No memory map: the pages written are the page cache's, not this process's. ``length`` is the number of
    values announced in the header; when fewer are written (repeats summed, or -1: not known until the end),
    :meth:`close` writes the header again for those written.
    """

    def __init__(self, folder: Path, name: str, dtype: Any, length: int = -1) -> None:
        self.path, self.dtype, self.length = folder / f"{name}.npy", np.dtype(dtype), length
        self.file = self.path.open("wb")
        self.header = npy_header(self.dtype, max(length, 0))
        self.file.write(self.header)
        self.at = 0

    def extend(self, values: np.ndarray) -> None:
        self.file.write(np.ascontiguousarray(values, dtype=self.dtype).data)
        self.at += len(values)

    def close(self) -> None:
        self.file.close()
        if self.at == self.length:
            return
        if 0 <= self.length < self.at:
            raise ValueError(f"{self.path.name}: {self.at} values written, {self.length} announced")
        header = npy_header(self.dtype, self.at)
        if len(header) == len(self.header):
            with self.path.open("r+b") as handle:
                handle.write(header)
            return
        moved = self.path.with_name(f".{self.path.name}.moved")  # a header of another size: copy in chunks
        self.path.rename(moved)
        with moved.open("rb") as source, self.path.open("wb") as target:
            source.seek(len(self.header))
            target.write(header)
            shutil.copyfileobj(source, target, 2**24)
        moved.unlink()


def npy_header(dtype: np.dtype, length: int) -> bytes:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (length,)})
    return header.getvalue()


class RowMajorWriter:
    """A CSR matrix (``name.indptr``, ``.indices``, ``.data`` unless ``data`` is False) appended block of rows
    by block of rows, each block's indices sorted: what save_matrix writes for the whole."""

    def __init__(self, out: Path, name: str, dtype: Any, data: bool) -> None:
        self.dtype = dtype
        self.indptr, self.indices = NpyWriter(out, f"{name}.indptr", dtype), NpyWriter(out, f"{name}.indices", dtype)
        self.data = NpyWriter(out, f"{name}.data", np.int32) if data else None
        self.indptr.extend(np.zeros(1, dtype=np.int64))
        self.nnz = 0

    def add(self, rows: sp.csr_matrix) -> None:
        rows.sort_indices()
        self.indptr.extend(rows.indptr[1:].astype(np.int64) + self.nnz)
        self.indices.extend(rows.indices)
        if self.data is not None:
            self.data.extend(rows.data)
        self.nnz += rows.nnz

    def close(self) -> None:
        for writer in (self.indptr, self.indices, self.data):
            if writer is not None:
                writer.close()
        if index_dtype(self.nnz) != self.dtype:  # fewer than 2³¹ entries from 2³¹ mentions or more
            for writer in (self.indptr, self.indices):
                np.save(writer.path, np.load(writer.path).astype(index_dtype(self.nnz)), allow_pickle=False)


class TableWriter:
    """A Parquet table written as its parts arrive, in row groups of ``row_group`` rows (default
    :data:`ROW_GROUP`): the bytes :func:`save_table` writes for the parts' concatenation (``pq.write_table``
    for the sentences' texts), holding at most a row group's rows."""

    def __init__(self, folder: Path, name: str, row_group: int = 0) -> None:
        self.path, self.row_group = folder / f"{name}.parquet", row_group or ROW_GROUP
        self.pending: list[pa.Table] = []
        self.rows = 0
        self.writer: pq.ParquetWriter | None = None

    def append(self, part: pd.DataFrame | pa.Table) -> None:
        table = part if isinstance(part, pa.Table) else pa.Table.from_pandas(part, preserve_index=False)
        self.pending.append(table)
        self.rows += table.num_rows
        while self.rows >= self.row_group:
            self._write(self.row_group)

    def close(self) -> None:
        if self.rows or self.writer is None:
            self._write(self.rows)
        if self.writer is not None:
            self.writer.close()

    def _write(self, rows: int) -> None:
        whole = pa.concat_tables(self.pending)
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, whole.schema)
        self.writer.write_table(whole.slice(0, rows).combine_chunks())  # contiguous, as one table's columns are
        self.pending, self.rows = [whole.slice(rows)], whole.num_rows - rows
