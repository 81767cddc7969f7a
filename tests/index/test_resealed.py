"""Resealed hostile indexes: hostile content behind a consistent manifest (every checksum
rewritten), so only the checks on what the files *are* can catch it. Each case runs in a forked
child with a timeout: no signal, no hang, one clear SentretError, and ``verify`` reports it.

The cases: a manifest naming ``/dev/zero``, ``../`` paths, a symlink out of the folder or a FIFO;
a manifest nested 100,000 deep or larger than a manifest may be; shards replaced by a valid Parquet
file of another schema, or whose text column holds integers; a model that is not a spaCy pipeline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sentret_core import Index, score, top_k
from sentret_core.cli.main import main
from sentret_core.errors import IndexFormatError, SentretError
from sentret_core.index import validate
from sentret_core.index.blocks import block_digests
from sentret_core.index.reader import verify
from sentret_core.index.validate import canonical_checksum, sha256_of
from sentret_core.ingest.build import add_documents, build_from_shards
from sentret_core.models.arrays.postings import postings
from tests.index.conftest import term_in_block

TIMEOUT = 60.0
RESEALED = Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_resealed.py"


def in_child(job: Callable[[], object], timeout: float = TIMEOUT) -> tuple[str, str]:
    """``job`` in a forked child: ("ok" | "SentretError" | "raw" | "signal" | "timeout", message)."""
    with tempfile.NamedTemporaryFile(prefix="resealed-", suffix=".json", delete=False) as out:
        pass
    pid = os.fork()
    if pid == 0:
        kind, message = "raw", ""
        try:
            job()
            kind = "ok"
        except SentretError as err:
            kind, message = "SentretError", str(err)
        except BaseException as err:
            kind, message = "raw", f"{type(err).__name__}: {str(err)[:300]}"
        finally:
            Path(out.name).write_text(json.dumps([kind, message]))
            os._exit(0)
    deadline = time.monotonic() + timeout
    while not (done := os.waitpid(pid, os.WNOHANG))[0]:
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.unlink(out.name)
            return "timeout", ""
        time.sleep(0.01)
    text = Path(out.name).read_text()
    os.unlink(out.name)
    if os.WIFSIGNALED(done[1]):
        return "signal", f"signal {os.WTERMSIG(done[1])}"
    kind, message = json.loads(text)
    return kind, message


def reseal_index(path: Path, change: Callable[[dict[str, Any]], None] | None = None, *, blocks: bool = True) -> None:
    """Apply ``change`` to the index manifest, record every listed file's current sha256 and size
    (those a hash would never finish are kept as they are), and its blocks' (unless not ``blocks``), and
    rewrite its own checksum."""
    manifest = json.loads((path / "manifest.json").read_text())
    if change is not None:
        change(manifest)
    for name in manifest["files"]:
        file = path / name
        if file.is_file() and file.resolve().is_relative_to(path.resolve()):
            manifest["files"][name] = sha256_of(file)
            manifest["sizes"][name] = file.stat().st_size
            if blocks and name in manifest.get("blocks", {}).get("sha256", {}):
                manifest["blocks"]["sha256"][name] = block_digests(file, manifest["blocks"]["bytes"])
    manifest.pop("checksum")
    manifest["checksum"] = canonical_checksum(manifest)
    (path / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))


def reseal_shards(path: Path, change: Callable[[dict[str, Any]], None] | None = None) -> None:
    """The same for the index's ``shards/manifest.json``, then the index manifest that records it."""
    folder = path / "shards"
    manifest = json.loads((folder / "manifest.json").read_text())
    if change is not None:
        change(manifest)
    for shard in manifest["shards"]:
        file = folder / shard["file"]
        if file.is_file() and file.resolve().is_relative_to(folder.resolve()):
            shard["sha256"], shard["size"] = sha256_of(file), file.stat().st_size
    manifest.pop("checksum")
    manifest["checksum"] = canonical_checksum(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    reseal_index(path)


@pytest.fixture
def copy(small_index: Index, tmp_path: Path) -> Path:
    target = tmp_path / "idx"
    shutil.copytree(small_index.path, target, ignore=shutil.ignore_patterns(".lock"))
    return target


def load_and_query(path: Path) -> Callable[[], object]:
    def job() -> object:
        index = Index.load(path, verify=True)
        return top_k(score(index, "Picasso peace", "bm25f.v1"), 3)

    return job


def assert_refused(path: Path, job: Callable[[], object], *messages: str) -> None:
    """``job`` gives one clear SentretError naming ``messages``, and ``verify`` (in a child too) says so."""
    kind, message = in_child(job)
    assert kind == "SentretError", (kind, message)
    for text in messages:
        assert text in message, (text, message)
    found: list[str] = []

    def verify_job() -> None:
        found.extend(verify(path))
        if found:
            raise SentretError("; ".join(found))

    kind, message = in_child(verify_job)
    assert kind == "SentretError", (kind, message)  # verify reported a problem (or refused the folder)
    for text in messages:
        assert text in message, (text, message)
    assert in_child(lambda: main(["verify", str(path)]))[0] == "ok"  # the command reports, no traceback


# --- item 1: files a manifest names are regular files inside the folder ----------------------------


@pytest.mark.parametrize("name", ["/dev/zero", "../../../../dev/zero", "sub/../../x.npy"])
def test_a_manifest_naming_a_file_outside_the_folder_is_refused(copy: Path, name: str) -> None:
    reseal_index(copy, lambda m: m["files"].update({name: "0" * 64}))
    assert_refused(copy, load_and_query(copy), "names a file outside the folder")


def test_a_listed_symlink_out_of_the_folder_or_a_fifo_is_refused(copy: Path) -> None:
    (copy / "zero.npy").symlink_to("/dev/zero")
    reseal_index(copy, lambda m: m["files"].update({"zero.npy": "0" * 64}))
    assert_refused(copy, load_and_query(copy), "'zero.npy' is a link to a file outside the folder")
    (copy / "zero.npy").unlink()
    os.mkfifo(copy / "zero.npy")  # a FIFO inside the folder: opening it would block forever
    assert_refused(copy, load_and_query(copy), "'zero.npy' is not a regular file")


def test_a_listed_array_that_is_a_symlink_to_dev_zero_is_refused(copy: Path) -> None:
    (copy / "sent_start.npy").unlink()
    (copy / "sent_start.npy").symlink_to("/dev/zero")
    assert_refused(copy, load_and_query(copy), "'sent_start.npy' is a link to a file outside the folder")


def test_a_deeply_nested_or_huge_manifest_is_refused(copy: Path) -> None:
    depth = 100_000  # Python's JSON parser recurses: RecursionError without a depth limit
    (copy / "manifest.json").write_text("[" * depth + "]" * depth)
    assert_refused(copy, load_and_query(copy), "manifest.json nests 100,000 levels deep")
    with (copy / "manifest.json").open("wb") as handle:  # 17 MiB of spaces: never read
        handle.truncate(17 * 1024 * 1024)
    assert_refused(copy, load_and_query(copy), "manifest.json is 17,825,792 bytes, more than the 16,777,216")


def test_a_size_that_is_not_a_byte_count_is_refused(copy: Path) -> None:
    """A resealed manifest whose ``sizes`` value is a string ended `sentret verify` in an internal error."""

    def text_size(manifest: dict[str, Any]) -> None:
        manifest["sizes"]["sent_start.npy"] = "lots"
        manifest.pop("checksum")
        manifest["checksum"] = canonical_checksum(manifest)

    reseal_index(copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    text_size(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    assert_refused(copy, load_and_query(copy), "sizes is not a record of byte counts")


def test_a_resealed_manifest_with_a_deep_field_is_refused(copy: Path) -> None:
    deep: Any = 0
    for _ in range(500):
        deep = [deep]
    reseal_index(copy, lambda m: m.update(source=deep))
    assert_refused(copy, load_and_query(copy), "manifest.json nests 501 levels deep")


def test_a_shards_manifest_naming_dev_zero_is_refused_by_verify_and_the_build(copy: Path, tmp_path: Path) -> None:
    def change(manifest: dict[str, Any]) -> None:
        manifest["shards"][0]["file"] = "../../../../dev/zero"

    reseal_shards(copy, change)
    job = lambda: build_from_shards(copy / "shards", tmp_path / "out")  # noqa: E731
    assert_refused(copy, job, "'../../../../dev/zero' names a file outside the folder")
    assert not (tmp_path / "out").exists()


# --- item 2: shard schemas are checked before use --------------------------------------------------


def _replace_shard(copy: Path, table: pa.Table) -> None:
    shard = copy / "shards" / "part-00000.parquet"
    pq.write_table(table, shard)
    reseal_shards(copy)


def test_a_shard_of_another_schema_is_refused_by_verify_and_the_build(copy: Path, tmp_path: Path) -> None:
    _replace_shard(copy, pa.table({"ordinal": [0, 1, 2], "id": ["a", "b", "c"], "other": [1.5, 2.5, 3.5]}))
    job = lambda: build_from_shards(copy / "shards", tmp_path / "out")  # noqa: E731
    assert_refused(copy, job, "part-00000.parquet is not a shard of sentret (its columns differ: title")
    assert not (tmp_path / "out").exists()
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "x", "title": "X", "text": "Picasso painted."}) + "\n")
    before = sorted((p.name, p.stat().st_size) for p in copy.rglob("*"))
    kind, message = in_child(lambda: add_documents(copy, new))  # `sentret add`
    assert kind == "SentretError" and "part-00000.parquet is not a shard of sentret" in message, (kind, message)
    assert message.startswith(f"{copy / 'shards'}: ") and ".building-" not in message  # the user's folder
    assert sorted((p.name, p.stat().st_size) for p in copy.rglob("*")) == before
    assert main(["verify", str(copy)]) == 1


