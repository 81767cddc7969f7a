"""Documents in the field's JSONL dialects: ir_datasets' doc_id, TREC's docno, BEIR's _id, Pyserini's
contents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentret_core.errors import CorpusError
from sentret_core.ingest.corpus import Skipped, read_corpus


@pytest.mark.parametrize(
    ("record", "fields"),
    [({"id": "d1", "text": "Picasso painted Guernica."}, {}),
     ({"doc_id": "d1", "text": "Picasso painted Guernica."}, {"id": "doc_id"}),
     ({"docno": "d1", "contents": "Picasso painted Guernica."}, {"id": "docno", "text": "contents"}),
     ({"_id": "d1", "title": "Guernica", "body": "Picasso painted Guernica."}, {"id": "_id", "text": "body"})],
    ids=["sentret", "ir_datasets", "pyserini", "beir"],
)
def test_ids_and_texts_are_read_from_the_fields_each_dialect_uses(
    tmp_path: Path, record: dict[str, str], fields: dict[str, str]
) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps(record) + "\n", "utf-8")
    skipped = Skipped()
    [doc] = read_corpus(path, skipped=skipped)
    assert (doc.id, doc.text) == ("d1", "Picasso painted Guernica.")  # never the line number
    assert skipped.fields == fields
    if fields:  # the build says which fields it read
        assert any(f'ids from "{fields["id"]}"' in note for note in skipped.notes(path))


def test_a_record_with_none_of_the_text_fields_names_them(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"docno": "d1", "abstract": "x"}) + "\n", "utf-8")
    with pytest.raises(CorpusError, match=r'line 1: the object has no "text" \(or "contents", "body"\) string'):
        list(read_corpus(path))
