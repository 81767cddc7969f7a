"""A session as Label Studio JSON tasks and as a Hugging Face JSONL, and back (sentret_core.annotation.interchange)."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from sentret_core.annotation import time_on_task
from sentret_core.annotation.adjudication import adjudicate
from sentret_core.annotation.interchange import (
    LABEL_STUDIO_CONFIG,
    hf_records,
    jsonl_lines,
    label_studio_lines,
    label_studio_tasks,
)
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from tests.annotation.test_store import SETTINGS, TOKEN, join, make_items


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    clock = iter(float(t) for t in range(1_000, 2_000, 5))
    monkeypatch.setattr(time_on_task, "now", lambda: next(clock))
    with JudgmentStore(tmp_path / "judgments.db") as opened:
        opened.create_session("s", "/indexes/demo", make_items(), SETTINGS)
        ann, bob = join(opened, "ann"), join(opened, "bob")
        ann.show(1)
        ann.grade(1, 4, "says why", flagged=True)  # 5 s on screen
        ann.grade(2, 1)
        bob.grade(1, 3)
        bob.grade(2, 2)
        adjudicate(opened.admin(TOKEN), "s", 2, 2)  # item 2: ann 1, bob 2 → adjudicated 2
        yield opened


def copy_of(tmp_path: Path) -> JudgmentStore:
    copy = JudgmentStore(tmp_path / "copy.db")
    copy.create_session("s", "/indexes/demo", make_items(), SETTINGS)
    return copy


def test_label_studio_tasks_hold_every_item_and_judgment(store: JudgmentStore) -> None:
    tasks = json.loads(label_studio_tasks(store.admin(TOKEN), "s"))
    assert len(tasks) == 6 and [t["data"]["sentence_id"] for t in tasks] == [10, 11, 12, 10, 11, 12]
    first = tasks[0]
    assert first["data"] == {"topic_id": "who%20founded%20apple:Steve%20Jobs", "query": "who founded apple",
                             "entity": "Steve Jobs", "narrative": "", "sentret_docno": None, "sentence_id": 10,
                             "title": "Doc 10", "text": "Steve Jobs sentence 10."}
    ann, bob = first["annotations"]
    assert ann["sentret_annotator"] == "ann" and ann["lead_time"] == 5.0
    assert ann["result"] == [
        {"from_name": "grade", "to_name": "text", "type": "choices", "value": {"choices": ["4"]}},
        {"from_name": "note", "to_name": "text", "type": "textarea", "value": {"text": ["says why"]}},
        {"from_name": "flag", "to_name": "text", "type": "choices", "value": {"choices": ["flagged"]}},
    ]
    assert bob["result"] == [{"from_name": "grade", "to_name": "text", "type": "choices", "value": {"choices": ["3"]}}]
    assert "lead_time" not in bob and tasks[2]["annotations"] == []  # graded without the page; ungraded
    # the labeling interface names what the tasks carry
    view = ET.fromstring(LABEL_STUDIO_CONFIG)
    names = {e.get("name"): e.get("value") for e in view.iter() if e.get("name")}
    assert names == {"entity": "$entity", "narrative": "$narrative", "text": "$text", "grade": None, "flag": None,
                     "note": None}
    assert [c.get("value") for c in view.find("Choices").iter("Choice")] == ["1", "2", "3", "4"]  # type: ignore[union-attr]


def test_label_studio_round_trips_and_reads_label_studios_own_export(store: JudgmentStore, tmp_path: Path) -> None:
    exported = label_studio_tasks(store.admin(TOKEN), "s")
    with copy_of(tmp_path) as copy:
        admin = copy.admin(TOKEN)
        assert admin.import_jsonl("s", jsonl_lines("label-studio", exported)) == 4
        back = {(j.annotator, j.sentence_id, j.entity): (j.grade, j.note, j.flagged, j.seconds)
                for j in admin.all_judgments("s")}
        assert back == {("ann (imported)", 10, "Steve Jobs"): (4, "says why", True, 5.0),
                        ("ann (imported)", 11, "Steve Jobs"): (1, None, False, None),
                        ("bob (imported)", 10, "Steve Jobs"): (3, None, False, None),
                        ("bob (imported)", 11, "Steve Jobs"): (2, None, False, None)}
        # Label Studio's own export: its user ids, a skipped (cancelled) annotation, no sentret fields
        tasks = json.loads(exported)
        tasks[0]["annotations"] = [
            {"completed_by": 7, "was_cancelled": False, "lead_time": 3.5, "result": [
                {"from_name": "grade", "to_name": "text", "type": "choices", "value": {"choices": ["2"]}}]},
            {"completed_by": {"id": 8, "email": "cy@example.org"}, "was_cancelled": True, "result": []},
        ]
        tasks[1]["annotations"] = []
        assert admin.import_jsonl("s", label_studio_lines(json.dumps(tasks))) == 1
        assert [(j.annotator, j.grade, j.seconds) for j in admin.all_judgments("s") if "label-studio" in j.annotator
                ] == [("label-studio 7 (imported)", 2, 3.5)]
    for bad, message in (("{", "not Label Studio JSON"), ('{"data": {}}', "a list of tasks"), ("[1]", "no data"),
                         (json.dumps([{"data": {"query": "q"}, "annotations": [{"result": [
                             {"from_name": "grade", "value": {"choices": ["5"]}}]}]}]), "one choice of 1-4"),
                         (json.dumps([{"data": {"query": "q"}, "annotations": [{"result": []}]}]), "without a grade")):
        with pytest.raises(SentretError, match=message):
            list(label_studio_lines(bad))


def test_the_hugging_face_jsonl_loads_as_one_table_and_round_trips(store: JudgmentStore, tmp_path: Path) -> None:
    pa_json = pytest.importorskip("pyarrow.json")
    text = hf_records(store.admin(TOKEN), "s")
    rows = [json.loads(line) for line in text.splitlines()]
    assert len(rows) == 6 and len({tuple(r) for r in rows}) == 1  # every line has the same keys
    assert [(r["label"], r["relevant"]) for r in rows[:3]] == [(3, True), (2, False), (None, None)]
    # item 1: ann 4, bob 3 → majority (ties to the lower) 3; item 2: adjudicated 2 over the tie 1/2
    assert rows[0]["judgments"] == [
        {"annotator": "ann", "annotator_kind": "person", "grade": 4, "note": "says why", "flagged": True,
         "seconds": 5.0},
        {"annotator": "bob", "annotator_kind": "person", "grade": 3, "note": "", "flagged": False, "seconds": None}]
    table = pa_json.read_json(io.BytesIO(text.encode()))  # what datasets.load_dataset("json") reads it with
    assert table.num_rows == 6 and table.column_names == list(rows[0])
    assert str(table.schema.field("label").type) == "int64" and str(table.schema.field("relevant").type) == "bool"
    assert str(table.schema.field("judgments").type).startswith("list<item: struct<annotator: string")
    with copy_of(tmp_path) as copy:
        admin = copy.admin(TOKEN)
        assert admin.import_jsonl("s", jsonl_lines("hf-jsonl", text)) == 4
        assert sorted((j.annotator, j.sentence_id, j.grade, j.seconds) for j in admin.all_judgments("s")) == [
            ("ann (imported)", 10, 4, 5.0), ("ann (imported)", 11, 1, None),
            ("bob (imported)", 10, 3, None), ("bob (imported)", 11, 2, None)]
    with pytest.raises(SentretError, match="line 1: expected an item with a judgments list"):
        jsonl_lines("hf-jsonl", '{"query": "q"}')
    with pytest.raises(SentretError, match="unknown import format 'xml'"):
        jsonl_lines("xml", "")
