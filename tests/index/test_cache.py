"""The index's one cache (sentret_core.index.cache.DerivedCache): each kind of entry keeps to its bound, and
what it holds never changes a score."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sentret_core import Index, score
from sentret_core.index.cache import GROUP_SIZE, LRU_SIZE, DerivedCache


def test_an_entry_is_built_once_and_a_group_keeps_its_newest() -> None:
    cache = DerivedCache()
    built: list[str] = []
    for i in range(GROUP_SIZE + 8):  # 40 context windows, say: one group "ctx/"
        assert cache.get(f"ctx/{i}", lambda i=i: built.append(f"ctx/{i}") or i) == i
    assert cache.get("ctx/39", lambda: -1) == 39 and len(built) == GROUP_SIZE + 8  # held: not built again
    assert cache.held() == [f"ctx/{i}" for i in range(8, GROUP_SIZE + 8)]  # 40 - 32 = 8 oldest dropped
    cache.get("isf", lambda: "isf")  # a key without "/" is a group of its own: the others never push it out
    for i in range(GROUP_SIZE + 8, 2 * GROUP_SIZE + 8):
        cache.get(f"ctx/{i}", lambda i=i: i)
    assert "isf" in cache.held() and len(cache.held()) == GROUP_SIZE + 1
    assert cache.get("ctx/0", lambda: "again") == "again"  # dropped, so built anew


def test_a_parameter_group_keeps_the_settings_used_last() -> None:
    cache = DerivedCache()
    for b in (0.1, 0.2, 0.3):
        cache.get_lru("bm25.K", b, lambda b=b: b * 10, size=3)
    assert cache.get_lru("bm25.K", 0.1, lambda: -1, size=3) == 1.0  # used again: now the newest
    cache.get_lru("bm25.K", 0.4, lambda: 4.0, size=3)  # a fourth setting: 0.2, the least recently used, goes
    assert cache.held("bm25.K") == [0.3, 0.1, 0.4]
    assert LRU_SIZE == 8  # the default: tuning's grid revisits the last few settings


def test_a_sized_group_keeps_to_its_bytes_and_nothing_larger() -> None:
    cache = DerivedCache()
    for key, text in [(1, "aaaa"), (2, "bbb"), (3, "cc")]:  # 4 + 3 + 2 = 9 bytes, within 10
        cache.get_sized("fields", key, lambda text=text: text, 10, len)
    assert cache.held("fields") == [1, 2, 3] and cache.bytes_kept("fields") == 9
    cache.get_sized("fields", 4, lambda: "ddddd", 10, len)  # 9 + 5 = 14 > 10: drop 1 (4 bytes): 10
    assert cache.held("fields") == [2, 3, 4] and cache.bytes_kept("fields") == 10
    assert cache.get_sized("fields", 5, lambda: "e" * 50, 10, len) == "e" * 50  # larger than the budget: not kept
    assert cache.held("fields") == [2, 3, 4] and cache.bytes_kept("fields") == 10
    cache.drop("fields")
    assert cache.held("fields") == [] and cache.bytes_kept("fields") == 0


def test_a_stamped_entry_is_rebuilt_when_its_source_changed() -> None:
    cache = DerivedCache()
    assert cache.get_stamped("artefact/classes", (1, 100), lambda: "first") == "first"
    assert cache.get_stamped("artefact/classes", (1, 100), lambda: "not built") == "first"
    assert cache.get_stamped("artefact/classes", (2, 120), lambda: "retrained") == "retrained"
    assert len(cache) == 1


def test_threads_sharing_an_index_see_one_value_and_the_bound_holds() -> None:
    cache = DerivedCache()

    def work(i: int) -> int:
        value: int = cache.get(f"ctx/{i % 50}", lambda: i % 50)
        cache.get_lru("k", i % 20, lambda: i % 20, size=5)
        return value

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(work, range(2000)))
    assert got == [i % 50 for i in range(2000)]
    assert len(cache.held()) <= GROUP_SIZE and len(cache.held("k")) <= 5


def test_the_index_cache_is_bounded_under_many_settings_and_scores_do_not_depend_on_it(small_index: Index) -> None:
    index = Index.load(small_index.path)  # a fresh load: an empty cache of its own
    assert isinstance(index.cache, DerivedCache) and len(index.cache) == 0
    first = score(index, "spanish civil war", "bm25f.v1", k1=0.5, b=0.3)
    for window in range(1, 11):
        for b in np.linspace(0.0, 1.0, 11):
            score(index, "spanish civil war", "bm25f.v1", window=window, b=float(b))
    again = score(index, "spanish civil war", "bm25f.v1", k1=0.5, b=0.3)
    assert np.array_equal(first.ids, again.ids) and np.array_equal(first.scores, again.scores)
    for group in ("models.bm25.invB", "models.bm25.K", "models.bm25f.weights"):
        assert len(index.cache.held(group)) <= LRU_SIZE
    groups: dict[str, int] = {}
    for key in index.cache.held():
        prefix = str(key).split("/", 1)[0]
        groups[prefix] = groups.get(prefix, 0) + 1
    assert max(groups.values()) <= GROUP_SIZE
    fresh = score(Index.load(small_index.path), "spanish civil war", "bm25f.v1", k1=0.5, b=0.3)
    assert np.array_equal(fresh.scores, first.scores)
