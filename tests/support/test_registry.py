"""The registry of support models that are not sentence scorers: position (eq. 8), sum-*/avg-* (eq. 7).

The corpus (tests/support/test_engine.py's): s0 "Paris is the capital of France.", s1 "The river Seine flows
through Paris.", s2 "Tourists love the museums.", s3 "Napoleon was crowned in Paris in 1804.",
s4 "Berlin is the capital of Germany.", s5 "Paris and Berlin signed a treaty." (s0-s3 one document).
For "capital museums" under tfisf.v1, S_q = {s0, s2, s4} and Ŝ_q (±2) = every sentence; Paris is in
s0, s1, s3 and s5.
"""

from __future__ import annotations

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.models import get_model
from sentret_core.support.context import QueryContext, check_support_model
from sentret_core.support.engine import support
from sentret_core.support.registry import (
    OVER_CONTEXT,
    OVER_TOP,
    SUPPORT_MODELS,
    SupportModel,
    support_model,
    support_model_names,
    title,
)
from tests.conftest import build_from_texts

DOCS = [
    {
        "id": "a",
        "title": "Alpha",
        "text": "Paris is the capital of France. The river Seine flows through Paris. "
        "Tourists love the museums. Napoleon was crowned in Paris in 1804.",
    },
    {"id": "b", "title": "Beta", "text": "Berlin is the capital of Germany. Paris and Berlin signed a treaty."},
]
PARIS = 0  # entity ids in order of first mention


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    built = build_from_texts(tmp_path_factory.mktemp("support_registry"), DOCS)
    assert built.entities.text[PARIS] == "Paris"
    return built


def test_the_papers_support_models_in_their_order() -> None:
    assert support_model_names() == (
        "position",
        "sum-frequency", "sum-rarity", "sum-combination", "sum-kld",
        "avg-frequency", "avg-rarity", "avg-combination", "avg-kld",
    )
    assert SUPPORT_MODELS["position"].over == OVER_TOP
    assert {SUPPORT_MODELS[name].over for name in support_model_names()[1:]} == {OVER_CONTEXT}
    assert support_model("bm25f.v1") is None
    # `sentret eval` on squad-support runs position and the sums unless models are named
    assert [name for name, m in SUPPORT_MODELS.items() if m.evaluated_by_default] == list(support_model_names()[:5])
    assert SUPPORT_MODELS["sum-kld"].paper == "Blanco & Zaragoza, SIGIR 2010, eq. 7 with eqs. 12-13"


def test_titles_of_support_models_and_sentence_scorers() -> None:
    assert title("position") == "Position (eq. 8)"
    assert title("sum-kld") == "Sum of KLD (eq. 7)"
    assert title("avg-rarity") == "Average of rarity (eq. 7)"
    assert title("bm25f.v1") == get_model("bm25f.v1").display_name
    with pytest.raises(SentretError, match="unknown model 'nosuch'"):
        title("nosuch")


def test_a_registered_support_model_is_read_by_the_engine(index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    """A toy model (earlier sentences first, score −id) over Ŝ_qe, added to the registry for this test only."""

    def earliest(ctx: QueryContext, entity: int, ids: np.ndarray) -> np.ndarray:
        return -ids.astype(np.float64)

    toy = SupportModel("toy-earliest", "Earliest first", OVER_CONTEXT, earliest, "a toy for tests", False)
    monkeypatch.setitem(SUPPORT_MODELS, toy.name, toy)
    assert check_support_model("toy-earliest") == "toy-earliest"
    ctx = QueryContext.of(index, "capital museums", ranker="tfisf.v1", k=1000)
    ids, scores = ctx.candidates(PARIS, "toy-earliest")  # Paris's sentences in Ŝ_q: all four
    assert ids.tolist() == [0, 1, 3, 5] and scores.tolist() == [0.0, -1.0, -3.0, -5.0]
    result = support(index, "capital museums", ranker="tfisf.v1", models=("toy-earliest", "position"),
                     entities=[PARIS], per_entity=3)
    (paris,) = result.entities
    assert [s.sentence for s in paris.sentences["toy-earliest"]] == [0, 1, 3]
    assert [s.sentence for s in paris.sentences["position"]] == [0]  # S_qe: s0 is Paris's only sentence in S_q
    assert paris.candidates == {"toy-earliest": 4, "position": 1}


def test_an_unknown_support_model_lists_every_choice() -> None:
    with pytest.raises(SentretError) as err:
        check_support_model("sum-nothing")
    assert "unknown model 'sum-nothing'" in str(err.value)
    assert str(err.value).endswith("; support models also include " + ", ".join(support_model_names()))
