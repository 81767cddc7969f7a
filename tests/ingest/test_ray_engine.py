"""The Ray Data engine: the same shards as the local engine, byte for byte, on a local Ray."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sentret_core.errors import SentretError
from sentret_core.ingest.corpus import Document, Skipped, presegmented, read_corpus
from sentret_core.ingest.parse import Engine, parse_into
from sentret_core.ingest.shards import ShardWriter, read_shards_manifest
from tests.conftest import SMALL_DOCS

ray = pytest.importorskip("ray", reason="Ray is the optional `scale` extra (pip install -e '.[scale]'); CI installs it")


def documents() -> list[Document]:
    demo = itertools.islice(read_corpus("demo", "auto", "utf-8", Skipped()), 40)
    given = presegmented("given", "Given", ["One given sentence.", "", "Another about Madrid."])
    return [*(Document(d["id"], d["title"], d["text"]) for d in SMALL_DOCS), *demo, given]


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same documents parsed by each engine (Ray once: it takes seconds to start)."""
    folders = {}
    for name, engine in (("local", Engine(n_process=1)), ("ray", Engine("ray", num_workers=2, batch_size=8))):
        folder = tmp_path_factory.mktemp(name)
        writer = ShardWriter(folder, {}, shard_documents=20)
        parse_into(writer, documents()[:20], engine)  # one shard, then more documents into the next ones
        parse_into(writer, documents()[20:], engine)
        writer.finish(["test"])
        folders[name] = folder
    return folders


def test_ray_gives_the_local_engines_shards(parsed: dict[str, Path]) -> None:
    manifests = [read_shards_manifest(parsed[name]) for name in ("local", "ray")]
    assert [s["documents"] for s in manifests[0]["shards"]] == [20, 20, len(documents()) - 40]
    assert manifests[0]["counts"] == manifests[1]["counts"] and manifests[0]["pipeline"] == manifests[1]["pipeline"]
    assert [s["sha256"] for s in manifests[0]["shards"]] == [s["sha256"] for s in manifests[1]["shards"]]
    local, remote = (pa.concat_tables([pq.read_table(parsed[name] / s["file"]) for s in manifest["shards"]])
                     for name, manifest in zip(("local", "ray"), manifests))
    assert local.num_rows == len(documents()) and local.equals(remote)
    assert local.column("ordinal").to_pylist() == list(range(len(documents())))
    assert not ray.is_initialized()  # the engine shut down the Ray it started


def test_without_ray_the_message_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(SentretError, match=r"--engine ray needs Ray: pip install 'sentret\[scale\]'"):
        parse_into(ShardWriter(tmp_path, {}), documents()[:2], Engine("ray"))


def test_an_unreachable_cluster_is_one_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(SentretError, match="cannot join the Ray cluster at --address auto"):
        parse_into(ShardWriter(tmp_path, {}), documents()[:2], Engine("ray", address="auto"))
    assert not ray.is_initialized()
