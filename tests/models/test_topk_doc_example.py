"""docs/topk.md's worked example, computed: the bounds, θ, the split and the top 1 the page states, by the real
MaxScore path (models/bm25/pruning.py) on the page's twelve-sentence index, and the page holding those numbers.

By hand (k1 = 1.2, b = 0.75, rsj idf, N = 12, avsl = 35/12): w(river) = ln((12 - 5 + 0.5)/(5 + 0.5)) = 0.3102,
w(bridge) = ln((12 - 2 + 0.5)/(2 + 0.5)) = 1.4351, bounds w·(k1 + 1); a three-term sentence holding the term once
adds w·2.2/(1.2·(0.25 + 0.75·3/(35/12)) + 1) = w·0.98845: 0.3066 and 1.4185, and s0 holds both: 1.7251.
"""

from __future__ import annotations

import math
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.models import get_model, score, top_k
from sentret_core.models.arrays import maxscore
from sentret_core.models.bm25.pruning import saturated_top_k
from sentret_core.models.bm25.scorer import sentence_k, term_weights
from sentret_core.models.core.query import prepare
from tests.conftest import build_from_texts

PAGE = Path(__file__).resolve().parents[2] / "docs" / "topk.md"
TEXT = ("The bridge crosses the river. The river floods the valley. Boats sail on the river. "
        "The old bridge fell down. Fish swim in the river. The river is wide. "
        "Farmers grow wheat. The mill grinds wheat. Bakers bake bread. Markets sell bread. "
        "Children play games. Teachers mark essays.")


@pytest.fixture(scope="module")
def valley(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("topk-example"), [{"id": "d1", "title": "Valley", "text": TEXT}])


def test_the_worked_example_is_what_maxscore_does(valley: Index) -> None:
    assert valley.N == 12 and int(np.sum(valley.sent_len)) == 35
    q = prepare(valley, "river bridge")
    p = get_model("bm25.v1").defaults()
    weights = term_weights(valley, q, p)
    assert q.unique == ("river", "bridge")
    assert weights == pytest.approx([math.log(7.5 / 5.5), math.log(10.5 / 2.5)], abs=1e-12)
    bounds = np.maximum(weights, 0.0) * (p.k1 + 1.0)
    assert np.round(bounds, 4).tolist() == [0.6823, 3.1572]

    every = score(valley, "river bridge", "bm25.v1")
    by_id = dict(zip(every.ids.tolist(), np.round(every.scores, 4).tolist()))
    assert by_id == {0: 1.7251, 1: 0.3066, 2: 0.3066, 3: 1.4185, 4: 0.3066, 5: 0.3559}

    splits: list[maxscore.Split | None] = []
    real_split = maxscore.split

    def recorded(*args: object, **kwargs: object) -> maxscore.Split | None:
        found = real_split(*args, **kwargs)  # type: ignore[arg-type]
        splits.append(found)
        return found

    with mock.patch.object(maxscore, "SAMPLE", 2), mock.patch.object(maxscore, "PRUNE_FROM", 0), \
            mock.patch.object(maxscore, "split", recorded):
        ids, values, any_candidate = saturated_top_k(valley, q, 1, weights, p.k1,
                                                     lambda: sentence_k(valley, p.k1, p.b))
    (found,) = splits
    assert found is not None
    assert round(found.theta, 4) == 1.7251  # the best of the sample s0, s1, s3
    assert found.essential.tolist() == [1] and found.rest.tolist() == [0]  # bridge essential, river not
    assert bounds[0] < found.theta <= by_id[3] + bounds[0]  # river cannot reach θ alone; s3 is scored
    assert any_candidate and ids.tolist() == [0] and values.tolist() == [every.scores[0]]  # bit for bit
    best = top_k(every, 1)
    assert best.ids.tolist() == [0] and best.scores.tolist() == values.tolist()


def test_the_page_states_those_numbers() -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## A worked example", 1)[1].split("\n## ", 1)[0]
    for number in ("0.3102", "1.4351", "0.6823", "3.1572", "0.3066", "1.4185", "1.7251", "2.1008", "35/12"):
        assert number in section, number
    assert "SAMPLE` to 2" in section and "`PRUNE_FROM` to 0" in section
