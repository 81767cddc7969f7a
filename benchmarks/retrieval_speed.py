"""Retrieval speed: every registered sentret model against rank-bm25 and bm25s, top-10 per query.

    .venv/bin/python benchmarks/retrieval_speed.py [--index /tmp/sentret_bench_idx] [--queries 200] [--models M,…]

The index is the demo corpus repeated ×4.3 under distinct ids (~156k sentences, the scale of the
reference timings of rank-bm25 and bm25s in :data:`ANCHORS`), built once with
``sentret_core.build_index`` and reused from ``--index``.
Queries: 2-3 terms drawn (seeded) from the mid-frequency vocabulary (sf between 0.01% and 1% of
N); every implementation gets the same terms (ours as pre-normalised term lists, the others as
token lists over the same vocabulary). Times are the median over queries of one query's wall
time (``search``: score + top-10, MaxScore-pruned for bm25.v1), after a warm-up; rank-bm25 is
timed on a subset (it is slow). bm25s runs its numpy backend, and its numba backend when numba is
importable (the JIT time is excluded and reported apart).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sentret_core import Index, build_index
from sentret_core.index import artefacts
from sentret_core.index.format import is_index
from sentret_core.ingest.corpus import read_demo
from sentret_core.models import list_models, score, search
from sentret_core.models.training import train_missing_defaults

DEFAULT_INDEX = Path("/tmp/sentret_bench_idx")
# 4.3 copies of the 36k-sentence demo corpus: ~156k sentences, the scale of the reference timings (≥ 150k)
COPIES = 4.3
K = 10
# reference timings of rank-bm25 and bm25s themselves, measured at 157k sentences on this machine kind (ms/query)
ANCHORS = {"rank-bm25": 60.8, "bm25s numpy": 4.44, "bm25s numba": 0.12}


def ensure_index(path: Path, copies: float = COPIES, n_process: int = 2) -> Index:
    """The demo corpus ×``copies`` under distinct ids, built once into ``path`` and reused."""
    if not is_index(path):
        source = path.with_name(path.name + ".jsonl")
        docs = list(read_demo())
        total = round(copies * len(docs))
        with source.open("w", encoding="utf-8") as out:
            for i in range(total):
                doc = docs[i % len(docs)]
                copy = i // len(docs)
                out.write(json.dumps({"id": f"{doc.id}#{copy}", "title": doc.title, "text": doc.text}))
                out.write("\n")
        print(f"building {path} from {source} (a few minutes, once)", file=sys.stderr)
        build_index(source, path, n_process=n_process, force=True)
    index = Index.load(path)
    # the artefacts the class and trigger LMs read: an explicit step, as `make run` does for the demo
    train_missing_defaults(index, [(spec.name, None) for spec in list_models()], print)
    return index


def draw_queries(index: Index, n: int, seed: int = 42) -> list[list[str]]:
    """``n`` queries of 2-3 distinct mid-frequency terms (0.01% ≤ sf/N ≤ 1%)."""
    sf = np.asarray(index.sf)
    lo, hi = max(2, index.N // 10_000), index.N // 100
    pool = np.flatnonzero((sf >= lo) & (sf <= hi))
    rng = np.random.default_rng(seed)
    vocab = index.vocab
    return [[vocab[t] for t in rng.choice(pool, size=rng.integers(2, 4), replace=False)] for _ in range(n)]


def median_ms(run: Callable[[list[str]], object], queries: list[list[str]], passes: int = 3) -> float:
    """Median over queries of the best of ``passes`` timings of one query (after a warm-up)."""
    for q in queries[:10]:
        run(q)
    best = [min(_time(run, q) for _ in range(passes)) for q in queries]
    return statistics.median(best) / 1e6


def _time(run: Callable[[list[str]], object], q: list[str]) -> int:
    start = time.perf_counter_ns()
    run(q)
    return time.perf_counter_ns() - start


def interleaved_ms(
    runs: dict[str, Callable[[list[str]], object]], queries: list[list[str]], passes: int = 3
) -> dict[str, float]:
    """Like :func:`median_ms` for several implementations timed in turn on each query, so that
    load from other processes falls on all of them alike (their ratios are what matter)."""
    for q in queries[:10]:
        for run in runs.values():
            run(q)
    best: dict[str, list[int]] = {name: [] for name in runs}
    for q in queries:
        for name, run in runs.items():
            best[name].append(min(_time(run, q) for _ in range(passes)))
    return {name: statistics.median(times) / 1e6 for name, times in best.items()}


def sentence_tokens(index: Index) -> list[list[str]]:
    """Every sentence's terms (with repeats), from the index's own term sequences."""
    vocab = np.array(index.vocab, dtype=object)
    indptr = np.asarray(index.seq_indptr)
    terms = vocab[np.asarray(index.seq_terms)]
    return [list(terms[indptr[i] : indptr[i + 1]]) for i in range(index.N)]


def bench_rank_bm25(tokens: list[list[str]], queries: list[list[str]]) -> float:
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi(tokens, k1=1.2, b=0.75)

    def run(q: list[str]) -> object:
        s = bm25.get_scores(q)
        return np.argpartition(-s, K)[:K]

    return median_ms(run, queries, passes=1)


def bench_bm25s(
    tokens: list[list[str]], queries: list[list[str]], backend: str
) -> tuple[float, float, float]:
    """bm25s with ``backend``: (ms/query through ``retrieve``, ms/query through ``get_scores``
    plus a top-10 argpartition, seconds of JIT warm-up)."""
    import bm25s

    retriever = bm25s.BM25(k1=1.2, b=0.75, method="atire", idf_method="robertson", backend=backend)
    retriever.index(tokens, show_progress=False)

    def run(q: list[str]) -> object:
        return retriever.retrieve([q], k=K, show_progress=False, n_threads=0)

    def lean(q: list[str]) -> object:
        scores = retriever.get_scores(q)
        return np.argpartition(-scores, K)[:K]

    start = time.perf_counter()
    run(queries[0])  # numba compiles here
    jit = time.perf_counter() - start
    return median_ms(run, queries, passes=1), median_ms(lean, queries, passes=1), jit


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--index", type=Path, default=DEFAULT_INDEX)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rank-bm25-queries", type=int, default=20)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--ours-only", action="store_true", help="skip rank-bm25 and bm25s")
    parser.add_argument("--models", help="only these registered models, comma-separated (bm25.v1 is always timed)")
    parser.add_argument("--ranker", default="ltr", help="the stored ranker ltr.v1 reads (`sentret rankers`)")
    args = parser.parse_args(argv)

    index = ensure_index(args.index)
    if args.build_only:
        print(index)
        return
    queries = draw_queries(index, args.queries)
    print(f"{index}\n{len(queries)} queries of 2-3 mid-frequency terms, top-{K}; e.g. {queries[:3]}\n")

    rows: list[tuple[str, float, str]] = []
    setup: dict[str, float] = {}
    runs: dict[str, Callable[[list[str]], object]] = {}
    chosen = None if args.models is None else {"bm25.v1", *args.models.split(",")}
    if chosen is not None and (unknown := chosen - {spec.name for spec in list_models()}):
        parser.error(f"--models: no model {', '.join(sorted(unknown))} (`sentret models` lists them)")
    for spec in list_models():
        if chosen is not None and spec.name not in chosen:
            continue
        params = {"model": args.ranker} if spec.family == "ltr" else {}
        if params and not any(r["name"] == args.ranker for r in artefacts.available(None, "ranker")):
            rows.append((spec.name, float("nan"), f"no ranker {args.ranker!r} stored: `sentret learn` one first"))
            continue
        start = time.perf_counter()
        score(index, queries[0], spec.name, **params)  # builds the model's cached data
        setup[spec.name] = time.perf_counter() - start
        runs[spec.name] = lambda q, name=spec.name, p=params: search(index, q, name, K, **p)
    ours = interleaved_ms(runs, queries)
    for name, ms in ours.items():
        rows.append((name, ms, f"first-use setup {setup[name]:.2f} s"))

    others: dict[str, float] = {}
    if not args.ours_only:
        tokens = sentence_tokens(index)
        others["rank-bm25"] = bench_rank_bm25(tokens, queries[: args.rank_bm25_queries])
        rows.append(("rank-bm25 BM25Okapi", others["rank-bm25"], f"{args.rank_bm25_queries} queries"))
        retrieve, lean, _ = bench_bm25s(tokens, queries, "numpy")
        others["bm25s numpy"] = retrieve
        others["bm25s numpy lean"] = lean
        rows.append(("bm25s numpy retrieve()", retrieve, "method=atire, idf=robertson"))
        rows.append(("bm25s numpy get_scores+top", lean, "get_scores + argpartition over all N"))
        try:
            import numba  # noqa: F401
        except ImportError:
            rows.append(("bm25s numba", float("nan"), "numba is not installed: not measured"))
        else:
            retrieve, lean, jit = bench_bm25s(tokens, queries, "numba")
            others["bm25s numba"] = retrieve
            rows.append(("bm25s numba retrieve()", retrieve, f"JIT {jit:.1f} s excluded"))

    print(f"{'implementation':28s} {'ms/query':>9s}  note")
    for name, ms, note in rows:
        print(f"{name:28s} {ms:9.3f}  {note}")

    bm25 = ours["bm25.v1"]
    print("\nratios")
    numba_ms = others.get("bm25s numba")
    numba_note = "measured"
    if numba_ms is None:
        numba_ms, numba_note = ANCHORS["bm25s numba"], "anchor 0.12 ms (numba not installed here)"
    for name in ("bm25.v1", "tfisf.v1"):
        if name in ours:
            print(f"  {name} / bm25s numba ({numba_note}): {ours[name] / numba_ms:.2f}  (target ≤ 1.0)")
    if "bm25s numpy" in others:
        print(f"  bm25s numpy retrieve() / bm25.v1: {others['bm25s numpy'] / bm25:.0f}×")
        print(f"  bm25s numpy get_scores+top / bm25.v1: {others['bm25s numpy lean'] / bm25:.1f}×")
    if "rank-bm25" in others:
        print(f"  rank-bm25 / bm25.v1: {others['rank-bm25'] / bm25:.0f}×  (target ≥ 300)")
    if "bm25f.v1" in ours:
        print(f"  bm25f.v1 / bm25.v1: {ours['bm25f.v1'] / bm25:.2f}  (target ≤ 2)")
    # the dense models scan every sentence's vector (a mat-vec over all N), BM25F only the query terms' postings
    for name, target in (("embed.v1", "  (target ≤ 3)"), ("align.v1", "")):
        if name in ours and "bm25f.v1" in ours:
            print(f"  {name} / bm25f.v1: {ours[name] / ours['bm25f.v1']:.1f}{target}")
    for name, ms in ours.items():
        if name.startswith("lm-"):
            print(f"  {name} / bm25.v1: {ms / bm25:.2f}  (target ≤ 3)")
    for name, ms in ours.items():
        if name.startswith(("tf", "idf")) and name != "tfisf.v1":
            print(f"  {name} / bm25.v1: {ms / bm25:.2f}")


if __name__ == "__main__":
    main()
