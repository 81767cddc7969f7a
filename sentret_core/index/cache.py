"""The one cache of a loaded index: data derived from it once and reused across queries, always bounded.

Whatever a scorer, the support engine or a loader computes from an index without the query (postings,
context windows, length factors, an artefact's parsed tables, entity arrays) lives in ``index.cache``, a
:class:`DerivedCache`: per loaded index, per process, in memory, and nowhere else on the index. Scores never
depend on what it holds (``tests/test_golden_scores.py``). Three kinds of entry, each with its bound:

- :meth:`DerivedCache.get`: data that depends on the index and on discrete choices. The key names what it
  holds and those choices (``"models.bm25.mean_len/context/2"``: the mean length of the ±2 contexts); keys
  sharing the prefix before their first ``/`` form a group, of which the newest :data:`GROUP_SIZE` are kept,
  so no sequence of requests grows the cache without bound.
- :meth:`DerivedCache.get_lru`: data per setting of a parameter (the compiled BM25 kernel's K by sentence
  length per ``k1`` and ``b``, an LM's coefficients by sentence length per λ or μ, a term's MaxScore bound):
  the ``size`` keys of a group used last.
- :meth:`DerivedCache.get_sized`: data whose size varies by orders of magnitude (BM25F's fields of a term):
  the entries used last, up to a number of bytes for the group.

:meth:`DerivedCache.get_stamped` rebuilds an entry whose source changed on disk (a retrained artefact).
Streamlit's sessions share one loaded index from several threads: the cache is thread-safe, and two threads
may build the same entry at once (every build is pure), the one stored last being kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

GROUP_SIZE = 32  # more than any one group a request needs (context windows 0-10, with and without the sentence: 22)
LRU_SIZE = 8  # parameter settings kept per group: a grid search revisits the last few


class DerivedCache:
    """Bounded, thread-safe store of an index's derived data (see the module's docstring for the bounds)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._plain: dict[str, Any] = {}  # insertion order is age: the oldest of a group go first
        self._lru: dict[str, OrderedDict[Hashable, Any]] = {}
        self._sized: dict[str, tuple[OrderedDict[Hashable, Any], int]] = {}

    def get(self, key: str, build: Callable[[], T]) -> T:
        """The entry ``key``, built by ``build()`` on first use; the group of ``key`` (its prefix before the
        first ``/``) keeps its newest :data:`GROUP_SIZE` entries."""
        try:
            value: T = self._plain[key]
            return value
        except KeyError:
            pass
        value = build()
        self._store(key, value)
        return value

    def get_stamped(self, key: str, stamp: Hashable, build: Callable[[], T]) -> T:
        """Like :meth:`get`, but rebuilt when ``stamp`` (a file's mtime, size and inode) is not the one the
        entry was built under."""
        held = self._plain.get(key)
        if held is not None and held[0] == stamp:
            found: T = held[1]
            return found
        value = build()
        self._store(key, (stamp, value))
        return value

    def _store(self, key: str, value: Any) -> None:
        prefix = key.split("/", 1)[0] + "/"
        with self._lock:
            self._plain.pop(key, None)  # a rebuilt entry is the newest of its group
            group = [k for k in self._plain if k.startswith(prefix)]
            for old in group[: max(0, len(group) - (GROUP_SIZE - 1))]:
                del self._plain[old]
            self._plain[key] = value

    def get_lru(self, group: str, key: Hashable, build: Callable[[], T], size: int = LRU_SIZE) -> T:
        """The entry ``key`` of ``group``, built on first use; the group keeps the ``size`` keys used last."""
        with self._lock:
            store = self._lru.setdefault(group, OrderedDict())
            if key in store:
                store.move_to_end(key)
                found: T = store[key]
                return found
        value = build()
        with self._lock:
            store[key] = value
            while len(store) > size:
                store.popitem(last=False)
        return value

    def get_sized(self, group: str, key: Hashable, build: Callable[[], T], max_bytes: int,
                  nbytes: Callable[[T], int]) -> T:
        """The entry ``key`` of ``group``, built on first use; the group keeps the entries used last, up to
        ``max_bytes`` by ``nbytes``. An entry larger than ``max_bytes`` is returned and not kept (at 75M
        sentences the fields of the most frequent term take a gigabyte)."""
        with self._lock:
            store, _ = self._sized.setdefault(group, (OrderedDict(), 0))
            if key in store:
                store.move_to_end(key)
                found: T = store[key]
                return found
        value = build()
        if nbytes(value) > max_bytes:
            return value
        with self._lock:
            store, size = self._sized[group]
            if key in store:  # another thread built it meanwhile
                size -= nbytes(store[key])
            store[key] = value
            size += nbytes(value)
            while size > max_bytes:
                size -= nbytes(store.popitem(last=False)[1])
            self._sized[group] = (store, size)
        return value

    def bytes_kept(self, group: str) -> int:
        """What :meth:`get_sized` counts as held in ``group``."""
        return self._sized.get(group, (OrderedDict(), 0))[1]

    def held(self, group: str | None = None) -> list[Hashable]:
        """The keys held: of :meth:`get` entries (``group=None``), else of one LRU or sized group, oldest first."""
        with self._lock:
            if group is None:
                return list(self._plain)
            store = self._lru.get(group) or self._sized.get(group, (OrderedDict(), 0))[0]
            return list(store)

    def drop(self, name: str) -> None:
        """Forget one :meth:`get` entry, or one LRU or sized group."""
        with self._lock:
            self._plain.pop(name, None)
            self._lru.pop(name, None)
            self._sized.pop(name, None)

    def __len__(self) -> int:
        """The number of entries held, over every kind."""
        with self._lock:
            grouped = sum(len(store) for store in self._lru.values())
            return len(self._plain) + grouped + sum(len(store) for store, _ in self._sized.values())
