"""Trigger tables of Momtazi & Klakow, IP&M 2015, §5-6, counted on the corpus.

Inside- and across-sentence co-occurrence, and, from question/answer pairs, the QA-pair and
named-entity tables (question word → answer NE label) with their question-word rows
(:mod:`.qa_triggers`: ``?when → DATE``). :func:`train_triggers` (or ``sentret train triggers
INDEX``) writes them as a named artefact of the index, which ``lm-trigger.v1``/``v2`` read by name
(parameter ``tables``, default ``"triggers"``); :func:`fit_triggers` counts without writing.

Artefacts of algorithm ``triggers.v1`` (before question-word markers) load with empty
question-word rows: ``lm-trigger.v2`` then skips the markers, as for an untrained marker.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.format import sha256_of
from sentret_core.models.training.qa_triggers import ASKS, label_counts, qa_tables, read_qa_pairs
from sentret_core.models.training.sources import describe_sources, source_list

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

ALGORITHM = "triggers.v2"  # v2: the question-word rows (qa_ask, ne_ask, asked)
KIND = "triggers"
DEFAULT_NAME = "triggers"
TABLES = ("inside", "across", "qa", "ne")
COMPONENTS = ("self", *TABLES)
ASK_TABLES = {"qa": "qa_ask", "ne": "ne_ask"}  # a QA table → its question-word rows


# --- the tables ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerTables:
    """Raw trigger counts f(w → target) of one index: rows are triggers, columns targets."""

    key: str
    tables: dict[str, sp.csr_matrix]  # inside, across, qa: V×V; ne: V×len(labels); qa_ask, ne_ask: ASKS×…
    labels: tuple[str, ...]
    meta: dict[str, Any]
    asked: np.ndarray = field(default_factory=lambda: np.zeros(len(ASKS)))  # (ASKS,) questions asking each

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


def index_labels(index: Index) -> list[str]:
    if index.E == 0:
        return []
    return sorted({str(x) for x in index.entities["label"]})


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
                            owner, np.asarray(index.seq_tokens, dtype=np.int64), shape)

    return index.cache.get("models.trigger.labels/" + "|".join(labels), build)


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
    asked = np.zeros(len(ASKS))
    if qa_path is not None:
        found = qa_tables(index, read_qa_pairs(qa_path), labels, n_process)
        labels, qa_stats, asked = found.labels, found.stats, found.asked
        qa, ne, qa_ask, ne_ask = (_prune(m, params["qa_min_count"])
                                  for m in (found.qa, found.ne, found.qa_ask, found.ne_ask))
    else:
        qa, ne = sp.csr_matrix((index.V, index.V)), sp.csr_matrix((index.V, len(labels)))
        qa_ask, ne_ask = sp.csr_matrix((len(ASKS), index.V)), sp.csr_matrix((len(ASKS), len(labels)))
    tables = {"inside": inside, "across": across, "qa": sp.csr_matrix(qa), "ne": sp.csr_matrix(ne),
              "qa_ask": sp.csr_matrix(qa_ask), "ne_ask": sp.csr_matrix(ne_ask)}
    meta = {
        "algorithm": ALGORITHM,
        "params": params,
        "sources": describe_sources(extra),
        "qa_pairs": str(qa_path) if qa_path is not None else None,
        "qa_pairs_sha256": sha256_of(qa_path) if qa_path is not None else None,
        "labels": list(labels),
        "asks": list(ASKS),
        "shapes": {name: list(m.shape) for name, m in tables.items()},
        "stats": {"seconds": round(time.perf_counter() - clock, 3),
                  "corpus_seconds": round(corpus_seconds, 3),
                  "pairs": {name: int(m.nnz) for name, m in tables.items()}, **qa_stats},
    }
    return TriggerTables(artefacts.content_hash(_arrays(tables, asked)), tables, tuple(labels), meta, asked)


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
                         n_process=n_process)
    return _as_tables(artefacts.write(index, KIND, name, _arrays(found.tables, found.asked), found.meta))


def load_triggers(index: Index, name: str = DEFAULT_NAME) -> TriggerTables:
    """The tables written as artefact ``name`` (a clear error if there are none: nothing trains here)."""
    found = artefacts.read(index, KIND, name)
    return index.cache.get(f"models.triggers/{found.sha256}", lambda: _as_tables(found))


def _arrays(tables: dict[str, sp.csr_matrix], asked: np.ndarray) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {"asked": np.asarray(asked, dtype=np.float64)}
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
        for name in (*TABLES, *ASK_TABLES.values())
        if f"{name}.data" in arrays
    }
    if "asked" not in arrays or list(meta.get("asks", [])) != list(ASKS):  # triggers.v1: no question-word rows
        tables["qa_ask"] = sp.csr_matrix((len(ASKS), tables["qa"].shape[1]))
        tables["ne_ask"] = sp.csr_matrix((len(ASKS), tables["ne"].shape[1]))
        return TriggerTables(found.sha256, tables, tuple(meta["labels"]), meta)
    return TriggerTables(found.sha256, tables, tuple(meta["labels"]), meta, np.asarray(arrays["asked"]))
