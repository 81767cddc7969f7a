"""Documents shared by benchmark indexes (the demo distractors) are parsed once per pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.evaluation.benchmarks import indexing
from sentret_core.ingest import build
from sentret_core.ingest.corpus import Document

BASE = [Document(f"w{i}", f"Town {i}", f"Town {i} lies on the river. It was founded in {1800 + i}.") for i in range(4)]
MORE = [Document("p1", "Guernica", "Picasso painted Guernica in 1937. It hangs in Madrid.")]


def test_shared_documents_are_parsed_once_and_an_index_after_them_equals_a_build_of_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "distractors.txt"
    data.write_text("the file the shards are keyed by", "utf-8")
    cache = tmp_path / "cache"
    base = indexing.cached_shards("towns", data, BASE, cache=cache)
    parsed = []
    monkeypatch.setattr("sentret_core.ingest.build.parse_documents_into", lambda *a, **k: parsed.append(a))
    assert indexing.cached_shards("towns", data, BASE, cache=cache) == base and parsed == []  # reused
    after = indexing.cached_index("bench", data, {}, MORE, cache=cache, after=base)
    again = indexing.cached_index("bench", data, {}, lambda: pytest.fail("built again"), cache=cache, after=base)
    assert again.path == after.path
    whole = tmp_path / "whole"
    build.build_from_documents([*BASE, *MORE], whole, source="all")
    assert list(after.documents["id"]) == ["w0", "w1", "w2", "w3", "p1"]
    mine, reference = (json.loads((Path(p) / "manifest.json").read_text()) for p in (after.path, whole))
    arrays = {name: digest for name, digest in reference["files"].items() if name.endswith(".npy")}
    assert arrays and {name: mine["files"][name] for name in arrays} == arrays  # the same bytes, array by array
    assert Index.load(after.path).N == Index.load(whole).N
