"""A validated evaluation request: every model name, parameter and metric checked before any data
is loaded (so a typo fails in a second, not after indexing a benchmark)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sentret_core.defaults import DEFAULT_RANKER
from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks import get_benchmark
from sentret_core.evaluation.evaluable import (
    BASELINES,
    check_model,
    default_models,
    kind_of,
    resolve_params,
)
from sentret_core.evaluation.measures import DEFAULT_METRICS, parse_metric
from sentret_core.models import get_model


@dataclass(frozen=True)
class Plan:
    """A validated evaluation request: canonical model names (baselines first), parameter
    overrides per model, the baseline, metrics, ranker and tuning metric."""

    models: list[str]
    params: dict[str, dict[str, Any]]
    baseline: str
    metrics: list[str]
    ranker: str
    tune_metric: str


def plan(
    benchmark: str,
    models: Sequence[str] | None = None,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    baseline: str | None = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    ranker: str = DEFAULT_RANKER,
    tune_metric: str = "map",
) -> Plan:
    """Check every name and parameter of a request before any data is loaded."""
    kind = kind_of(benchmark)
    names = list(
        dict.fromkeys([*BASELINES, *(check_model(kind, m) for m in (models or default_models(kind)))])
    )
    base = check_model(kind, baseline) if baseline else get_benchmark(benchmark).baseline
    if base not in names:
        names.append(base)
    ranker_name = get_model(ranker).name
    given: dict[str, dict[str, Any]] = {}
    for model, values in (params or {}).items():
        name = check_model(kind, model)
        if name not in names and name != ranker_name:
            raise SentretError(
                f"--param names {name}, which is neither evaluated nor the ranker ({ranker_name})"
            )
        resolve_params(name, values)  # raises on an unknown parameter or a bad value
        given[name] = dict(values)
    parsed = list(dict.fromkeys(parse_metric(m).name for m in metrics))
    if not parsed:
        raise SentretError("choose at least one metric")
    return Plan(names, given, base, parsed, ranker_name, parse_metric(tune_metric).name)
