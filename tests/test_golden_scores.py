"""Every model's scores on the small index, bit for bit as recorded in tests/golden/scores.json.

The file was written by tests/golden/make_scores.py; its 152 score lists of the models that existed then
were first produced by the code of eebde01 and are unchanged since (embed.v1's were added later, and
regenerated when its sentence vectors moved to float32: no ranking changed, no score by more than 5.4e-8). A
refactoring must leave every number as it is; a deliberate change of a model regenerates the file and
says so. embed.v1 and align.v1 go through a float32 BLAS matrix-vector product, whose last bits may depend
on the machine's BLAS: they are compared to 1e-6 relative, every other model exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.models import list_models, score
from tests.golden.make_scores import QUERIES, SKIP

GOLDEN = json.loads((Path(__file__).parent / "golden" / "scores.json").read_text(encoding="utf-8"))
MODELS = [spec.name for spec in list_models() if spec.name not in SKIP]


def test_every_model_and_query_is_recorded() -> None:
    assert sorted(GOLDEN) == sorted(f"{m} | {q}" for m in MODELS for q in QUERIES)


# BLAS may sum in another order on another CPU: these models' last digits (float32 cosines) may differ
# there, never their formula.
NEAR = {"embed.v1": 1e-6, "align.v1": 1e-6}


@pytest.mark.parametrize("model", MODELS)
def test_scores_are_bit_for_bit_the_recorded_ones(small_index: Index, model: str) -> None:
    for query in QUERIES:
        found = score(small_index, query, model)
        recorded = GOLDEN[f"{model} | {query}"]
        assert found.ids.tolist() == recorded["ids"], query
        expected = [float(v) for v in recorded["scores"]]
        if model in NEAR:
            assert found.scores.tolist() == pytest.approx(expected, rel=NEAR[model], abs=1e-15), query
        else:
            assert found.scores.tolist() == expected, query
