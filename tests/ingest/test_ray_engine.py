"""The Ray engine: the same shards as the local engine, byte for byte, on a local Ray."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sentret_core._version import __version__
from sentret_core.errors import SentretError
from sentret_core.ingest import ray_engine
from sentret_core.ingest.build import parse_source
from sentret_core.ingest.corpus import Document, Skipped, presegmented, read_corpus
from sentret_core.ingest.engine import Engine
from sentret_core.ingest.nlp import DEFAULT_PIPELINE, load_pipeline
from sentret_core.ingest.parse import parse_into
from sentret_core.ingest.pipeline import pipeline_record
from sentret_core.ingest.ray_engine import check_nodes, node_differences, parses_with
from sentret_core.ingest.shards import ShardWriter, read_shards_manifest
from tests.conftest import SMALL_DOCS

ray = pytest.importorskip("ray", reason="Ray is the optional `scale` extra (pip install -e '.[scale]'); CI installs it")


def documents() -> list[Document]:
    demo = itertools.islice(read_corpus("demo", "auto", "utf-8", Skipped()), 40)
    given = presegmented("given", "Given", ["One given sentence.", "", "Another about Madrid."])
    return [*(Document(d["id"], d["title"], d["text"]) for d in SMALL_DOCS), *demo, given]


PROGRESS: dict[str, list[tuple[int, int]]] = {}  # each engine's progress reports, (documents, words) done


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same documents parsed by each engine (Ray once: it takes seconds to start)."""
    folders = {}
    for name, engine in (("local", Engine(n_process=1)), ("ray", Engine("ray", num_workers=2, batch_size=8))):
        folder = tmp_path_factory.mktemp(name)
        writer = ShardWriter(folder, {}, shard_documents=20)
        # one shard (its progress recorded), then more documents into the next ones
        seen = PROGRESS[name] = []
        parse_into(writer, documents()[:20], engine, lambda d, w, seen=seen: seen.append((d, w)))
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


def test_ray_reports_progress_per_batch_not_per_shard(parsed: dict[str, Path]) -> None:
    """20 documents, one shard: the local engine reports each document; Ray each batch of 3 as it comes back
    (2 workers, 4 batches each at most), never only once at the end."""
    local, ray_reports = PROGRESS["local"], PROGRESS["ray"]
    assert len(ray_reports) == 7 and [d for d, _ in ray_reports] == [3, 6, 9, 12, 15, 18, 20]
    assert ray_reports[-1] == local[-1]  # the same documents and words in the end
    assert all(a[1] < b[1] for a, b in itertools.pairwise(ray_reports))


def ray_workers() -> list[int]:
    """The pids of this machine's parsing actors (their process title names them)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if b"ray::Parser" in (proc / "cmdline").read_bytes():
                    pids.append(int(proc.name))
    return pids


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds Ray's workers through /proc (Linux)")
def test_a_worker_killed_mid_parse_is_retried_and_the_shards_are_the_same(
    parsed: dict[str, Path], tmp_path: Path
) -> None:
    """SIGKILL one of the actors as the first batch comes back: Ray restarts it and runs its batch again, and the
    shards are the local engine's, byte for byte (the kill is made, not assumed: the test fails without it)."""
    killed: list[int] = []

    def kill_once(_documents: int, _words: int) -> None:
        if not killed and (pids := ray_workers()):
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    writer = ShardWriter(tmp_path, {}, shard_documents=20)
    parse_into(writer, documents(), Engine("ray", num_workers=2, batch_size=8), kill_once)
    writer.finish(["test"])
    assert killed, "no Ray worker was found to kill"
    shards = [[s["sha256"] for s in read_shards_manifest(folder)["shards"]] for folder in (parsed["local"], tmp_path)]
    assert shards[0] == shards[1]
    assert not ray.is_initialized()


def poisoned(monkeypatch: pytest.MonkeyPatch, fail: Callable[[], None]) -> list[Document]:
    """The documents with one that makes ``fail`` happen in the parsing actor that gets it."""

    class Poisoned(ray_engine.Parser):  # defined here, so Ray ships the class itself to its workers
        def __call__(self, batch: pa.Table) -> pa.Table:
            if "poison" in batch.column("id").to_pylist():
                fail()
            return super().__call__(batch)

    monkeypatch.setattr(ray_engine, "parser_for",
                        lambda model, size: type("Parser", (Poisoned,), {"model": model, "batch_size": size}))
    docs = documents()
    docs[25] = Document("poison", "Poison", "A document the parser cannot survive.")
    return docs


