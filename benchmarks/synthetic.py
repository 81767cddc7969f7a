"""A synthetic index written through the real IndexWriter, bypassing spaCy (shared by the benchmarks).

Zipf-distributed terms (``rng.zipf(1.2)`` over a 200k-word vocabulary ``w0 … w199999``; draws past
the last word are clamped to it), 4-20 terms per sentence (~12), 1-6 sentences per document
(~3.5), and an entity mention in every other sentence: its first word, so entities are
Zipf-distributed too. Used by ``validation_cost.py`` and ``scale.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sentret_core.index.format import write_manifest  # noqa: E402


def synthetic(out: Path, n_sentences: int, seed: int = 16, stats: dict[str, Any] | None = None) -> Path:
    """An index of ``n_sentences`` made-up sentences, written by the real IndexWriter.

    An index already at ``out`` is reused as it is. ``stats``, when given, receives the seconds of
    feeding the writer (``add_s``) and of its ``finish()`` (``finish_s``) and the number of documents.
    """
    from sentret_core.ingest.build import IndexWriter
    from sentret_core.ingest.nlp import DEFAULT_MODEL, NORMALISATION, Mention, ParsedDocument, ParsedSentence

    if (out / "manifest.json").exists():
        return out
    out.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(200_000)]
    labels = ("PERSON", "GPE", "ORG", "DATE")
    writer = IndexWriter(out)
    lengths = rng.integers(4, 21, size=n_sentences)
    terms = np.minimum(rng.zipf(1.2, size=int(lengths.sum())) - 1, len(vocab) - 1)
    per_doc = rng.integers(1, 7, size=n_sentences)
    started, s, t = time.perf_counter(), 0, 0
    doc = 0
    while s < n_sentences:
        sentences = []
        for _ in range(min(int(per_doc[doc]), n_sentences - s)):
            words = [vocab[i] for i in terms[t : t + lengths[s]]]
            t += int(lengths[s])
            text = " ".join(words)
            chars, at = [], 0
            for word in words:
                chars.append((at, at + len(word)))
                at += len(word) + 1
            mentions = []
            if s % 2 == 0:
                mentions.append(Mention(words[0], labels[s % 4], 0, 1, 0, len(words[0])))
            sentences.append(ParsedSentence(text, 0, len(text), words, list(range(len(words))), chars, mentions))
            s += 1
        writer.add(ParsedDocument(f"d{doc}", f"document {doc}", ["document", f"w{doc % 1000}"], sentences, t))
        doc += 1
    added = time.perf_counter()
    counts = writer.finish()
    write_manifest(out, {"model": DEFAULT_MODEL, "normalisation": NORMALISATION, "source": "synthetic",
                         "counts": dict(counts, words=int(lengths.sum()))})  # fmt: skip
    if stats is not None:
        stats.update(add_s=added - started, finish_s=time.perf_counter() - added, documents=doc)
    print(f"wrote {n_sentences:,} synthetic sentences ({doc:,} documents) in {time.perf_counter() - started:.0f} s "
          f"→ {out}", file=sys.stderr)  # fmt: skip
    return out
