"""The build's external merge (ingest.external_merge, ingest.streamed): each shard's entries spilled to disk
as a run and merged a block of columns at a time, the tables streamed in row groups — the same bytes as a build
that holds it all at once.

The build before the external merge is the reference too: tests/ingest/test_shards.py keeps its digests
(``BEFORE_SHARDS``), and at 1M and 10M synthetic sentences every file's sha256 was the same (docs/performance.md).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from sentret_core.ingest import assemble, external_merge, streamed
from sentret_core.ingest.build import build_from_shards
from sentret_core.ingest.engine import Engine
from sentret_core.ingest.parse import parse_into
from sentret_core.ingest.shards import ShardWriter
from tests.ingest.test_shards import golden_docs


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("merge") / "shards"
    writer = ShardWriter(folder, {}, shard_documents=7)  # 9 shards: 9 runs to merge
    parse_into(writer, golden_docs(), Engine(n_process=1))
    writer.finish(["golden"])
    return folder


@pytest.fixture(scope="module")
def whole(shards: Path) -> Path:
    """The build with the default budget: one block holds every column of XT and GT."""
    out = shards.parent / "whole"
    build_from_shards(shards, out)
    return out


def manifest(index: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((index / "manifest.json").read_text())
    return loaded


def test_a_budget_of_one_entry_merges_column_by_column_and_writes_the_same_bytes(
    shards: Path, whole: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = manifest(whole)["counts"]
    assert counts["term_occurrences"] < external_merge.MERGE_POSTINGS  # so `whole` merged in one block
    blocks: dict[str, list[int]] = {"XT": [], "GT": []}  # the entries of each block merged, in turn

    class Counted(external_merge.NpyWriter):
        def extend(self, values: Any) -> None:
            name = self.path.name.removesuffix(".indices.npy")
            if name in blocks:
                blocks[name].append(len(values))
            super().extend(values)

    monkeypatch.setattr(external_merge, "NpyWriter", Counted)
    monkeypatch.setattr(external_merge, "MERGE_POSTINGS", 1)
    build_from_shards(shards, tmp_path / "spilled")
    for name, table in (("XT", "terms"), ("GT", "entities")):  # a column of 2 entries or more is a block of its own
        sf = pq.read_table(whole / f"{table}.parquet").column("sf").to_numpy()
        sizes = np.array(blocks[name])
        assert sorted(sizes[sizes >= 2].tolist()) == sorted(sf[sf >= 2].tolist()), name
        assert sizes.sum() == sf.sum() and len(sizes) > len(sf) / 2, name
    assert manifest(tmp_path / "spilled")["files"] == manifest(whole)["files"]
    assert manifest(tmp_path / "spilled")["counts"] == counts
    assert not [p.name for p in (tmp_path / "spilled").iterdir() if p.name.startswith(".run-")]  # runs removed


def test_tables_streamed_in_row_groups_are_what_write_table_writes(
    shards: Path, whole: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streamed, "ROW_GROUP", 5)
    monkeypatch.setattr(assemble, "TEXT_ROW_GROUP", 5)  # the documents' and entities' row groups
    build_from_shards(shards, tmp_path / "grouped")
    for name in ("documents", "mentions", "entities"):
        table = pq.read_table(whole / f"{name}.parquet")
        pq.write_table(table, tmp_path / f"{name}.parquet", row_group_size=5)
        got = tmp_path / "grouped" / f"{name}.parquet"
        assert got.read_bytes() == (tmp_path / f"{name}.parquet").read_bytes(), name
        assert pq.ParquetFile(got).metadata.num_row_groups == math.ceil(table.num_rows / 5) > 1, name
    for name, digest in manifest(whole)["files"].items():
        if name.endswith(".npy"):
            assert manifest(tmp_path / "grouped")["files"][name] == digest, name


def test_a_header_rewritten_for_fewer_values_than_announced(tmp_path: Path) -> None:
    for announced, written in ((10, 7), (-1, 0), (-1, 3), (10**12, 5)):  # the last: a header of another size
        writer = streamed.NpyWriter(tmp_path, "a", np.int32, announced)
        for start in range(0, written, 2):
            writer.extend(np.arange(start, min(start + 2, written)))
        writer.close()
        np.save(tmp_path / "b.npy", np.arange(written, dtype=np.int32))
        assert (tmp_path / "a.npy").read_bytes() == (tmp_path / "b.npy").read_bytes()
    writer = streamed.NpyWriter(tmp_path, "a", np.int32, 2)
    writer.extend(np.arange(3))
    with pytest.raises(ValueError, match="3 values written, 2 announced"):
        writer.close()
