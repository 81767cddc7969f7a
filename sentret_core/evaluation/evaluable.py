"""The models an evaluation can name, their parameters and their tuning grids.

* every registered sentence scorer (``bm25f.v1`` …);
* two baselines, always reported: ``doc-order`` (earlier sentence in its document first,
  score = -position; on TrecQA every candidate is its own document, so it ties everything and
  equals ``random``) and ``random`` (every candidate tied: tie-aware metrics make it the exact
  expectation of a random ordering);
* on entity-support benchmarks only, the support engine's own scorers under the engine's
  names: ``position`` (Blanco & Zaragoza, SIGIR 2010, eq. 8, ``|s| - max(pos_q, pos_e)``) and ``sum-<score>`` /
  ``avg-<score>`` (eq. 7).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks import get_benchmark
from sentret_core.models import get_model, list_models
from sentret_core.support.registry import SUPPORT_MODELS, support_model, support_model_names

DOC_ORDER = "doc-order"
RANDOM = "random"
BASELINES: tuple[str, ...] = (DOC_ORDER, RANDOM)


def kind_of(benchmark: str) -> str:
    """``"support"`` for entity-support benchmarks, ``"sentences"`` for plain sentence retrieval (as the
    benchmark declares itself in the registry; an unknown name is one clear error)."""
    return get_benchmark(benchmark).kind


def default_models(kind: str) -> list[str]:
    """Every registered scorer but a learned ranker, which must be named with the ranker it reads
    (and, for entity support, eq. 8 and the sum aggregations)."""
    names = [spec.name for spec in list_models() if spec.family != "ltr"]
    if kind == "support":
        names += [name for name, model in SUPPORT_MODELS.items() if model.evaluated_by_default]
    return names


def check_model(kind: str, name: str) -> str:
    """The canonical name of an evaluable model, or one clear error listing the choices."""
    name = name.strip()
    if name in BASELINES:
        return name
    if support_model(name) is not None:
        if kind != "support":
            raise SentretError(
                f"model {name!r} ranks entity support sentences: it applies to squad-support only"
            )
        return name
    try:
        return get_model(name).name
    except SentretError as err:
        extra = f", {', '.join(support_model_names())}" if kind == "support" else ""
        raise SentretError(f"{err}; baselines: {', '.join(BASELINES)}{extra}") from None


def is_scorer(name: str) -> bool:
    """True for a registered sentence scorer, False for the baselines and the support models."""
    return name not in BASELINES and support_model(name) is None


def resolve_params(model: str, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """A scorer's full parameters (defaults updated with ``given``), validated; {} for others."""
    if not is_scorer(model):
        if given:
            raise SentretError(f"{model} has no parameters (got {', '.join(given)})")
        return {}
    return dict(get_model(model).resolve(dict(given or {})).to_dict())


def tuning_space(model: str) -> dict[str, list[Any]]:
    """Each parameter with a declared grid → its grid, with the default inserted when absent."""
    if not is_scorer(model):
        return {}
    space: dict[str, list[Any]] = {}
    for spec in get_model(model).param_specs():
        if not spec.grid:
            continue
        values = list(spec.grid)
        if spec.default not in values:
            if spec.default is None:
                values.insert(0, None)
            else:
                values = sorted([*values, spec.default])
        space[spec.name] = values
    return space
