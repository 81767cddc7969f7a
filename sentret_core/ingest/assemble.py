"""An index's files from parsed shards, one shard at a time (out of core).

Each shard is turned into arrays with pyarrow and numpy alone (no Python object per term or
posting) and appended to its files: ``.npy`` arrays and Parquet tables written front to back, as
``np.save`` and ``pq.write_table`` would write them whole. Term and entity ids are given in order of
first appearance (a document's title terms, then its sentences' terms), so shard boundaries never
change an index. The column-major copies (``XT``, ``GT``) are an external merge: each shard's
entries are spilled to disk column-major (a run), then merged a block of columns at a time (a
column's entries from shard k follow shard k-1's, so nothing is sorted corpus-wide). The build's
memory is a shard's and a block's, whatever the corpus's size (``tests/ingest/test_external_merge.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from sentret_core.index.format import save_array, save_table
from sentret_core.index.texts import TEXT_ROW_GROUP
from sentret_core.ingest.external_merge import Runs, add_counts
from sentret_core.ingest.graph import containment_matrix
from sentret_core.ingest.shards import read_shard
from sentret_core.ingest.streamed import NpyWriter, RowMajorWriter, TableWriter, index_dtype


class FirstSeen:
    """Ids in order of first appearance for keys met shard by shard (terms; entities)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def encode(self, keys: pa.Array, first_position: np.ndarray | None = None) -> np.ndarray:
        """Ids of ``keys``; keys new to us are numbered in order of ``first_position`` (default: their order)."""
        encoded = pc.dictionary_encode(keys)
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        uniques = encoded.dictionary.to_pylist()
        order: Any = range(len(uniques))
        if first_position is not None:
            first = np.full(len(uniques), np.iinfo(np.int64).max)
            np.minimum.at(first, codes, first_position)
            order = np.argsort(first, kind="stable")
        ids = self.ids
        lookup = np.empty(len(uniques), dtype=np.int64)
        for u in order:
            lookup[u] = ids.setdefault(uniques[u], len(ids))
        return lookup[codes] if len(codes) else np.zeros(0, dtype=np.int64)


