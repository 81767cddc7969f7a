"""An index's files from parsed shards, one shard at a time (out of core).

Each shard is turned into arrays with pyarrow and numpy alone (no Python object per term or
posting) and appended to memory-mapped ``.npy`` files sized from the shards' manifest. Term and
entity ids are given in order of first appearance (a document's title terms, then its sentences'
terms), so shard boundaries never change an index. The term-major copies (``XT``, ``GT``) are
merged from per-shard sorted runs: a term's postings from shard k follow shard k-1's, so each
shard's run is scattered to its place without sorting anything corpus-wide.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import scipy.sparse as sp

from sentret_core.index.format import save_array, save_matrix, save_table
from sentret_core.ingest.graph import containment_matrix
from sentret_core.ingest.shards import read_shard

_INT32_MAX = np.iinfo(np.int32).max


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


class _Appender:
    """A memory-mapped ``.npy`` of known length filled front to back."""

    def __init__(self, folder: Path, name: str, dtype: Any, length: int) -> None:
        self.array = np.lib.format.open_memmap(folder / f"{name}.npy", mode="w+", dtype=dtype, shape=(length,))
        self.at = 0

    def extend(self, values: np.ndarray) -> None:
        self.array[self.at : self.at + len(values)] = values
        self.at += len(values)

    def close(self) -> None:
        self.array.flush()
        del self.array


def assemble(shards: Path, manifest: dict[str, Any], out: Path, progress: Callable[[int], None] | None = None
             ) -> dict[str, int]:
    """Write every index file but the manifest into ``out`` from the shards; return the counts."""
    totals = manifest["counts"]
    N, T = totals["sentences"], totals["term_occurrences"]
    seq_dtype = np.int32 if T < _INT32_MAX else np.int64
    arrays = {
        "sent_doc": np.int32, "sent_pos": np.int32, "sent_start": np.int64, "sent_end": np.int64,
        "sent_len": np.int32, "seq_terms": np.int32, "seq_tokens": np.int32, "seq_char_start": np.int32,
        "seq_char_end": np.int32, "X.indices": seq_dtype, "X.data": np.int32,
    }
    lengths = {name: (N if name.startswith("sent_") else T) for name in arrays}
    out_arrays = {name: _Appender(out, name, dtype, lengths[name]) for name, dtype in arrays.items()}
    seq_indptr = _Appender(out, "seq_indptr", np.int64, N + 1)
    seq_indptr.extend(np.zeros(1, dtype=np.int64))
    x_indptr = np.zeros(N + 1, dtype=np.int64)
    terms, entities = FirstSeen(), FirstSeen()
    runs: list[tuple[Path, int]] = []
    docs: list[pd.DataFrame] = []
    title_parts: list[np.ndarray] = []
    title_lengths: list[np.ndarray] = []
    mention_parts: list[dict[str, np.ndarray]] = []
    df = np.zeros(0, dtype=np.int64)
    texts = pq.ParquetWriter(out / "sentences.parquet", pa.schema([("text", pa.string())]))
    D = S = occurrences = 0
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
        runs.append(_save_run(out, k, X))
        df = _add(df, part.document_frequency(X))
        docs.append(part.documents)
        title_parts.append(part.title_terms)
        title_lengths.append(part.title_lengths)
        mention_parts.append(part.mentions(entities))
        texts.write_table(pa.table({"text": part.texts}))
        D, S, occurrences = D + part.d, S + part.n, occurrences + len(part.seq_terms)
        if progress is not None:
            progress(k + 1)
    texts.close()
    V = len(terms.ids)
    nnz = int(x_indptr[-1])
    for name in ("seq_indptr", *arrays):
        target = seq_indptr if name == "seq_indptr" else out_arrays[name]
        target.close()
    _finish_x(out, x_indptr, nnz, N, V, runs)
    df = np.pad(df, (0, V - len(df)))
    XT_indptr = np.load(out / "XT.indptr.npy", mmap_mode="r")
    sf = np.diff(np.asarray(XT_indptr, dtype=np.int64))
    X_data = np.load(out / "X.data.npy", mmap_mode="r")
    X_indices = np.load(out / "X.indices.npy", mmap_mode="r")
    cf = np.bincount(X_indices, weights=X_data, minlength=V).astype(np.int64)
    save_table(out, "terms", pd.DataFrame({"term": list(terms.ids), "sf": sf, "df": df, "cf": cf}))
    title = _title_matrix(title_parts, title_lengths, D, V)
    save_matrix(out, "title", title)
    documents = pd.concat(docs, ignore_index=True)
    save_table(out, "documents", documents)
    n_entities = _write_graph(out, mention_parts, entities, N)
    return {
        "documents": D, "sentences": N, "terms": V, "term_occurrences": occurrences,
        "title_term_occurrences": int(title.data.sum()), "entities": n_entities,
        "mentions": sum(len(m["sentence"]) for m in mention_parts),
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


def _add(total: np.ndarray, part: np.ndarray) -> np.ndarray:
    if len(part) > len(total):
        total = np.pad(total, (0, len(part) - len(total)))
    total[: len(part)] += part
    return total


def _save_run(out: Path, k: int, X: sp.csr_matrix) -> tuple[Path, int]:
    """A shard's postings in term order (its sentence ids local), kept until the merge."""
    csc = X.tocsc()
    csc.sort_indices()
    path = out / f".run-{k:05d}.npz"
    np.savez(path, indptr=csc.indptr.astype(np.int64), indices=csc.indices, data=csc.data)
    return path, X.shape[0]


