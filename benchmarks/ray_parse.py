"""Parse throughput: the spaCy pass on Ray (one actor pool) with 1 and 2 workers against the local engine.

    .venv/bin/python benchmarks/ray_parse.py [--limit N] [--batch-size 64] [--json]
    .venv/bin/pip install -e ".[scale]"      # Ray

Every run parses the same documents (the demo corpus: 10,033 Wikipedia summaries, or its first
``--limit``) into a fresh shards folder with :func:`sentret_core.ingest.parse.parse_into`. The local
engine runs with ``n_process`` 1 and 2; Ray with 1 and 2 actors on a Ray started beforehand with as
many CPUs (its start-up is timed apart: a cluster is started once, not per parse). Targets: Ray with
2 workers ≥ 1.8× one worker; the shards of every run are identical (checked: same sha256s).

``--json`` prints the text to stderr and the numbers to stdout as JSON (``{"runs": {"local-1": {"seconds",
"words_per_s"}, …}, "local_2_over_1", "ray_2_over_1", "ray_over_local", "identical"}``), which
``docs/tables.toml`` reads.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sentret_core.ingest.corpus import read_demo  # noqa: E402
from sentret_core.ingest.engine import Engine  # noqa: E402
from sentret_core.ingest.parse import parse_into  # noqa: E402
from sentret_core.ingest.shards import ShardWriter  # noqa: E402


def run(engine: Engine, docs: list, words: int) -> tuple[float, list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        writer = ShardWriter(Path(tmp), {})
        started = time.perf_counter()
        parse_into(writer, docs, engine)
        seconds = time.perf_counter() - started
        manifest = writer.finish(["demo"])
    rate = f"{len(docs) / seconds:9,.0f} docs/s {words / seconds:10,.0f} words/s"
    print(f"  {describe(engine):22s}{seconds:8.1f} s {rate}", flush=True)
    return seconds, [s["sha256"] for s in manifest["shards"]]


def describe(engine: Engine) -> str:
    return f"local, n_process={engine.n_process}" if engine.name == "local" else f"ray, {engine.num_workers} worker(s)"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N demo documents (default: all)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--json", action="store_true", help="the text to stderr, the numbers to stdout as JSON")
    args = parser.parse_args()
    if not args.json:
        measure(args)
        return 0
    with contextlib.redirect_stdout(sys.stderr):
        report = measure(args)
    print(json.dumps(report, indent=1))
    return 0


def measure(args: argparse.Namespace) -> dict[str, object]:
    """The four parses, printed; their numbers."""
    import ray

    docs = list(islice(read_demo(), args.limit))
    words = sum(len(d.text.split()) for d in docs)
    print(f"{len(docs):,} documents, {words:,} words; spaCy batch size {args.batch_size}")
    seconds, shards = {}, set()
    for n in (1, 2):
        seconds[f"local-{n}"], digests = run(Engine("local", n_process=n, batch_size=args.batch_size), docs, words)
        shards.add(tuple(digests))
    for n in (1, 2):
        started = time.perf_counter()
        ray.init(num_cpus=n, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
        print(f"  (ray.init with {n} CPU(s): {time.perf_counter() - started:.1f} s, not counted)")
        try:
            engine = Engine("ray", batch_size=args.batch_size, num_workers=n)
            seconds[f"ray-{n}"], digests = run(engine, docs, words)
            shards.add(tuple(digests))
        finally:
            ray.shutdown()
    report = {"documents": len(docs), "words": words,
              "runs": {name: {"seconds": s, "words_per_s": words / s} for name, s in seconds.items()},
              "local_2_over_1": seconds["local-1"] / seconds["local-2"],
              "ray_2_over_1": seconds["ray-1"] / seconds["ray-2"],
              "ray_over_local": seconds["local-2"] / seconds["ray-2"], "identical": len(shards) == 1}
    print(f"ray 2 workers ÷ 1 worker: {report['ray_2_over_1']:.2f}× (target ≥ 1.8×)")
    print(f"ray ÷ local at 2 workers: {report['ray_over_local']:.2f}× the local engine's speed")
    print(f"shards identical across the four runs: {report['identical']}")
    return report


if __name__ == "__main__":
    sys.exit(main())
