"""What checking an index costs: load time with and without validation, and the sha256 of every file.

    .venv/bin/python benchmarks/validation_cost.py [--index data/indexes/demo] [--sentences 1000000]

With ``--index`` it measures that index; with ``--sentences N`` it first writes a synthetic index of
N sentences into ``--out`` (default /tmp/sentret-synthetic-N; kept, and reused when already there)
from shards generated beside it (``synthetic.py``, shared with ``scale.py``; numpy and pyarrow, no
spaCy) — Zipf-distributed terms, ~12 per sentence, 3.5 sentences per document, an entity mention in
every other sentence.

It prints the median of ``--repeat`` runs of:

* load without validation — the manifest and an ``Index`` object, as sentret loaded before it validated indexes;
* load with the cheap checks — ``Index.load`` (headers, sizes, CSR/CSC invariants, counts, row counts);
* sha256 of every file — what a full verification adds (``Index.load(verify=True)``, ``sentret verify``,
  the app's background check), and what the first reads of all files add at most;
* the first query (bm25f) after each load: with every file it reads checked against its sha256 on
  that first read, and with the hashes skipped (the difference is what those checks cost a query).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic import synthetic  # noqa: E402

from sentret_core.index.format import read_manifest  # noqa: E402
from sentret_core.index.reader import Index  # noqa: E402


def timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def first_query(path: Path, hashes: bool) -> float:
    from sentret_core.models import score

    index = Index.load(path)
    if not hashes:
        index._sound.update(index.manifest.get("files", {}))
    started = time.perf_counter()
    score(index, ["w1", "w2", "w17", "document"], "bm25f.v1")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--index", help="an existing index")
    parser.add_argument("--sentences", type=int, default=1_000_000, help="the size of a synthetic index")
    parser.add_argument("--out", help="where the synthetic index goes")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path = (
        Path(args.index)
        if args.index
        else synthetic(Path(args.out or f"/tmp/sentret-synthetic-{args.sentences}"), args.sentences)
    )
    files = [p for p in path.iterdir() if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    manifest = read_manifest(path, strict=False)
    print(f"{path}: {manifest['counts']['sentences']:,} sentences, {len(files)} files, {size / 1e6:,.1f} MB")
    for file in files:  # the page cache warm for every measurement alike
        file.read_bytes()

    from sentret_core.index.validate import sha256_problem

    def plain() -> None:
        Index(path, read_manifest(path, strict=False))

    def hash_all() -> None:
        for name, digest in manifest["files"].items():
            sha256_problem(path, name, digest)

    first_query(path, False)  # imports and the like, once
    rows = [
        ("load without validation (as before validation)", timed(plain, args.repeat)),
        ("load with the cheap checks (Index.load)", timed(lambda: Index.load(path), args.repeat)),
        ("sha256 of every file (verify / the app's background check)", timed(hash_all, args.repeat)),
        ("first bm25f query, every file it reads hashed on first read",
         statistics.median(first_query(path, True) for _ in range(3))),
        ("first bm25f query, hashes skipped", statistics.median(first_query(path, False) for _ in range(3))),
    ]
    for label, seconds in rows:
        print(f"  {label:62} {seconds * 1000:10.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
