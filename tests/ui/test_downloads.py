"""Explore's downloads: the shown entities and their support sentences as CSV and JSON."""

from __future__ import annotations

import csv
import io
import json

from sentret_core import Index
from sentret_core.support.engine import support
from sentret_core.support.restating import split_restating
from sentret_core.ui.downloads import CSV_HEADER, entities_csv, entities_json, file_stem


def test_csv_and_json_hold_the_entities_and_their_sentences(small_index: Index) -> None:
    result = support(small_index, "Spanish Civil War", models=("bm25f.v1", "tfisf.v1"))
    kept, restating = split_restating(small_index, result.terms, result.entities)
    rows = list(csv.DictReader(io.StringIO(entities_csv(result, kept, restating))))
    assert tuple(rows[0]) == CSV_HEADER
    # every shown entity has a row per model: a sentence each, or one row with empty sentence cells
    expected = sum(max(len(es.sentences[m]), 1) for es in [*kept, *restating] for m in result.models)
    assert len(rows) == expected
    franco = next(es for es in kept if es.entity.text == "Francisco Franco")
    franco_rows = [r for r in rows if r["entity"] == "Francisco Franco" and r["model"] == "bm25f.v1"]
    assert [r["text"] for r in franco_rows] == [s.text for s in franco.sentences["bm25f.v1"]]
    assert franco_rows[0]["S_qe"] == str(franco.entity.frequency) and franco_rows[0]["restates_query"] == "False"
    assert {r["restates_query"] for r in rows if r["entity"] == "Spanish Civil War"} == {"True"}
    data = json.loads(entities_json(result, kept, restating))
    assert [e["entity"]["text"] for e in data["entities"]] == [es.entity.text for es in kept]
    assert [e["entity"]["text"] for e in data["restating"]] == [es.entity.text for es in restating]
    assert "timings" not in data  # the same request downloads the same file


def test_a_formula_in_corpus_text_opens_as_text_in_a_spreadsheet(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import build_from_texts

    index = build_from_texts(tmp_path, [{"id": "x", "title": "=HYPERLINK(1)", "text": "=1+1 said Paris in France."}])
    result = support(index, "Paris", models=("tfisf.v1",))
    rows = list(csv.DictReader(io.StringIO(entities_csv(result, list(result.entities), []))))
    assert rows and all(r["title"] == "'=HYPERLINK(1)" for r in rows if r["title"])
    assert all(r["text"].startswith("'=1+1") for r in rows if r["text"])


def test_file_stem() -> None:
    assert file_stem("Spanish Civil War") == "sentret-spanish-civil-war"
    assert file_stem("../../etc/passwd") == "sentret-etc-passwd"
    assert file_stem("¿¡") == "sentret-results"
