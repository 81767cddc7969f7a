"""Scale (measurement only): build, load and query a synthetic index of ``--sentences`` sentences.

    .venv/bin/python benchmarks/scale.py [--sentences 1000000] [--queries 250] [--out DIR] [--reuse]
        [--no-peers | --skip-tantivy | --skip-bm25s] [--no-impacts] [--cold-support] [--json]
    .venv/bin/pip install -e ".[bench]"     # the peers: tantivy, bm25s, numba

Sizes and their cost on 2 cores (docs/performance.md#scale): 1M about a minute; 10M about 6 minutes (4 of
them the peers' indexing); 75M, the seed paper's (Blanco & Zaragoza, SIGIR 2010, §4), about 40 minutes and 45 GB
of disk with ``--skip-bm25s`` (bm25s-numba would need tens of GB of memory there).

The corpus is ``synthetic.py``'s (shared with ``validation_cost.py``): Zipf-distributed terms and
entities generated straight into parsed shards (numpy and pyarrow, no spaCy), timed. The index is
built from the shards (``build_from_shards``, out of core) in a child process so that its peak
memory (``ru_maxrss``) is the build's alone, and so are its impact lists (``sentret train impacts``, timed; none
with ``--no-impacts``). Then, in this process:

* ``Index.load`` time: cold (the index's files dropped from the page cache first), then first and median of 5 warm;
  the index size on disk and the shards' size;
* ``bm25.v1``, ``bm25f.v1`` and ``lm-2si.v1`` top-10 and top-1000 latency (``search``: ``top_k`` of ``score``,
  MaxScore-pruned for bm25.v1),
  p50/p95 over the queries, the first call per model timed apart as warm-up;
* a full support request (``support``; 3 default models, 20 entities × 3 sentences, k = 1000 and 4000), then at
  k = 4000 for as many queries drawn apart (another seed), which no pass before has read: what the scorers' passes
  over the same queries left in the caches and the page cache does not help them (``--cold-support``: only
  the support requests at k = 4000, first thing after the load, the slowest named by phase);
* the same BM25 top-10 queries in tantivy (whitespace tokenizer over each sentence's terms, so both
  see identical terms) and bm25s (numba backend when numba imports, else numpy), interleaved with
  sentret's bm25.v1 query by query, and sentret's ratio to each. Missing peers are named and skipped.

Queries: 2-4 distinct terms drawn (seeded) from the vocabulary, each term from the mid-frequency band
(0.01% ≤ sf/N ≤ 1%) with probability 0.7, else from the frequent (> 1%) or rare (< 0.01%, sf ≥ 2)
band with 0.15 each. Times are one run per query (wall clock); p50/p95 are over queries.

``--json`` prints the text to stderr and every number of it to stdout as one JSON object (times in ms unless
a key says ``_s``, sizes in bytes or MB as named), which ``docs/tables.toml`` reads (``sentret reproduce``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic import generate_shards  # noqa: E402

MODELS = ("bm25.v1", "bm25f.v1", "lm-2si.v1")
SUPPORT_KS = (1000, 4000)
UNSEEN_SEED = 16  # the support requests' second set of queries (draw_queries' own default seed is 15)
BANDS = (("mid", 0.7), ("frequent", 0.15), ("rare", 0.15))
REPORT: dict[str, Any] = {}  # every number printed, for --json


def rss_mb() -> float:
    """This process's peak resident set so far (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    """This process's resident set now (Linux; nan elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return float("nan")
    return pages * resource.getpagesize() / 2**20


def heap_mb() -> float:
    """This process's anonymous resident memory now (RssAnon: its heap, not the page cache it maps; Linux)."""
    try:
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("RssAnon:"))
    except (OSError, StopIteration):
        return float("nan")
    return int(line.split()[1]) / 1024


class PeakHeap:
    """The largest :func:`heap_mb` seen, sampled every 50 ms by a daemon thread from its creation on."""

    def __init__(self) -> None:
        self.peak = heap_mb()
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while True:
            self.peak = max(self.peak, heap_mb())
            time.sleep(0.05)


