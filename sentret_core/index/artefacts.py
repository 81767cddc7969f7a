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
from sentret_core.index.artefact_contents import check_contents

if TYPE_CHECKING:
    from sentret_core.index.view import IndexView

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


def fingerprint(index: IndexView) -> str:
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
    index: IndexView | None, kind: str, name: str, arrays: dict[str, np.ndarray], meta: dict[str, Any]
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


def _missing(index: IndexView, kind: str, name: str) -> SentretError:
    if kind in _MAKE:
        return SentretError(f"{store_root()} has no {kind} named {name!r}: {_MAKE[kind]}")
    return SentretError(
        f"{index.path} has no {kind} artefact named {name!r}: train it first with "
        f"`sentret train {kind} {index.path} --name {name}` (or the How it works page's Train button)"
    )


def reference(index: IndexView, kind: str, name: str) -> str:
    """``name@hash`` of the artefact a model would use (what a run records); raises if it is missing."""
    record = _record(_root(index.path, kind), name)
    if record is None or record.get("kind") != kind:
        raise _missing(index, kind, name)
    return f"{name}@{str(record.get('sha256', ''))[:12]}"


def read(index: IndexView, kind: str, name: str) -> Artefact:
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


def _load(root: Path, name: str, index: IndexView | None) -> Artefact:
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


def problems(index: IndexView) -> list[str]:
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
