"""Encoder speed: minilm.v1's numpy all-MiniLM-L6-v2 against sentence-transformers on the same sentences.

    .venv/bin/python benchmarks/encoder_speed.py [--sentences 2000] [--batch-size 64] [--threads 2] [--repeats 2]
        [--reference-python /path/to/a/venv/with/sentence-transformers/bin/python]

The sentences are the first ``--sentences`` of the Sentence column of WikiQA's dev file (Yang, Yih & Meek,
EMNLP 2015), in file order. Ours runs in this process with BLAS limited to ``--threads`` threads
(threadpoolctl), so it encodes that many batches at once, each on one BLAS thread. sentence-transformers runs
in a subprocess of ``--reference-python`` (the product's environment has no torch) with
``torch.set_num_threads(--threads)`` and the same batch size, loading the model from the same wheel's folder.
Each side encodes a warm-up batch first; its time is the best of ``--repeats`` full passes. Without
``--reference-python`` the peer is skipped, with a message. Printed: the threads in use, the load average
before and after, each side's sentences per second, ours ÷ reference, and the largest |1 − cos| between the
two vectors of a sentence. The machine is shared: run it when nothing else is, and read the load average.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_WIKIQA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikiqa" / "WikiQA-dev.tsv"
SENTENCE_COLUMN = "Sentence"
WARM_UP = 64


def read_sentences(path: Path, n: int) -> list[str]:
    """The first ``n`` entries of the Sentence column of a WikiQA TSV."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [row[SENTENCE_COLUMN] for row, _ in zip(rows, range(n))]


def best_of(encode: Any, sentences: list[str], repeats: int) -> tuple[float, np.ndarray]:
    """The best wall time of ``repeats`` passes of ``encode(sentences)``, after a warm-up, and its vectors."""
    encode(sentences[:WARM_UP])
    best, vectors = float("inf"), np.empty((0, 0), dtype=np.float32)
    for _ in range(repeats):
        start = time.perf_counter()
        vectors = np.asarray(encode(sentences), dtype=np.float32)
        best = min(best, time.perf_counter() - start)
    return best, vectors


# ---- the peer: run by --reference-python, which has sentence-transformers and torch, not sentret ---------


def peer(job: Path) -> None:
    """Encode the job's sentences with sentence-transformers; write the vectors and print the timing as JSON."""
    spec = json.loads(job.read_text(encoding="utf-8"))
    torch = importlib.import_module("torch")
    torch.set_num_threads(spec["threads"])
    st = importlib.import_module("sentence_transformers")
    model = st.SentenceTransformer(spec["folder"], device="cpu")

    def encode(texts: list[str]) -> Any:
        return model.encode(texts, batch_size=spec["batch_size"], normalize_embeddings=True, convert_to_numpy=True)

    seconds, vectors = best_of(encode, spec["sentences"], spec["repeats"])
    np.save(spec["vectors"], vectors)
    versions = f"sentence-transformers {st.__version__}, torch {torch.__version__}"
    print(json.dumps({"seconds": seconds, "threads": torch.get_num_threads(), "versions": versions}))


def run_reference(
    python: str, folder: Path, sentences: list[str], args: argparse.Namespace
) -> tuple[dict[str, Any], np.ndarray]:
    """Time sentence-transformers in a subprocess of ``python``; its timing record and its vectors."""
    with tempfile.TemporaryDirectory() as tmp:
        job, vectors = Path(tmp) / "job.json", Path(tmp) / "vectors.npy"
        spec = {"folder": str(folder), "sentences": sentences, "threads": args.threads,
                "batch_size": args.batch_size, "repeats": args.repeats, "vectors": str(vectors)}  # fmt: skip
        job.write_text(json.dumps(spec), encoding="utf-8")
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads),
               "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
        done = subprocess.run(
            [python, str(Path(__file__).resolve()), "--peer", str(job)],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"the reference run failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1]), np.load(vectors)


# ---- ours -------------------------------------------------------------------------------------------------


def blas_threads(threads: int) -> tuple[Any, str]:
    """Limit this process's BLAS to ``threads`` threads; the limiter (kept alive by the caller) and a line saying so."""
    try:  # untyped (no py.typed): imported by name
        threadpoolctl = importlib.import_module("threadpoolctl")
    except ImportError:
        variable = os.environ.get("OPENBLAS_NUM_THREADS")
        return None, f"threadpoolctl is not installed: BLAS threads not limited (OPENBLAS_NUM_THREADS={variable})"
    limiter = threadpoolctl.threadpool_limits(limits=threads, user_api="blas")
    info = threadpoolctl.threadpool_info()
    pools = ", ".join(f"{p['prefix']} {p.get('version')}: {p['num_threads']}" for p in info)
    return limiter, f"BLAS threads ({pools})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wikiqa", type=Path, default=DEFAULT_WIKIQA)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--reference-python", default=None, help="a Python with sentence-transformers and torch")
    parser.add_argument("--peer", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peer is not None:
        peer(args.peer)
        return

    from sentret_core.models.minilm.encoder import encoder, model_folder

    sentences = read_sentences(args.wikiqa.resolve(), args.sentences)
    limiter, threads_line = blas_threads(args.threads)
    print(f"{len(sentences):,} WikiQA dev sentences, batch size {args.batch_size}, best of {args.repeats}")
    print(f"ours: {threads_line}; it runs that many batches at once, each on one BLAS thread")
    load_before = os.getloadavg()
    start = time.perf_counter()
    model = encoder()
    loaded = time.perf_counter() - start
    ours, ours_vectors = best_of(lambda texts: model.encode(texts, batch_size=args.batch_size), sentences, args.repeats)
    print(f"ours (numpy):          {len(sentences) / ours:8.1f} sentences/s  ({ours:.2f} s; load {loaded:.2f} s)")
    if args.reference_python is None:
        print("reference: skipped (pass --reference-python PATH, a Python with sentence-transformers and torch)")
    else:
        info, ref_vectors = run_reference(args.reference_python, model_folder(), sentences, args)
        ref = float(info["seconds"])
        print(f"reference threads: torch {info['threads']} ({info['versions']})")
        print(f"sentence-transformers: {len(sentences) / ref:8.1f} sentences/s  ({ref:.2f} s)")
        print(f"ours ÷ reference:      {ref / ours:8.2f}×")
        cos = np.einsum("ij,ij->i", ours_vectors.astype(np.float64), ref_vectors.astype(np.float64))
        delta = np.abs(ours_vectors - ref_vectors).max()
        print(f"max |1 − cos|:         {np.abs(1.0 - cos).max():.2e}  (max |Δ| of a coordinate {delta:.2e})")
    load_after = os.getloadavg()
    print("load average (1, 5, 15 min): before " + " ".join(f"{x:.2f}" for x in load_before)
          + ", after " + " ".join(f"{x:.2f}" for x in load_after))  # fmt: skip
    del limiter


if __name__ == "__main__":
    main(sys.argv[1:])
