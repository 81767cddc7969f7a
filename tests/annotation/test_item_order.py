"""Per-annotator item order: a seeded shuffle per annotator, with the overlap the admin chose."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sentret_core.annotation.item_order import ItemOrder, assign, overlapping
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, PoolItem, PoolSettings
from sentret_core.annotation.schema import _ITEM_ORDER
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from tests.annotation.downgrade import downgrade

TOKEN = "order-token"
# 4 topics × 5 items = 20 items, in the session's order (topic by topic)
TOPICS = [f"q{t}\x00e{t}" for t in range(4) for _ in range(5)]


def counts(queues: dict[int, list[int]]) -> Counter[int]:
    """How many annotators each position went to."""
    return Counter(p for queue in queues.values() for p in queue)


def test_same_seed_same_order_and_another_seed_another() -> None:
    order = ItemOrder(seed=7)
    first, again = assign(TOPICS, [1, 2, 3], order), assign(TOPICS, [1, 2, 3], ItemOrder(seed=7))
    assert first == again
    assert first != assign(TOPICS, [1, 2, 3], ItemOrder(seed=8))
    # each annotator has their own order of the same 20 items (everybody grades everything)
    assert all(sorted(q) == list(range(20)) for q in first.values())
    assert len({tuple(q) for q in first.values()}) == 3
    # a topic's items stay together: the queue visits each topic once
    for queue in first.values():
        runs = [TOPICS[p] for i, p in enumerate(queue) if i == 0 or TOPICS[p] != TOPICS[queue[i - 1]]]
        assert len(runs) == len(set(runs)) == 4


def test_without_shuffle_everybody_follows_the_session_order() -> None:
    queues = assign(TOPICS, [1, 2], ItemOrder(shuffle=False))
    assert queues == {1: list(range(20)), 2: list(range(20))}


@pytest.mark.parametrize(
    ("overlap", "graders", "team", "shared"),
    [
        # 50% of 20 = 10 items by 2 annotators, 10 by one: 10·2 + 10·1 = 30 grades
        (50, 2, [1, 2, 3], 10),
        # 25% of 20 = 5 items by all 3, 15 by one
        (25, 0, [1, 2, 3], 5),
        # 100%: every item by 2 of the 4
        (100, 2, [1, 2, 3, 4], 20),
        # 0%: every item by exactly one: a split
        (0, 2, [1, 2, 3], 0),
        # 12% of 20 = 2.4 → 2 items (half up: 2.4 rounds to 2)
        (12, 3, [1, 2, 3], 2),
        # 13% of 20 = 2.6 → 3 items
        (13, 3, [1, 2, 3], 3),
    ],
)
def test_the_overlap_is_exactly_what_was_chosen(overlap: int, graders: int, team: list[int], shared: int) -> None:
    order = ItemOrder(overlap=overlap, graders=graders, seed=3)
    got = counts(assign(TOPICS, team, order))
    k = graders or len(team)
    assert set(got) == set(range(20))  # every item assigned
    assert sum(1 for n in got.values() if n == k) == (shared if k > 1 else 20)
    assert sum(1 for n in got.values() if n == 1) == (20 - shared if k > 1 else 20)
    assert len(overlapping(20, order)) == shared
    assert {p for p, n in got.items() if n == k} == (overlapping(20, order) if k > 1 else set(range(20)))


def test_half_up_on_an_odd_pool() -> None:
    # 50% of 5 = 2.5 → 3 (half up, in integers: (50·5·2 + 100) // 200 = 600 // 200 = 3)
    assert len(overlapping(5, ItemOrder(overlap=50, graders=2))) == 3


def test_more_graders_than_annotators_means_all_of_them() -> None:
    got = counts(assign(TOPICS, [1, 2], ItemOrder(overlap=100, graders=5)))
    assert set(got.values()) == {2}


def test_a_new_annotator_takes_items_only_from_the_others() -> None:
    order = ItemOrder(overlap=30, graders=2, seed=11)
    before = assign(TOPICS, [1, 2, 3], order)
    after = assign(TOPICS, [1, 2, 3, 4], order)
    for annotator in (1, 2, 3):
        assert set(after[annotator]) <= set(before[annotator])  # nobody gets an item they did not have
    assert counts(after) == counts(before)  # the overlap is unchanged
    assert after[4]  # and the newcomer has work


def test_the_split_is_even_enough() -> None:
    # 200 items split (no overlap) between 2: each gets 100 ± a few (rendezvous hashing is fair in expectation)
    topics = [f"q{i // 10}" for i in range(200)]
    sizes = [len(q) for q in assign(topics, [1, 2], ItemOrder(overlap=0, seed=0)).values()]
    assert sum(sizes) == 200 and min(sizes) >= 80


def test_bad_orders_are_refused() -> None:
    with pytest.raises(SentretError, match="overlap must be an integer from 0 to 100"):
        ItemOrder(overlap=101)
    with pytest.raises(SentretError, match="graders must be an integer from 0 to 1000"):
        ItemOrder(graders=-1)
    assert ItemOrder.from_json(ItemOrder(40, 2, False, 9).to_json()) == ItemOrder(40, 2, False, 9)


def items(n_topics: int = 4, per_topic: int = 5) -> list[PoolItem]:
    return [PoolItem(f"q{t}", f"e{t}", 100 * t + i, f"sentence {t}.{i}", "doc") for t in range(n_topics)
            for i in range(per_topic)]


def test_the_queues_in_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    with JudgmentStore(tmp_path / "j.db") as store:
        order = ItemOrder(overlap=50, graders=2, seed=1)
        store.create_session("s", "/idx", items(), PoolSettings(("bm25.v1",), 5, 0), order)
        admin = store.admin(TOKEN)
        for name in ("ann", "bob"):
            admin.add_annotator("s", name, f"{name}-passphrase-1")
        ann = store.sign_in("s", "ann", "ann-passphrase-1")
        bob = store.sign_in("s", "bob", "bob-passphrase-1")
        assert store.session("s").item_order == ItemOrder(overlap=50, graders=2, seed=1)
        # 2 annotators: 10 items to both, the other 10 split: ann + bob = 10·2 + 10 = 30 items
        total = ann.progress().total + bob.progress().total
        assert total == 30
        seen = []
        while (item := ann.next_item()) is not None:
            assert item.position == len(seen)  # the place in ann's own queue
            seen.append(item.item_id)
            ann.grade(item.item_id, 3)
        assert len(seen) == ann.progress().total == ann.progress().graded
        assert [ann.item_at(i).item_id for i in range(len(seen))] == seen
        assert [j.position for j in ann.my_judgments()] == list(range(len(seen)))
        both = set(seen) & {bob.item_at(i).item_id for i in range(bob.progress().total)}
        assert len(both) == 10
        assert admin.progress_by_annotator("s")["ann"].total == len(seen)


def test_a_session_without_an_order_keeps_one_shared_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    with JudgmentStore(tmp_path / "j.db") as store:
        store.create_session("s", "/idx", items(2, 3), PoolSettings(("bm25.v1",), 5, 0))
        store.admin(TOKEN).add_annotator("s", "ann", "ann-passphrase-1")
        ann = store.sign_in("s", "ann", "ann-passphrase-1")
        assert store.session("s").item_order is None
        assert [(ann.item_at(i).query, ann.item_at(i).sentence_id) for i in range(6)] == [
            ("q0", 0), ("q0", 1), ("q0", 2), ("q1", 100), ("q1", 101), ("q1", 102)]


def test_an_old_database_migrates_and_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    path = tmp_path / "j.db"
    with JudgmentStore(path) as store:
        store.create_session("s", "/idx", items(2, 3), PoolSettings(("bm25.v1",), 5, 0))
        admin = store.admin(TOKEN)
        admin.add_annotator("s", "ann", "ann-passphrase-1")
        ann = store.sign_in("s", "ann", "ann-passphrase-1")
        ann.grade(ann.next_item().item_id, 4, "a note", flagged=True)  # type: ignore[union-attr]
        ann.grade(ann.next_item().item_id, 1)  # type: ignore[union-attr]
        exported = admin.export_jsonl("s")
        history = admin.history("s")
    downgrade(path, _ITEM_ORDER)  # the schema just before item orders
    with JudgmentStore(path, read_only=True) as old:  # read as it is: one shared order
        assert old.session("s").item_order is None and old.admin(TOKEN).export_jsonl("s") == exported
    with JudgmentStore(path) as upgraded:  # migrated: every grade, note, flag and history row kept
        admin = upgraded.admin(TOKEN)
        assert admin.export_jsonl("s") == exported and admin.history("s") == history
        ann = upgraded.sign_in("s", "ann", "ann-passphrase-1")
        assert ann.progress().graded == 2 and ann.next_item().position == 2  # type: ignore[union-attr]
        assert upgraded.session("s").item_order is None
        upgraded.create_session("t", "/idx", items(1, 2), PoolSettings(("bm25.v1",), 5, 0), ItemOrder(seed=4))
        assert upgraded.session("t").item_order == ItemOrder(seed=4)
