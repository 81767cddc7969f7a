"""A parse that stopped partway goes on where it stopped: `sentret parse` run again parses only the
documents its finished shards do not hold, and writes the same bytes as a parse that never stopped."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sentret_core.errors import SentretError
from sentret_core.ingest import staging
from sentret_core.ingest.build import parse_source
from sentret_core.ingest.engine import Engine
from sentret_core.ingest.resume import KIND, partial_folder

ROOT = Path(__file__).resolve().parents[2]
ENGINE = Engine(n_process=1)
PER_SHARD = 3
TOWNS = ["Paris", "Lyon", "Nantes", "Lille", "Nice", "Rennes", "Dijon", "Brest", "Metz", "Caen", "Tours"]


class Stop(Exception):
    """A failure partway through a parse (a crashed worker, a full disk, a bug)."""


def write_source(path: Path, towns: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for i, town in enumerate(towns):
            text = f"{town} is a town in France. Its mayor met the press in {town} on Monday."
            out.write(json.dumps({"id": f"d{i}", "title": town, "text": text}) + "\n")
    return path


def stop_after(documents: int):
    def progress(done: int, words: int) -> None:
        if done > documents:
            raise Stop(f"stopped after {documents} documents")

    return progress


def counted(seen: list[int]):
    return lambda done, words: seen.append(done)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {file.name: file.read_bytes() for file in sorted(folder.iterdir())}


@pytest.fixture()
def source(tmp_path: Path) -> Path:
    return write_source(tmp_path / "towns.jsonl", TOWNS)


@pytest.fixture()
def whole(tmp_path: Path, source: Path) -> dict[str, bytes]:
    """The shards of a parse that never stopped."""
    parse_source(source, tmp_path / "whole", engine=ENGINE, shard_documents=PER_SHARD)
    return folder_bytes(tmp_path / "whole")


def test_a_failed_parse_keeps_its_shards_and_the_same_command_parses_only_the_rest(
    tmp_path: Path, source: Path, whole: dict[str, bytes], caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "shards"
    with caplog.at_level(logging.WARNING), pytest.raises(Stop):
        parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD, progress=stop_after(7))
    assert not out.exists()
    partial = partial_folder(out)
    kept = json.loads((partial / "manifest.json").read_text())
    assert [s["file"] for s in kept["shards"]] == ["part-00000.parquet", "part-00001.parquet"]  # 6 of 7 done
    assert "the 6 documents parsed so far are kept in" in caplog.text

    seen: list[int] = []
    manifest, notes = parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD, progress=counted(seen))
    assert len(seen) == len(TOWNS) - 6  # the first two shards' documents were not parsed again…
    assert (min(seen), max(seen)) == (7, len(TOWNS))  # …and the progress goes on from them
    assert any("went on from the stopped parse" in note and "its 6 documents" in note for note in notes)
    assert folder_bytes(out) == whole  # shards and manifest, byte for byte
    assert not partial.exists() and manifest["counts"]["documents"] == len(TOWNS)


def test_a_parse_killed_outright_goes_on_and_drops_what_it_left_half_written(
    tmp_path: Path, source: Path, whole: dict[str, bytes]
) -> None:
    out = tmp_path / "shards"
    script = (
        "import sys, time\n"
        "from sentret_core.ingest.build import parse_source\n"
        "from sentret_core.ingest.engine import Engine\n"
        "def slow(done, words):\n"
        "    time.sleep(0.3)\n"
        f"parse_source({str(source)!r}, {str(out)!r}, engine=Engine(n_process=1), shard_documents={PER_SHARD},"
        " progress=slow)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    manifest = partial_folder(out) / "manifest.json"
    try:
        deadline = time.monotonic() + 120
        while not (manifest.exists() and len(json.loads(manifest.read_text())["shards"]) >= 1):
            assert child.poll() is None and time.monotonic() < deadline, "the parse ended before its first shard"
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    (partial_folder(out) / "part-00007.parquet").write_bytes(b"PAR1 half a shard")  # as a kill mid-write leaves
    _, notes = parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD)
    assert any("went on from the stopped parse" in note for note in notes)
    assert folder_bytes(out) == whole


def test_a_parse_still_writing_the_folder_is_not_disturbed(tmp_path: Path, source: Path) -> None:
    out = tmp_path / "shards"
    folder = partial_folder(out)
    folder.mkdir()
    sleeper = subprocess.Popen(["sleep", "60"])  # stands for the other parse: a live process
    try:
        owner = {"kind": KIND, "host": socket.gethostname(), "pid": sleeper.pid,
                 "started": staging._start_time(sleeper.pid)}
        (folder / staging.OWNER).write_text(json.dumps(owner))
        with pytest.raises(SentretError, match=rf"another sentret parse \(pid {sleeper.pid}\) is writing it"):
            parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert json.loads((folder / staging.OWNER).read_text()) == owner and not out.exists()


def test_a_stopped_parse_of_a_source_that_changed_since_is_discarded(tmp_path: Path, source: Path) -> None:
    out = tmp_path / "shards"
    with pytest.raises(Stop):
        parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD, progress=stop_after(4))
    write_source(source, [*TOWNS, "Pau"])  # one more document: size and time differ
    manifest, notes = parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD)
    assert any("discarded the stopped parse" in note and "files" in note for note in notes)
    expected = tmp_path / "expected"
    parse_source(source, expected, engine=ENGINE, shard_documents=PER_SHARD)
    assert folder_bytes(out) == folder_bytes(expected) and manifest["counts"]["documents"] == len(TOWNS) + 1


def test_a_source_changed_under_the_same_size_and_time_is_refused_naming_the_folder(
    tmp_path: Path, source: Path
) -> None:
    out = tmp_path / "shards"
    with pytest.raises(Stop):
        parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD, progress=stop_after(4))
    stat = source.stat()
    lines = source.read_text().splitlines(keepends=True)
    lines[2], lines[3] = lines[3], lines[2]  # the last document the stopped parse holds, and the next, swapped
    source.write_text("".join(lines))
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert source.stat().st_size == stat.st_size
    with pytest.raises(SentretError, match=r"its document 3 is 'd3', where the stopped parse in .* read 'd2'") as err:
        parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD)
    assert str(partial_folder(out)) in str(err.value) and partial_folder(out).exists()  # kept: nothing is lost


def test_a_kept_document_edited_under_the_same_size_and_time_is_refused(tmp_path: Path, source: Path) -> None:
    """The last kept document's id is where it was, but an earlier one's text changed: the digest of the kept
    documents finds it, so no shard keeps the old text (it was kept before: the ids alone agreed)."""
    out = tmp_path / "shards"
    with pytest.raises(Stop):
        parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD, progress=stop_after(4))
    stat = source.stat()
    source.write_text(source.read_text().replace("Lyon is a town", "Lyon is a city", 1))  # document 2 of 3 kept
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert source.stat().st_size == stat.st_size
    with pytest.raises(SentretError, match=r"one of its first 3 documents, which the stopped parse in .* kept, "
                                           r"was edited since"):
        parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD)
    assert partial_folder(out).exists()  # kept: nothing is lost, nothing parsed from the old text


def test_a_damaged_shard_is_never_kept(tmp_path: Path, source: Path, whole: dict[str, bytes]) -> None:
    out = tmp_path / "shards"
    with pytest.raises(Stop):
        parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD, progress=stop_after(7))
    shard = partial_folder(out) / "part-00001.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    _, notes = parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD)
    assert any("discarded the stopped parse" in note and "checksum mismatch" in note for note in notes)
    assert folder_bytes(out) == whole


def test_a_folder_in_the_way_that_is_not_a_stopped_parse_is_left_alone(tmp_path: Path, source: Path) -> None:
    out = tmp_path / "shards"
    mine = partial_folder(out)
    mine.mkdir()
    (mine / "notes.txt").write_text("my own notes")
    with pytest.raises(SentretError, match="is in the way"):
        parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD)
    assert (mine / "notes.txt").read_text() == "my own notes" and not out.exists()


def test_a_parse_that_fails_before_its_first_shard_leaves_nothing(tmp_path: Path, source: Path) -> None:
    out = tmp_path / "shards"
    with pytest.raises(Stop):
        parse_source(source, out, engine=ENGINE, shard_documents=PER_SHARD, progress=stop_after(1))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["towns.jsonl"]


def test_sentret_parse_interrupted_says_what_it_kept_and_goes_on_when_run_again(tmp_path: Path) -> None:
    source = write_source(tmp_path / "many.jsonl", [f"{town}{i}" for i in range(40) for town in TOWNS[:5]])
    out = tmp_path / "shards"
    command = [sys.executable, "-m", "sentret_core.cli.main", "parse", str(source), "--out", str(out),
               "--n-process", "1", "--shard-documents", "5"]
    # Ctrl-C's SIGINT as a terminal sends it: a job started in the background (`make test &`, CI) ignores it
    child = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    manifest = partial_folder(out) / "manifest.json"
    deadline = time.monotonic() + 120
    while not (manifest.exists() and len(json.loads(manifest.read_text())["shards"]) >= 2):
        assert child.poll() is None and time.monotonic() < deadline, "the parse ended before its second shard"
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode != 0 and not out.exists()
    assert "documents parsed so far are kept in" in stderr and "the same command goes on from there" in stderr

    again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "going on from the stopped parse" in again.stderr and "went on from the stopped parse" in again.stderr
    expected = tmp_path / "expected"
    parse_source(source, expected, engine=ENGINE, shard_documents=5)
    assert folder_bytes(out) == folder_bytes(expected)