def test_a_shard_whose_text_column_holds_ints_is_refused(copy: Path, tmp_path: Path) -> None:
    table = pq.read_table(copy / "shards" / "part-00000.parquet")
    table = table.set_column(table.schema.get_field_index("title"), "title", pa.array([1, 2, 3], pa.int64()))
    _replace_shard(copy, table)
    job = lambda: build_from_shards(copy / "shards", tmp_path / "out")  # noqa: E731
    assert_refused(copy, job, "its columns differ: title")


def test_a_shard_with_a_null_sentence_text_is_refused_by_the_build(copy: Path, tmp_path: Path) -> None:
    rows = pq.read_table(copy / "shards" / "part-00000.parquet").to_pylist()
    rows[0]["sentences"][0]["text"] = None  # the schema allows a null; no shard sentret writes has one
    from sentret_core.ingest.shards import SCHEMA

    _replace_shard(copy, pa.Table.from_pylist(rows, schema=SCHEMA))
    kind, message = in_child(lambda: build_from_shards(copy / "shards", tmp_path / "out"))
    assert kind == "SentretError" and "holds a null in sentences.text" in message, (kind, message)


# --- item 3: the spaCy model a manifest names is a spaCy pipeline ----------------------------------


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("numpy", "its spaCy model 'numpy' is an installed package but not a spaCy pipeline"),
        ("../../elsewhere", "its spaCy model '../../elsewhere' is not a folder holding a spaCy pipeline"),
    ],
)
def test_a_model_that_is_not_a_spacy_pipeline_is_refused(copy: Path, model: str, says: str) -> None:
    reseal_index(copy, lambda m: m.update(model=model))
    assert_refused(copy, load_and_query(copy), says)


