"""minilm.v1's semantic first stage: the nearest-neighbour graph against the exact scan, on real sentences.

    .venv/bin/python benchmarks/ann.py [--index data/indexes/demo ...] [--queries 500] [--candidates 1000]
        [--stand-in 1000000] [--threads 2]

The sentences are those of each ``--index`` (default the demo's), with the sentence vectors ``sentret train
minilm`` wrote there (all indexes given are pooled: ``--index A --index B`` measures A ∪ B). The queries are
real questions: the distinct questions of WikiQA's dev file and TrecQA's DEV (in file order, up to
``--queries``), encoded by the same encoder. Per set of vectors:

* the graph's build time on ``--threads`` threads and its size (bytes a sentence: the serialised graph, int8
  vectors and links, which is what it holds in memory);
* recall@100 of the first stage (the graph's ``--candidates`` nearest, scored exactly, their top 100) against
  the exact scan's top 100, mean and worst over the queries;
* the time per query of the first stage (graph look-up + exact rescoring) and of the exact scan, p50/p95, the
  encoding of the query excluded (it is the same for both: benchmarks/encoder_speed.py times it).

``--stand-in N`` adds a set of N vectors for the scale no real text on this machine reaches: each the
normalised mean of two real sentence vectors drawn at random (seeded). They are not vectors of real text and
are reported as a stand-in; a real million (about 85 minutes of encoding on two cores) is the number to
quote where a machine can encode it. Printed with the load average before and after: the machine is
shared, so read it.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
QUESTION_FILES = ((DATA / "wikiqa" / "WikiQA-dev.tsv", "Question"), (DATA / "trecqa" / "DEV.tsv", None))
RECALL_AT = 100
SEED = 0


def questions(limit: int) -> list[str]:
    """The distinct questions of the shared dev files, in file order."""
    seen: dict[str, None] = {}
    for path, column in QUESTION_FILES:
        if not path.is_file():
            continue
        with path.open(newline="", encoding="utf-8") as handle:
            rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(rows)
            at = header.index(column) if column in header else next(
                (i for i, name in enumerate(header) if name.lower() in ("question", "query")), 0)
            for row in rows:
                if len(row) > at and row[at].strip():
                    seen.setdefault(row[at].strip(), None)
    return list(seen)[:limit]


def real_vectors(indexes: list[str]) -> np.ndarray:
    from sentret_core import Index
    from sentret_core.index import artefacts
    from sentret_core.models.training.sentence_vectors import DEFAULT_NAME, KIND

    parts = []
    for path in indexes:
        index = Index.load(path)
        parts.append(artefacts.read(index, KIND, DEFAULT_NAME).arrays["vectors"])
    return np.concatenate(parts)


def stand_in(vectors: np.ndarray, n: int) -> np.ndarray:
    """``n`` unit vectors, each the normalised mean of two of ``vectors`` drawn at random."""
    rng = np.random.default_rng(SEED)
    out = np.empty((n, vectors.shape[1]), dtype=np.float16)
    for start in range(0, n, 65536):
        rows = min(65536, n - start)
        a, b = rng.integers(0, len(vectors), rows), rng.integers(0, len(vectors), rows)
        mixed = vectors[a].astype(np.float32) + vectors[b].astype(np.float32)
        out[start:start + rows] = mixed / np.maximum(np.linalg.norm(mixed, axis=1, keepdims=True), 1e-12)
    return out


def measure(label: str, vectors16: np.ndarray, queries: np.ndarray, candidates: int, threads: int) -> None:
    from usearch.index import Index as Graph

    from sentret_core.models.minilm import ann
    from sentret_core.models.minilm.scorer import dots

    n = len(vectors16)
    vectors = vectors16.astype(np.float32)
    start = time.perf_counter()
    serialised = ann.build_graph(vectors16, threads=threads)
    built = time.perf_counter() - start
    graph = Graph.restore(serialised.data, view=True)
    order = np.arange(n)
    recalls, first_stage, scan, blas = [], [], [], []
    for q in queries:
        start = time.perf_counter()
        ids = ann.nearest(graph, q, candidates)
        values = dots(vectors[ids], q)
        top = ids[np.lexsort((ids, -values))[:RECALL_AT]]
        first_stage.append(time.perf_counter() - start)
        start = time.perf_counter()
        exact = dots(vectors, q)
        best = np.lexsort((order, -exact))[:RECALL_AT] if n <= 200_000 else _top(exact, RECALL_AT)
        scan.append(time.perf_counter() - start)
        start = time.perf_counter()
        vectors @ q
        blas.append(time.perf_counter() - start)
        recalls.append(len(np.intersect1d(top, best)) / min(RECALL_AT, n))

    def ms(times: list[float]) -> str:
        return f"p50 {np.percentile(times, 50) * 1e3:7.2f} ms  p95 {np.percentile(times, 95) * 1e3:7.2f} ms"

    print(f"\n{label}: {n:,} sentences, {len(queries)} queries, {candidates} candidates")
    print(f"  graph: built in {built:.1f} s on {threads} threads, {serialised.nbytes / n:.0f} bytes a sentence "
          f"({serialised.nbytes / 2**20:.1f} MiB; the float16 vectors the rescoring reads: "
          f"{vectors16.nbytes / n:.0f} bytes a sentence)")
    print(f"  recall@{RECALL_AT} against the exact scan: mean {np.mean(recalls):.4f}, worst {np.min(recalls):.2f}")
    print(f"  first stage (graph + exact rescoring): {ms(first_stage)}")
    print(f"  exact scan (einsum, the scorer's):     {ms(scan)}   ÷ first stage p95 "
          f"{np.percentile(scan, 95) / np.percentile(first_stage, 95):.1f}×")
    print(f"  exact scan (BLAS mat-vec, a peer):     {ms(blas)}")


def _top(values: np.ndarray, k: int) -> np.ndarray:
    part = np.argpartition(-values, k)[:k]
    return part[np.lexsort((part, -values[part]))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", action="append", help="an index with sentence vectors (repeatable)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--stand-in", type=int, default=0, metavar="N")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    from sentret_core.models.minilm.encoder import encoder

    indexes = args.index or [str(ROOT / "data" / "indexes" / "demo")]
    print(f"load average before: {os.getloadavg()[0]:.2f}  (cores: {os.cpu_count()})")
    texts = questions(args.queries)
    if not texts:
        print(f"no questions found under {DATA}", file=sys.stderr)
        return 1
    queries = encoder().encode(texts)
    vectors = real_vectors(indexes)
    measure("real sentences (" + ", ".join(Path(p).name for p in indexes) + ")", vectors, queries,
            args.candidates, args.threads)
    if args.stand_in:
        measure("stand-in (mixtures of two real sentence vectors, not real text)", stand_in(vectors, args.stand_in),
                queries, args.candidates, args.threads)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
