"""Who grades which item, and in what order: each annotator's own queue of a session.

A session's :class:`ItemOrder` (chosen by the admin at creation) says

* ``overlap``: the percentage of the items graded by ``graders`` annotators (0: by every annotator);
  the other items are split between the annotators, one each. ``overlap=100, graders=0`` (the default)
  is every annotator grading every item.
* ``shuffle``: each annotator sees their items in their own seeded order (topics in a shuffled
  order, the items of a topic together, shuffled too: keeping a topic's items together spares the
  annotator re-reading the query at every item, while order effects no longer line up across
  annotators); without it every annotator follows the session's order.

Which items overlap: the first ``round(overlap% × n)`` items of a seeded permutation of the pool.
Which annotators grade an item: the ``k`` with the highest seeded hash of (item, annotator)
(rendezvous hashing, Thaler & Ravishankar, IEEE/ACM ToN 1998): every item gets exactly ``k``
annotators (all of them when there are fewer), and adding an annotator moves items only to the
newcomer, so nobody's queue is reshuffled when the team grows mid-session; removing one spreads
their items over the others. The loads are even in expectation, not exactly.

A session created before item orders (its ``item_order`` is NULL) keeps its one shared order for
everybody, as before. An annotator's queue also keeps every item they graded or skipped, so a
change of team never hides a grade already given.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sentret_core.annotation.records import PERSON
from sentret_core.annotation.roles import ANNOTATOR, graders, role_of
from sentret_core.errors import SentretError

MAX_GRADERS = 1000


@dataclass(frozen=True)
class ItemOrder:
    """How a session's items are shared out and ordered (module docstring)."""

    overlap: int = 100  # percent of the items graded by ``graders`` annotators; the rest by one
    graders: int = 0  # annotators per overlapping item; 0: every annotator
    shuffle: bool = True  # each annotator in their own seeded order
    seed: int = 0

    def __post_init__(self) -> None:
        for name, value, hi in (("overlap", self.overlap, 100), ("graders", self.graders, MAX_GRADERS)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= hi:
                raise SentretError(f"the item order's {name} must be an integer from 0 to {hi} (got {value!r})")
        if not isinstance(self.shuffle, bool):
            raise SentretError(f"the item order's shuffle must be true or false (got {self.shuffle!r})")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise SentretError(f"the item order's seed must be an integer (got {self.seed!r})")

    def to_json(self) -> str:
        return json.dumps({"overlap": self.overlap, "graders": self.graders, "shuffle": self.shuffle,
                           "seed": self.seed})

    @classmethod
    def from_json(cls, text: str) -> ItemOrder:
        data = json.loads(text)
        return cls(int(data["overlap"]), int(data["graders"]), bool(data["shuffle"]), int(data["seed"]))

    def describe(self) -> str:
        """The order in one phrase, for people."""
        who = "every annotator" if self.graders == 0 else f"{self.graders} annotator{'s' * (self.graders != 1)}"
        if self.overlap == 100:
            shared = f"every item graded by {who}"
        elif self.overlap == 0 or self.graders == 1:
            shared = "every item graded by one annotator"
        else:
            shared = f"{self.overlap}% of the items graded by {who}, the rest by one annotator each"
        return shared + ("; each annotator in their own shuffled order" if self.shuffle else "; one shared order")


def _hash(seed: int, *parts: object) -> int:
    text = ":".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def overlapping(n_items: int, order: ItemOrder) -> frozenset[int]:
    """The positions (0-based) of the items in the overlap: ``round(overlap% × n_items)`` of them,
    half up (integer arithmetic, so 50% of 5 items is exactly 3)."""
    count = (order.overlap * n_items * 2 + 100) // 200
    permuted = sorted(range(n_items), key=lambda p: _hash(order.seed, "overlap", p))
    return frozenset(permuted[:count])


def assign(topics: Sequence[str], annotators: Sequence[int], order: ItemOrder) -> dict[int, list[int]]:
    """Each annotator's queue: the positions of the items they grade, in the order they see them.

    ``topics`` holds each item's topic, by position (the session's order); ``annotators`` the ids of
    the annotators who share the work (the session's persons, not removed).
    """
    team = list(dict.fromkeys(annotators))
    shared = overlapping(len(topics), order)
    queues: dict[int, list[int]] = {a: [] for a in team}
    for position in range(len(topics)):
        if not team:
            break
        wanted = (order.graders or len(team)) if position in shared else 1
        ranked = sorted(team, key=lambda a: _hash(order.seed, "assign", position, a), reverse=True)
        for annotator in ranked[: min(wanted, len(team))]:
            queues[annotator].append(position)
    return {a: ordered(queue, topics, a, order) for a, queue in queues.items()}


def ordered(positions: Sequence[int], topics: Sequence[str], annotator: int, order: ItemOrder) -> list[int]:
    """``positions`` in ``annotator``'s order: by topic, then item, each by a seeded hash; or as they are."""
    if not order.shuffle:
        return sorted(positions)
    return sorted(positions, key=lambda p: (_hash(order.seed, "topic", annotator, topics[p]),
                                            _hash(order.seed, "item", annotator, p)))


# ----------------------------------------------------------------------------- the store's side


def session_order(conn: sqlite3.Connection, session_id: int) -> ItemOrder | None:
    """The session's item order; None for a session made before item orders (one shared order)."""
    if not any(row[1] == "item_order" for row in conn.execute("PRAGMA table_info(sessions)")):
        return None  # a database older than item orders, opened read-only
    row = conn.execute("SELECT item_order FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return None if row is None or row[0] is None else ItemOrder.from_json(str(row[0]))


def queue(conn: sqlite3.Connection, session_id: int, annotator_id: int) -> list[int]:
    """The item ids of ``annotator_id``'s queue in their order: the items assigned to them, then any
    other item they graded or skipped (after a change of team), in the same order."""
    items = conn.execute(
        "SELECT id, query, entity FROM pool_items WHERE session_id = ? ORDER BY position", (session_id,)
    ).fetchall()
    order = session_order(conn, session_id)
    grader = role_of(conn, annotator_id) == ANNOTATOR  # a reviewer's queue: what they graded before, if anything
    if order is None and grader:
        return [int(row[0]) for row in items]
    order = order or ItemOrder(shuffle=False)
    topics = [f"{query}\x00{entity}" for _, query, entity in items]
    team = [int(r[0]) for r in conn.execute(
        f"SELECT id FROM annotators WHERE session_id = ? AND kind = ? AND removed_at IS NULL{graders(conn)}"
        " ORDER BY id",
        (session_id, PERSON),
    )]
    mine = set(assign(topics, team, order).get(annotator_id, ())) if grader else set()
    touched = {int(r[0]) for r in conn.execute(
        "SELECT item_id FROM judgments WHERE session_id = ?1 AND annotator_id = ?2"
        " UNION SELECT item_id FROM skips WHERE session_id = ?1 AND annotator_id = ?2",
        (session_id, annotator_id),
    )}
    ids = [int(row[0]) for row in items]
    mine |= {p for p, item in enumerate(ids) if item in touched}
    return [ids[p] for p in ordered(sorted(mine), topics, annotator_id, order)]


def queue_positions(conn: sqlite3.Connection, session_id: int, annotator_id: int) -> Mapping[int, int]:
    """Item id → its 0-based place in ``annotator_id``'s queue."""
    return {item: place for place, item in enumerate(queue(conn, session_id, annotator_id))}
