"""Every model's scores on the small index, as recorded in tests/golden/scores.json, on any CPU.

The file was written by tests/golden/make_scores.py; its 152 score lists of the models that existed then
were first produced by the code of eebde01 and are unchanged since (embed.v1's were added later, and
regenerated when its sentence vectors moved to float32). A refactoring must leave every number as it is; a
deliberate change of a model regenerates the file (only that model's lists change) and says so.

The comparison allows what another CPU's SIMD kernels change (a few ulps, ``make_scores.ULPS``; float32
BLAS cosines ``NEAR``) and nothing a model's author could change on purpose: the tests below check both
sides of that line, and CI runs this file again with numpy's SIMD dispatch forced down to its baseline.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.models import get_model, list_models, score
from tests.golden.make_scores import GOLDEN_FILE, NEAR, QUERIES, SKIP, ULPS, agrees, golden, key, merge

GOLDEN = json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))
MODELS = [spec.name for spec in list_models() if spec.name not in SKIP]


def test_every_model_and_query_is_recorded() -> None:
    assert sorted(GOLDEN) == sorted(key(m, q) for m in MODELS for q in QUERIES)


@pytest.mark.parametrize("model", MODELS)
def test_scores_are_the_recorded_ones(small_index: Index, model: str) -> None:
    found = golden(small_index, [model])
    for query in QUERIES:
        assert agrees(model, found[key(model, query)], GOLDEN[key(model, query)]), query


def _shifted(lists: dict, ulps: int) -> dict:
    """``lists`` with every score moved up by ``ulps`` units in the last place of its list's largest |score|."""
    values = np.array([float(v) for v in lists["scores"]])
    step = np.spacing(np.max(np.abs(values[np.isfinite(values)]), initial=0.0))
    moved = np.where(np.isfinite(values), values + ulps * step, values)
    return {"ids": lists["ids"], "scores": [repr(float(v)) for v in moved]}


def test_the_tolerance_is_a_few_ulps_and_no_more() -> None:
    lists = GOLDEN[key("bm25.v1", "Spanish Civil War")]
    assert len(lists["scores"]) > 3
    assert agrees("bm25.v1", _shifted(lists, ULPS), lists)
    assert not agrees("bm25.v1", _shifted(lists, 2 * ULPS + 2), lists)
    assert not agrees("bm25.v1", {"ids": lists["ids"][::-1], "scores": lists["scores"]}, lists)
    assert not agrees("bm25.v1", {"ids": lists["ids"][:-1], "scores": lists["scores"][:-1]}, lists)
    near = GOLDEN[key("embed.v1", "Spanish Civil War")]
    bumped = {"ids": near["ids"], "scores": [repr(float(v) * (1 + 10 * NEAR["embed.v1"][0])) for v in near["scores"]]}
    assert not agrees("embed.v1", bumped, near)


def _float_params(model: str) -> list[tuple[str, float]]:
    return [(p.name, float(p.default)) for p in get_model(model).param_specs()
            if p.type is float and isinstance(p.default, (int, float)) and p.default and not p.contextual]


TUNABLE = [m for m in MODELS if _float_params(m)]
# parameters that the defaults switch off: lm-class.v1 is the pure class LM (λ = 0), so its word model's μ
# takes no part in a score (lm-class.v2 interpolates, and its μ_w is caught)
UNREACHED = {"lm-class.v1": ["mu_word"]}


@pytest.mark.parametrize("model", TUNABLE)
def test_a_parameter_moved_by_a_millionth_is_caught(small_index: Index, model: str) -> None:
    """The smallest deliberate change: each float parameter of the model, one at a time, moved by 1e-6 of
    its value (inside its range), changes a recorded list beyond the tolerance."""
    spec = get_model(model)
    missed = []
    for name, value in _float_params(model):
        bound = next(p for p in spec.param_specs() if p.name == name)
        up = bound.max is None or value * (1 + 1e-6) <= bound.max
        moved = value * (1 + 1e-6) if up else value * (1 - 1e-6)
        for query in QUERIES:
            found = score(small_index, query, model, **{name: moved})
            lists = {"ids": found.ids.tolist(), "scores": [repr(float(v)) for v in found.scores]}
            if not agrees(model, lists, GOLDEN[key(model, query)]):
                break
        else:
            missed.append(name)
    assert missed == UNREACHED.get(model, [])


def test_regenerating_rewrites_only_the_changed_model(small_index: Index) -> None:
    """What make_scores.py writes: lists that still agree stay as recorded (to the character), even when
    this CPU's last bit differs; a model changed on purpose gets its new lists, and nothing else does."""
    found = {name: _shifted(lists, 1) if lists["scores"] else lists for name, lists in GOLDEN.items()}
    merged, changed = merge(GOLDEN, found)
    assert changed == [] and merged == GOLDEN
    for query in QUERIES:
        moved = score(small_index, query, "bm25.v1", k1=1.3)
        found[key("bm25.v1", query)] = {"ids": moved.ids.tolist(), "scores": [repr(float(v)) for v in moved.scores]}
    merged, changed = merge(GOLDEN, found)
    assert changed and {name.split(" | ")[0] for name in changed} == {"bm25.v1"}
    assert all(merged[name] == GOLDEN[name] for name in GOLDEN if not name.startswith("bm25.v1 |"))
