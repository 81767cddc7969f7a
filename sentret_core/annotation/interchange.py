"""A session in other tools' formats, and back: Label Studio's JSON tasks and a Hugging Face ``datasets`` JSONL.

* **Label Studio** (:func:`label_studio_tasks`): one task per pool item, its ``data`` the sentence
  (``text``), query, entity, narrative, title, topic id and docno, its ``annotations`` one per judgment:
  the grade as a ``Choices`` result named ``grade`` ("1"-"4"), the note as a ``TextArea`` named ``note``, the
  flag as a ``Choices`` named ``flag``, the time on task as ``lead_time``, and the annotator's name as
  ``sentret_annotator``. :data:`LABEL_STUDIO_CONFIG` is the labeling interface that reads it. Label
  Studio's own JSON export of such a project reads back with :func:`label_studio_lines` (an annotation
  without ``sentret_annotator`` belongs to "label-studio <completed_by>").
* **Hugging Face** (:func:`hf_records`): one record per pool item with the same fields, its grades as a
  list of ``{annotator, annotator_kind, grade, note, flagged, seconds}`` and ``label``, the majority grade
  (an adjudicated item's adjudicated grade; null when ungraded) and ``relevant`` (label ≥ 3): every line has
  the same keys and types, so ``datasets.load_dataset("json", data_files=...)`` (pyarrow's JSON reader) loads
  it as one table. :func:`hf_lines` reads it back.

Both read back into sentret's JSONL import (:meth:`~.admin.Admin.import_jsonl`): each grade goes to an
import annotator, as every import does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from sentret_core.annotation.adjudication import adjudicated_grades
from sentret_core.annotation.pooling import adjudicate
from sentret_core.defaults import RELEVANT_GRADE
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import topic_id

if TYPE_CHECKING:
    from sentret_core.annotation.admin import Admin

LABEL_STUDIO_CONFIG = """<View>
  <Header value="$query"/>
  <Text name="entity" value="$entity"/>
  <Text name="narrative" value="$narrative"/>
  <Text name="text" value="$text"/>
  <Choices name="grade" toName="text" choice="single" required="true" showInline="true">
    <Choice value="1" hint="non-relevant"/>
    <Choice value="2" hint="fairly relevant"/>
    <Choice value="3" hint="relevant"/>
    <Choice value="4" hint="very relevant"/>
  </Choices>
  <Choices name="flag" toName="text" choice="multiple"><Choice value="flagged"/></Choices>
  <TextArea name="note" toName="text" maxSubmissions="1"/>
