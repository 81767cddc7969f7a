"""What an :class:`~sentret_core.index.reader.Index` reads from its Parquet tables: terms, documents,
entities and mentions.

The query path gets numpy columns read one at a time (the documents' bounds, the entities' sentence
frequencies and label codes, the mentions' integer columns) and strings read for the rows asked for
(titles and entity names, a row group at a time: :mod:`sentret_core.index.texts`). The whole tables, as
pandas DataFrames (strings Arrow-backed), are read only when asked for: ``index.documents``,
``index.entities``, ``index.mentions``.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from sentret_core.index import validate
from sentret_core.index.cache import DerivedCache
from sentret_core.index.columns import TOGETHER, check_columns, check_table, read_columns, read_table
from sentret_core.index.lookup import EntityIndex, Labels, LazyColumns
from sentret_core.index.texts import ColumnRows

NAMES_KEPT = 32 * 2**20  # decoded row groups of titles, and of entity names, kept per index
MENTION_COLUMNS = ("sentence", "entity", "token_start", "token_end", "char_start", "char_end")


def index_dtype(bound: int) -> Any:
    """The narrowest of int32 and int64 that holds values up to ``bound``."""
    return np.int32 if bound < np.iinfo(np.int32).max else np.int64


class IndexTables:
    """The tables' part of :class:`~sentret_core.index.reader.Index` (a mixin: it reads through the index's
    checks, so every file is checked against its sha256 before its first read)."""

    path: Path
    manifest: dict[str, Any]
    cache: DerivedCache
    N: int
    D: int
    E: int

    def _checked(self, file: str) -> None:
        raise NotImplementedError

    def _table(self, name: str) -> pd.DataFrame:
        self._checked(f"{name}.parquet")
        frame = read_table(self.path, name)
        check_table(self.path, name, frame, self.manifest["counts"])
        return frame

    def _columns(self, table: str, names: tuple[str, ...], kinds: str = "iu") -> dict[str, np.ndarray]:
        """Columns of ``table`` as numpy arrays, checked (with the columns their checks need)."""
        self._checked(f"{table}.parquet")
        wanted = [*dict.fromkeys(part for name in names for part in TOGETHER.get(table, {}).get(name, (name,)))]
        columns = read_columns(self.path, table, wanted, kinds)
        check_columns(self.path, table, columns, self.manifest["counts"])
        return {name: columns[name] for name in names}

    def _strings(self, table: str, column: str, texts: bool = False) -> ColumnRows:
        """``column`` of ``table`` read a row group at a time, keeping up to :data:`NAMES_KEPT` bytes of them
        (with ``texts``, :data:`~sentret_core.index.texts.KEPT_BYTES`); each bound read when it applies."""
        self._checked(f"{table}.parquet")
        return ColumnRows(self.path / f"{table}.parquet", validate.hint(self.path), column,
                          None if texts else lambda: NAMES_KEPT)

    # term statistics
    @cached_property
    def terms(self) -> pd.DataFrame:
        """One row per term id: term, sf, df, cf."""
        return self._table("terms")

    @cached_property
    def vocab(self) -> list[str]:
        terms: list[str] = self.terms["term"].tolist()  # list() of an Arrow-backed column is 8× slower
        return terms

    @cached_property
    def term_index(self) -> dict[str, int]:
        return {term: i for i, term in enumerate(self.vocab)}

    def term_ids(self, terms: list[str]) -> np.ndarray:
        """Term ids of ``terms`` in order, -1 for a term not in the vocabulary."""
        lookup = self.term_index
        return np.array([lookup.get(t, -1) for t in terms], dtype=np.int64)

    @cached_property
    def sf(self) -> np.ndarray:
        return self.terms["sf"].to_numpy(np.int64)

    @cached_property
    def df(self) -> np.ndarray:
        return self.terms["df"].to_numpy(np.int64)

    @cached_property
    def cf(self) -> np.ndarray:
        return self.terms["cf"].to_numpy(np.int64)

    # documents
    @cached_property
    def documents(self) -> pd.DataFrame:
        """id, title, first_sentence, n_sentences, mean_sentence_length: the whole table (the query path
        reads its columns one at a time instead)."""
        return self._table("documents")

    def _array(self, name: str) -> np.ndarray:
        raise NotImplementedError

    @cached_property
    def _doc_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The documents' first sentence and length, found in ``sent_doc`` (checked to be in document order):
        what the documents table's columns hold, without decoding them (a third of a second at 10M sentences)."""
        sent_doc = self._array("sent_doc")
        # one pass for the runs of equal documents (a binary search per document took 4x as long)
        change = np.flatnonzero(sent_doc[1:] != sent_doc[:-1]) + 1
        counts = np.zeros(self.D + 1, dtype=np.int64)
        if self.N:
            counts[sent_doc[np.concatenate(([0], change))].astype(np.int64) + 1] = np.diff(change, prepend=0,
                                                                                          append=self.N)
        bounds = np.cumsum(counts).astype(index_dtype(self.N))
        return bounds[:-1], np.diff(bounds)

    @property
    def doc_first(self) -> np.ndarray:
        """The first sentence of each document (int32 unless N needs int64)."""
        return self._doc_bounds[0]

    @property
    def doc_nsent(self) -> np.ndarray:
        """The number of sentences of each document (int32 unless N needs int64)."""
        return self._doc_bounds[1]

    @cached_property
    def doc_avsl(self) -> np.ndarray:
        """avgSentLen(d): mean sentence length (terms) of each document."""
        found = self._columns("documents", ("mean_sentence_length",), kinds="f")["mean_sentence_length"]
        return found.astype(np.float64)

    @cached_property
    def titles(self) -> ColumnRows:
        """``titles[d]``: the title of document d (a sequence of D strings, read a row group at a time)."""
        return self._strings("documents", "title")

    # entities
    @cached_property
    def entities(self) -> pd.DataFrame:
        """One row per entity id: text, label, sf (sentences mentioning it): the whole table (the query
        path reads ``entity_sf``, ``entity_labels`` and ``entity_texts`` instead)."""
        return self._table("entities")

    @cached_property
    def entity_sf(self) -> np.ndarray:
        """Σ_s G[s,e]: the sentences mentioning each entity."""
        return self._columns("entities", ("sf",))["sf"]

    @cached_property
    def entity_labels(self) -> Labels:
        """``entity_labels[e]``: entity e's label; ``.codes`` (one small integer per entity) index
        ``.names`` (the labels of the index), and ``.mask(labels)`` selects entities by label."""
        self._checked("entities.parquet")
        try:
            column = pq.read_table(self.path / "entities.parquet", columns=["label"],
                                   read_dictionary=["label"]).column("label")
            return Labels.of(column)
        except (OSError, pa.ArrowException, KeyError) as err:
            raise validate.fail(self.path, f"cannot read entities.parquet ({err})") from None

    @cached_property
    def entity_texts(self) -> ColumnRows:
        """``entity_texts[e]``: entity e's name (a sequence of E strings, read a row group at a time)."""
        return self._strings("entities", "text")

    @cached_property
    def entity_index(self) -> EntityIndex:
        """``entity_index[(text, label)]``: the entity's id (a mapping; its search table is built at the
        first lookup, without a Python object per entity)."""

        def names() -> pa.Array:
            try:
                return pq.read_table(self.path / "entities.parquet", columns=["text"]).column("text").combine_chunks()
            except (OSError, pa.ArrowException, KeyError) as err:
                raise validate.fail(self.path, f"cannot read entities.parquet ({err})") from None

        labels = self.entity_labels
        return EntityIndex(names, labels, self.entity_texts)

    # mentions (stored sorted by sentence)
    @cached_property
    def mentions(self) -> pd.DataFrame:
        """One row per mention: sentence, entity, token_start, token_end, char_start, char_end: the whole
        table (the query path reads ``mention_columns`` instead)."""
        return self._table("mentions")

    @cached_property
    def mention_columns(self) -> LazyColumns:
        """The mentions' columns as numpy arrays (as stored: int32), each read when first asked for."""
        return LazyColumns(MENTION_COLUMNS, lambda name: self._columns("mentions", (name,))[name])

    @cached_property
    def mention_indptr(self) -> np.ndarray:
        """The mentions of sentence s are rows mention_indptr[s]:mention_indptr[s+1] (N+1 integers: for a pass
        over all sentences; the query path finds a few sentences' rows with :meth:`mention_rows`)."""
        sentences = self.mention_columns["sentence"]  # checked: sorted, in 0..N-1
        indptr = np.zeros(self.N + 1, dtype=index_dtype(len(sentences)))
        np.cumsum(np.bincount(sentences, minlength=self.N), out=indptr[1:])
        return indptr

    def mention_rows(self, sentences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows lo:hi of each sentence's mentions (int64): two searches in the sorted ``sentence`` column, so
        nothing of size N is built (at 75M sentences, the indptr took 3 s and 300 MB)."""
        column = self.mention_columns["sentence"]  # checked: sorted, in 0..N-1
        wanted = np.asarray(sentences, dtype=np.int64)
        if len(wanted) and (int(wanted.min()) < 0 or int(wanted.max()) >= self.N):
            raise IndexError(f"sentence ids must be in 0..{self.N - 1}")
        keys = wanted.astype(column.dtype)  # the column's own type: numpy would copy the column otherwise
        return column.searchsorted(keys).astype(np.int64), column.searchsorted(keys + 1).astype(np.int64)

    def mention_range(self, sentence: int) -> tuple[int, int]:
        """The rows lo:hi of ``sentence``'s mentions."""
        lo, hi = self.mention_rows(np.array([sentence]))
        return int(lo[0]), int(hi[0])

    def sentence_mentions(self, sentence: int) -> pd.DataFrame:
        lo, hi = self.mention_range(sentence)
        cols = self.mention_columns
        return pd.DataFrame({name: cols[name][lo:hi] for name in MENTION_COLUMNS}, index=range(lo, hi))

    def mention_spans(self, sentence: int, entity: int | None = None) -> list[tuple[int, int, int]]:
        """(entity, char_start, char_end) of the mentions in ``sentence`` (of ``entity`` only, if given)."""
        lo, hi = self.mention_range(sentence)
        cols = self.mention_columns
        spans = zip(cols["entity"][lo:hi].tolist(), cols["char_start"][lo:hi].tolist(),
                    cols["char_end"][lo:hi].tolist())
        return [(e, a, b) for e, a, b in spans if entity is None or e == entity]
