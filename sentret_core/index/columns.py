"""Reading an index's Parquet tables a column at a time, and checking the columns that index anything.

The query path needs a few integer columns of the tables (the entities' sentence frequencies, the mentions'
sentence, entity and offsets), not their strings: those are read column by column into numpy arrays, and each
column that indexes anything is checked against the counts and the arrays before it is used
(:func:`check_columns`), as a whole table read with pandas is (``Index.documents``, ``Index.mentions``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from sentret_core.index.validate import check_bounds, decreases, fail

# the columns whose checks need each other: read together
TOGETHER = {"documents": {"first_sentence": ("first_sentence", "n_sentences"),
                          "n_sentences": ("first_sentence", "n_sentences")}}


def read_columns(folder: Path, table: str, names: Sequence[str], kinds: str = "iu") -> dict[str, np.ndarray]:
    """The columns ``names`` of ``table`` as numpy arrays of the ``kinds`` (numpy's: integers by default),
    its sha256 already checked."""
    file = f"{table}.parquet"
    try:
        read = pq.read_table(folder / file, columns=list(names))
        columns = {name: read.column(name).to_numpy() for name in names}
    except (OSError, pa.ArrowException, KeyError) as err:
        raise fail(folder, f"cannot read {file} ({err})") from None
    for name, values in columns.items():
        if values.dtype.kind not in kinds:
            raise fail(folder, f"{file}: its column {name} holds {values.dtype}, not what an index stores there")
    return columns


_ARROW_STRINGS = {pa.string(): pd.StringDtype("pyarrow"), pa.large_string(): pd.StringDtype("pyarrow")}


def read_table(folder: Path, table: str) -> pd.DataFrame:
    """The whole table with pandas (its sha256 already checked): strings held by Arrow rather than as a
    Python object each, the entities' labels as a categorical."""
    file = f"{table}.parquet"
    try:
        read = pq.read_table(folder / file, read_dictionary=["label"] if table == "entities" else None)
        return read.to_pandas(types_mapper=_ARROW_STRINGS.get)
    except (OSError, pa.ArrowException) as err:
        raise fail(folder, f"cannot read {file} ({err})") from None


def check_table(folder: Path, name: str, frame: pd.DataFrame, counts: Mapping[str, int]) -> None:
    """A whole table's columns against the counts and the arrays they index (after its checksum)."""
    try:
        numeric = {c: frame[c].to_numpy(np.int64) for c in _CHECKED.get(name, ()) if c in frame}
    except (TypeError, ValueError) as err:
        what = f"{name}.parquet: its columns are not what an index stores ({type(err).__name__}: {err})"
        raise fail(folder, what) from None
    check_columns(folder, name, numeric, counts)


_CHECKED = {"documents": ("first_sentence", "n_sentences"), "mentions": ("sentence", "entity"),
            "terms": ("sf", "df", "cf")}


def check_columns(folder: Path, table: str, columns: Mapping[str, np.ndarray], counts: Mapping[str, int]) -> None:
    """The checks of the given columns of ``table`` (those of :data:`TOGETHER` are given together)."""
    if table == "documents" and "n_sentences" in columns:
        n = np.asarray(columns["n_sentences"], dtype=np.int64)
        first = np.asarray(columns["first_sentence"], dtype=np.int64)
        N = counts["sentences"]
        # each document starts where the one before ends (the first at 0, the last ending at N): they tile
        if len(n) and (int(n.min()) < 1 or int(n.max()) > N or int(first[0]) != 0 or int(first.max()) >= N
                       or int(first[-1]) + int(n[-1]) != N or not np.array_equal(first[1:], first[:-1] + n[:-1])):
            raise fail(folder, "documents.parquet: first_sentence and n_sentences do not tile the sentences")
    elif table == "mentions":
        if "sentence" in columns:
            sentence = columns["sentence"]
            check_bounds(folder, "mentions.parquet (sentence)", sentence, counts["sentences"], "counts.sentences")
            if decreases(sentence):
                raise fail(folder, "mentions.parquet is not sorted by sentence")
        if "entity" in columns:
            check_bounds(folder, "mentions.parquet (entity)", columns["entity"], counts["entities"], "counts.entities")
    elif table == "terms" and "cf" in columns and (
        int(np.asarray(columns["cf"]).sum(dtype=np.int64)) != counts["term_occurrences"]
        or any(int(np.asarray(columns[c]).min(initial=0)) < 0 for c in ("sf", "df") if c in columns)
    ):
        raise fail(folder, "terms.parquet: its frequencies do not add up to the manifest's counts")
