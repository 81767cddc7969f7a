"""Builds leave nothing behind: catchable signals clean up and reap spaCy's workers, SIGKILL's leftovers
are swept by the next build, a full disk is one message, and what the readers skipped is reported.

The signal tests run ``sentret index`` on a named pipe: the build reads a few documents, starts its
workers and then waits for more, so the signal always lands mid-build, whatever the machine's load.
Process ids are checked through /proc (Linux).
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sentret_core import Index, build_index
from sentret_core.errors import SentretError
from sentret_core.ingest import assemble, build, staging
from sentret_core.ingest.corpus import Document

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process ids are read from /proc")

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    {"id": str(i), "text": f"Pablo Picasso painted Guernica in {1930 + i}. Franco ruled Spain after the war."}
    for i in range(6)
]


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # state, ppid, ...


def children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else None
        if fields is not None and int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie has ended: it only waits for its parent to read its status)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def staging_folders(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".*.building-*"))


def wait_for(condition, what: str, proc: subprocess.Popen[bytes], seconds: float = 90) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert proc.poll() is None, f"the build ended early ({proc.returncode}) while waiting for {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _default_signals() -> None:
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # not inherited as ignored (nohup, `&`)
        signal.signal(signum, signal.SIG_DFL)


@pytest.fixture
def building(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], set[int]]]:
    """``sentret index`` with two spaCy workers, stalled mid-build on a named pipe; the build and its workers."""
    pipe = tmp_path / "docs.jsonl"
    os.mkfifo(pipe)
    command = [sys.executable, "-m", "sentret_core", "index", str(pipe), "--out", str(tmp_path / "idx"),
               "--n-process", "2", "--batch-size", "1"]
    with (tmp_path / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=_default_signals)
    fd, workers = -1, set()
    try:
        while fd < 0:  # opening a pipe's write end fails until the build opens the read end
            try:
                fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                assert exc.errno == errno.ENXIO and proc.poll() is None, (exc, proc.returncode)
                time.sleep(0.05)
        os.set_blocking(fd, True)
        # blank lines first: a reader that sniffs the first 8 KB in a separate open loses only those
        os.write(fd, b"\n" * 8192 + "".join(json.dumps(doc) + "\n" for doc in DOCS).encode())
        wait_for(lambda: len(children(proc.pid)) >= 2 and staging_folders(tmp_path), "workers and staging", proc)
        workers = children(proc.pid)
        yield proc, workers
    finally:
        if fd >= 0:
            os.close(fd)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in workers:  # on failure, never leave the build's workers running
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGHUP, -signal.SIGHUP),
                                               (signal.SIGINT, 130)], ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_mid_build_removes_the_staging_folder_and_reaps_the_workers(
    building: tuple[subprocess.Popen[bytes], set[int]], tmp_path: Path, signum: int, code: int
) -> None:
    proc, workers = building
    assert len(workers) >= 2 and staging_folders(tmp_path)
    proc.send_signal(signum)
    assert proc.wait(timeout=60) == code  # SIGTERM and SIGHUP end it as they would have; SIGINT says so
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in stderr
    assert staging_folders(tmp_path) == [] and not (tmp_path / "idx").exists()
    assert [pid for pid in workers if alive(pid)] == []


def test_after_sigkill_the_workers_die_and_the_next_build_sweeps_the_folder(
    building: tuple[subprocess.Popen[bytes], set[int]], tmp_path: Path, small_corpus: Path
) -> None:
    proc, workers = building
    [left] = staging_folders(tmp_path)
    proc.kill()  # no handler runs: the folder stays, and the workers lose their parent
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in workers if alive(pid)] == []
    assert staging_folders(tmp_path) == [left]

    live = tmp_path / ".running.building-live"  # a build still running: this process's
    live.mkdir()
    (live / staging.OWNER).write_text(json.dumps(_owner("live")))
    foreign = tmp_path / ".mine.building-by-hand"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("no owner file: not ours to judge")
    summary = build_index(small_corpus, tmp_path / "next", n_process=1)
    assert staging_folders(tmp_path) == sorted([live.name, foreign.name])
    assert summary.notes == (f"removed {tmp_path / left}, left behind by a build that is no longer running",)


def _owner(name: str, **changes: object) -> dict[str, object]:
    return {"kind": staging.MARKER, "build_id": name, **staging._me(), **changes}


def test_a_recycled_pid_or_another_host_is_judged_by_its_owner_record(tmp_path: Path) -> None:
    for name, owner in [("recycled", _owner("recycled", started=-1)),
                        ("elsewhere", _owner("elsewhere", pid=1 << 22, host="other")),
                        ("gone", _owner("gone", pid=1 << 22))]:
        folder = tmp_path / f".idx.building-{name}"
        folder.mkdir()
        (folder / staging.OWNER).write_text(json.dumps(owner))
    notes = staging.remove_stale(tmp_path)
    assert staging_folders(tmp_path) == [".idx.building-elsewhere"]
    assert len(notes) == 2


@pytest.mark.parametrize(
    "owner",
    [
        {"host": "HOST", "pid": 1 << 22},  # an owner record of the old kind, without sentret's marker
        {"kind": "something-else", "build_id": "abc", "host": "HOST", "pid": 1 << 22},
        {"kind": staging.MARKER, "build_id": "another-id", "host": "HOST", "pid": 1 << 22},
    ],
    ids=["no-marker", "other-marker", "other-build-id"],
)
def test_a_look_alike_of_a_staging_folder_is_never_swept(tmp_path: Path, owner: dict[str, object]) -> None:
    """A user's `.photos.building-abc` whose owner file names a process that is gone keeps its contents
    unless it carries sentret's marker *and* its own build id."""
    photos = tmp_path / ".photos.building-abc"
    photos.mkdir()
    (photos / "holiday.jpg").write_bytes(b"\xff\xd8 a photo")
    record = {key: socket.gethostname() if value == "HOST" else value for key, value in owner.items()}
    (photos / staging.OWNER).write_text(json.dumps(record))
    empty = tmp_path / ".old.building-xyz"  # empty, no owner file: not ours either
    empty.mkdir()
    os.utime(empty, (0, 0))
    assert staging.remove_stale(tmp_path) == []
    assert (photos / "holiday.jpg").read_bytes() == b"\xff\xd8 a photo" and empty.is_dir()