def test_a_worker_that_dies_on_every_attempt_is_one_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Not Ray's default, retrying forever: a bounded number of restarts, then the documents of the batch named
    (batches of 3: the poisoned 26th document is the last of the documents 24-26)."""
    docs = poisoned(monkeypatch, lambda: os._exit(1))
    writer = ShardWriter(tmp_path, {}, shard_documents=20)
    with pytest.raises(SentretError, match=rf"a parsing worker died {ray_engine.RETRIES + 1} times on the same batch "
                                           rf"of the documents {docs[23].id!r} to {docs[25].id!r} \(killed, out of"):
        parse_into(writer, docs, Engine("ray", num_workers=2, batch_size=8))
    assert not ray.is_initialized()


def test_an_error_in_a_worker_is_one_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def fail() -> None:
        raise ValueError("spaCy could not cope\nwith this")

    docs = poisoned(monkeypatch, fail)
    with pytest.raises(SentretError, match=rf"parsing the documents {docs[23].id!r} to {docs[25].id!r} failed: "
                                           r"ValueError: spaCy could not cope$"):
        parse_into(ShardWriter(tmp_path, {}, shard_documents=20), docs, Engine("ray", num_workers=2, batch_size=8))
    assert not ray.is_initialized()


def test_the_workers_error_is_read_from_rays_traceback() -> None:
    wrapped = ("Traceback (most recent call last):\n  File \"p.py\", line 3, in __call__\n    fail()\n"
               "ValueError: spaCy could not cope\nwith this\n\n" + ray_engine._WRAPPED + "\n\n"
               "ray::MapWorker(...)\nray.exceptions.UserCodeException: UDF failed to process a data block.")
    assert ray_engine.worker_error(RuntimeError(wrapped)) == "ValueError: spaCy could not cope"
    assert ray_engine.worker_error(RuntimeError("Ray's own\nstory")) == "Ray's own"  # nothing wrapped: its first line


def test_without_ray_the_message_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(SentretError, match=r"--engine ray needs Ray: pip install 'sentret\[scale\]'"):
        parse_into(ShardWriter(tmp_path, {}), documents()[:2], Engine("ray"))


def test_an_unreachable_cluster_is_one_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(SentretError, match="cannot join the Ray cluster at --address auto"):
        parse_into(ShardWriter(tmp_path, {}), documents()[:2], Engine("ray", address="auto"))
    assert not ray.is_initialized()


def test_a_ray_client_address_is_refused_before_ray_starts(tmp_path: Path) -> None:
    """A ray:// address is refused before Ray starts, naming the HOST:PORT form to give instead."""
    with pytest.raises(SentretError, match=r"does not go through Ray Client \(ray://\); give the head node's"):
        parse_into(ShardWriter(tmp_path, {}), documents()[:2], Engine("ray", address="ray://head:10001"))
    assert not ray.is_initialized()


HERE = {"sentret": "0.1.0", "model": "m", "model_version": "3.8.0", "pipeline": ["tok2vec", "ner"],
        "spacy_version": "3.8.2", "normalisation": 2}


def test_node_differences_name_each_node_and_what_differs() -> None:
    reports = {
        "10.0.0.2 (aa)": dict(HERE),
        "10.0.0.3 (bb)": {**HERE, "sentret": "0.0.9", "model_version": "3.7.1"},
        "10.0.0.4 (cc)": {"error": "OSError: [E050] Can't find model 'm'"},
    }
    assert node_differences(HERE, reports) == [
        "node 10.0.0.3 (bb) has sentret '0.0.9' (here '0.1.0'), model_version '3.7.1' (here '3.8.0')",
        "node 10.0.0.4 (cc) cannot load it (OSError: [E050] Can't find model 'm')",
    ]
    assert node_differences(HERE, {"10.0.0.2 (aa)": dict(HERE)}) == []


def test_every_node_of_a_cluster_reports_what_it_parses_with() -> None:
    """On a one-node Ray: the node loads the pipeline and agrees with this machine; a driver that expects
    another version is refused in one message that names the node and the difference."""
    here = parses_with(pipeline_record(load_pipeline(DEFAULT_PIPELINE), DEFAULT_PIPELINE))
    ray.init(num_cpus=1, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        check_nodes(ray, DEFAULT_PIPELINE, here)  # the same: nothing to say
        with pytest.raises(SentretError) as refused:
            check_nodes(ray, DEFAULT_PIPELINE, {**here, "sentret": "0.0.1"})
    finally:
        ray.shutdown()
    message = str(refused.value)
    assert message.startswith("the Ray cluster's nodes would not all parse as this machine does: node ")
    assert f"has sentret {__version__!r} (here '0.0.1')" in message and "\n" not in message


def test_a_stopped_local_parse_is_gone_on_from_by_ray_into_the_same_shards(tmp_path: Path) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}) + "\n"
                              for d in documents()[:-1]), encoding="utf-8")

    def stop(done: int, words: int) -> None:
        if done > 25:
            raise KeyboardInterrupt  # as Ctrl-C would, after the first shard of 20

    with pytest.raises(KeyboardInterrupt):
        parse_source(source, tmp_path / "shards", engine=Engine(n_process=1), shard_documents=20, progress=stop)
    _, notes = parse_source(source, tmp_path / "shards", engine=Engine("ray", num_workers=2, batch_size=8),
                            shard_documents=20)
    assert any("its 20 documents were not parsed again" in note for note in notes)
    parse_source(source, tmp_path / "whole", engine=Engine(n_process=1), shard_documents=20)
    for name in ("manifest.json", "part-00000.parquet", "part-00001.parquet", "part-00002.parquet"):
        assert (tmp_path / "shards" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
