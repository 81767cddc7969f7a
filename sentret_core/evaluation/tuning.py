"""Parameter search on a grid: exhaustive grid search and greedy coordinate ascent.

Both maximise an objective (e.g. the mean of a metric over training topics) over each
parameter's declared grid, evaluate each point once and log every evaluation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sentret_core.errors import SentretError

Params = dict[str, Any]


@dataclass(frozen=True)
class TuningResult:
    """The best ``params`` found, their objective ``score``, and every evaluation in call order."""

    params: Params
    score: float
    evaluations: tuple[tuple[Params, float], ...] = field(default=())


def _check_space(space: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    if not space:
        raise SentretError("the parameter space is empty")
    grids = {name: list(values) for name, values in space.items()}
    for name, values in grids.items():
        if not values:
            raise SentretError(f"parameter {name!r} has no values to try")
    return grids


class _Objective:
    """Calls the objective once per point (cached by grid indices) and records the calls."""

    def __init__(self, objective: Callable[[Params], float], grids: dict[str, list[Any]]):
        self.objective = objective
        self.grids = grids
        self.cache: dict[tuple[int, ...], float] = {}
        self.log: list[tuple[Params, float]] = []

    def params(self, point: tuple[int, ...]) -> Params:
        return {name: self.grids[name][i] for name, i in zip(self.grids, point, strict=True)}

    def __call__(self, point: tuple[int, ...]) -> float:
        if point not in self.cache:
            params = self.params(point)
            value = float(self.objective(dict(params)))
            if math.isnan(value):
                raise SentretError(f"the objective returned NaN for {params}")
            self.cache[point] = value
            self.log.append((params, value))
        return self.cache[point]


def grid_search(objective: Callable[[Params], float], space: Mapping[str, Sequence[Any]]) -> TuningResult:
    """Maximise ``objective`` over the full grid (the product of every parameter's values).

    Points are visited in ``itertools.product`` order of ``space``; a tie keeps the first point.
    """
    grids = _check_space(space)
    f = _Objective(objective, grids)
    best_point: tuple[int, ...] | None = None
    best = -math.inf
    for point in itertools.product(*(range(len(v)) for v in grids.values())):
        value = f(point)
        if best_point is None or value > best:
            best_point, best = point, value
    assert best_point is not None
    return TuningResult(f.params(best_point), best, tuple(f.log))


def coordinate_ascent(
    objective: Callable[[Params], float],
    space: Mapping[str, Sequence[Any]],
    start: Mapping[str, Any] | None = None,
    *,
    max_rounds: int = 100,
) -> TuningResult:
    """Greedy coordinate ascent: maximise ``objective`` one parameter at a time.

    From ``start`` (default: every parameter's first value), each round visits the
    parameters in ``space`` order and moves one to the value of its grid that scores best
    with the others fixed; ties keep the current value, else the earliest grid value. Stops
    after a round without a strict gain (or ``max_rounds``). Each point is evaluated once.
    """
    grids = _check_space(space)
    begin = dict(start or {})
    unknown = [name for name in begin if name not in grids]
    if unknown:
        raise SentretError(f"start names unknown parameters {unknown}; known: {list(grids)}")
    point = []
    for name, values in grids.items():
        if name not in begin:
            point.append(0)
        elif begin[name] in values:
            point.append(values.index(begin[name]))
        else:
            raise SentretError(f"start value {begin[name]!r} of {name!r} is not in {values}")
    f = _Objective(objective, grids)
    best = f(tuple(point))
    for _ in range(max_rounds):
        improved = False
        for axis, values in enumerate(grids.values()):
            chosen = point[axis]
            for i in range(len(values)):
                candidate = (*point[:axis], i, *point[axis + 1 :])
                value = f(candidate)
                if value > best:
                    chosen, best = i, value
            if chosen != point[axis]:
                point[axis] = chosen
                improved = True
        if not improved:
            break
    return TuningResult(f.params(tuple(point)), best, tuple(f.log))
