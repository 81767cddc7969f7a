"""``sentret verify --fix``: bring the manifest of an index built by an older sentret up to date."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from sentret_core.errors import IndexFormatError
from sentret_core.index.format import MANIFEST, index_path, read_manifest
from sentret_core.index.reader import verify
from sentret_core.index.validate import canonical_checksum, describe_files, is_current


def upgrade_manifest(folder: str | Path) -> bool:
    """Give an older index's manifest its file sizes, array headers and own checksum, once
    :func:`~sentret_core.index.reader.verify` finds nothing wrong (every file still matches the
    sha256 recorded when it was built); False if the manifest had them already."""
    folder = index_path(folder)
    manifest: dict[str, Any] = read_manifest(folder, strict=False)
    if is_current(manifest):
        return False
    problems = verify(folder)
    if problems:
        more = f", and {len(problems) - 1} more" if len(problems) > 1 else ""
        what = f"cannot fix a damaged index ({problems[0]}{more}); rebuild it with `sentret index`"
        raise IndexFormatError(f"{folder}: {what}")
    manifest["sizes"], manifest["arrays"] = describe_files(folder, sorted(manifest["files"]))
    title = np.load(folder / "title.data.npy", mmap_mode="r", allow_pickle=False)
    manifest["counts"]["title_term_occurrences"] = int(np.asarray(title).sum(dtype=np.int64))
    manifest["checksum"] = canonical_checksum(manifest)
    staging = folder / f".{MANIFEST}.{os.getpid()}"
    staging.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    staging.replace(folder / MANIFEST)
    return True
