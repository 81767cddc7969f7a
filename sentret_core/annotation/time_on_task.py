"""Time on task: how long an annotator had an item on screen before grading it (as Label Studio's
``lead_time``, Argilla's and Prodigy's timings), per judgment and summed over its regrades.

The grading page reports the item it shows (:func:`show`): one row per annotator in ``current_views``
(schema step ``_TIME_ON_TASK``), kept while the same item stays on screen, so reruns of the page do not
restart the clock. A grade of that item adds the seconds since to its judgment (:func:`seconds_on`) and
clears the view. An item graded without being shown (an API call, an import) has no time.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from collections.abc import Iterable
from typing import NamedTuple

from sentret_core.annotation.records import Judgment


class TimeOnTask(NamedTuple):
    """One annotator's time on task over the items graded with a time."""

    annotator: str
    items: int  # judgments with a time
    median_s: float | None
    total_s: float


def now() -> float:
    """Wall-clock seconds: the clock views are timed by (the tests replace it)."""
    return time.time()


def show(conn: sqlite3.Connection, session_id: int, annotator_id: int, item_id: int) -> None:
    """``item_id`` is on the annotator's screen from now on, unless it already was (then its start stays)."""
    conn.execute(
        "INSERT INTO current_views (session_id, annotator_id, item_id, since) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (session_id, annotator_id) DO UPDATE SET item_id = excluded.item_id, since = excluded.since"
        " WHERE current_views.item_id IS NOT excluded.item_id",
        (session_id, annotator_id, item_id, now()),
    )


def showing(conn: sqlite3.Connection, session_id: int, annotator_id: int) -> int | None:
    """The item on the annotator's screen (None: none reported)."""
    row = conn.execute("SELECT item_id FROM current_views WHERE session_id = ? AND annotator_id = ?",
                       (session_id, annotator_id)).fetchone()
    return None if row is None else int(row[0])


def seconds_on(conn: sqlite3.Connection, key: tuple[int, int, int]) -> float | None:
    """The seconds the item of ``key`` has been on screen, clearing the view; None when it is not on screen."""
    session_id, item_id, annotator_id = key
    row = conn.execute("SELECT item_id, since FROM current_views WHERE session_id = ? AND annotator_id = ?",
                       (session_id, annotator_id)).fetchone()
    if row is None or int(row[0]) != item_id:
        return None
    conn.execute("DELETE FROM current_views WHERE session_id = ? AND annotator_id = ?", (session_id, annotator_id))
    return max(0.0, now() - float(row[1]))


def by_annotator(judgments: Iterable[Judgment]) -> list[TimeOnTask]:
    """Each annotator's median and total time on task, by name."""
    times: dict[str, list[float]] = {}
    for j in judgments:
        timed = times.setdefault(j.annotator, [])
        if j.seconds is not None:
            timed.append(j.seconds)
    return [TimeOnTask(who, len(ts), statistics.median(ts) if ts else None, sum(ts))
            for who, ts in sorted(times.items())]
