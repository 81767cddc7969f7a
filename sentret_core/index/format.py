"""The index's on-disk format: file names, the manifest, checksums, and the writers the build uses.

An index is a folder, immutable once built: ``manifest.json`` (format version, model, counts, the
sha256 and size of every file, the dtype and shape of every array, and a checksum of its own
content), ``*.npy`` arrays and ``*.parquet`` tables (see :mod:`sentret_core.index.reader`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

from sentret_core.errors import IndexFormatError
from sentret_core.index.blocks import BLOCK_BYTES, digests
from sentret_core.index.safe_files import UnsafeFile, read_json
from sentret_core.index.validate import MANIFEST, canonical_checksum, manifest_problems, npy_header
from sentret_core.index.validate import sha256_of as sha256_of  # where the build and the trainers import it from

FORMAT = "sentret-index"
FORMAT_VERSION = 1
SHARDS = "shards"  # the parsed shards the index was built from (their own manifest lists them)
MATRICES = ("X", "XT", "title", "G", "GT")


def is_index(path: str | Path) -> bool:
    try:
        found = read_json(Path(path) / MANIFEST)
    except (OSError, UnsafeFile):
        return False
    return isinstance(found, dict) and found.get("format") == FORMAT


def index_path(path: object) -> Path:
    """``path`` as the Path of an index folder: a non-empty string or path, else an IndexFormatError."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise IndexFormatError(f"an index is named by the path of its folder, not {str(path)[:60]!r} "
                               f"({type(path).__name__})")
    text = os.fspath(path)
    if not isinstance(text, str) or "\x00" in text:
        raise IndexFormatError(f"{text[:60]!r} is not the path of an index folder")
    return Path(text)


def read_manifest(path: str | Path, *, strict: bool = True) -> dict[str, Any]:
    """The parsed manifest of the index at ``path``; with ``strict``, also checked against its own
    checksum, with counts that are counts (``sentret verify`` reports those problems instead)."""
    path = index_path(path)
    if not path.is_dir():
        raise IndexFormatError(f"{path}: no such index folder")
    file = path / MANIFEST
    try:
        manifest = read_json(file)
    except FileNotFoundError:
        raise IndexFormatError(f"{path}: not a sentret index (no {MANIFEST}); build one with `sentret index`") from None
    except UnsafeFile as err:
        what = f"{MANIFEST} {err} (it is damaged); rebuild the index with `sentret index`"
        raise IndexFormatError(f"{path}: {what}") from None
    except OSError as err:
        raise IndexFormatError(
            f"{path}: {MANIFEST} cannot be read ({type(err).__name__}: it is damaged); rebuild the index "
            "with `sentret index`"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise IndexFormatError(
            f"{path}: not a sentret index (no valid {MANIFEST}); build one with `sentret index`"
        )
    if manifest.get("format_version") != FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index format version {manifest.get('format_version')} is not supported "
            f"(this sentret reads version {FORMAT_VERSION}); rebuild it with `sentret index`"
        )
    problems = manifest_problems(manifest) if strict else []
    if problems:
        raise IndexFormatError(f"{path}: {problems[0]}; run `sentret verify {path}`")
    return manifest


# --- writing -----------------------------------------------------------------------------


def save_array(folder: Path, name: str, array: np.ndarray) -> None:
    np.save(folder / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)


def save_matrix(folder: Path, name: str, matrix: sp.csr_matrix | sp.csc_matrix, ones: bool = False) -> None:
    """A sparse matrix as ``name.indptr.npy``, ``name.indices.npy`` (and ``name.data.npy``)."""
    matrix.sort_indices()
    # One index dtype for both arrays, or scipy copies them on load instead of mapping them.
    dtype = np.int32 if matrix.nnz < np.iinfo(np.int32).max else np.int64
    save_array(folder, f"{name}.indptr", matrix.indptr.astype(dtype))
    save_array(folder, f"{name}.indices", matrix.indices.astype(dtype))
    if not ones:
        save_array(folder, f"{name}.data", matrix.data)


def save_table(folder: Path, name: str, frame: pd.DataFrame) -> None:
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / f"{name}.parquet")


def describe_files(folder: Path, names: list[str]) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
    """The size of every file and the header (dtype, shape) of every array, for the manifest."""
    sizes = {name: (folder / name).stat().st_size for name in names}
    arrays = {}
    for name in names:
        if name.endswith(".npy"):
            dtype, shape, _ = npy_header(folder, name)
            arrays[name] = {"dtype": dtype.str, "shape": list(shape)}
    return sizes, arrays


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """Checksum every file in ``folder`` and write the manifest last (its presence marks a whole index).

    The manifest records each file's sha256 and size, the sha256 of each block of :data:`BLOCK_BYTES` of a
    larger file (:mod:`sentret_core.index.blocks`), each array's dtype and shape (checked at every load),
    and a checksum over its own canonical content (:mod:`sentret_core.index.validate`).
    Hidden files are not part of an index (a build's staging folder keeps its owner record in one). Of
    the parsed shards (``shards/``) it records their own manifest, which records each shard's sha256.
    """
    manifest = dict(manifest, format=FORMAT, format_version=FORMAT_VERSION)
    names = [file.name for file in sorted(folder.iterdir())
             if file.is_file() and file.name != MANIFEST and not file.name.startswith(".")]
    if (folder / SHARDS / MANIFEST).is_file():
        names.append(f"{SHARDS}/{MANIFEST}")
    manifest["files"], manifest["blocks"] = {}, {"bytes": BLOCK_BYTES, "sha256": {}}
    for name in names:
        manifest["files"][name], blocks = digests(folder / name, BLOCK_BYTES)
        if blocks:
            manifest["blocks"]["sha256"][name] = blocks
    manifest["sizes"], manifest["arrays"] = describe_files(folder, names)
    manifest.pop("checksum", None)
    manifest["checksum"] = canonical_checksum(manifest)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
