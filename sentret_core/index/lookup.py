"""Entities and mentions without a Python object per row: labels as small codes, a (text, label) lookup by
binary search, and the mentions' integer columns read one at a time when first asked for.

At the seed paper's scale (75M sentences, ~20M distinct entities, 37M mentions) a dict of every entity, a
list of every name or label, or six int64 copies of the mentions would each cost gigabytes of heap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


class Labels(Sequence[str]):
    """``labels[e]``: entity e's label, held as one code per entity (``codes``) into ``names``."""

    def __init__(self, codes: np.ndarray, names: Sequence[str]) -> None:
        self.codes, self.names = codes, tuple(names)

    @classmethod
    def of(cls, column: pa.ChunkedArray) -> Labels:
        """From a dictionary-encoded (or plain string) column, its dictionaries unified."""
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(column)
        column = column.unify_dictionaries()
        names = column.chunk(0).dictionary.to_pylist() if column.num_chunks else []
        parts = [chunk.indices.to_numpy(zero_copy_only=False) for chunk in column.chunks]
        codes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int8)
        small = np.int8 if len(names) <= 127 else np.int16 if len(names) <= 32767 else np.int32
        return cls(codes.astype(small), [str(name) for name in names])

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self.names[c] for c in self.codes[i].tolist()]
        return self.names[int(self.codes[i])]

    def __iter__(self) -> Iterator[str]:
        names = self.names
        for start in range(0, len(self.codes), 65_536):
            yield from (names[c] for c in self.codes[start : start + 65_536].tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a list, so unhashable like one

    def mask(self, wanted: Sequence[str]) -> np.ndarray:
        """A boolean per entity: is its label one of ``wanted``?"""
        codes = [i for i, name in enumerate(self.names) if name in set(wanted)]
        return np.isin(self.codes, np.array(codes, dtype=self.codes.dtype))


class EntityIndex(Mapping[tuple[str, str], int]):
    """``(text, label)`` → entity id, by binary search over the entities sorted by text then label.

    Built at the first lookup from the names (``names()``, one Arrow string array) and the labels' codes:
    an Arrow array and one int32 per entity, rather than a dict of a tuple per entity. Iterating gives the
    keys in id order, from ``texts`` (read a row group at a time).
    """

    def __init__(self, names: Callable[[], pa.Array], labels: Labels, texts: Sequence[str]) -> None:
        self._names, self.labels, self.texts = names, labels, texts
        self._lock = threading.Lock()
        self._sorted: tuple[pa.Array, np.ndarray] | None = None

    def _search(self) -> tuple[pa.Array, np.ndarray]:
        with self._lock:
            if self._sorted is None:
                names = pc.fill_null(self._names(), "")  # a null name (a damaged table) matches no key
                keys = pa.table({"text": names, "label": pa.array(self.labels.codes)})
                order = pc.sort_indices(keys, sort_keys=[("text", "ascending"), ("label", "ascending")])
                self._sorted = (names, order.to_numpy().astype(np.int32))
            return self._sorted

    def __getitem__(self, key: tuple[str, str]) -> int:
        found = self._find(key)
        if found is None:
            raise KeyError(key)
        return found

    def _find(self, key: object) -> int | None:
        if not isinstance(key, tuple) or len(key) != 2 or not all(isinstance(k, str) for k in key):
            return None
        text, label = key
        if label not in self.labels.names:
            return None
        code = self.labels.names.index(label)
        names, order = self._search()
        codes = self.labels.codes
        lo, hi = 0, len(order)
        while lo < hi:  # the first position whose (text, code) is not below the key
            mid = (lo + hi) // 2
            entity = int(order[mid])
            if (names[entity].as_py(), int(codes[entity])) < (text, code):
                lo = mid + 1
            else:
                hi = mid
        if lo < len(order):
            entity = int(order[lo])
            if names[entity].as_py() == text and int(codes[entity]) == code:
                return entity
        return None

    def __contains__(self, key: object) -> bool:
        return self._find(key) is not None

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return zip(self.texts, self.labels)

    def __len__(self) -> int:
        return len(self.labels)


class LazyColumns(Mapping[str, np.ndarray]):
    """A table's integer columns by name, each read (and checked) by ``read(name)`` when first asked for."""

    def __init__(self, names: Sequence[str], read: Callable[[str], np.ndarray]) -> None:
        self.names, self._read = tuple(names), read
        self._held: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.names:
            raise KeyError(name)
        with self._lock:
            if name not in self._held:
                self._held[name] = self._read(name)
            return self._held[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def held(self) -> list[str]:
        """The columns read so far."""
        return list(self._held)