def evict(folder: Path) -> int:
    """Drop every file below ``folder`` from the page cache (so the next read is cold); how many files."""
    count = 0
    for here, _, files in os.walk(folder):
        for name in files:
            fd = os.open(os.path.join(here, name), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                count += 1
            finally:
                os.close(fd)
    return count


def build_child(out: Path) -> None:
    """``--build-only``: build the index from its shards and print one JSON line of timings and peak memory."""
    from sentret_core.ingest.build import build_from_shards

    started, heap = time.perf_counter(), PeakHeap()
    build_from_shards(shards_of(out), out)
    print(json.dumps({"build_s": time.perf_counter() - started, "peak_rss_mb": rss_mb(), "peak_heap_mb": heap.peak}))


def impacts_child(out: Path) -> None:
    """``--impacts-only``: build the index's impact lists and print one JSON line of timings and peak memory."""
    from sentret_core.index.reader import Index
    from sentret_core.models.training.impacts import train_impacts

    started, heap = time.perf_counter(), PeakHeap()
    lists = train_impacts(Index.load(out))
    print(json.dumps({"impacts_s": time.perf_counter() - started, "peak_rss_mb": rss_mb(), "peak_heap_mb": heap.peak,
                      "terms": len(lists.arrays["terms"])}))


def impact_lists(out: Path, n: int, reuse: bool, skip: bool) -> dict[str, Any]:
    """Build the impact lists in a child (timed, peak memory its own); with ``reuse``, keep sound ones; with
    ``skip``, remove any (every query then scores as without them)."""
    from sentret_core.index import artefacts
    from sentret_core.index.reader import Index
    from sentret_core.models.arrays.impacts import NAME, impact_lists

    held = artefacts.folder_of(out, NAME).exists()
    if skip:
        if held:
            artefacts.remove(out, NAME)
        return {"skipped": True}
    if reuse and held and impact_lists(Index.load(out)) is not None:
        return {"reused": True}
    return in_child("--impacts-only", n, out)


def in_child(flag: str, n: int, out: Path) -> dict[str, Any]:
    """Run this script with ``flag`` (``--build-only``, ``--impacts-only``) in a child: its last line, parsed."""
    proc = subprocess.run(
        [sys.executable, __file__, flag, "--sentences", str(n), "--out", str(out)],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    found: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


def shards_of(out: Path) -> Path:
    return out.with_name(f"{out.name}-shards")


def build(out: Path, n: int, reuse: bool) -> dict[str, Any]:
    """Generate the shards here (timed), then build the index from them in a child (peak memory its own)."""
    if (out / "manifest.json").exists():
        if reuse:
            return {"reused": True}
        manifest = json.loads((out / "manifest.json").read_text())
        if manifest.get("source") != "synthetic":
            raise SystemExit(f"{out} holds an index that is not synthetic: not replacing it")
        shutil.rmtree(out)
    elif out.exists():
        raise SystemExit(f"{out} exists and is not an index: choose another --out")
    shutil.rmtree(shards_of(out), ignore_errors=True)
    started = time.perf_counter()
    documents = generate_shards(shards_of(out), n)
    generate_s = time.perf_counter() - started
    return dict(in_child("--build-only", n, out), generate_s=generate_s, documents=documents)


def disk_size(path: Path, skip: str = "shards") -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and skip not in p.relative_to(path).parts)


def draw_queries(index: Any, n: int, seed: int = 15) -> list[list[str]]:
    sf = np.asarray(index.sf)
    N = index.N
    lo, hi = max(2, N // 10_000), N // 100
    pools = {
        "mid": np.flatnonzero((sf >= lo) & (sf <= hi)),
        "frequent": np.flatnonzero(sf > hi),
        "rare": np.flatnonzero((sf >= 2) & (sf < lo)),
    }
    bands = [b for b, _ in BANDS if len(pools[b])]
    weights = np.array([w for b, w in BANDS if len(pools[b])])
    rng = np.random.default_rng(seed)
    vocab = index.vocab
    queries = []
    for _ in range(n):
        size = int(rng.integers(2, 5))
        chosen: set[int] = set()
        while len(chosen) < size:
            band = bands[rng.choice(len(bands), p=weights / weights.sum())]
            chosen.add(int(rng.choice(pools[band])))
        queries.append([vocab[t] for t in sorted(chosen)])
    return queries


def cold_support(index: Any, queries: list[list[str]], request: Callable[[list[str], int], Any]) -> None:
    """The support requests at the largest k as a fresh process meets them (``--cold-support``): nothing read
    before them but the index's load, so they pay its first reads (blocks checked, fields built, pages from
    disk); the slowest named with the time of each phase."""
    k = SUPPORT_KS[-1]
    start = time.perf_counter()
    request(queries[0], k)  # the first request's one-off costs (whole files checked, context lengths): apart
    first = time.perf_counter() - start
    timed = []
    for q in queries:
        start = time.perf_counter()
        timings = request(q, k).timings
        timed.append((time.perf_counter() - start, q, timings))
    p50, p95 = percentiles([seconds for seconds, _, _ in timed])
    REPORT["cold_support"] = {"k": k, "first_ms": first * 1000, "p50": p50, "p95": p95}
    print(f"\nsupport requests first in the process, k = {k}: first {first:.2f} s, then p50 {p50:.1f} ms, "
          f"p95 {p95:.1f} ms; the slowest (ms):")
    for seconds, q, timings in sorted(timed, key=lambda row: -row[0])[:10]:
        phases = ", ".join(f"{name} {value * 1000:.0f}" for name, value in timings.items())
        print(f"  {seconds * 1000:7.0f}  {' '.join(q):32s} {phases}")


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ms = np.array(seconds) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def search_top(index: Any, model: str, k: int, query: list[str]) -> object:
    from sentret_core.models import search

    return search(index, query, model, k)


def support_request(index: Any, k: int, query: list[str]) -> object:
    """A full support request as the app makes it: 20 entities × 3 sentences."""
    from sentret_core.support.engine import support

    return support(index, query, k=k, top_entities=20, per_entity=3)


def timed_each(run: Callable[[list[str]], object], queries: list[list[str]]) -> tuple[float, list[float]]:
    """(seconds of the first call, the warm-up; seconds of each query after it)."""
    start = time.perf_counter()
    run(queries[0])
    first = time.perf_counter() - start
    times = []
    for q in queries:
        start = time.perf_counter()
        run(q)
        times.append(time.perf_counter() - start)
    return first, times


class Peers:
    """tantivy and bm25s over the index's own term sequences; absent ones are named in ``missing``."""

    def __init__(self, index: Any, want_numba: bool = True, skip: frozenset[str] = frozenset()) -> None:
        self.missing: list[str] = []
        self.notes: list[str] = []
        self.indexed_s: dict[str, float] = {}
        self.runs: dict[str, Callable[[list[str]], object]] = {}
        self.hits: dict[str, Callable[[list[str]], list[int]]] = {}
        self.index = index
        self.vocab = np.array(index.vocab, dtype=object)
        self.indptr = np.asarray(index.seq_indptr)
        self.seq_terms = np.asarray(index.seq_terms)
        try:
            import tantivy  # noqa: F401
        except ImportError:
            self.missing.append("tantivy")
        else:
            if "tantivy" not in skip:
                self._tantivy()
        try:
            import bm25s  # noqa: F401
        except ImportError:
            self.missing.append("bm25s")
        else:
            if "bm25s" in skip:
                return
            backend = "numpy"
            try:
                import numba  # noqa: F401
            except ImportError:
                self.missing.append("numba (bm25s runs its numpy backend instead)")
            else:
                backend = "numba" if want_numba else "numpy"
            self._bm25s(backend)

    def _sentence(self, i: int) -> np.ndarray:
        return self.vocab[self.seq_terms[self.indptr[i] : self.indptr[i + 1]]]

    def _tantivy(self) -> None:
        import tantivy

        started, rss = time.perf_counter(), current_rss_mb()
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
        builder.add_unsigned_field("sid", stored=True, indexed=False)
        schema = builder.build()
        index = tantivy.Index(schema)  # in memory, as ours is in the page cache
        writer = index.writer(heap_size=1_000_000_000, num_threads=1)
        for i in range(self.index.N):
            doc = tantivy.Document()
            doc.add_text("body", " ".join(self._sentence(i)))
            doc.add_unsigned("sid", i)
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        searcher = index.searcher()
        self.indexed_s["tantivy"] = time.perf_counter() - started
        self.notes.append(
            f"tantivy: indexed in {self.indexed_s['tantivy']:.1f} s (in RAM, 1 writer thread), "
            f"{searcher.num_segments} segment(s), RSS {rss:,.0f} → {current_rss_mb():,.0f} MB"
        )
        Occur, Query = tantivy.Occur, tantivy.Query

        def query(q: list[str]) -> Any:
            return Query.boolean_query([(Occur.Should, Query.term_query(schema, "body", t)) for t in q])

        def run(q: list[str]) -> object:
            return searcher.search(query(q), 10).hits

        def hits(q: list[str]) -> list[int]:
            return [searcher.doc(address)["sid"][0] for _, address in searcher.search(query(q), 10).hits]

        self.runs["tantivy"] = run
        self.hits["tantivy"] = hits

    def _bm25s(self, backend: str) -> None:
        import bm25s

        started, rss = time.perf_counter(), current_rss_mb()
        tokens = [self._sentence(i).tolist() for i in range(self.index.N)]  # shared str objects
        retriever = bm25s.BM25(k1=1.2, b=0.75, method="atire", idf_method="robertson", backend=backend)
        retriever.index(tokens, show_progress=False)
        del tokens
        name = f"bm25s {backend}"

        def retrieve(q: list[str]) -> Any:
            return retriever.retrieve([q], k=10, show_progress=False, n_threads=0)

        start = time.perf_counter()
        retrieve(["w1", "w2"])  # numba compiles here
        jit = time.perf_counter() - start
        self.indexed_s[name] = start - started
        self.notes.append(
            f"{name}: indexed in {start - started:.1f} s, first retrieve (JIT) {jit:.1f} s, "
            f"RSS {rss:,.0f} → {current_rss_mb():,.0f} MB; method=atire, idf=robertson, retrieve() n_threads=0"
        )
        self.runs[name] = retrieve
        self.hits[name] = lambda q: [int(i) for i in np.asarray(retrieve(q)[0])[0]]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=250)
    parser.add_argument("--out", help="where the index goes (default /tmp/sentret-scale-N)")
    parser.add_argument("--reuse", action="store_true", help="use an index already at --out (no build timing)")
    parser.add_argument("--no-peers", action="store_true", help="skip tantivy and bm25s")
    parser.add_argument("--skip-tantivy", action="store_true", help="skip tantivy (41 s of indexing at 10M)")
    parser.add_argument("--skip-bm25s", action="store_true", help="skip bm25s (3 min of indexing at 10M)")
    parser.add_argument("--no-impacts", action="store_true", help="no impact lists (removes any the index has)")
    parser.add_argument("--cold-support", action="store_true",
                        help="after loading, time only the support requests at the largest k, first thing in the "
                             "process (no scorer pass before them), and name the slowest by phase")
    parser.add_argument("--json", action="store_true", help="the text to stderr, every number to stdout as JSON")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--impacts-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    out = Path(args.out or f"/tmp/sentret-scale-{args.sentences}")
    if args.build_only:
        build_child(out)
        return 0
    if args.impacts_only:
        impacts_child(out)
        return 0
    if not args.json:
        return measure(args, out)
    with contextlib.redirect_stdout(sys.stderr):
        code = measure(args, out)
    json.dump(REPORT, sys.stdout, indent=1)
    print()
    return code


def measure(args: argparse.Namespace, out: Path) -> int:
    """Build (or reuse), load and query the index at ``out``, printing each number and keeping it in REPORT."""
    from sentret_core.defaults import DEFAULT_SUPPORT_MODELS
    from sentret_core.index.reader import Index
    from sentret_core.models import score, search, top_k

    wall = time.perf_counter()
    phases: list[tuple[str, float]] = []

    def mark(phase: str) -> None:  # wall time of each phase, summed up at the end
        phases.append((phase, time.perf_counter() - wall - sum(t for _, t in phases)))

    print(f"sentret scale benchmark: {args.sentences:,} synthetic sentences → {out}")
    heap = PeakHeap()
    built = build(out, args.sentences, args.reuse)
    mark("shards + build")
    REPORT.update(sentences=args.sentences, queries=args.queries, build=built)
    print("\nbuild (child process)")
    if built.get("reused"):
        print("  reused the index already there (--reuse): no build timing")
    else:
        print(f"  shards generated            {built['generate_s']:9.1f} s  ({built['documents']:,} documents; "
              f"numpy/pyarrow straight into shards, no spaCy)")
        print(f"  build time (from shards)    {built['build_s']:9.1f} s")
        print(f"  build peak memory           {built['peak_rss_mb']:9,.0f} MB (ru_maxrss of the child; its heap, "
              f"RssAnon, {built.get('peak_heap_mb', float('nan')):,.0f} MB)")
    lists = impact_lists(out, args.sentences, args.reuse, args.no_impacts)
    if lists.get("skipped"):
        print("  impact lists                none (--no-impacts)")
    elif lists.get("reused"):
        print("  impact lists                reused the ones already there (--reuse): no timing")
    else:
        print(f"  impact lists (child)        {lists['impacts_s']:9.1f} s  ({lists['terms']:,} terms; peak memory "
              f"{lists['peak_rss_mb']:,.0f} MB, heap {lists['peak_heap_mb']:,.0f} MB; `sentret train impacts`)")
    mark("impact lists")
    REPORT["impacts"] = lists
    REPORT["disk"] = {"shards_bytes": disk_size(shards_of(out)), "index_bytes": disk_size(out)}
    print(f"  shards on disk              {REPORT['disk']['shards_bytes'] / 1e6:9,.1f} MB")
    print(f"  index size on disk          {REPORT['disk']['index_bytes'] / 1e6:9,.1f} MB (without its shards/ copy)")

    evicted = evict(out)
    start = time.perf_counter()
    Index.load(out)
    cold_load = time.perf_counter() - start
    print(f"  Index.load, cold            {cold_load * 1000:9.1f} ms ({evicted:,} files dropped from the page cache "
          "first, posix_fadvise DONTNEED)")
    start = time.perf_counter()
    index = Index.load(out)
    first_load = time.perf_counter() - start
    loads = []
    for _ in range(5):
        start = time.perf_counter()
        Index.load(out)
        loads.append(time.perf_counter() - start)
    print(f"  Index.load                  {first_load * 1000:9.1f} ms first, {statistics.median(loads) * 1000:.1f} ms "
          f"median of 5 (page cache warm from the build)")
    nnz = int(np.asarray(index.seq_indptr)[-1])
    REPORT["load"] = {"cold_ms": cold_load * 1000, "first_ms": first_load * 1000,
                      "warm_ms": statistics.median(loads) * 1000}
    REPORT["corpus"] = {"sentences": index.N, "terms": len(index.vocab), "occurrences": nnz, "entities": index.E}
    print(f"  {index.N:,} sentences, {len(index.vocab):,} terms, {nnz:,} term occurrences, {index.E:,} entities")

    print(f"  RSS after loading {current_rss_mb():,.0f} MB")
    mark("load")
    queries = draw_queries(index, args.queries)
    sizes = np.bincount([len(q) for q in queries], minlength=5)[2:]
    print(f"\n{len(queries)} queries, {sizes[0]}/{sizes[1]}/{sizes[2]} of 2/3/4 terms, e.g. {queries[:3]}")
    if args.cold_support:
        cold_support(index, queries, lambda q, k: support_request(index, k, q))
        return 0

    print(f"\nsentence scorers (search = top_k of score), ms{'':4s}p50      p95   first call   RSS after, MB")
    for model in MODELS:
        for k in (10, 1000):
            first, times = timed_each(functools.partial(search_top, index, model, k), queries)
            p50, p95 = percentiles(times)
            REPORT.setdefault("search", {}).setdefault(model, {})[f"top-{k}"] = {
                "p50": p50, "p95": p95, "first_ms": first * 1000}
            print(f"  {model:12s} top-{k:<5d}  {p50:16.2f} {p95:8.2f} {first * 1000:10.1f} {current_rss_mb():14,.0f}")
    counts = [len(score(index, q, "bm25.v1").ids) for q in queries]
    median, p95 = int(np.median(counts)), int(np.percentile(counts, 95))
    print(f"  candidates per query (bm25.v1): median {median:,}, p95 {p95:,}")
    print(f"  peak RSS so far {rss_mb():,.0f} MB")

    mark("sentret scorers")
    models = ", ".join(DEFAULT_SUPPORT_MODELS)
    print(f"\nfull support request ({models}; 20 entities × 3 sentences), ms      p50      p95   first call")
    for k in SUPPORT_KS:
        first, times = timed_each(functools.partial(support_request, index, k), queries)
        p50, p95 = percentiles(times)
        REPORT.setdefault("support", {})[f"k-{k}"] = {"p50": p50, "p95": p95, "first_ms": first * 1000}
        print(f"  k = {k:<5d}{'':47s}{p50:9.2f} {p95:8.2f} {first * 1000:10.1f}")
    unseen = draw_queries(index, args.queries, seed=UNSEEN_SEED)
    _, times = timed_each(functools.partial(support_request, index, SUPPORT_KS[-1]), unseen)
    p50, p95 = percentiles(times)
    REPORT["support"][f"k-{SUPPORT_KS[-1]}-unseen"] = {"p50": p50, "p95": p95}
    REPORT["memory"] = {"heap_mb": heap_mb(), "peak_heap_mb": heap.peak}
    print(f"  k = {SUPPORT_KS[-1]:<5d}, {len(unseen)} queries no pass has read (seed {UNSEEN_SEED}){'':8s}"
          f"{p50:9.2f} {p95:8.2f}")
    print(f"  RSS now {current_rss_mb():,.0f} MB, of it heap (RssAnon) {heap_mb():,.0f} MB")
    print(f"  peak RSS so far {rss_mb():,.0f} MB; peak heap {heap.peak:,.0f} MB")

    mark("support requests")
    if args.no_peers:
        print("\npeers skipped (--no-peers)")
    else:
        print("\npeers: BM25 top-10 on the same sentences and queries")
        skip = frozenset(name for name, flag in (("tantivy", args.skip_tantivy), ("bm25s", args.skip_bm25s)) if flag)
        peers = Peers(index, skip=skip)
        if skip:
            print(f"  skipped: {', '.join(sorted(skip))}")
        if peers.missing:
            print(f"  MISSING (pip install -e '.[bench]'): {', '.join(peers.missing)} — skipped")
        for note in peers.notes:
            print(f"  {note}")
        runs: dict[str, Callable[[list[str]], object]] = {
            "sentret bm25.v1": lambda q: search(index, q, "bm25.v1", 10),
            **peers.runs,
        }
        for run in runs.values():  # warm-up
            for q in queries[:5]:
                run(q)
        peer_times: dict[str, list[float]] = {name: [] for name in runs}
        for q in queries:  # interleaved: load from elsewhere falls on all alike
            for name, run in runs.items():
                start = time.perf_counter()
                run(q)
                peer_times[name].append(time.perf_counter() - start)
        ours = percentiles(peer_times["sentret bm25.v1"])
        head = f"  {'implementation':22s}{'p50 ms':>9s}{'p95 ms':>9s}"
        print(f"{head}   sentret ÷ it (p50, p95)   top-10 overlap with sentret")
        for name, values in peer_times.items():
            p50, p95 = percentiles(values)
            overlap = ""
            if name in peers.hits:
                shared = [
                    len(set(peers.hits[name](q)) & set(top_k(score(index, q, "bm25.v1"), 10).ids.tolist())) / 10
                    for q in queries[:50]
                ]
                overlap = f"{statistics.mean(shared):.2f} (50 queries)"
            ratio = "" if name.startswith("sentret") else f"{ours[0] / p50:6.2f}×, {ours[1] / p95:6.2f}×"
            REPORT.setdefault("peers", {})[name] = {
                "p50": p50, "p95": p95, "indexed_s": peers.indexed_s.get(name),
                **({} if name.startswith("sentret") else {"ratio_p50": ours[0] / p50, "ratio_p95": ours[1] / p95})}
            print(f"  {name:22s}{p50:9.3f}{p95:9.3f}   {ratio:24s}{overlap}")
        print("  (sentret ÷ it > 1: sentret is slower; overlap < 1: ties at rank 10, which sentret breaks by id")
        print("   and the peers otherwise, and tantivy's quantised length norms)")
        if "tantivy" in peer_times:
            t50, t95 = percentiles(peer_times["tantivy"])
            ratio = f"p50 {ours[0] / t50:.2f}×, p95 {ours[1] / t95:.2f}×"
            print(f"  BM25 top-10 sentret ÷ tantivy: {ratio} (target ≤ 1.0×)")
        mark("peers")
    REPORT["phases_s"] = dict(phases)
    print("\nphase wall times: " + ", ".join(f"{phase} {t:.0f} s" for phase, t in phases))
    print(f"RSS now {current_rss_mb():,.0f} MB, peak RSS of this process {rss_mb():,.0f} MB, "
          f"peak heap (RssAnon) {heap.peak:,.0f} MB; "
          f"whole run {time.perf_counter() - wall:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
