"""``sentret verify --fix``: bring the manifest of an index built by an older sentret up to date."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from sentret_core.errors import IndexFormatError
from sentret_core.index.blocks import BLOCK_BYTES, block_digests
from sentret_core.index.format import MANIFEST, describe_files, index_path, read_manifest
from sentret_core.index.reader import verify
from sentret_core.index.validate import canonical_checksum, is_current


def upgrade_manifest(folder: str | Path) -> bool:
    """Give an older index's manifest its file sizes, array headers, own checksum and block digests
    (:mod:`sentret_core.index.blocks`), once :func:`~sentret_core.index.reader.verify` finds nothing wrong
    (every file still matches the sha256 recorded when it was built); False if it had them already.
    Without block digests an index is checked a whole file at a time, as before: nothing is needed."""
    folder = index_path(folder)
    manifest: dict[str, Any] = read_manifest(folder, strict=False)
    if is_current(manifest) and "blocks" in manifest:
        return False
    problems = verify(folder)
    if problems:
        more = f", and {len(problems) - 1} more" if len(problems) > 1 else ""
        what = f"cannot fix a damaged index ({problems[0]}{more}); rebuild it with `sentret index`"
        raise IndexFormatError(f"{folder}: {what}")
    if not is_current(manifest):
        manifest["sizes"], manifest["arrays"] = describe_files(folder, sorted(manifest["files"]))
        title = np.load(folder / "title.data.npy", mmap_mode="r", allow_pickle=False)
        manifest["counts"]["title_term_occurrences"] = int(np.asarray(title).sum(dtype=np.int64))
    manifest["blocks"] = {"bytes": BLOCK_BYTES, "sha256": {}}
    for name in sorted(manifest["files"]):
        if (folder / name).stat().st_size > BLOCK_BYTES:
            manifest["blocks"]["sha256"][name] = block_digests(folder / name, BLOCK_BYTES)
    manifest.pop("checksum", None)
    manifest["checksum"] = canonical_checksum(manifest)
    staging = folder / f".{MANIFEST}.{os.getpid()}"
    staging.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    staging.replace(folder / MANIFEST)
    return True
