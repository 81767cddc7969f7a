"""What an artefact holds must fit the index it claims (:mod:`sentret_core.index.artefacts` loads it).

The hashes of an artefact only say its files were not changed since they were sealed; someone who reseals
them (rewrites the hashes) can put anything inside. scipy and numpy trust index arrays (a CSR column out of
range reads or writes outside memory), so every one is checked here first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.index.view import IndexView

TEXTS_FILE = "sentences.parquet"  # the index file of the sentences' texts
MAX_CLASSES = 1_000_001  # training allows 1,000,000 classes, plus the shared class of rare words
TRIGGER_TABLES = ("inside", "across", "qa", "ne")  # models.training.triggers.TABLES
ASK_TABLES = ("qa_ask", "ne_ask")  # its question-word rows (triggers written before them have none)


def check_contents(kind: str, arrays: dict[str, np.ndarray], record: dict[str, Any], index: IndexView) -> None:
    """Raise a SentretError saying what does not fit when the arrays and record of an artefact of
    ``kind`` (word classes, trigger tables) do not fit ``index``; other kinds are not checked here."""
    if kind == "classes":
        _check_classes(arrays, record, index.V)
    elif kind == "triggers":
        _check_triggers(arrays, record, index.V)
    elif kind == "impacts":
        _check_impacts(arrays, record, index)
    elif kind == "minilm":
        _check_vectors(arrays, record, index)


def texts_checksum(index: IndexView) -> str:
    """The checksum of the index's sentence texts (what sentence vectors are encoded from)."""
    return str((index.manifest.get("files") or {}).get(TEXTS_FILE, ""))


def _check_vectors(arrays: dict[str, np.ndarray], record: dict[str, Any], index: IndexView) -> None:
    """Sentence vectors (minilm.v1's): one finite float16 row per sentence, encoded from these texts."""
    vectors = arrays.get("vectors")
    dim = record.get("dim")
    if not isinstance(vectors, np.ndarray) or vectors.dtype != np.float16 or vectors.ndim != 2:
        raise SentretError("its vectors are not a float16 matrix")
    if vectors.shape != (index.N, dim):
        raise SentretError(f"its vectors are {vectors.shape[0]:,} × {vectors.shape[1]}, not one of {dim} per "
                           f"sentence ({index.N:,})")
    if record.get("texts") != texts_checksum(index):
        raise SentretError("it was encoded from other texts than this index's")
    if not np.isfinite(vectors).all():
        raise SentretError("its vectors hold a value that is not a finite number")
    if "ann" in arrays:
        _check_graph(arrays["ann"], index.N, int(np.shape(vectors)[1]))


def _check_graph(graph: np.ndarray, n: int, dim: int) -> None:
    """A nearest-neighbour graph (usearch's serialisation) of ``n`` vectors of ``dim`` dimensions: its
    header says so (the graph itself is guarded by the artefact's hash, as every array is)."""
    from usearch.index import Index as Graph

    if graph.dtype != np.uint8 or graph.ndim != 1:
        raise SentretError("its nearest-neighbour graph is not a byte string")
    try:
        header = Graph.metadata(np.ascontiguousarray(graph).data)
    except Exception:  # its reader raises several kinds on a foreign buffer
        header = None
    if not header:
        raise SentretError("its nearest-neighbour graph is not one usearch can read")
    shape = (header.get("count_present"), header.get("count_deleted"), header.get("dimensions"))
    if shape != (n, 0, dim) or not header.get("matrix_included"):
        raise SentretError(f"its nearest-neighbour graph holds {shape[0]} vectors of {shape[2]} dimensions, "
                           f"not one of {dim} per sentence ({n:,})")


def _check_impacts(arrays: dict[str, np.ndarray], record: dict[str, Any], index: IndexView) -> None:
    models = record.get("models")
    if not isinstance(models, dict) or not all(isinstance(p, dict) for p in models.values()):
        raise SentretError("its record lacks the parameters of its models")
    terms = arrays.get("terms")
    if not isinstance(terms, np.ndarray) or terms.ndim != 1:
        raise SentretError("its terms are not one list of term ids")
    _term_ids(terms, "terms", index.V)
    for model in models:
        lists = arrays.get(f"lists/{model}")
        if not isinstance(lists, np.ndarray) or lists.ndim != 3 or len(lists) != len(terms):
            raise SentretError(f"the lists of {model} are not one row per term")
        lists = _integers(lists, f"the lists of {model}", lists.shape)
        if lists.size and (lists.min() < 0 or lists.max() >= index.N):
            raise SentretError(f"the lists of {model} hold sentence ids outside [0, {index.N})")
    if "maxima/terms" in arrays:
        _check_maxima(arrays, index.V)


