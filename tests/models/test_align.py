"""align.v1: each query word aligned to its closest sentence word, against a brute-force
computation from WordLlama's own word vectors."""

from __future__ import annotations

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.models import explain, score, top_k
from sentret_core.models.core.query import prepare
from sentret_core.models.embed import align as align_module
from sentret_core.models.embed.encoder import encoder
from tests.conftest import build_from_texts

DOCS = [
    {"id": "a", "title": "Towns", "text": "Alder was settled by farmers in 1702. Alder has a harbour."},
    {"id": "b", "title": "Markets", "text": "The stock market fell sharply on Monday."},
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("align"), DOCS)


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def brute_force(index: Index, query: str, sentence: int) -> float:
    """Σ_t c(t,q)/Σc · max_w cos(v_t, v_w), one word pair at a time, from the encoder's vectors (the
    question-word marker ``?when`` is kept for the answer-type feature, not scored)."""
    terms = prepare(index, query).terms
    words = [index.vocab[t] for t in index.sequence(sentence) if t >= 0]
    vectors = encoder().word_vectors(sorted(set(terms)) + sorted(set(words))).astype(np.float64)
    of = dict(zip(sorted(set(terms)) + sorted(set(words)), vectors))
    return sum(max(cos(of[t], of[w]) for w in words) for t in terms) / len(terms)


def test_scores_equal_a_brute_force_alignment(tiny: Index) -> None:
    found = score(tiny, "when was alder founded", "align.v1")
    assert found.ids.tolist() == list(range(tiny.N))
    for sentence, value in zip(found.ids.tolist(), found.scores.tolist()):
        assert value == pytest.approx(brute_force(tiny, "when was alder founded", sentence), abs=1e-5)


def test_an_exact_match_aligns_at_one_and_a_related_word_is_reached(tiny: Index) -> None:
    found = score(tiny, "alder", "align.v1")
    by_text = {tiny.texts[int(s)]: v for s, v in zip(found.ids, found.scores)}
    assert by_text["Alder has a harbour."] == pytest.approx(1.0, abs=1e-6)
    best = top_k(score(tiny, "founded", "align.v1"), 1)  # no sentence has "founded"
    assert tiny.texts[int(best.ids[0])] == "Alder was settled by farmers in 1702."


def test_the_explanation_names_the_closest_word_and_sums_to_the_score(tiny: Index) -> None:
    found = score(tiny, "alder founded", "align.v1")
    settled = next(int(s) for s in found.ids if tiny.texts[int(s)].startswith("Alder was settled"))
    explained = explain(tiny, "alder founded", settled, "align.v1")
    rows = {row["term"]: row for row in explained.rows}
    assert rows["alder"]["closest sentence word"] == "alder" and rows["alder"]["cos(v_t, v_w)"] == pytest.approx(1.0)
    assert sum(row["contribution"] for row in explained.rows) == pytest.approx(
        float(found.scores[list(found.ids).index(settled)]), abs=1e-6)


def test_blocks_give_the_same_scores_as_one_pass(tiny: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = score(tiny, "stock harbour farmers", "align.v1")
    monkeypatch.setattr(align_module, "BLOCK", 3)  # a few term occurrences per block: many blocks
    assert np.array_equal(score(tiny, "stock harbour farmers", "align.v1").scores, whole.scores)


def test_a_set_of_sentences_scores_as_in_the_full_scan(tiny: Index) -> None:
    from sentret_core.models import get_model, prepare

    spec, q = get_model("align.v1"), prepare(tiny, "farmers market harbour")
    whole = score(tiny, "farmers market harbour", "align.v1")
    ids, values = spec.subset(tiny, q, spec.resolve({}), np.array([2, 0, 2]))
    assert ids.tolist() == [0, 2]
    assert values.tolist() == [float(whole.scores[0]), float(whole.scores[2])]  # bit for bit
