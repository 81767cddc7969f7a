"""An index whose files have small block digests, so a query's postings span a few of many blocks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.index import validate

BLOCK = 1024  # bytes per block of the `blocked` index (a real build: blocks.BLOCK_BYTES, 8 MiB)


@pytest.fixture(scope="session")
def blocked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of the golden documents (test_shards) with block digests of 1 KiB."""
    from sentret_core.index import format as index_format
    from sentret_core.ingest.build import build_from_documents
    from tests.ingest.test_shards import golden_docs

    out = tmp_path_factory.mktemp("blocked") / "idx"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_format, "BLOCK_BYTES", BLOCK)
        build_from_documents(golden_docs(), out, source="golden", n_process=1)
    return out


def term_in_block(index: Index, block: int, *, last: bool = False) -> tuple[int, int, int]:
    """A term (its id) whose postings lie inside ``block`` of XT.indices.npy and XT.data.npy (same header,
    same dtype), and the bytes [lo, hi) they span in those files; ``last``: the last such term."""
    indptr = np.asarray(index.array("XT.indptr"), dtype=np.int64)
    offset = validate.npy_header(index.path, "XT.indices.npy")[2]
    lo, hi = offset + indptr[:-1] * 4, offset + indptr[1:] * 4
    inside = np.flatnonzero((lo // BLOCK == block) & ((hi - 1) // BLOCK == block) & (hi - lo >= 8))
    term = int(inside[-1] if last else inside[0])
    return term, int(lo[term]), int(hi[term])


def hashed_blocks(index: Index, file: str = "XT.indices.npy") -> tuple[int, int]:
    """(blocks of ``file`` hashed so far in this process, blocks of the file)."""
    found = index.file_blocks(file)
    assert found is not None
    return found.hashed, len(found.recorded)
