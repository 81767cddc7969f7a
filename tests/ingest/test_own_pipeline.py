"""A user's own spaCy pipeline: the standard minimal one, a blank English pipeline with its own
sentencizer, indexes documents; sentret adds a sentencizer only when a pipeline has no sentence boundaries."""

from __future__ import annotations

import json
from pathlib import Path

import spacy

from sentret_core import Index, build_index
from sentret_core.ingest.nlp import load_pipeline


def test_a_blank_pipeline_with_its_own_sentencizer_indexes(tmp_path: Path) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "mine")
    assert load_pipeline(str(tmp_path / "mine")).pipe_names == ["sentencizer"]  # not a second one
    source = tmp_path / "docs.jsonl"
    source.write_text(json.dumps({"id": "d1", "title": "Towns", "text": "Alder lies on a river. It has a market."})
                      + "\n", "utf-8")
    build_index(source, tmp_path / "idx", model=str(tmp_path / "mine"), n_process=1)
    index = Index.load(tmp_path / "idx")
    assert list(index.texts) == ["Alder lies on a river.", "It has a market."]


def test_a_pipeline_without_sentence_boundaries_gets_a_sentencizer(tmp_path: Path) -> None:
    spacy.blank("en").to_disk(tmp_path / "bare")
    assert load_pipeline(str(tmp_path / "bare")).pipe_names == ["sentencizer"]
