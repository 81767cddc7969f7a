"""Trigger tables of seed 001 §5-6, counted on the corpus.

Inside- and across-sentence co-occurrence, and, from question/answer pairs, the QA-pair and
named-entity tables (question word → answer NE label). :func:`train_triggers` (or ``sentret train
triggers INDEX``) writes them as a named artefact of the index, which ``lm-trigger.v1`` reads by
name (parameter ``tables``, default ``"triggers"``); :func:`fit_triggers` counts without writing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.format import sha256_of
from sentret_core.ingest.qa_files import WIKIQA_HEADER, read_lines, read_wikiqa
from sentret_core.models.cache import cached
from sentret_core.models.training.sources import describe_sources, source_list

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

ALGORITHM = "triggers.v1"
KIND = "triggers"
DEFAULT_NAME = "triggers"
TABLES = ("inside", "across", "qa", "ne")
COMPONENTS = ("self", *TABLES)


# --- the tables ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerTables:
    """Raw trigger counts f(w → target) of one index: rows are triggers, columns targets."""

    key: str
    tables: dict[str, sp.csr_matrix]  # inside, across, qa: V×V; ne: V×len(labels)
    labels: tuple[str, ...]
    meta: dict[str, Any]

    def pairs(self, name: str) -> int:
        return int(self.tables[name].nnz)


def _prune(matrix: Any, min_count: int) -> sp.csr_matrix:
    out = sp.csr_matrix(matrix, dtype=np.float64)
    out.sum_duplicates()
    if min_count > 1:
        out.data[out.data < min_count] = 0.0
    out.eliminate_zeros()
    out.sort_indices()
    return out


def _remapped(source: Index, target: Index) -> sp.csr_matrix:
    """The source's sentence×term counts over the target's vocabulary (unknown terms dropped)."""
    X = sp.csr_matrix(source.X, dtype=np.float64)
    if source is target:
        return X
    lookup = target.term_index
    mapping = np.array([lookup.get(t, -1) for t in source.vocab], dtype=np.int64)
    cols = mapping[np.asarray(X.indices, dtype=np.int64)]
    keep = cols >= 0
    rows = np.repeat(np.arange(source.N, dtype=np.int64), np.diff(X.indptr))[keep]
    return sp.csr_matrix((X.data[keep], (rows, cols[keep])), shape=(source.N, target.V))


def corpus_tables(index: Index, sources: Sequence[Index] = ()) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Raw inside-sentence and across-sentence counts over the index (plus ``sources``)."""
    V = index.V
    inside = sp.csr_matrix((V, V))
    across = sp.csr_matrix((V, V))
    for source in [index, *sources]:
        X = _remapped(source, index)
        gram = (X.T @ X).tocsr()
        occurrences = np.asarray(X.sum(axis=0)).ravel()
        gram.setdiag(gram.diagonal() - occurrences)  # a position does not trigger itself
        inside = inside + gram
        nxt = np.asarray(source.next)
        has_next = np.flatnonzero(nxt >= 0)
        across = across + (X[has_next].T @ X[nxt[has_next]]).tocsr()
    return sp.csr_matrix(inside), sp.csr_matrix(across)