def assemble(shards: Path, manifest: dict[str, Any], out: Path, progress: Callable[[int], None] | None = None,
             merge_postings: int = 0) -> dict[str, int]:
    """Write every index file but the manifest into ``out`` from the shards; return the counts.

    The memory it needs is bounded by a shard and by ``merge_postings`` (entries merged at once, default
    ``external_merge.MERGE_POSTINGS``), not by the corpus: every sentence-major array and table is streamed
    to its file shard by shard, and the column-major copies (``XT``, ``GT``) are merged from per-shard runs
    spilled to disk, a block of columns at a time. What stays in memory grows with the vocabulary and the
    entities, and N+1 offsets of ``X``.
    """
    totals = manifest["counts"]
    N, T = totals["sentences"], totals["term_occurrences"]
    seq_dtype = index_dtype(T)
    arrays = {
        "sent_doc": np.int32, "sent_pos": np.int32, "sent_start": np.int64, "sent_end": np.int64,
        "sent_len": np.int32, "seq_terms": np.int32, "seq_tokens": np.int32, "seq_char_start": np.int32,
        "seq_char_end": np.int32, "X.indices": seq_dtype, "X.data": np.int32,
    }
    lengths = {name: (N if name.startswith("sent_") else T) for name in arrays}
    out_arrays = {name: NpyWriter(out, name, dtype, lengths[name]) for name, dtype in arrays.items()}
    seq_indptr = NpyWriter(out, "seq_indptr", np.int64, N + 1)
    seq_indptr.extend(np.zeros(1, dtype=np.int64))
    x_indptr = np.zeros(N + 1, dtype=np.int64)
    graph = RowMajorWriter(out, "G", index_dtype(totals["mentions"]), data=False)
    title = RowMajorWriter(out, "title", index_dtype(totals["title_term_occurrences"]), data=True)
    # titles and entity names are read a row group at a time too (index.titles, index.entity_texts)
    documents, mentions = TableWriter(out, "documents", TEXT_ROW_GROUP), TableWriter(out, "mentions")
    terms, entities = FirstSeen(), FirstSeen()
    x_runs, g_runs = Runs(out, "X"), Runs(out, "G")
    df = np.zeros(0, dtype=np.int64)
    cf = np.zeros(0, dtype=np.int64)
    texts = TableWriter(out, "sentences", TEXT_ROW_GROUP)  # index.texts reads a row group at a time
    D = S = occurrences = title_occurrences = n_mentions = 0
    for k, shard in enumerate(manifest["shards"]):
        if shard["indexed_documents"] == 0:
            continue
        table = read_shard(shards, shard)
        part = _Shard(table, terms, D, S)
        for name in ("sent_doc", "sent_pos", "sent_start", "sent_end", "sent_len"):
            out_arrays[name].extend(getattr(part, name))
        for name in ("seq_terms", "seq_tokens", "seq_char_start", "seq_char_end"):
            out_arrays[name].extend(getattr(part, name))
        seq_indptr.extend(part.seq_offsets[1:] + occurrences)
        X = part.matrix(len(terms.ids))
        x_indptr[S + 1 : S + part.n + 1] = X.indptr[1:] + x_indptr[S]
        out_arrays["X.indices"].extend(X.indices)
        out_arrays["X.data"].extend(X.data)
        x_runs.add(k, X)
        df = add_counts(df, part.document_frequency(X))
        cf = add_counts(cf, np.bincount(X.indices, weights=X.data, minlength=X.shape[1]).astype(np.int64))
        titles = part.title_matrix(len(terms.ids))
        title.add(titles)
        title_occurrences += int(titles.data.sum())
        documents.append(part.documents)
        found = part.mentions(entities)
        mentions.append(pd.DataFrame(found))
        G = containment_matrix(found["sentence"].astype(np.int64) - S, found["entity"], part.n, len(entities.ids))
        graph.add(G)
        g_runs.add(k, G)
        n_mentions += len(found["sentence"])
        texts.append(pa.table({"text": part.texts}))
        D, S, occurrences = D + part.d, S + part.n, occurrences + len(part.seq_terms)
        if progress is not None:
            progress(k + 1)
    V, E = len(terms.ids), len(entities.ids)
    for writer in (seq_indptr, *out_arrays.values()):
        writer.close()
    for finished in (graph, title, documents, mentions, texts):
        finished.close()
    nnz = int(x_indptr[-1])
    dtype = index_dtype(nnz)
    save_array(out, "X.indptr", x_indptr.astype(dtype))
    if dtype != seq_dtype:  # only when T ≥ 2³¹ > nnz
        save_array(out, "X.indices", np.load(out / "X.indices.npy").astype(dtype))
    x_runs.merge("XT", V, dtype, merge_postings)
    g_runs.merge("GT", E, index_dtype(graph.nnz), merge_postings)
    df, cf = np.pad(df, (0, V - len(df))), np.pad(cf, (0, V - len(cf)))
    save_table(out, "terms", pd.DataFrame({"term": list(terms.ids), "sf": x_runs.column_counts(V), "df": df, "cf": cf}))
    _write_entities(out, entities, g_runs.column_counts(E).astype(np.int32))
    return {
        "documents": D, "sentences": N, "terms": V, "term_occurrences": occurrences,
        "title_term_occurrences": title_occurrences, "entities": E, "mentions": n_mentions,
    }


