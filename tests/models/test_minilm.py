"""minilm.v1: the cosine of MiniLM sentence vectors, stored once per index as a resumable, checked artefact."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.cli.main import main
from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.artefact_contents import texts_checksum
from sentret_core.models import explain, score, top_k
from sentret_core.models.minilm.encoder import encoder
from sentret_core.models.minilm.scorer import ROUNDING
from sentret_core.models.training import sentence_vectors
from sentret_core.models.training.sentence_vectors import KIND, train_minilm
from tests.conftest import build_from_texts

# one sentence a document: the three sentences of the hand computation
DOCS = [
    {"id": "a", "title": "Medicine", "text": "The physician treated the patients at the hospital."},
    {"id": "b", "title": "Markets", "text": "The stock market fell sharply on Monday."},
    {"id": "c", "title": "Rivers", "text": "Salmon swim upstream to spawn."},
]


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Index:
    index = build_from_texts(tmp_path_factory.mktemp("minilm"), DOCS)
    train_minilm(index)
    return index


def test_the_score_is_the_cosine_of_the_stored_vectors(three: Index) -> None:
    """By hand: each sentence's vector as stored (float16), the query's from the encoder, their cosine in
    float64 (both are unit vectors, so the cosine is their dot product up to float16 rounding of the norm)."""
    assert three.N == 3
    stored = artefacts.read(three, KIND, "minilm").arrays["vectors"]
    assert stored.dtype == np.float16 and stored.shape == (3, 384)
    query = "Where did the doctor work?"
    q = encoder().encode([query])[0].astype(np.float64)
    found = score(three, query, "minilm.v1")
    assert found.ids.tolist() == [0, 1, 2]  # every sentence is a candidate
    for s in range(3):
        v = stored[s].astype(np.float64)
        assert math.isclose(found.scores[s], float(v @ q), rel_tol=1e-6, abs_tol=1e-6)
        cosine = float(v @ q) / (np.linalg.norm(v) * np.linalg.norm(q))
        assert math.isclose(found.scores[s], cosine, abs_tol=2e-3)  # ‖v‖ is 1 to float16's precision
    assert top_k(found, 1).ids.tolist() == [0]  # the physician's sentence, which shares no word with the query


def test_the_stored_vectors_are_the_encoders_to_float16(three: Index) -> None:
    stored = artefacts.read(three, KIND, "minilm").arrays["vectors"].astype(np.float32)
    fresh = encoder().encode(list(three.texts))
    assert np.max(np.abs(stored - fresh)) <= 1e-3  # float16 keeps 11 significant bits: |x| < 1 → ≤ 2^-11


def test_the_explanation_sums_to_the_score_and_names_the_closest_pieces(three: Index) -> None:
    query = "Where did the doctor work?"
    found = score(three, query, "minilm.v1")
    e = explain(three, query, 0, "minilm.v1")
    frame = e.to_frame()
    assert math.isclose(e.total, float(found.scores[0]), rel_tol=1e-6, abs_tol=1e-6)
    assert math.isclose(frame["contribution"].sum() + e.extra[ROUNDING], e.total, rel_tol=1e-9, abs_tol=1e-9)
    assert abs(e.extra[ROUNDING]) < 2e-3  # only the float16 rounding of the stored vector
    pieces = frame.set_index("term")["closest query piece"].to_dict()
    assert frame["term"].tolist()[0] == "[CLS]" and frame["term"].tolist()[-1] == "[SEP]"
    assert pieces["physician"] == "doctor"


def test_the_query_is_read_as_written(three: Index) -> None:
    """The encoder reads stop words and order; a query of nothing but stop words still has no terms: no score,
    with the reason every model gives."""
    question = score(three, "who fought for the market", "minilm.v1")
    terms = score(three, ["fought", "market"], "minilm.v1")
    assert not np.allclose(question.scores, terms.scores)
    empty = score(three, "who is it", "minilm.v1")
    assert len(empty) == 0 and empty.reason


def test_vectors_of_other_texts_or_weights_are_refused(three: Index, tmp_path: Path) -> None:
    found = artefacts.read(three, KIND, "minilm")
    other = build_from_texts(tmp_path, [{**DOCS[0], "text": "A physician treated the patients."}, *DOCS[1:]],
                             name="other")
    artefacts.write(other, KIND, "minilm", dict(found.arrays), dict(found.meta))  # resealed, of other texts
    with pytest.raises(SentretError, match="other texts"):
        score(other, "doctor", "minilm.v1")
    artefacts.write(other, KIND, "minilm", dict(found.arrays),
                    {**found.meta, "texts": texts_checksum(other), "weights": "0" * 64})
    with pytest.raises(SentretError, match="other MiniLM weights"):
        score(other, "doctor", "minilm.v1")
    folder = artefacts.folder_of(other.path, "minilm")
    data = bytearray((folder / artefacts.ARRAYS).read_bytes())
    data[-200] ^= 0xFF  # a flipped bit inside the vectors
    (folder / artefacts.ARRAYS).write_bytes(bytes(data))
    with pytest.raises(SentretError, match=r"damaged|train it again"):
        score(Index.load(other.path), "doctor", "minilm.v1")


class Interrupted(Exception):
    """Stands for Ctrl-C or a killed process (pytest reserves KeyboardInterrupt for itself)."""


def test_an_interrupted_encoding_goes_on_where_it_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [{"id": f"d{i}", "title": "T", "text": f"Sentence number {i} is about topic {i % 3}."} for i in range(7)]
    index = build_from_texts(tmp_path, docs)
    monkeypatch.setattr(sentence_vectors, "CHUNK", 3)
    encoded: list[int] = []
    stop_at = [2]  # the call that is interrupted: the second chunk's
    real = type(encoder()).encode

    def counting(self: object, texts: list[str], batch_size: int = 64) -> np.ndarray:
        encoded.append(len(texts))
        if len(encoded) == stop_at[0]:
            raise Interrupted
        return real(self, texts, batch_size)  # type: ignore[arg-type]

    monkeypatch.setattr(type(encoder()), "encode", counting)
    with pytest.raises(Interrupted):
        train_minilm(index)
    assert not artefacts.available(index.path, KIND)
    encoded.clear()
    stop_at[0] = 0
    made = train_minilm(index)
    assert encoded == [3, 1]  # the first chunk was kept: only sentences 3-6 were encoded again
    monkeypatch.undo()
    texts = list(index.texts)
    # chunk by chunk, as an uninterrupted encoding runs: the same batches, so the same bits on any CPU
    chunked = np.concatenate([encoder().encode(texts[at:at + 3]) for at in range(0, len(texts), 3)])
    assert np.array_equal(made.arrays["vectors"], chunked.astype(np.float16))
    # another batching sums in another order: equal to float32 rounding, so at most one float16 step
    whole = encoder().encode(texts).astype(np.float16)
    assert np.allclose(made.arrays["vectors"], whole, rtol=2**-10, atol=2**-14)
    assert not (Path(index.path) / artefacts.FOLDER / ".minilm.partial").exists()


def test_the_command_line_encodes_with_progress_and_refuses_to_replace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = build_from_texts(tmp_path, DOCS)
    assert main(["train", "minilm", str(index.path), "--json"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert record["kind"] == "minilm" and record["dim"] == 384 and record["weights"] == encoder().checksum
    assert "encoded 3 of 3 sentences" in captured.err
    assert main(["train", "minilm", str(index.path)]) == 2
    assert "(minilm), which exists; nothing was written. Add --force" in capsys.readouterr().err
    assert main(["search", str(index.path), "doctor at work", "--model", "minilm.v1", "--k", "1", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [h["sentence"] for h in hits] == [0] and hits[0]["title"] == "Medicine"


def test_scoring_never_encodes_the_sentences(tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, DOCS)
    with pytest.raises(SentretError, match="sentret train minilm"):
        score(index, "doctor", "minilm.v1")
