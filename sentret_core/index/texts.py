"""The sentences' texts, read from ``sentences.parquet`` a row group at a time (``index.texts``).

A support request shows a few dozen sentences and their neighbours, wherever they are in the corpus:
holding every text in memory would cost more than the rest of a loaded index (1 GB at 10M sentences),
so a text is read from its row group, and the row groups used last are kept, up to :data:`KEPT_BYTES`.
The build writes row groups of :data:`TEXT_ROW_GROUP` sentences (a read of one takes milliseconds);
an index built before has larger ones and is read the same way, only each miss costs more.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sentret_core.errors import IndexFormatError

TEXT_ROW_GROUP = 16_384  # sentences per row group of sentences.parquet (about 1 MB of text)
KEPT_BYTES = 128 * 2**20  # decoded row groups kept per loaded index, the most recently used first


class SentenceTexts(Sequence[str]):
    """``texts[s]``: the text of sentence s, for s in 0..N-1 (a read-only sequence of N strings)."""

    def __init__(self, path: Path, hint: str) -> None:
        self.path, self.hint = path, hint
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, pa.Array] = OrderedDict()
        self._kept_bytes = 0
        try:
            self._file = pq.ParquetFile(path)
        except (OSError, pa.ArrowException) as err:
            raise self._error(err) from None
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
            raise IndexError(f"sentence {i} is not in 0..{n - 1}")
        group = int(np.searchsorted(self._starts, s, side="right")) - 1
        text: str = self._group(group)[s - int(self._starts[group])].as_py()
        return text

    def __iter__(self) -> Iterator[str]:
        for group in range(len(self._starts) - 1):
            yield from self._read(group).to_pylist()

    def _group(self, group: int) -> pa.Array:
        with self._lock:
            found = self._kept.get(group)
            if found is not None:
                self._kept.move_to_end(group)
                return found
            column = self._read(group)
            self._kept[group] = column
            self._kept_bytes += column.nbytes
            while self._kept_bytes > KEPT_BYTES and len(self._kept) > 1:
                self._kept_bytes -= self._kept.popitem(last=False)[1].nbytes
            return column

    def _read(self, group: int) -> pa.Array:
        try:
            return self._file.read_row_group(group, columns=["text"]).column("text").combine_chunks()
        except (OSError, pa.ArrowException) as err:
            raise self._error(err) from None

    def _error(self, err: Exception) -> IndexFormatError:
        return IndexFormatError(f"{self.path.parent}: cannot read {self.path.name} ({err}); {self.hint}")
