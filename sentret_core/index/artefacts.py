"""Named artefacts derived from an index by an explicit training step (word classes, trigger tables).

An artefact lives beside the index files, in its own folder ``INDEX/artefacts/<name>/``:

* ``arrays.npz`` — its numpy arrays;
* ``artefact.json`` — its kind, name, content hash (``sha256`` over the arrays' names, dtypes,
  shapes and bytes, so it does not depend on zip timestamps), the fingerprint of the index it was
  trained on, whatever its trainer records (parameters, sources, statistics), and a ``checksum``
  over the record itself (records written before it have none and are read as they are).

The folder is written under a temporary name and renamed into place, so a reader sees the old
artefact or the new one, never half of one. Scorers only read artefacts (by name, a model
parameter); nothing here is written while scoring. A run records ``name@hash`` (:func:`reference`).

A *shared* kind (a learned ranker: it reads features normalised per query, so it applies to any
index) lives in the store ``data/rankers/<name>/`` instead (or ``$SENTRET_RANKERS``), in the same
layout, and records the fingerprint of its training data rather than of one index.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

FOLDER = "artefacts"
META = "artefact.json"
ARRAYS = "arrays.npz"
ARTEFACT_FORMAT = 1
NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
SHARED_KINDS = frozenset({"ranker"})
STORE_ENV = "SENTRET_RANKERS"
DEFAULT_STORE = Path("data") / "rankers"
# how to make a missing artefact of each kind
_MAKE = {"ranker": "learn it first with `sentret learn` (or the Evaluate page's Learn button)"}
# shared artefacts (rankers) by folder, checked against their record's stamp; the ones read last are kept
_SHARED_MEMO: OrderedDict[Path, tuple[tuple[int, int, int], Artefact]] = OrderedDict()
SHARED_KEPT = 64
# the index files whose checksums identify what an artefact was trained on
_FINGERPRINTED = ("seq_terms.npy", "seq_indptr.npy", "terms.parquet", "X.data.npy", "X.indices.npy",
                  "mentions.parquet", "entities.parquet", "sent_pos.npy")


@dataclass(frozen=True)
class Artefact:
    """One loaded artefact: its arrays and its record."""

    name: str
    kind: str
    sha256: str
    arrays: dict[str, np.ndarray]
    meta: dict[str, Any]

    @property
    def reference(self) -> str:
        return f"{self.name}@{self.sha256[:12]}"


def fingerprint(index: Index) -> str:
    """A short hash of what derived statistics are computed from (the index's own checksums)."""
    files = index.manifest.get("files", {})
    text = "|".join(f"{n}={files.get(n, '')}" for n in _FINGERPRINTED) + f"|N={index.N}|V={index.V}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def content_hash(arrays: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def record_checksum(record: dict[str, Any]) -> str:
    """sha256 over an artefact's record without its ``checksum`` field, in one canonical JSON form."""
    body = {key: value for key, value in record.items() if key != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise SentretError(
            f"artefact name {name!r} is not allowed: use 1-64 lower-case letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def folder_of(index_path: str | Path, name: str) -> Path:
    return Path(index_path) / FOLDER / check_name(name)


def store_root() -> Path:
    """Where shared artefacts (learned rankers) live: ``$SENTRET_RANKERS`` or ``data/rankers``."""
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE)


def _root(index_path: str | Path | None, kind: str) -> Path:
    if kind in SHARED_KINDS:
        return store_root()
    if index_path is None:
        raise SentretError(f"a {kind} artefact belongs to an index: name the index")
    return Path(index_path) / FOLDER


def write(
    index: Index | None, kind: str, name: str, arrays: dict[str, np.ndarray], meta: dict[str, Any]
) -> Artefact:
    """Write (or replace) artefact ``name`` of ``index`` (of the store, for a shared kind); the old
    one stays whole until the rename."""
    target = _root(index.path if index is not None else None, kind) / check_name(name)
    trained_on = fingerprint(index) if index is not None and kind not in SHARED_KINDS else None
    record = dict(meta, format=ARTEFACT_FORMAT, kind=kind, name=name, sha256=content_hash(arrays),
                  index=trained_on, created=time.time())
    record["checksum"] = record_checksum(json.loads(json.dumps(record, default=str)))  # as it reads back
    parent = target.parent
    try:
        parent.mkdir(parents=kind in SHARED_KINDS, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=parent))
    except OSError as err:
        raise SentretError(f"{parent}: cannot write the artefact {name!r} there ({err.strerror})") from None
    try:
        np.savez(staging / ARRAYS, **arrays)  # type: ignore[arg-type]
        (staging / META).write_text(json.dumps(record, indent=2, sort_keys=True, default=str))
        staging.chmod(0o755)  # mkdtemp makes it private; the index's other files are readable
        with open(parent / ".lock", "a") as lock:  # one swap at a time, across processes
            fcntl.flock(lock, fcntl.LOCK_EX)
            old = parent / f".old{staging.name}"
            if target.exists():
                target.rename(old)
            staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Artefact(name, kind, record["sha256"], dict(arrays), record)


def _record(root: Path, name: str) -> dict[str, Any] | None:
    try:
        record = json.loads((root / check_name(name) / META).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _missing(index: Index, kind: str, name: str) -> SentretError:
    if kind in _MAKE:
        return SentretError(f"{store_root()} has no {kind} named {name!r}: {_MAKE[kind]}")
    return SentretError(
        f"{index.path} has no {kind} artefact named {name!r}: train it first with "
        f"`sentret train {kind} {index.path} --name {name}` (or the How it works page's Train button)"
    )


def reference(index: Index, kind: str, name: str) -> str:
    """``name@hash`` of the artefact a model would use (what a run records); raises if it is missing."""
    record = _record(_root(index.path, kind), name)
    if record is None or record.get("kind") != kind:
        raise _missing(index, kind, name)
    return f"{name}@{str(record.get('sha256', ''))[:12]}"


def read(index: Index, kind: str, name: str) -> Artefact:
    """Artefact ``name`` of ``kind``, checked against its hash and the index (memoised per loaded
    index, or per process for a shared kind)."""
    check_name(name)
    root = _root(index.path, kind)
    try:
        stamp = (root / name / META).stat()
    except OSError:
        raise _missing(index, kind, name) from None
    signature = (stamp.st_mtime_ns, stamp.st_size, stamp.st_ino)
    if kind in SHARED_KINDS:
        key = (root / name).resolve()
        seen = _SHARED_MEMO.get(key)
        if seen is not None and seen[0] == signature:
            found: Artefact = seen[1]
        else:
            found = _load(root, name, None)
            _SHARED_MEMO[key] = (signature, found)
            while len(_SHARED_MEMO) > SHARED_KEPT:
                _SHARED_MEMO.popitem(last=False)
    else:
        found = index.cache.get_stamped(f"artefact/{name}", signature, lambda: _load(root, name, index))
    if found.kind != kind:
        raise SentretError(f"artefact {name!r} of {root} holds {found.kind}, not {kind}")
    return found


def _load(root: Path, name: str, index: Index | None) -> Artefact:
    """Load and check one artefact; ``index`` (None for a shared kind) is the one it must fit."""
    folder = root / name
    damaged = f"artefact {name!r} of {root} is damaged"
    record = _record(root, name)
    if record is None or not isinstance(record.get("kind"), str):
        raise SentretError(f"{damaged}: {META} is missing or not a JSON record; train it again")
    if "checksum" in record and record["checksum"] != record_checksum(record):
        raise SentretError(f"{damaged}: {META} does not match its own checksum (it was edited); train it again")
    try:
        with np.load(folder / ARRAYS, allow_pickle=False) as data:
            arrays = {key: np.asarray(data[key]) for key in data.files}
    except Exception as err:  # a truncated or foreign zip raises many kinds of errors
        raise SentretError(f"{damaged}: {ARRAYS} cannot be read ({type(err).__name__}); train it again") from None
    if content_hash(arrays) != record.get("sha256"):
        raise SentretError(f"{damaged}: its arrays do not match their recorded hash; train it again")
    if index is not None and record.get("index") != fingerprint(index):
        raise SentretError(f"artefact {name!r} was trained on another build of {index.path}; train it again")
    if index is not None:
        try:
            check_contents(record["kind"], arrays, record, index)
        except SentretError as err:
            raise SentretError(f"{damaged}: {err}; train it again") from None
    return Artefact(name, record["kind"], str(record["sha256"]), arrays, record)


# --- what an artefact holds must fit the index it claims --------------------------------------------
# The hashes above only say the files were not changed since they were sealed; someone who reseals
# them (rewrites the hashes) can put anything inside. scipy and numpy trust index arrays (a CSR
# column out of range reads or writes outside memory), so every one is checked here first.

TEXTS_FILE = "sentences.parquet"  # the index file of the sentences' texts
MAX_CLASSES = 1_000_001  # training allows 1,000,000 classes, plus the shared class of rare words
TRIGGER_TABLES = ("inside", "across", "qa", "ne")  # models.training.triggers.TABLES
ASK_TABLES = ("qa_ask", "ne_ask")  # its question-word rows (triggers written before them have none)


def check_contents(kind: str, arrays: dict[str, np.ndarray], record: dict[str, Any], index: Index) -> None:
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


def texts_checksum(index: Index) -> str:
    """The checksum of the index's sentence texts (what sentence vectors are encoded from)."""
    return str((index.manifest.get("files") or {}).get(TEXTS_FILE, ""))


def _check_vectors(arrays: dict[str, np.ndarray], record: dict[str, Any], index: Index) -> None:
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


def _check_impacts(arrays: dict[str, np.ndarray], record: dict[str, Any], index: Index) -> None:
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


def available(index_path: str | Path | None, kind: str | None = None) -> list[dict[str, Any]]:
    """The records of the artefacts of an index (optionally of one kind; a shared kind's come from
    the store), by name."""
    root = _root(index_path, kind or "")
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir()):
        if folder.name.startswith(".") or not NAME.fullmatch(folder.name):
            continue
        record = _record(root, folder.name)
        if record is not None and (kind is None or record.get("kind") == kind):
            found.append(record)
    return found


def problems(index: Index) -> list[str]:
    """What is wrong with the artefacts folder of an index (for ``sentret verify``); empty if sound."""
    root = Path(index.path) / FOLDER
    if not root.exists():
        return []
    if not root.is_dir():
        return [f"{FOLDER}: not a folder"]
    found = []
    for folder in sorted(root.iterdir()):
        where = f"{FOLDER}/{folder.name}"
        if folder.name == ".lock":
            continue
        if folder.name.startswith("."):
            found.append(f"{where}: left over from an interrupted training (safe to delete)")
        elif not folder.is_dir() or not NAME.fullmatch(folder.name):
            found.append(f"{where}: not an artefact")
        else:
            try:
                _load(root, folder.name, index)
            except SentretError as err:
                found.append(f"{where}: {err}")
    return found


def remove(index_path: str | Path, name: str) -> None:
    folder = folder_of(index_path, name)
    if not (folder / META).is_file():
        raise SentretError(f"{index_path} has no artefact named {name!r}")
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(folder)
