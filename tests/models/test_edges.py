"""Every model's scores are finite at every edge of every parameter's declared range (lm-dir with
mu = 0 once gave 53 of 53 non-finite scores). Brute-force enumeration: each float or int parameter at its
lowest allowed value (``min``, or ``min_positive`` when 0 itself is allowed, or just above ``min`` when
``min`` is excluded) and at ``max``, one at a time and all together at their lows, on the test index."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.models import get_model, list_models, score
from sentret_core.models.core.params import ParamSpec

MODELS = [spec.name for spec in list_models() if spec.name != "ltr.v1"]  # ltr.v1's parameters name a ranker
QUERIES = (["picasso", "peace"], ["war", "republic", "franco"], ["religion"])


def edges(spec: ParamSpec) -> list[float]:
    if spec.type not in (int, float) or spec.min is None or spec.max is None or spec.contextual:
        return []
    low = spec.min
    if spec.above_min:
        low = math.nextafter(spec.min, math.inf) if spec.type is float else spec.min + 1
    values = [low, spec.max]
    if spec.min == 0 and spec.min_positive:
        values.append(spec.min_positive)
    return [spec.type(v) for v in values]


@pytest.mark.parametrize("model", MODELS)
def test_every_edge_of_every_parameter_gives_finite_scores(small_index: Index, model: str) -> None:
    spec = get_model(model)
    settings: list[dict[str, float]] = []
    lows = {}
    for param in spec.param_specs():
        for value in edges(param):
            settings.append({param.name: value})
        if edges(param):
            lows[param.name] = edges(param)[0]
    settings.append(lows)
    for params, query in itertools.product(settings, QUERIES):
        try:
            spec.resolve(params)
        except Exception:  # a combination the model refuses with its own message (3MM λ + γ = 1)
            continue
        found = score(small_index, query, model, **params)
        assert np.isfinite(found.scores).all(), (model, params, query)
