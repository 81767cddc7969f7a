"""String columns read a row group at a time: the sentences' texts (``index.texts``), the documents' titles
(``index.titles``) and the entities' names (``index.entity_texts``).

A support request shows a few dozen sentences, their neighbours, titles and entities, wherever they are in
the corpus: holding every string in memory would cost more than the rest of a loaded index (1 GB of texts at
10M sentences, as many titles and names again at the seed paper's 75M), so a string is read from its row
group, and the row groups used last are kept, up to :data:`KEPT_BYTES` per column; the rows a request will show
are read ahead, several groups at once (:meth:`ColumnRows.read_ahead`). The build writes row
groups of :data:`TEXT_ROW_GROUP` rows in those tables (a read of one takes a fraction of a millisecond); an index
built before has larger ones and is read the same way, only each miss costs more.
"""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import overload

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sentret_core.errors import IndexFormatError

# rows per row group of sentences, documents and entities (about 64 kB of sentences): a support request reads
# ~35 groups of sentences it did not read before; at 10M sentences a read took 0.2 ms at 1,024 rows, 2 ms at
# 16,384, and the footer of 9,766 groups opened in 14 ms
TEXT_ROW_GROUP = 1024
KEPT_BYTES = 128 * 2**20  # decoded row groups kept per column, the most recently used first
# row groups :meth:`ColumnRows.read_ahead` reads at once: at 75M sentences (2 cores) a random group took 0.22 ms
# read alone, 0.15 ms on 2 threads and 0.10 ms on 4 (pyarrow reads and decodes without the GIL)
READ_AHEAD_THREADS = 4
READ_AHEAD_MOST = 512  # row groups read ahead at most per call (~32 MB of texts): more would evict each other


class ColumnRows(Sequence[str]):
    """``rows[i]``: the string in row i of ``column`` (a read-only sequence, equal to the list of its strings);
    ``kept_bytes`` bounds the row groups kept (default :data:`KEPT_BYTES`)."""

    def __init__(self, path: Path, hint: str, column: str = "text", kept_bytes: Callable[[], int] | None = None
                 ) -> None:
        self.path, self.hint, self.column = path, hint, column
        self.kept_bytes = kept_bytes or (lambda: KEPT_BYTES)  # read at each eviction: a bound a test can lower
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, pa.Array] = OrderedDict()
        self._kept_bytes = 0
        try:
            self._file = pq.ParquetFile(path)
        except (OSError, pa.ArrowException) as err:
            raise self._error(err) from None
        self._readers: queue.SimpleQueue[pq.ParquetFile] = queue.SimpleQueue()  # read_ahead's, made as needed
        rows = [self._file.metadata.row_group(g).num_rows for g in range(self._file.num_row_groups)]
        self._starts = np.concatenate([[0], np.cumsum(rows, dtype=np.int64)])

    def __len__(self) -> int:
        return int(self._starts[-1])

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        s = int(i) + n if int(i) < 0 else int(i)
        if not 0 <= s < n:
            raise IndexError(f"row {i} of {self.path.name} is not in 0..{n - 1}")
        group = int(np.searchsorted(self._starts, s, side="right")) - 1
        text: str = self._group(group)[s - int(self._starts[group])].as_py()
        return text

    def __iter__(self) -> Iterator[str]:
        for group in range(len(self._starts) - 1):
            yield from self._read(group).to_pylist()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, Sequence)) and not isinstance(other, str):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a list, so unhashable like one

    def read_ahead(self, rows: Iterable[int]) -> None:
        """Read the row groups of ``rows`` not kept yet (the first :data:`READ_AHEAD_MOST`),
        :data:`READ_AHEAD_THREADS` at once, and keep them: the rows a support request shows, before it reads them one
        by one."""
        at = np.asarray(list(rows), dtype=np.int64)
        at = at[(at >= 0) & (at < len(self))]
        groups = np.unique(np.searchsorted(self._starts, at, side="right") - 1).tolist()
        with self._lock:
            missing = [g for g in groups if g not in self._kept][:READ_AHEAD_MOST]
        if len(missing) < 2:
            return
        with ThreadPoolExecutor(min(READ_AHEAD_THREADS, len(missing))) as pool:
            for group, column in zip(missing, pool.map(self._read_apart, missing)):
                with self._lock:
                    if group not in self._kept:
                        self._keep(group, column)

    def _group(self, group: int) -> pa.Array:
        with self._lock:
            found = self._kept.get(group)
            if found is not None:
                self._kept.move_to_end(group)
                return found
            column = self._read(group)
            self._keep(group, column)
            return column

    def _keep(self, group: int, column: pa.Array) -> None:
        self._kept[group] = column
        self._kept_bytes += column.nbytes
        while self._kept_bytes > self.kept_bytes() and len(self._kept) > 1:
            self._kept_bytes -= self._kept.popitem(last=False)[1].nbytes

    def _read_apart(self, group: int) -> pa.Array:
        """:meth:`_read` on a reader of its own (a thread's), which shares the file's parsed footer."""
        try:
            reader = self._readers.get_nowait()
        except queue.Empty:
            try:
                reader = pq.ParquetFile(self.path, metadata=self._file.metadata)
            except (OSError, pa.ArrowException) as err:
                raise self._error(err) from None
        try:
            return self._read(group, reader)
        finally:
            self._readers.put(reader)

    def _read(self, group: int, reader: pq.ParquetFile | None = None) -> pa.Array:
        try:
            column = (reader or self._file).read_row_group(group, columns=[self.column]).column(self.column)
            column = column.combine_chunks()
        except (OSError, pa.ArrowException, KeyError) as err:
            raise self._error(err) from None
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type) or not len(column)):
            raise self._error(f"its column {self.column} holds {column.type}, not strings")
        return column

    def _error(self, err: Exception | str) -> IndexFormatError:
        return IndexFormatError(f"{self.path.parent}: cannot read {self.path.name} ({err}); {self.hint}")


SentenceTexts = ColumnRows  # the name it had when it read only the sentences
