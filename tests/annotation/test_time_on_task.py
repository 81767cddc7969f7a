"""Time on task (sentret_core.annotation.time_on_task): seconds on screen before the grade, summed over
regrades, in the exports and back through the JSONL import; the per-annotator median and total by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentret_core.annotation import time_on_task
from sentret_core.annotation.records import Judgment
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.time_on_task import TimeOnTask, by_annotator
from sentret_core.errors import SentretError
from tests.annotation.test_store import SETTINGS, TOKEN, join, make_items


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(time_on_task, "now", fake)
    return fake


def seconds(store: JudgmentStore) -> dict[int, float | None]:
    return {j.sentence_id: j.seconds for j in store.admin(TOKEN).all_judgments("s")}


def test_the_seconds_an_item_was_on_screen_go_with_its_grade(store: JudgmentStore, clock: Clock) -> None:
    ann = join(store)
    ann.show(1)
    clock.now += 4.5
    ann.show(1)  # a rerun of the page showing the same item: the clock runs on
    clock.now += 3.0
    ann.grade(1, 3)
    assert seconds(store) == {10: 7.5}
    ann.show(2)
    clock.now += 2.0
    ann.show(3)  # another item before grading 2: 2 has no time, 3's starts now
    clock.now += 1.0
    ann.grade(2, 1)
    ann.grade(3, 2)
    assert seconds(store) == {10: 7.5, 11: None, 12: 1.0}
    ann.show(1)  # back to 1 and regraded: its time adds up
    clock.now += 2.5
    ann.grade(1, 4)
    assert seconds(store)[10] == 10.0
    ann.undo()  # undo keeps the time spent
    assert seconds(store)[10] == 10.0
    exported = [json.loads(line) for line in store.admin(TOKEN).export_jsonl("s").splitlines()]
    assert [line["seconds"] for line in exported] == [10.0, None, 1.0]
    with pytest.raises(SentretError, match="not in session"):
        ann.show(99)
    store.admin(TOKEN).close_session("s")
    ann.show(4)  # a closed session's page still shows its item: nothing to time, and no error
    with store.db.read() as conn:
        assert conn.execute("SELECT count(*) FROM current_views").fetchone()[0] == 0


def test_time_on_task_round_trips_through_the_jsonl_import(store: JudgmentStore, clock: Clock,
                                                          tmp_path: Path) -> None:
    ann = join(store)
    ann.show(1)
    clock.now += 12.25
    ann.grade(1, 4)
    exported = store.admin(TOKEN).export_jsonl("s")
    with JudgmentStore(tmp_path / "copy.db") as copy:
        copy.create_session("s", "/indexes/demo", make_items(), SETTINGS)
        admin = copy.admin(TOKEN)
        assert admin.import_jsonl("s", exported.splitlines()) == 1
        assert [j.seconds for j in admin.all_judgments("s")] == [12.25]
        for bad in (-1, "12", True, 10**9):
            line = json.dumps({**json.loads(exported), "seconds": bad, "annotator": "x"})
            with pytest.raises(SentretError, match="seconds must be a number from 0"):
                admin.import_jsonl("s", [line])


def test_each_annotators_median_and_total_by_hand() -> None:
    def judged(who: str, spent: float | None) -> Judgment:
        return Judgment("s", "t", "q", "e", 1, 0, "", "", who, "person", 3, None, "", "", seconds=spent)

    rows = [judged("bea", 4.0), judged("ann", 3.0), judged("ann", None), judged("ann", 9.0), judged("ann", 5.0)]
    # ann: 3, 5, 9 timed (median 5, total 17), one untimed; bea: 4
    assert by_annotator(rows) == [TimeOnTask("ann", 3, 5.0, 17.0), TimeOnTask("bea", 1, 4.0, 4.0)]
    assert by_annotator([judged("cy", None)]) == [TimeOnTask("cy", 0, None, 0.0)]