</View>
"""
ITEM_FIELDS = ("topic_id", "query", "entity", "narrative", "docno", "sentence_id", "title", "text")


def _items(admin: Admin, session: str) -> list[dict[str, Any]]:
    """The session's pool items in its order, each with its judgments (removed annotators' left out)."""
    store = admin.store
    narratives = store.narratives(session)
    with store.db.read() as conn:
        session_id = admin.session_id(conn, session)
        docno = "p.docno" if any(r[1] == "docno" for r in conn.execute("PRAGMA table_info(pool_items)")) else "NULL"
        rows = conn.execute(f"SELECT p.query, p.entity, {docno}, p.sentence_id, p.title, p.text FROM pool_items p"
                            " WHERE p.session_id = ? ORDER BY p.position", (session_id,)).fetchall()
    items = {}
    for query, entity, doc, sid, title, text in rows:
        items[(query, entity, sid)] = {"topic_id": topic_id(query, entity), "query": query, "entity": entity,
                                       "narrative": narratives.get((query, entity), ""), "docno": doc,
                                       "sentence_id": sid, "title": title or "", "text": text or "",
                                       "judgments": []}
    for j in admin.all_judgments(session):
        items[(j.query, j.entity, j.sentence_id)]["judgments"].append(j)
    return list(items.values())


def label_studio_tasks(admin: Admin, session: str) -> str:
    """The session as a Label Studio JSON task list (module docstring)."""
    tasks = []
    for item in _items(admin, session):
        data = {("sentret_docno" if k == "docno" else k): item[k] for k in ITEM_FIELDS}
        tasks.append({"data": data, "annotations": [_annotation(j) for j in item["judgments"]]})
    return json.dumps(tasks, ensure_ascii=False, indent=1) + "\n"


def _annotation(j: Any) -> dict[str, Any]:
    result: list[dict[str, Any]] = [
        {"from_name": "grade", "to_name": "text", "type": "choices", "value": {"choices": [str(j.grade)]}}]
    if j.note:
        result.append({"from_name": "note", "to_name": "text", "type": "textarea", "value": {"text": [j.note]}})
    if j.flagged:
        result.append({"from_name": "flag", "to_name": "text", "type": "choices", "value": {"choices": ["flagged"]}})
    found = {"result": result, "created_at": j.created_at, "updated_at": j.updated_at,
             "sentret_annotator": j.annotator, "sentret_annotator_kind": j.annotator_kind}
    return found | ({"lead_time": j.seconds} if j.seconds is not None else {})


def label_studio_lines(text: str) -> Iterator[str]:
    """Label Studio's JSON export (a task list) as sentret JSONL import lines, one per annotation."""
    try:
        tasks = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SentretError(f"not Label Studio JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(tasks, list):
        raise SentretError("Label Studio JSON is a list of tasks")
    for number, task in enumerate(tasks, 1):
        data = task.get("data") if isinstance(task, dict) else None
        if not isinstance(data, dict):
            raise SentretError(f"Label Studio task {number}: no data object")
        for annotation in task.get("annotations") or []:
            if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
                continue
            picked = _results(annotation.get("result"), number)
            who = annotation.get("sentret_annotator") or f"label-studio {_user(annotation.get('completed_by'))}"
            record = {"query": data.get("query"), "entity": data.get("entity"), "docno": data.get("sentret_docno"),
                      "annotator": who, "annotator_kind": annotation.get("sentret_annotator_kind", "person"),
                      "grade": picked.get("grade"), "note": picked.get("note"), "flagged": bool(picked.get("flag")),
                      "seconds": annotation.get("lead_time"), "created_at": annotation.get("created_at"),
                      "updated_at": annotation.get("updated_at")}
            if data.get("sentence_id") is not None:
                record["sentence_id"] = data["sentence_id"]
            if picked.get("grade") is None:
                raise SentretError(f"Label Studio task {number}: an annotation without a grade choice")
            yield json.dumps(record, ensure_ascii=False)


def _results(results: object, number: int) -> dict[str, Any]:
    """The grade (an int), note and flag of one annotation's results."""
    picked: dict[str, Any] = {}
    for result in results if isinstance(results, list) else []:
        value = result.get("value", {}) if isinstance(result, dict) else {}
        name = result.get("from_name") if isinstance(result, dict) else None
        if name == "grade":
            choices = value.get("choices") or []
            if len(choices) != 1 or choices[0] not in ("1", "2", "3", "4"):
                raise SentretError(f"Label Studio task {number}: the grade must be one choice of 1-4; got {choices}")
            picked["grade"] = int(choices[0])
        elif name == "note":
            picked["note"] = " ".join(value.get("text") or []) or None
        elif name == "flag":
            picked["flag"] = bool(value.get("choices"))
    return picked


def _user(completed_by: object) -> str:
    """Label Studio's user of an annotation: an id, or an object with an email or an id."""
    if isinstance(completed_by, dict):
        return str(completed_by.get("email") or completed_by.get("id") or "unknown")
    return str(completed_by) if completed_by is not None else "unknown"


def hf_records(admin: Admin, session: str) -> str:
    """The session as a Hugging Face ``datasets`` JSONL, one pool item a line (module docstring)."""
    decided = adjudicated_grades(admin, session)
    lines = []
    for item in _items(admin, session):
        graded = item.pop("judgments")
        grades = [j.grade for j in graded]
        label = decided.get((item["topic_id"], item["sentence_id"])) or (adjudicate(grades, "majority")
                                                                        if grades else None)
        item["judgments"] = [{"annotator": j.annotator, "annotator_kind": j.annotator_kind, "grade": j.grade,
                              "note": j.note or "", "flagged": j.flagged, "seconds": j.seconds} for j in graded]
        item["label"] = label
        item["relevant"] = None if label is None else label >= RELEVANT_GRADE
        item["docno"] = item["docno"] or ""
        lines.append(json.dumps(item, ensure_ascii=False) + "\n")
    return "".join(lines)


def hf_lines(text: str) -> Iterator[str]:
    """A :func:`hf_records` file as sentret JSONL import lines, one per judgment."""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SentretError(f"line {number}: not valid JSON ({exc.msg})") from None
        if not isinstance(item, dict) or not isinstance(item.get("judgments"), list):
            raise SentretError(f"line {number}: expected an item with a judgments list")
        for j in item["judgments"]:
            if not isinstance(j, dict):
                raise SentretError(f"line {number}: a judgment must be an object")
            yield json.dumps({"query": item.get("query"), "entity": item.get("entity"),
                              "docno": item.get("docno") or None, "sentence_id": item.get("sentence_id"),
                              "annotator": j.get("annotator"), "annotator_kind": j.get("annotator_kind", "person"),
                              "grade": j.get("grade"), "note": j.get("note") or None,
                              "flagged": j.get("flagged", False), "seconds": j.get("seconds")}, ensure_ascii=False)


def exporters(admin: Admin) -> dict[str, Callable[[str], str]]:
    """Each export format but qrels (which takes a rule and a scale): session name → its text."""
    return {"csv": admin.export_csv, "jsonl": admin.export_jsonl, "topics": admin.export_topics,
            "label-studio": lambda session: label_studio_tasks(admin, session),
            "hf-jsonl": lambda session: hf_records(admin, session)}


def jsonl_lines(kind: str, text: str) -> Iterable[str]:
    """The JSONL import lines of a file in format ``kind`` (jsonl, label-studio or hf-jsonl)."""
    readers: dict[str, Callable[[str], Iterable[str]]] = {
        "jsonl": str.splitlines, "label-studio": label_studio_lines, "hf-jsonl": hf_lines}
    if kind not in readers:
        raise SentretError(f"unknown import format {kind!r}; choose one of {', '.join(readers)}")
    return list(readers[kind](text))
