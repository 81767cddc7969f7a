"""Indexing speed: `sentret index` against the bare `nlp.pipe` it wraps, in one run.

Both read the same documents (the demo corpus, or its first --limit documents) with the same
pipeline, batch size and n_process. The ratio says what our tokenisation, entity graph and
file writing cost on top of spaCy. Target: ratio ≥ 0.90, the whole demo corpus in ≤ 90 s.

    .venv/bin/python benchmarks/index_speed.py [--limit N] [--n-process 2] [--batch-size 64]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from itertools import islice
from pathlib import Path

from sentret_core.ingest.build import build_index
from sentret_core.ingest.corpus import read_demo
from sentret_core.ingest.nlp import DEFAULT_BATCH_SIZE, load_pipeline


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=None, help="first N demo documents (default: all)")
    parser.add_argument("--n-process", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--repeat", type=int, default=2, help="interleaved runs of each (default 2)")
    args = parser.parse_args()

    docs = list(islice(read_demo(), args.limit))
    words = sum(len(d.text.split()) for d in docs)
    print(
        f"{len(docs):,} documents, {words:,} words; n_process={args.n_process}, batch_size={args.batch_size}"
    )

    nlp = load_pipeline()
    print(f"pipeline: {nlp.pipe_names}; {args.repeat} interleaved runs each, best kept (this host's speed drifts)")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "docs.jsonl"
        source.write_text("".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}) + "\n" for d in docs))
        bare_times, ours_times = [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            for _doc in nlp.pipe((d.text for d in docs), batch_size=args.batch_size, n_process=args.n_process):
                pass
            bare_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            build_index(source, Path(tmp) / "index", n_process=args.n_process, batch_size=args.batch_size, force=True)
            ours_times.append(time.perf_counter() - started)
    bare, ours = min(bare_times), min(ours_times)
    runs = ", ".join(f"{b:.1f}/{o:.1f}" for b, o in zip(bare_times, ours_times))
    print(f"runs (bare/sentret s): {runs}")
    print(f"{'bare nlp.pipe':<16} {bare:8.1f} s  {words / bare:10,.0f} words/s")
    included = "(model load, reading, writing included)"
    print(f"{'sentret index':<16} {ours:8.1f} s  {words / ours:10,.0f} words/s  {included}")
    print(f"ratio (sentret / bare words/s): {bare / ours:.3f}  (target ≥ 0.90; demo corpus target ≤ 90 s)")


if __name__ == "__main__":
    main()
