"""Public benchmarks as sentret collections: an index, topics and qrels (WikiQA, TrecQA, SQuAD,
and a user's own candidates file).

``wikiqa``, ``trecqa`` and a user's own ``candidates`` JSONL are plain sentence retrieval over a closed
candidate set per question (one code path: :mod:`~sentret_core.evaluation.benchmarks.candidates`);
``squad-support`` is entity support (graded qrels). Each converter reads its file offline and builds (once, cached)
the collection's index through :mod:`~sentret_core.evaluation.benchmarks.indexing`. Each module declares a
``BENCHMARK`` (:class:`~sentret_core.evaluation.benchmarks.registry.BenchmarkSpec`), registered below in the
order the CLI lists them.
"""

from __future__ import annotations

import os
from pathlib import Path

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks import candidates, squad, trecqa, wikiqa
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

__all__ = ["Benchmark", "BenchmarkSpec", "benchmark_names", "get_benchmark", "list_benchmarks", "load_benchmark",
           "register_benchmark", "unregister_benchmark"]

for _module in (wikiqa, squad, trecqa, candidates):  # a new benchmark: its module here, and imported above
    register_benchmark(_module.BENCHMARK)


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
        raise SentretError(f"--distractors and --min-candidates apply to {takers} only")
    if not Path(path).exists():
        raise SentretError(f"{path}: no such file")
    options = {option: value for option, value in given.items() if option in spec.options}
    bench = spec.load(path, cache=cache, n_process=n_process, log=log, **options)
    if bench.kind != spec.kind:  # plan() chose the models by the declared kind, the evaluation goes by this one
        raise ValueError(f"benchmark {name}: its loader made a {bench.kind!r} benchmark, its spec says {spec.kind!r}")
    return bench
