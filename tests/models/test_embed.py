"""embed.v1: the cosine of static bag-of-words embeddings, loaded without any network."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.models import explain, score, top_k
from sentret_core.models.embed import encoder as encoder_module
from sentret_core.models.embed.encoder import encoder
from tests.conftest import build_from_texts

DOCS = [
    {"id": "a", "title": "Medicine", "text": "The physician treated the patients. A doctor visits the hospital."},
    {"id": "b", "title": "Markets", "text": "The stock market fell sharply on Monday."},
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("embed"), DOCS)


def test_the_encoder_never_opens_a_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> socket.socket:
        raise AssertionError("embed.v1 tried to open a network socket")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    encoder.cache_clear()
    try:
        vectors = encoder().word_vectors(["painted", "guernica"])
    finally:
        encoder.cache_clear()
    assert vectors.shape == (2, encoder_module.DIM) and np.all(np.isfinite(vectors))


def test_a_missing_package_is_one_message_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from sentret_core.errors import SentretError

    monkeypatch.setattr(encoder_module.importlib.util, "find_spec", lambda name: None)
    encoder.cache_clear()
    try:
        with pytest.raises(SentretError, match="pip install wordllama"):
            encoder()
    finally:
        encoder.cache_clear()


def test_scores_equal_wordllamas_own_embeddings_of_the_same_terms(tiny: Index) -> None:
    """The reference is WordLlama's own ``embed`` of the terms joined by spaces (its tokenizer marks every
    word with a leading space, so the joined text's tokens are the words' tokens; mean pooling and our sum
    differ only by a factor that the cosine's normalisation removes)."""
    model = encoder()._model
    found = score(tiny, "doctor hospital", "embed.v1")
    assert found.ids.tolist() == list(range(tiny.N))  # every sentence has terms: every one is a candidate
    query = model.embed("doctor hospital", norm=True)[0].astype(np.float64)
    for sentence, value in zip(found.ids.tolist(), found.scores.tolist()):
        words = " ".join(tiny.vocab[t] for t in tiny.sequence(sentence) if t >= 0)
        reference = model.embed(words, norm=True)[0].astype(np.float64)
        assert value == pytest.approx(float(query @ reference), abs=1e-5), words


def test_a_sentence_that_shares_no_word_with_the_query_is_reached(tiny: Index) -> None:
    found = top_k(score(tiny, "doctor", "embed.v1"), tiny.N)
    texts = [tiny.texts[int(s)] for s in found.ids]
    physician, market = texts.index("The physician treated the patients."), texts.index(
        "The stock market fell sharply on Monday.")
    assert physician < market  # "physician" shares no word with "doctor", yet ranks above the market


def test_words_the_index_never_saw_still_make_a_query(tiny: Index) -> None:
    found = top_k(score(tiny, "surgeon clinic", "embed.v1"), 1)
    assert found.reason is None and found.oov == ("surgeon", "clinic")
    assert tiny.texts[int(found.ids[0])] in ("The physician treated the patients.", "A doctor visits the hospital.")


def test_the_explanation_sums_to_the_score_and_names_the_closest_words(tiny: Index) -> None:
    found = score(tiny, "doctor doctor hospital", "embed.v1")
    sentence = int(found.ids[0])
    e = explain(tiny, "doctor doctor hospital", sentence, "embed.v1")
    # the score is a float32 dot product, the explanation sums the same float32 vector's products in float64
    assert e.candidate and e.total == pytest.approx(float(found.scores[0]), abs=1e-6)
    doctor = next(r for r in e.rows if r["term"] == "doctor")
    assert doctor["c(t,q)"] == 2.0 and doctor["closest sentence words"]


def test_a_sentence_without_terms_is_no_candidate(tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, [{"id": "x", "title": "T", "text": "Peace. ... Peace talks."}])
    found = score(index, "peace", "embed.v1")
    assert all(np.any(index.sequence(int(s)) >= 0) for s in found.ids)