def _check_maxima(arrays: dict[str, np.ndarray], V: int) -> None:
    terms, by_length, document = (arrays.get(f"maxima/{name}") for name in ("terms", "by_length", "document"))
    if not isinstance(terms, np.ndarray) or terms.ndim != 1 or not isinstance(by_length, np.ndarray) \
            or by_length.ndim != 2 or not isinstance(document, np.ndarray):
        raise SentretError("its maxima are not a list of terms and a table of counts by length")
    _term_ids(terms, "the maxima's terms", V)
    by_length = _integers(by_length, "the maxima's counts", (len(terms), by_length.shape[1]))
    if by_length.size and by_length.min() < 0:
        raise SentretError("the maxima's counts are negative")
    if document.shape != (len(terms),) or document.dtype.kind != "f" \
            or not np.all(np.isfinite(document) & (document >= 0)):
        raise SentretError("the maxima's document ratios are not one finite, non-negative number per term")


def _term_ids(terms: np.ndarray, name: str, V: int) -> None:
    terms = _integers(terms, name, terms.shape)
    if len(terms) and (terms.min() < 0 or terms.max() >= V or np.any(np.diff(terms) <= 0)):
        raise SentretError(f"{name} are not distinct ascending term ids of this index")


def _check_classes(arrays: dict[str, np.ndarray], record: dict[str, Any], V: int) -> None:
    n = record.get("n_classes")
    if type(n) is not int or not 1 <= n <= MAX_CLASSES:
        raise SentretError(f"n_classes is {str(n)[:40]!r}, not a count from 1 to {MAX_CLASSES:,}")
    if not all(isinstance(record.get(key), kind) for key, kind in (("params", dict), ("sources", list),
                                                                     ("stats", dict))):
        raise SentretError("its record lacks its params, sources or stats")
    classes = _integers(arrays.get("classes"), "classes", (V,))
    if V and (classes.min() < 0 or classes.max() >= n):
        raise SentretError(f"classes holds a class id outside 0..{n - 1}")


def _check_triggers(arrays: dict[str, np.ndarray], record: dict[str, Any], V: int) -> None:
    labels, shapes, asks = record.get("labels"), record.get("shapes"), record.get("asks", [])
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise SentretError("its record's labels are not a list of names")
    if not isinstance(shapes, dict) or not isinstance(asks, list):
        raise SentretError("its record's shapes or asks are missing")
    expected = {"inside": (V, V), "across": (V, V), "qa": (V, V), "ne": (V, len(labels)),
                "qa_ask": (len(asks), V), "ne_ask": (len(asks), len(labels))}
    for table in (*TRIGGER_TABLES, *ASK_TABLES):
        if table in ASK_TABLES and f"{table}.data" not in arrays and "asked" not in arrays:
            continue
        if shapes.get(table) != list(expected[table]):
            raise SentretError(f"table {table} has shape {str(shapes.get(table))[:40]}; this index needs "
                               f"{list(expected[table])}")
        _check_csr(arrays, table, expected[table])
    if "asked" in arrays:
        asked = arrays["asked"]
        numeric = asked.shape == (len(asks),) and asked.dtype.kind in "fiu"
        if not numeric or not np.isfinite(asked).all() or (asked < 0).any():
            raise SentretError(f"asked is not {len(asks)} finite counts")


def _check_csr(arrays: dict[str, np.ndarray], table: str, shape: tuple[int, int]) -> None:
    rows, cols = shape
    data = arrays.get(f"{table}.data")
    if not isinstance(data, np.ndarray) or data.ndim != 1 or data.dtype.kind not in "fiu":
        raise SentretError(f"table {table} has no numeric data array")
    indptr = _integers(arrays.get(f"{table}.indptr"), f"{table}.indptr", (rows + 1,))
    indices = _integers(arrays.get(f"{table}.indices"), f"{table}.indices", (len(data),))
    if indptr[0] != 0 or indptr[-1] != len(data) or (np.diff(indptr) < 0).any():
        raise SentretError(f"table {table}: its row pointers do not run from 0 to {len(data)} in order")
    if len(indices) and (indices.min() < 0 or indices.max() >= cols):
        raise SentretError(f"table {table} has a column index outside 0..{cols - 1}")
    if not np.isfinite(data).all() or (data < 0).any():
        raise SentretError(f"table {table} holds a count that is negative or not finite")


def _integers(array: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "iu" or array.shape != shape:
        found = f"{array.dtype} {array.shape}" if isinstance(array, np.ndarray) else "missing"
        raise SentretError(f"{name} is not integers of shape {shape} ({found})")
    return array