def test_a_shards_manifest_naming_a_non_pipeline_model_is_refused_before_spacy_loads_it(
    copy: Path, tmp_path: Path
) -> None:
    reseal_shards(copy, lambda m: m["pipeline"].update(model="numpy"))
    with pytest.raises(SentretError, match="'numpy' is an installed package but not a spaCy pipeline"):
        build_from_shards(copy / "shards", tmp_path / "out")
    assert [p for p in verify(copy) if "not a spaCy pipeline" in p]


# --- what a load reads: O(1) values of each file; the whole-array checks come at first use ---------------


def test_a_load_reads_no_array_whole_and_an_array_out_of_bounds_is_refused_at_its_first_use(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold load costs the same at any size: bounds and order are checked when an array is first used,
    before anything indexes with it; a resealed index whose postings point past the last sentence is
    refused there, by the query, and by verify."""
    postings = np.load(copy / "XT.indices.npy")
    postings[len(postings) // 2] = 1_000_000  # past the last sentence; the sha256 is resealed below
    np.save(copy / "XT.indices.npy", postings)
    reseal_index(copy)
    whole: list[str] = []
    check = validate.check_array
    monkeypatch.setattr(validate, "check_array", lambda *args: (whole.append(args[-1]), check(*args))[1])
    index = Index.load(copy)
    assert whole == []  # nothing read whole at load
    kind, message = in_child(lambda: top_k(score(Index.load(copy), "Picasso peace", "bm25.v1"), 3))
    assert kind == "SentretError" and "XT.indices.npy holds values outside 0…" in message, (kind, message)
    assert "run `sentret verify" in message
    assert any("XT.indices.npy holds values outside" in problem for problem in verify(copy))
    del index


def test_a_value_out_of_bounds_in_one_block_of_the_postings_is_refused_where_read(
    blocked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resealed (block digests too): only the check of the block's values can see it, when a slice first
    reads that block; the array is never checked whole for it, and the other blocks are served."""
    copy = tmp_path / "idx"
    shutil.copytree(blocked, copy)
    index = Index.load(copy)
    damaged, lo, _ = term_in_block(index, 2)
    elsewhere = term_in_block(index, 5, last=True)[0]
    values = np.load(copy / "XT.indices.npy")
    offset = validate.npy_header(copy, "XT.indices.npy")[2]
    values[(lo - offset) // 4 + 1] = 1_000_000  # past the last sentence, inside the damaged term's postings
    np.save(copy / "XT.indices.npy", values)
    reseal_index(copy)
    whole: list[str] = []
    check = validate.check_array
    monkeypatch.setattr(validate, "check_array", lambda *args: (whole.append(args[-1]), check(*args))[1])
    index = Index.load(copy)
    rows, _ = postings(index)(elsewhere)
    assert len(rows) > 1 and "XT.indices" not in whole
    words = [index.vocab[damaged], index.vocab[elsewhere]]
    for model in ("bm25.v1", "lm-2si.v1", "tfisf.v1"):
        kind, message = in_child(lambda m=model: top_k(score(Index.load(copy), words, m), 3))
        assert kind == "SentretError" and "XT.indices.npy holds values outside 0…" in message, (model, message)
        assert "run `sentret verify" in message
    assert any("XT.indices.npy holds values outside" in problem for problem in verify(copy))


def test_the_intact_copy_passes(copy: Path) -> None:
    reseal_index(copy)
    reseal_shards(copy)
    assert verify(copy) == []
    assert in_child(load_and_query(copy))[0] == "ok"


def test_index_load_and_verify_of_none_raise_the_projects_error() -> None:
    for bad in (None, 3, b"idx", "", " "):
        with pytest.raises(IndexFormatError, match="an index is named by the path of its folder"):
            Index.load(bad)  # type: ignore[arg-type]
        with pytest.raises(IndexFormatError, match="an index is named by the path of its folder"):
            verify(bad)  # type: ignore[arg-type]


def test_the_resealed_benchmark_finds_no_signal_hang_traceback_or_wrong(small_index: Index, tmp_path: Path) -> None:
    """benchmarks/hostile_resealed.py: manifests, shards, artefacts and rankers."""
    out = tmp_path / "cases.json"
    done = subprocess.run(
        [sys.executable, str(RESEALED), "--index", str(small_index.path), "--quiet",
         "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    cases = json.loads(out.read_text())
    assert len(cases) == 13 + 7 + 10 + 15
    for case in cases:
        where = f"{case['group']} / {case['case']}: {case['outcome']} {case['message']}"
        if case["group"] == "rankers":  # each crafted text refused before LightGBM parses it
            assert case["outcome"] == ("identical" if case["case"] == "intact" else "clear error"), where
            continue
        # a hostile shards manifest leaves the index itself usable; verify reports every case
        assert case["outcome"] in ("clear error", "identical"), where
        assert case["outcome"] == "clear error" or case["case"].startswith("shards "), where  # not rebuilt
        assert case["verify"] == "reports", where
