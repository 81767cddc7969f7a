"""Public benchmarks as sentret collections: an index, topics and qrels (``../shared/data/README.md``).

``wikiqa``, ``trecqa`` and a user's own ``candidates`` JSONL are plain sentence retrieval over a closed
candidate set per question (one code path: :mod:`~sentret_core.evaluation.benchmarks.candidates`);
``squad-support`` is entity support (graded qrels). Each converter reads its file offline and builds (once, cached)
the collection's index through :mod:`~sentret_core.evaluation.benchmarks.indexing`.
"""

from __future__ import annotations

import os
from pathlib import Path

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import Benchmark, Log
from sentret_core.evaluation.benchmarks.candidates import load_candidates
from sentret_core.evaluation.benchmarks.squad import load_squad_support
from sentret_core.evaluation.benchmarks.trecqa import load_trecqa
from sentret_core.evaluation.benchmarks.wikiqa import load_wikiqa

BENCHMARKS: tuple[str, ...] = ("wikiqa", "squad-support", "trecqa", "candidates")


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
    """Load benchmark ``name`` (one of :data:`BENCHMARKS`) from ``path``."""
    if name not in BENCHMARKS:
        raise SentretError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}")
    if name != "squad-support" and (distractors is not None or min_candidates != 1):
        raise SentretError("--distractors and --min-candidates apply to squad-support only")
    if not Path(path).exists():
        raise SentretError(f"{path}: no such file")
    if name == "wikiqa":
        return load_wikiqa(path, cache=cache, n_process=n_process, log=log)
    if name == "trecqa":
        return load_trecqa(path, cache=cache, n_process=n_process, log=log)
    if name == "candidates":
        return load_candidates(path, cache=cache, n_process=n_process, log=log)
    return load_squad_support(
        path, distractors=distractors, min_candidates=min_candidates, cache=cache, n_process=n_process, log=log
    )
