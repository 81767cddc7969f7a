"""Support-request latency: S_q, entity ranking, each model's top-k and the support sentences.

    .venv/bin/python benchmarks/support_speed.py [--index /tmp/sentret_bench_idx] [--queries 200] [--k 4000]
                                                 [--ltr NAME]   # a 4th column: ltr.v1 with a stored ranker

The full support request the tool is sized for: k = 4000, 3 models (BM25F, LM 2S-I, TF-ISF), 20 entities, 3 support
sentences each, on the ≥150k-sentence index of ``retrieval_speed.py`` (built once, reused). Prints
p50 and p95 of the whole request and the median of each stage. Target: p50 ≤ 10 ms.
Anchor: the entity statistics alone take 0.27 ms at k = 4000 with ``G[rows]`` + ``np.unique``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval_speed import DEFAULT_INDEX, draw_queries, ensure_index

from sentret_core.defaults import DEFAULT_SUPPORT_MODELS
from sentret_core.support.engine import support
from sentret_core.support.entity_stats import entity_stats

PAPER_QUERIES = ["Picasso and peace", "Spanish Civil War", "Lennon and religion"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--index", type=Path, default=DEFAULT_INDEX)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=4000)
    parser.add_argument("--ltr", metavar="NAME", help="add ltr.v1 with the stored ranker NAME (scored per entity)")
    args = parser.parse_args()
    models = [*DEFAULT_SUPPORT_MODELS, *(["ltr.v1"] if args.ltr else [])]
    params = {"ltr.v1": {"model": args.ltr}} if args.ltr else None

    index = ensure_index(args.index)
    queries: list[str | list[str]] = [*PAPER_QUERIES, *draw_queries(index, args.queries, seed=7)]
    print(f"{index}; {len(queries)} queries, k = {args.k}, {', '.join(models)}, 20 entities × 3 sentences")
    for q in queries[:10]:  # warm-up: caches of query-independent data (context counts, p(d|s), …)
        support(index, q, k=args.k, models=models, params=params)

    totals, stages = [], {}
    for q in queries:
        start = time.perf_counter()
        result = support(index, q, k=args.k, top_entities=20, per_entity=3, models=models, params=params)
        totals.append(time.perf_counter() - start)
        for stage, seconds in result.timings.items():
            stages.setdefault(stage, []).append(seconds)

    ms = np.array(totals) * 1000
    p50, p95 = np.percentile(ms, 50), np.percentile(ms, 95)
    print(f"full request: p50 {p50:.2f} ms, p95 {p95:.2f} ms (target p50 ≤ 10 ms)")
    for stage, values in stages.items():
        print(f"  {stage:<9} median {statistics.median(values) * 1000:7.3f} ms")

    top = [np.arange(args.k) * (index.N // args.k) for _ in range(50)]  # spread-out S_q of size k
    start = time.perf_counter()
    for rows in top:
        entity_stats(index, rows)
    each = (time.perf_counter() - start) / len(top) * 1000
    print(f"entity statistics alone at k = {args.k}: {each:.3f} ms (anchor 0.27 ms)")


if __name__ == "__main__":
    main()
