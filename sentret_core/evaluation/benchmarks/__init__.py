"""Public benchmarks as sentret collections: an index, topics and qrels (WikiQA, TrecQA, SQuAD,
and a user's own candidates file).

``wikiqa``, ``trecqa`` and a user's own ``candidates`` JSONL are plain sentence retrieval over a closed
candidate set per question (one code path: :mod:`~sentret_core.evaluation.benchmarks.candidates`);
``squad-support`` is entity support (graded qrels). Each converter reads its file offline and builds (once, cached)
the collection's index through :mod:`~sentret_core.evaluation.benchmarks.indexing`.

A benchmark is one module of this package that declares a ``BENCHMARK``
(:class:`~sentret_core.evaluation.benchmarks.registry.BenchmarkSpec`): :func:`discover` finds and registers
it when the package is imported, in the order of its ``listed`` (then its module's name), which is the
order the CLI lists them.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Iterable
from pathlib import Path

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import Benchmark, Log
from sentret_core.evaluation.benchmarks.registry import (
    OPTIONS,
    BenchmarkSpec,
    benchmark_names,
    get_benchmark,
    list_benchmarks,
    register_benchmark,
    unregister_benchmark,
)

__all__ = ["Benchmark", "BenchmarkSpec", "benchmark_names", "discover", "get_benchmark", "list_benchmarks",
           "load_benchmark", "register_benchmark", "unregister_benchmark"]


def discover(folders: Iterable[str] | None = None) -> tuple[BenchmarkSpec, ...]:
    """Import every module of this package found in ``folders`` (default: the package's path) and register
    each ``BENCHMARK`` declared there that is not registered yet, by its ``listed`` and then its module's
    name; return those registered."""
    found = []
    for module in pkgutil.iter_modules(list(__path__ if folders is None else folders)):
        spec = getattr(importlib.import_module(f"{__name__}.{module.name}"), "BENCHMARK", None)
        if isinstance(spec, BenchmarkSpec) and spec.name not in benchmark_names():
            found.append((spec.listed, module.name, spec))
    return tuple(register_benchmark(spec) for *_, spec in sorted(found, key=lambda entry: entry[:2]))


discover()


def load_benchmark(
    name: str,
    path: str | os.PathLike[str],
    *,
    distractors: str | None = None,
    min_candidates: int = 1,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """Load benchmark ``name`` (one of :func:`benchmark_names`) from ``path``."""
    spec = get_benchmark(name)
    given = {"distractors": distractors, "min_candidates": min_candidates}
    if any(value != OPTIONS[option] for option, value in given.items() if option not in spec.options):
        takers = ", ".join(other.name for other in list_benchmarks() if other.options)
        raise SentretError(f"distractors= and min_candidates= apply to {takers} only",
                           arguments=("distractors", "min_candidates"))
    if not Path(path).exists():
        raise SentretError(f"{path}: no such file")
    options = {option: value for option, value in given.items() if option in spec.options}
    bench = spec.load(path, cache=cache, n_process=n_process, log=log, **options)
    if bench.kind != spec.kind:  # plan() chose the models by the declared kind, the evaluation goes by this one
        raise ValueError(f"benchmark {name}: its loader made a {bench.kind!r} benchmark, its spec says {spec.kind!r}")
    return bench