@pytest.mark.parametrize(
    "error",
    [OSError(errno.ENOSPC, "No space left on device"), OSError("IOError: [Errno 28] No space left on device")],
    ids=["errno", "pyarrow"],
)
def test_a_full_disk_is_one_message_naming_the_folder(
    tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    out = tmp_path / "idx"
    build_index(small_corpus, out, n_process=1)
    before = (out / "manifest.json").read_text()

    def fill_the_disk(folder: Path, name: str, *args: object, **kwargs: object) -> None:
        (folder / f"{name}.partial").write_bytes(b"x" * 5000)
        raise error

    monkeypatch.setattr(assemble, "save_table", fill_the_disk)
    with pytest.raises(SentretError) as caught:
        build_index(small_corpus, out, n_process=1, force=True)
    message = str(caught.value)
    assert message.startswith(f"{out}: the disk is full (") and f"free in {tmp_path})" in message
    assert "the build had written" in message and "existing index is unchanged" in message
    assert staging_folders(tmp_path) == [] and (out / "manifest.json").read_text() == before


def test_what_the_reader_skipped_is_reported_by_the_build_and_the_cli(tmp_path: Path) -> None:
    table = tmp_path / "docs.csv"
    table.write_text("id,title,text\n1,One,Picasso painted Guernica.\n2,Two,\n", encoding="utf-8")
    summary = build_index(table, tmp_path / "idx", n_process=1)
    assert summary.notes == (f"{table}: skipped 1 record without text (line 3)",)
    assert Index.load(tmp_path / "idx").D == 1
    run = subprocess.run([sys.executable, "-m", "sentret_core", "index", str(table), "--out", str(tmp_path / "cli")],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"sentret: note: {table}: skipped 1 record without text (line 3)" in run.stderr


def test_build_from_documents_reports_no_notes_when_nothing_was_skipped(tmp_path: Path) -> None:
    docs = [Document("a", "A", "Picasso painted Guernica in 1937.")]
    assert build.build_from_documents(docs, tmp_path / "idx", source="test", n_process=1).notes == ()
