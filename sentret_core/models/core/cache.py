"""Query-independent data the scorers derive from an index, kept in ``index.cache``.

A key names the parameters the data depends on (``"models.context/2/around"`` for the ±2
context-window counts); data that depends on continuous parameters (per-sentence BM25
normalisations per b, LM coefficients per λ, μ…) is kept for the last few settings only
(:func:`cached_lru`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

T = TypeVar("T")

_LRU_LOCK = threading.Lock()
LRU_SIZE = 8


GROUP_SIZE = 32  # more than any one group a request needs (context windows 0-10, with and without the sentence: 22)


def cached(index: Index, key: str, build: Callable[[], T]) -> T:
    """``index.cache[key]``, built by ``build()`` on first use. Keys that differ only after their
    first ``/`` (a window, an artefact's hash …) form a group, of which the newest
    :data:`GROUP_SIZE` are kept: no request can grow the cache without bound."""
    try:
        value: T = index.cache[key]
    except KeyError:
        value = build()
        with _LRU_LOCK:
            _make_room(index.cache, key.split("/", 1)[0] + "/", GROUP_SIZE - 1)
            index.cache[key] = value
    return value


def _make_room(cache: dict[str, Any], prefix: str, keep: int) -> None:
    """Drop the oldest keys starting with ``prefix`` until ``keep`` are left (dicts keep insertion order)."""
    group = [k for k in cache if isinstance(k, str) and k.startswith(prefix)]
    for old in group[: max(0, len(group) - keep)]:
        cache.pop(old, None)


def cached_lru(index: Index, group: str, key: Any, build: Callable[[], T], size: int = LRU_SIZE) -> T:
    """Like :func:`cached` for data that depends on parameters (per-sentence arrays per k1, b…):
    the last ``size`` parameter settings of ``group`` are kept, so tuning over a grid does not
    grow the cache without bound."""
    with _LRU_LOCK:
        store = index.cache.setdefault(group, OrderedDict())
        if key in store:
            store.move_to_end(key)
            value: T = store[key]
            return value
    value = build()
    with _LRU_LOCK:
        store[key] = value
        while len(store) > size:
            store.popitem(last=False)
    return value