def _finish_x(out: Path, x_indptr: np.ndarray, nnz: int, N: int, V: int, runs: list[tuple[Path, int]]) -> None:
    """X's indptr, and XT merged from the shards' runs (the dtype save_matrix would choose)."""
    dtype = np.int32 if nnz < _INT32_MAX else np.int64
    save_array(out, "X.indptr", x_indptr.astype(dtype))
    for name in ("X.indices", "X.data"):  # sized for every term occurrence; repeats were summed
        _truncate(out / f"{name}.npy", nnz)
    if np.load(out / "X.indices.npy", mmap_mode="r").dtype != dtype:  # only when T ≥ 2³¹ > nnz
        save_array(out, "X.indices", np.load(out / "X.indices.npy").astype(dtype))
    counts = np.zeros(V, dtype=np.int64)
    for path, _ in runs:
        with np.load(path) as run:
            c = np.diff(run["indptr"])
            counts[: len(c)] += c
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    save_array(out, "XT.indptr", indptr.astype(dtype))
    indices = np.lib.format.open_memmap(out / "XT.indices.npy", mode="w+", dtype=dtype, shape=(nnz,))
    data = np.lib.format.open_memmap(out / "XT.data.npy", mode="w+", dtype=np.int32, shape=(nnz,))
    cursor = indptr[:-1].copy()
    s0 = 0
    for path, n_rows in runs:
        with np.load(path) as run:
            run_indptr = run["indptr"]
            c = np.diff(run_indptr)
            v = len(c)
            base = cursor[:v] - run_indptr[:-1]
            where = np.repeat(base, c) + np.arange(run_indptr[-1], dtype=np.int64)
            indices[where] = run["indices"] + s0
            data[where] = run["data"]
            cursor[:v] += c
        path.unlink()
        s0 += n_rows
    indices.flush()
    data.flush()
    del indices, data


def _truncate(path: Path, length: int) -> None:
    """Keep the first ``length`` values of a 1-d ``.npy``, its header as ``np.save`` would write it."""
    array = np.load(path, mmap_mode="r")
    dtype, offset = array.dtype, array.offset
    if len(array) == length:
        return
    del array
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": dtype.str, "fortran_order": False, "shape": (length,)})
    if len(header.getvalue()) == offset:
        with path.open("r+b") as handle:
            handle.write(header.getvalue())
            handle.truncate(offset + length * dtype.itemsize)
    else:
        kept = np.array(np.load(path, mmap_mode="r")[:length])
        save_array(path.parent, path.name.removesuffix(".npy"), kept)


def _title_matrix(parts: list[np.ndarray], lengths: list[np.ndarray], D: int, V: int) -> sp.csr_matrix:
    terms = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    per_doc = np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64)
    rows = np.repeat(np.arange(D), per_doc)
    title = sp.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, terms)), shape=(D, V))
    title.sum_duplicates()
    return title


def _write_graph(out: Path, parts: list[dict[str, np.ndarray]], entities: FirstSeen, N: int) -> int:
    """The mentions and entities tables and G (N × E), GT."""
    mentions = pd.DataFrame({name: np.concatenate([p[name] for p in parts]) for name in parts[0]})
    E = len(entities.ids)
    G = containment_matrix(mentions["sentence"].to_numpy(), mentions["entity"].to_numpy(), N, E)
    keys = [key.rsplit("\x1f", 1) for key in entities.ids]
    table = pd.DataFrame({
        "text": [text for text, _ in keys], "label": [label for _, label in keys],
        "sf": np.diff(G.tocsc().indptr).astype(np.int32),
    })
    save_table(out, "entities", table)
    save_table(out, "mentions", mentions)
    save_matrix(out, "G", G, ones=True)
    save_matrix(out, "GT", G.tocsc(), ones=True)
    return E