class _Shard:
    """One shard's documents with sentences, as arrays; ``d0``/``s0`` are its first global ids."""

    def __init__(self, table: pa.Table, terms: FirstSeen, d0: int, s0: int) -> None:
        n_sent = pc.list_value_length(table.column("sentences")).fill_null(0)
        table = table.filter(pc.greater(n_sent, 0)).combine_chunks()
        sentences = table.column("sentences").chunk(0) if table.num_rows else pa.array([], pa.list_(pa.null()))
        self.d = table.num_rows
        sent_offsets = _offsets(sentences)
        flat = sentences.flatten()
        self.n = len(flat)
        self.s0 = s0
        per_doc = np.diff(sent_offsets)
        local_doc = np.repeat(np.arange(self.d, dtype=np.int64), per_doc)
        self.local_doc = local_doc
        self.sent_doc = (local_doc + d0).astype(np.int32)
        self.sent_pos = (np.arange(self.n, dtype=np.int64) - np.repeat(sent_offsets[:-1], per_doc)).astype(np.int32)
        self.sent_start = _values(flat.field("start"), np.int64)
        self.sent_end = _values(flat.field("end"), np.int64)
        self.texts = flat.field("text")
        sent_terms = flat.field("terms")
        self.seq_offsets = _offsets(sent_terms)
        self.sent_len = np.diff(self.seq_offsets).astype(np.int32)
        title_terms = table.column("title_terms").chunk(0) if self.d else pa.array([], pa.list_(pa.string()))
        title_offsets = _offsets(title_terms)
        self.title_lengths = np.diff(title_offsets)
        ids = terms.encode(pa.concat_arrays([title_terms.flatten(), sent_terms.flatten()]),
                           self._stream_positions(title_offsets, sent_offsets))
        n_title = int(title_offsets[-1])
        self.title_terms, self.seq_terms = ids[:n_title], ids[n_title:].astype(np.int32)
        self.seq_tokens = _values(_nested_values(flat, "term_tokens"), np.int32)
        self.seq_char_start = _values(_nested_values(flat, "term_char_start"), np.int32)
        self.seq_char_end = _values(_nested_values(flat, "term_char_end"), np.int32)
        self._flat = flat
        self.documents = pd.DataFrame({
            "id": table.column("id").to_pandas(), "title": table.column("title").to_pandas(),
            "first_sentence": np.cumsum(np.concatenate([[0], per_doc[:-1]])).astype(np.int64) + s0
            if self.d else np.zeros(0, dtype=np.int64),
            "n_sentences": per_doc.astype(np.int64),
        })
        self.documents["mean_sentence_length"] = (
            np.bincount(local_doc, weights=self.sent_len, minlength=self.d) / np.maximum(per_doc, 1)
        )

    def _stream_positions(self, title_offsets: np.ndarray, sent_offsets: np.ndarray) -> np.ndarray:
        """Each term occurrence's place in the stream (doc 0's title, doc 0's sentences, doc 1's title, …),
        for the title occurrences first, then the sentence ones (the order they are encoded in)."""
        title_len = np.diff(title_offsets)
        doc_terms = self.seq_offsets[sent_offsets[1:]] - self.seq_offsets[sent_offsets[:-1]]
        start = np.concatenate([[0], np.cumsum(title_len + doc_terms)[:-1]]).astype(np.int64)
        n_title = int(title_offsets[-1])
        title_doc = np.repeat(np.arange(self.d), title_len)
        title_pos = start[title_doc] + np.arange(n_title) - title_offsets[:-1][title_doc]
        seq_doc = np.repeat(self.local_doc, self.sent_len)
        first_occ = self.seq_offsets[sent_offsets[:-1]]  # first term occurrence of each document
        sent_pos = start[seq_doc] + title_len[seq_doc] + np.arange(len(seq_doc)) - first_occ[seq_doc]
        return np.concatenate([title_pos, sent_pos])

    def matrix(self, n_terms: int) -> sp.csr_matrix:
        """The shard's rows of X (sentence × term counts)."""
        rows = np.repeat(np.arange(self.n, dtype=np.int64), self.sent_len)
        X = sp.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, self.seq_terms)), shape=(self.n, n_terms))
        X.sum_duplicates()
        X.sort_indices()
        return X

    def title_matrix(self, n_terms: int) -> sp.csr_matrix:
        """The shard's rows of the title matrix (document × term counts)."""
        rows = np.repeat(np.arange(self.d, dtype=np.int64), self.title_lengths)
        title = sp.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, self.title_terms)), shape=(self.d, n_terms))
        title.sum_duplicates()
        return title

    def document_frequency(self, X: sp.csr_matrix) -> np.ndarray:
        in_doc = sp.csr_matrix((np.ones(self.n, dtype=np.int32), (self.local_doc, np.arange(self.n))),
                               shape=(self.d, self.n))
        return np.diff((in_doc @ X).tocsc().indptr).astype(np.int64)

    def mentions(self, entities: FirstSeen) -> dict[str, np.ndarray]:
        per_sentence = self._flat.field("mentions")
        counts = np.diff(_offsets(per_sentence))
        flat = per_sentence.flatten()
        keys = pc.binary_join_element_wise(flat.field("text"), flat.field("label"), "\x1f")
        columns = {
            "sentence": (np.repeat(np.arange(self.n, dtype=np.int64), counts) + self.s0).astype(np.int32),
            "entity": entities.encode(keys).astype(np.int32),
        }
        for name in ("token_start", "token_end", "char_start", "char_end"):
            columns[name] = _values(flat.field(name), np.int32)
        return columns


def _nested_values(flat: pa.StructArray, name: str) -> pa.Array:
    return flat.field(name).flatten()


def _offsets(lists: pa.Array) -> np.ndarray:
    """A list array's offsets from 0 (a sliced array's start at its own first value)."""
    offsets = np.asarray(lists.offsets, dtype=np.int64) if len(lists) else np.zeros(1, dtype=np.int64)
    return offsets - offsets[0]


def _values(array: pa.Array, dtype: Any) -> np.ndarray:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=dtype)


def _write_entities(out: Path, entities: FirstSeen, sf: np.ndarray) -> None:
    """The entities table (text, label, sf), a row group at a time from the keys in id order."""
    table = TableWriter(out, "entities", TEXT_ROW_GROUP)
    keys = iter(entities.ids)  # a dict keeps insertion order: id order
    for start in range(0, max(len(sf), 1), TEXT_ROW_GROUP):
        split = [key.rsplit("\x1f", 1) for key in itertools.islice(keys, TEXT_ROW_GROUP)]
        table.append(pd.DataFrame({"text": [text for text, _ in split], "label": [label for _, label in split],
                                   "sf": sf[start : start + TEXT_ROW_GROUP]}))
    table.close()