def read_qa_pairs(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(question, answer sentence) pairs of a WikiQA TSV (rows with Label 1) or a two-column TSV."""
    path = Path(path)
    lines = read_lines(path, "question/answer pairs")
    if lines and tuple(lines[0].split("\t")) == WIKIQA_HEADER:
        data = read_wikiqa(path)
        pairs = [(q.text, data.documents[q.document][1][position])
                 for q in data.questions for position, label in zip(q.positions, q.labels) if label == 1]  # fmt: skip
    else:
        pairs = []
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 2:
                raise SentretError(f"{path}:{lineno}: expected question<TAB>answer (or a WikiQA TSV)")
            pairs.append((fields[0], fields[1]))
    if not pairs:
        raise SentretError(f"{path}: no question/answer pairs (a WikiQA file needs rows with Label 1)")
    return pairs


def index_labels(index: Index) -> list[str]:
    if index.E == 0:
        return []
    return sorted({str(x) for x in index.entities["label"]})


def label_counts(
    sent: np.ndarray,
    token_start: np.ndarray,
    token_end: np.ndarray,
    label: np.ndarray,
    seq_owner: np.ndarray,
    seq_tokens: np.ndarray,
    shape: tuple[int, int],
) -> sp.csr_matrix:
    """(sentences × labels): how many terms of each sentence lie in an entity of each label.

    ``seq_owner``/``seq_tokens`` are the sentence and token index of every term occurrence, in
    order (sentences ascending, tokens ascending inside each)."""
    if len(sent) == 0:
        return sp.csr_matrix(shape)
    big = int(max(int(seq_tokens.max(initial=0)), int(token_end.max(initial=0)))) + 1
    keys = seq_owner.astype(np.int64) * big + seq_tokens.astype(np.int64)
    lo = np.searchsorted(keys, sent.astype(np.int64) * big + token_start, side="left")
    hi = np.searchsorted(keys, sent.astype(np.int64) * big + token_end, side="left")
    out = sp.csr_matrix(((hi - lo).astype(np.float64), (sent, label)), shape=shape)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


def sentence_labels(index: Index, labels: Sequence[str]) -> sp.csr_matrix:
    """Y: term counts per (sentence, NER label) of the index."""

    def build() -> sp.csr_matrix:
        where = {name: i for i, name in enumerate(labels)}
        shape = (index.N, len(labels))
        if index.E == 0 or len(index.mentions) == 0:
            return sp.csr_matrix(shape)
        cols = index.mention_columns
        ent_label = np.array([where.get(str(x), -1) for x in index.entities["label"]], dtype=np.int64)
        lab = ent_label[cols["entity"]]
        ok = lab >= 0
        indptr = np.asarray(index.seq_indptr, dtype=np.int64)
        owner = np.repeat(np.arange(index.N, dtype=np.int64), np.diff(indptr))
        return label_counts(cols["sentence"][ok], cols["token_start"][ok], cols["token_end"][ok], lab[ok],
                            owner, np.asarray(index.seq_tokens, dtype=np.int64), shape)  # fmt: skip

    return cached(index, "models.trigger.labels/" + "|".join(labels), build)


def qa_tables(
    index: Index, pairs: Sequence[tuple[str, str]], labels: list[str], n_process: int = 1
) -> tuple[sp.csr_matrix, sp.csr_matrix, list[str], dict[str, Any]]:
    """Raw QA-pair (V×V) and NE (V×labels) counts; answers go through the index's spaCy pass."""
    from sentret_core.ingest.corpus import Document
    from sentret_core.ingest.nlp import DEFAULT_MODEL, parse_documents
    from sentret_core.models.query import normalise, pipeline

    nlp, _ = pipeline(str(index.manifest.get("model", DEFAULT_MODEL)))
    lookup = index.term_index
    docs = (Document(str(i), "", answer, (answer,)) for i, (_, answer) in enumerate(pairs))
    parsed = list(parse_documents(docs, nlp, n_process=n_process))
    q_rows, q_cols, a_rows, a_cols = [], [], [], []
    m_sent, m_start, m_end, m_label, owners, tokens = [], [], [], [], [], []
    seen_labels = set(labels)
    for doc in parsed:
        for sentence in doc.sentences:
            for m in sentence.mentions:
                seen_labels.add(m.label)
    all_labels = sorted(seen_labels)
    where = {name: i for i, name in enumerate(all_labels)}
    for i, ((question, _), doc) in enumerate(zip(pairs, parsed)):
        for term in normalise(index, question):
            tid = lookup.get(term)
            if tid is not None:
                q_rows.append(i)
                q_cols.append(tid)
        for sentence in doc.sentences:  # one sentence each (presegmented)
            for term in sentence.terms:
                tid = lookup.get(term)
                if tid is not None:
                    a_rows.append(i)
                    a_cols.append(tid)
            owners += [i] * len(sentence.term_tokens)
            tokens += sentence.term_tokens
            for m in sentence.mentions:
                m_sent.append(i)
                m_start.append(m.token_start)
                m_end.append(m.token_end)
                m_label.append(where[m.label])
    P, V = len(pairs), index.V
    Q = sp.csr_matrix((np.ones(len(q_rows)), (q_rows, q_cols)), shape=(P, V))
    A = sp.csr_matrix((np.ones(len(a_rows)), (a_rows, a_cols)), shape=(P, V))
    Y = label_counts(np.array(m_sent, np.int64), np.array(m_start, np.int64), np.array(m_end, np.int64),
                     np.array(m_label, np.int64), np.array(owners, np.int64), np.array(tokens, np.int64),
                     (P, len(all_labels)))  # fmt: skip
    stats = {"qa_pairs_read": P, "questions_with_terms": int((np.diff(Q.tocsr().indptr) > 0).sum()),
             "answer_mentions": len(m_sent)}  # fmt: skip
    return (Q.T @ A).tocsr(), (Q.T @ Y).tocsr(), all_labels, stats


def fit_triggers(
    index: Index,
    qa_pairs: str | os.PathLike[str] | None = None,
    *,
    sources: Sequence[Index | str | os.PathLike[str]] = (),
    min_count: int = 2,
    qa_min_count: int = 1,
    n_process: int = 1,
) -> TriggerTables:
    """Count the trigger tables of ``index``; writes nothing.

    ``sources``: other indexes whose sentences add to the inside/across-sentence counts.
    ``qa_pairs``: a file of question/answer-sentence pairs for the QA and NE tables (None: those
    tables stay empty). Entries below ``min_count`` (``qa_min_count``) are pruned.
    """
    if min_count < 1 or qa_min_count < 1:
        raise SentretError(f"min_count and qa_min_count must be at least 1 (got {min_count}, {qa_min_count})")
    extra = source_list(sources)
    qa_path = Path(qa_pairs).resolve() if qa_pairs is not None else None
    if qa_path is not None and not qa_path.is_file():
        raise SentretError(f"{qa_pairs}: no such file of question/answer pairs")
    params = {"min_count": int(min_count), "qa_min_count": int(qa_min_count)}
    clock = time.perf_counter()
    inside, across = corpus_tables(index, extra)
    inside, across = _prune(inside, params["min_count"]), _prune(across, params["min_count"])
    corpus_seconds = time.perf_counter() - clock
    labels = index_labels(index)
    qa_stats: dict[str, Any] = {}
    if qa_path is not None:
        qa, ne, labels, qa_stats = qa_tables(index, read_qa_pairs(qa_path), labels, n_process)
        qa, ne = _prune(qa, params["qa_min_count"]), _prune(ne, params["qa_min_count"])
    else:
        qa, ne = sp.csr_matrix((index.V, index.V)), sp.csr_matrix((index.V, len(labels)))
    tables = {"inside": inside, "across": across, "qa": sp.csr_matrix(qa), "ne": sp.csr_matrix(ne)}
    meta = {
        "algorithm": ALGORITHM,
        "params": params,
        "sources": describe_sources(extra),
        "qa_pairs": str(qa_path) if qa_path is not None else None,
        "qa_pairs_sha256": sha256_of(qa_path) if qa_path is not None else None,
        "labels": list(labels),
        "shapes": {name: list(m.shape) for name, m in tables.items()},
        "stats": {"seconds": round(time.perf_counter() - clock, 3),
                  "corpus_seconds": round(corpus_seconds, 3),
                  "pairs": {name: int(m.nnz) for name, m in tables.items()}, **qa_stats},
    }  # fmt: skip
    return TriggerTables(artefacts.content_hash(_arrays(tables)), tables, tuple(labels), meta)


def train_triggers(
    index: Index,
    qa_pairs: str | os.PathLike[str] | None = None,
    *,
    name: str = DEFAULT_NAME,
    sources: Sequence[Index | str | os.PathLike[str]] = (),
    min_count: int = 2,
    qa_min_count: int = 1,
    n_process: int = 1,
) -> TriggerTables:
    """Count the trigger tables (:func:`fit_triggers`) and write them as artefact ``name`` of ``index``."""
    artefacts.check_name(name)
    found = fit_triggers(index, qa_pairs, sources=sources, min_count=min_count, qa_min_count=qa_min_count,
                         n_process=n_process)  # fmt: skip
    return _as_tables(artefacts.write(index, KIND, name, _arrays(found.tables), found.meta))


def load_triggers(index: Index, name: str = DEFAULT_NAME) -> TriggerTables:
    """The tables written as artefact ``name`` (a clear error if there are none: nothing trains here)."""
    found = artefacts.read(index, KIND, name)
    return cached(index, f"models.triggers/{found.sha256}", lambda: _as_tables(found))


def _arrays(tables: dict[str, sp.csr_matrix]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for name, m in tables.items():
        arrays[f"{name}.indptr"] = m.indptr
        arrays[f"{name}.indices"] = m.indices
        arrays[f"{name}.data"] = m.data
    return arrays


def _as_tables(found: artefacts.Artefact) -> TriggerTables:
    arrays, meta = found.arrays, found.meta
    tables = {
        name: sp.csr_matrix((arrays[f"{name}.data"], arrays[f"{name}.indices"], arrays[f"{name}.indptr"]),
                            shape=tuple(meta["shapes"][name]))
        for name in TABLES
    }
    return TriggerTables(found.sha256, tables, tuple(meta["labels"]), meta)
