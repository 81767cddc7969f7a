"""Reading the judgments store without the write lock, a busy timeout as one message, read-only files.

Export and agreement open the store read-only (``mode=ro``, ``query_only``): they run while another
process holds the write lock, and they read a file (or a folder) the user may not write. Root ignores
file permissions, so when the tests run as root the reading process drops CAP_DAC_OVERRIDE first.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sentret_core.annotation.records import ADMIN_TOKEN_ENV, PoolItem, PoolSettings
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import topic_id

TOKEN = "store-access-token"
ROOT = Path(__file__).resolve().parents[2]
QRELS = f"{topic_id('q', 'e')} 0 7 3\n{topic_id('q', 'e')} 0 8 1\n"  # grades 4 and 2 on the trec scale
SECRET = "ann-passphrase"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A closed database (its WAL checkpointed into the file) with one annotator's two grades."""
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    path = tmp_path / "judgments.sqlite"
    items = [PoolItem("q", "e", 7, "seven"), PoolItem("q", "e", 8, "eight")]
    with JudgmentStore(path) as store:
        store.create_session("s", "/idx", items, PoolSettings(("m",), 10, 0))
        store.admin(TOKEN).add_annotator("s", "ann", SECRET)
        handle = store.sign_in("s", "ann", SECRET)
        handle.grade(1, 4)
        handle.grade(2, 2)
    assert not path.with_name(path.name + "-wal").exists()
    return path


