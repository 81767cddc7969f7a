"""`sentret add` keeps minilm.v1's sentence vectors: add = rebuild, with only the added sentences encoded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.cli.main import main
from sentret_core.index import artefacts
from sentret_core.models import score
from sentret_core.models.minilm.encoder import Encoder
from sentret_core.models.training.sentence_vectors import KIND, old_rows, train_minilm
from tests.conftest import build_from_texts

DOCS = [
    {"id": "a", "title": "Medicine", "text": "The physician treated the patients. She worked at the hospital."},
    {"id": "b", "title": "Markets", "text": "The stock market fell sharply on Monday."},
    {"id": "c", "title": "Rivers", "text": "Salmon swim upstream to spawn. Bears wait for them."},
    {"id": "d", "title": "Music", "text": "The orchestra played a symphony by Mahler."},
]
FLOAT16_STEP = 2.0 ** -11  # float16's spacing below 1: two encodings of one text in other batches round ≤ 1 step apart


def test_add_keeps_the_vectors_and_equals_encoding_the_new_index_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    train_minilm(build_from_texts(tmp_path, DOCS[:2], name="idx"))
    shutil.copytree(tmp_path / "idx", tmp_path / "before")  # the add replaces the folder
    before = Index.load(tmp_path / "before")
    old = artefacts.read(before, KIND, "minilm").arrays["vectors"]
    encoded: list[int] = []
    plain = Encoder.encode

    def counted(self: object, texts: list[str], batch_size: int = 32) -> np.ndarray:
        encoded.append(len(texts))
        return plain(self, texts, batch_size)  # type: ignore[arg-type]

    monkeypatch.setattr(Encoder, "encode", counted)
    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps(doc) + "\n" for doc in DOCS[2:]))
    assert main(["add", str(tmp_path / "idx"), str(more), "--n-process", "1"]) == 0
    assert "kept minilm" in capsys.readouterr().err
    after = Index.load(tmp_path / "idx")
    assert after.N == before.N + 3 and sum(encoded) == 3  # only the three added sentences were encoded
    carried = artefacts.read(after, KIND, "minilm")  # checked against the new index: fingerprint and texts
    rows = old_rows(before, after)
    assert sorted(rows[rows >= 0].tolist()) == list(range(before.N))
    assert np.array_equal(carried.arrays["vectors"][rows >= 0], old[rows[rows >= 0]])  # the old rows, bit for bit
    monkeypatch.undo()

    scratch = build_from_texts(tmp_path, DOCS, name="scratch")
    train_minilm(scratch)
    whole = artefacts.read(scratch, KIND, "minilm").arrays["vectors"]
    assert list(scratch.texts) == list(after.texts)
    assert np.max(np.abs(whole.astype(np.float32) - carried.arrays["vectors"].astype(np.float32))) <= FLOAT16_STEP
    query = "Where did the doctor work?"
    got, want = score(after, query, "minilm.v1"), score(scratch, query, "minilm.v1")
    assert np.allclose(got.scores, want.scores, atol=2e-3)
    assert int(np.argmax(got.scores)) == int(np.argmax(want.scores))


def test_vectors_of_other_weights_are_left_behind_with_the_other_artefacts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = build_from_texts(tmp_path, DOCS[:1], name="idx")
    made = train_minilm(index)
    record = dict(made.meta, weights="0" * 64)  # as if encoded by another release of the weights
    artefacts.write(index, KIND, "minilm", {"vectors": made.arrays["vectors"]}, record)
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps(DOCS[1]) + "\n")
    assert main(["add", str(tmp_path / "idx"), str(more), "--n-process", "1"]) == 0
    err = capsys.readouterr().err
    assert "kept minilm" not in err and "(minilm) described the old documents and were not kept" in err
    assert artefacts.available(tmp_path / "idx", KIND) == []


def test_a_sentence_is_matched_by_document_position_and_length(tmp_path: Path) -> None:
    """old_rows by hand: the added document's sentences map to -1, the old ones to their old ids."""
    before = build_from_texts(tmp_path, [DOCS[2], DOCS[0]], name="old")  # ids: c0 c1 a0 a1
    after = build_from_texts(tmp_path, [DOCS[0], DOCS[3], DOCS[2]], name="new")
    names = [(str(after.documents["id"][d]), int(p)) for d, p in zip(after.sent_doc, after.sent_pos)]
    old = {(str(before.documents["id"][d]), int(p)): s for s, (d, p) in enumerate(zip(before.sent_doc,
                                                                                         before.sent_pos))}
    assert old_rows(before, after).tolist() == [old.get(name, -1) for name in names]
    assert sorted(old_rows(before, after).tolist()) == [-1, 0, 1, 2, 3]


def test_add_rebuilds_the_nearest_neighbour_graph_of_vectors_that_had_one(tmp_path: Path) -> None:
    from sentret_core.ingest.build import add_documents
    from sentret_core.models.minilm import ann
    from sentret_core.models.training.sentence_vectors import carry_vectors

    train_minilm(build_from_texts(tmp_path, DOCS[:2], name="idx"), ann=True)
    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps(doc) + "\n" for doc in DOCS[2:]))
    summary = add_documents(tmp_path / "idx", more, carry=carry_vectors)
    assert any("kept minilm" in note for note in summary.notes)
    after = Index.load(tmp_path / "idx")
    graph = ann.graph_of(after, artefacts.read(after, KIND, "minilm"))
    assert len(graph) == after.N  # every sentence, the added ones too
    found = score(after, "Where do bears wait?", "minilm.v1", candidates=after.N)
    assert found.ids.tolist() == list(range(after.N))
