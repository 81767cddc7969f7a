"""A query process's own memory stays flat: 500 queries on a 1M-sentence index after a warm-up.

The index is ``benchmarks/synthetic.py``'s (numpy and pyarrow, no spaCy: seconds to make). The queries run
in a process of their own, so what is measured is theirs: its anonymous resident memory (``RssAnon``, the
heap, not the memory-mapped index, whose pages are the page cache's), after 100 warm-up queries and after
500 more, with every cache bounded by bytes bounded at 1 MB (BM25F's per-term fields, instead of 256 MB; the
row groups of texts, titles and entity names, instead of 128 and 32 MB) so that a cache that kept growing
would show within the run: with those bounds the 500 queries added 0.2 MB; with no bound on the fields,
67 MB. Not a timing: a bounded-cache test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = 1_000_000
FIELD_BYTES = 2**20
SLACK_MB = 24  # allocator fragmentation and Python's own free lists; well below the 67 MB of no bound
QUERIES = r"""
import json, sys
import numpy as np
from sentret_core import Index
from sentret_core.models import search
from sentret_core.index import tables, texts
from sentret_core.models.arrays import postings
from sentret_core.support.engine import support

# every cache bounded by bytes, bounded small, so that one that kept growing would show within the run
postings.FIELD_BYTES = texts.KEPT_BYTES = tables.NAMES_KEPT = int(sys.argv[2])

def anonymous_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    raise SystemExit("no RssAnon in /proc/self/status")

index = Index.load(sys.argv[1])
sf = np.asarray(index.sf)
pool = np.flatnonzero((sf >= index.N // 2_000) & (sf <= index.N // 100))  # frequent enough to weigh
rng = np.random.default_rng(7)
vocab = index.vocab
queries = [[vocab[t] for t in rng.choice(pool, 3, replace=False)] for _ in range(600)]

def run(query):
    for model in ("bm25.v1", "bm25f.v1", "lm-2si.v1"):
        search(index, query, model, 10)
    support(index, query, k=1000, top_entities=10, per_entity=2)

for query in queries[:100]:
    run(query)
warm = anonymous_mb()
for query in queries[100:]:
    run(query)
print(json.dumps({"warm": warm, "after": anonymous_mb()}))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RssAnon from /proc (Linux)")
def test_500_queries_after_a_warm_up_leave_the_process_memory_flat(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from synthetic import synthetic
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    index = synthetic(tmp_path / "index", SENTENCES)
    ran = subprocess.run([sys.executable, "-c", QUERIES, str(index), str(FIELD_BYTES)], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr[-3000:]
    memory = json.loads(ran.stdout.strip().splitlines()[-1])
    grown = memory["after"] - memory["warm"]
    assert grown <= FIELD_BYTES / 2**20 + SLACK_MB, memory