def _no_permission_override() -> None:
    """In the child, before exec: give up root's right to ignore file permissions (prctl CAPBSET_DROP)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def sentret(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """``sentret ARGS`` in its own process, subject to file permissions even when we are root."""
    env = {**os.environ, ADMIN_TOKEN_ENV: TOKEN}
    drop = _no_permission_override if os.geteuid() == 0 else None
    return subprocess.run(
        [sys.executable, "-m", "sentret_core", *args], capture_output=True, text=True, env=env,
        cwd=ROOT, timeout=timeout, preexec_fn=drop,
    )


@contextmanager
def lock_held(path: Path, *statements: str) -> Iterator[None]:
    """Another process runs ``statements`` on ``path`` and keeps its transaction open until we are done."""
    script = (
        "import sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "for statement in sys.argv[2:]:\n"
        "    conn.execute(statement)\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(path), *statements],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)


# the holder keeps its lock until the command is done: a command that waited for it would never end. So the
# limit only guards against that hang; it is no measure of speed (a loaded machine takes seconds to start one)
LOCK_GUARD_S = 300


@pytest.mark.parametrize("begin", ["BEGIN IMMEDIATE", "BEGIN EXCLUSIVE"])
def test_export_and_agreement_run_while_another_process_holds_the_write_lock(db: Path, begin: str) -> None:
    with lock_held(db, begin, "INSERT INTO skips (session_id, item_id, annotator_id, at) VALUES (1, 1, 1, 'now')"):
        exported = sentret("judgments", "export", str(db), "--session", "s", "--format", "qrels", "--ids", "internal",
                           timeout=LOCK_GUARD_S)
        assert (exported.returncode, exported.stdout) == (0, QRELS), exported.stderr
        agreement = sentret("judgments", "agreement", str(db), "--session", "s", "--json", timeout=LOCK_GUARD_S)
        assert agreement.returncode == 0 and '"items": 2' in agreement.stdout, agreement.stderr


def test_a_lock_held_too_long_is_one_message_not_a_traceback(db: Path) -> None:
    # in exclusive locking mode the holder keeps even readers out: the reader's timeout runs out
    with lock_held(db, "PRAGMA locking_mode = EXCLUSIVE", "BEGIN EXCLUSIVE"):
        for read_only in (True, False):
            with pytest.raises(SentretError, match=r"judgments\.sqlite: the judgments database is busy.*0\.3 s"):
                JudgmentStore(db, read_only=read_only, timeout=0.3)
    # an ordinary writer: opening needs no lock, a write waits and then gives up
    busy = pytest.raises(SentretError, match="busy: another process has held its lock")
    with JudgmentStore(db, timeout=0.3) as store:
        handle = store.sign_in("s", "ann", SECRET)
        with lock_held(db, "BEGIN IMMEDIATE"):
            with busy:
                handle.grade(1, 1)
            with busy:  # signing in counts the attempt in the database first: it writes
                store.sign_in("s", "ann", SECRET)
    with JudgmentStore(db, read_only=True) as store:
        assert store.admin(TOKEN).export_qrels("s", ids="internal") == QRELS  # nothing was lost or changed


def read_only_copy(db: Path, folder: Path) -> Path:
    folder.mkdir()
    copy = folder / db.name
    shutil.copyfile(db, copy)
    copy.chmod(0o444)
    return copy


def test_a_read_only_copy_exports_and_refuses_writes_with_the_right_message(db: Path, tmp_path: Path) -> None:
    copy = read_only_copy(db, tmp_path / "copy")
    exported = sentret("judgments", "export", str(copy), "--session", "s", "--format", "qrels", "--ids", "internal")
    assert (exported.returncode, exported.stdout) == (0, QRELS), exported.stderr
    qrels = tmp_path / "more.qrels"
    qrels.write_text(f"{topic_id('q', 'e')} 0 7 1\n")
    imported = sentret("judgments", "import", str(copy), "--session", "s", "--format", "qrels", str(qrels),
                       "--annotator", "gold")
    assert imported.returncode == 2 and "Traceback" not in imported.stderr
    assert "the file is read-only" in imported.stderr and "not a judgments database" not in imported.stderr
    assert copy.read_bytes() == db.read_bytes()


def test_a_read_only_copy_in_a_read_only_folder_exports(db: Path, tmp_path: Path) -> None:
    copy = read_only_copy(db, tmp_path / "archive")
    copy.parent.chmod(0o555)  # SQLite cannot create the -shm file beside it
    try:
        exported = sentret("judgments", "export", str(copy), "--session", "s", "--format", "csv")
        assert exported.returncode == 0, exported.stderr
        assert exported.stdout.count("\n") == 3 and ",ann," in exported.stdout
        imported = sentret("judgments", "import", str(copy), "--session", "s", "--format", "jsonl", "-")
        assert imported.returncode == 2 and "Traceback" not in imported.stderr
        assert "folder is read-only" in imported.stderr and "not a judgments database" not in imported.stderr
        assert sorted(p.name for p in copy.parent.iterdir()) == [copy.name]
    finally:
        copy.parent.chmod(0o755)


def test_read_only_opening_refuses_what_it_cannot_read(db: Path, tmp_path: Path) -> None:
    with JudgmentStore(db, read_only=True) as store:
        with pytest.raises(SentretError, match="opened read-only"):
            store.admin(TOKEN).close_session("s")
        handle = store.sign_in("s", "ann", SECRET)  # signing in only reads
        with pytest.raises(SentretError, match="opened read-only"):
            handle.grade(1, 1)
    with pytest.raises(SentretError, match="no judgments database at"):
        JudgmentStore(tmp_path / "missing.sqlite", read_only=True)
    assert not (tmp_path / "missing.sqlite").exists()
    text = tmp_path / "notes.txt"
    text.write_text("not a database " * 100)
    with pytest.raises(SentretError, match="not a judgments database"):
        JudgmentStore(text, read_only=True)
    old = tmp_path / "v1.sqlite"
    with sqlite3.connect(old) as conn:
        conn.execute("CREATE TABLE sessions (id INTEGER PRIMARY KEY)")
        conn.execute("PRAGMA user_version = 1")
    with pytest.raises(SentretError, match=r"older than this sentret's.*to upgrade it"):
        JudgmentStore(old, read_only=True)
