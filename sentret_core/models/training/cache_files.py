"""Cache files beside the index, shared by word classes and trigger tables (keyed by index and settings)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sentret_core.index.reader import Index


def fingerprint(index: Index) -> str:
    """A short hash of what the statistics are computed from (the index's own checksums)."""
    files = index.manifest.get("files", {})
    names = ("seq_terms.npy", "seq_indptr.npy", "terms.parquet", "X.data.npy", "X.indices.npy",
             "mentions.parquet", "entities.parquet", "sent_pos.npy")  # fmt: skip
    text = "|".join(f"{n}={files.get(n, '')}" for n in names) + f"|N={index.N}|V={index.V}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cache_key(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _write_atomic(folder: Path, name: str, write: Any) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f"cache-tmp-{name}-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the index's other files are readable
        os.replace(tmp, folder / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save_cache(
    index: Index, kind: str, key: str, arrays: dict[str, np.ndarray], meta: dict[str, Any]
) -> bool:
    """Write ``cache-<kind>-<key>.npz`` then its ``.json`` manifest (the manifest marks it whole)."""
    folder = Path(index.path)
    try:
        _write_atomic(folder, f"cache-{kind}-{key}.npz", lambda h: np.savez(h, **arrays))  # type: ignore[arg-type]
        text = json.dumps(dict(meta, key=key, kind=kind), indent=2, sort_keys=True, default=str)
        _write_atomic(folder, f"cache-{kind}-{key}.json", lambda h: h.write(text.encode()))
    except OSError:
        return False
    return True


def load_cache(index: Index, kind: str, key: str) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """The arrays and manifest of a cache entry written by :func:`save_cache`, or None."""
    folder = Path(index.path)
    try:
        meta = json.loads((folder / f"cache-{kind}-{key}.json").read_text())
        if meta.get("key") != key or meta.get("kind") != kind:
            return None
        with np.load(folder / f"cache-{kind}-{key}.npz", allow_pickle=False) as data:
            arrays = {name: np.asarray(data[name]) for name in data.files}
    except (OSError, ValueError, KeyError):
        return None
    return arrays, meta


def set_current(index: Index, kind: str, key: str) -> None:
    """Record ``key`` as the index's current ``kind`` (``cache-<kind>.json``)."""
    index.cache[f"models.{kind}.current"] = key
    text = json.dumps({"current": key}).encode()
    with contextlib.suppress(OSError):
        _write_atomic(Path(index.path), f"cache-{kind}.json", lambda h: h.write(text))


def get_current(index: Index, kind: str) -> str | None:
    """The key :func:`set_current` recorded for the index (read from disk once per loaded index)."""
    memo = f"models.{kind}.current"
    key = index.cache.get(memo)
    if key is None:
        try:
            key = json.loads((Path(index.path) / f"cache-{kind}.json").read_text()).get("current")
        except (OSError, ValueError, AttributeError):
            key = None
        if key:
            index.cache[memo] = str(key)
    return str(key) if key else None


def as_index(source: Index | str | os.PathLike[str]) -> Index:
    from sentret_core.index.reader import Index

    return source if isinstance(source, Index) else Index.load(Path(source))


def source_list(sources: Sequence[Index | str | os.PathLike[str]]) -> list[Index]:
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    return [as_index(s) for s in sources]


def describe_sources(sources: Sequence[Index]) -> list[dict[str, str]]:
    return [{"path": str(Path(s.path).resolve()), "fingerprint": fingerprint(s)} for s in sources]


def vocabulary_map(index: Index, sources: Sequence[Index]) -> tuple[list[np.ndarray], int]:
    """Term-id maps of the index (identity) and of every source into one union vocabulary.

    The index's own terms keep their ids 0..V-1; terms only a source knows follow.
    """
    lookup = dict(index.term_index)
    maps = [np.arange(index.V, dtype=np.int64)]
    for source in sources:
        ids = np.empty(source.V, dtype=np.int64)
        for i, term in enumerate(source.vocab):
            tid = lookup.get(term)
            if tid is None:
                tid = len(lookup)
                lookup[term] = tid
            ids[i] = tid
        maps.append(ids)
    return maps, len(lookup)
