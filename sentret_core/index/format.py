"""The index's on-disk format: file names, the manifest, checksums, and the writers the build uses.

An index is a folder, immutable once built: ``manifest.json`` (format version, model, counts, the
sha256 of every file), ``*.npy`` arrays and ``*.parquet`` tables (see :mod:`sentret_core.index.reader`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

from sentret_core.errors import IndexFormatError

FORMAT = "sentret-index"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"

SENTENCE_ARRAYS = ("sent_doc", "sent_pos", "sent_start", "sent_end", "sent_len")
SEQUENCE_ARRAYS = ("seq_indptr", "seq_terms", "seq_tokens", "seq_char_start", "seq_char_end")
MATRICES = ("X", "XT", "title", "G", "GT")


def is_index(path: str | Path) -> bool:
    manifest = Path(path) / MANIFEST
    if not manifest.is_file():
        return False
    try:
        return bool(json.loads(manifest.read_text()).get("format") == FORMAT)
    except (OSError, ValueError):
        return False


def read_manifest(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_dir():
        raise IndexFormatError(f"{path}: no such index folder")
    if not is_index(path):
        raise IndexFormatError(
            f"{path}: not a sentret index (no valid {MANIFEST}); build one with `sentret index`"
        )
    manifest: dict[str, Any] = json.loads((path / MANIFEST).read_text())
    if manifest.get("format_version") != FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index format version {manifest.get('format_version')} is not supported "
            f"(this sentret reads version {FORMAT_VERSION}); rebuild it with `sentret index`"
        )
    return manifest


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """Checksum every file in ``folder`` and write the manifest last (its presence marks a whole index).

    Hidden files are not part of an index (a build's staging folder keeps its owner record in one).
    """
    manifest = dict(manifest, format=FORMAT, format_version=FORMAT_VERSION)
    manifest["files"] = {
        file.name: sha256_of(file)
        for file in sorted(folder.iterdir())
        if file.name != MANIFEST and not file.name.startswith(".")
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
