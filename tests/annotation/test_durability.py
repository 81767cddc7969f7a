"""Durability under concurrent writers and SIGKILL; isolation between annotators; bad input.

The concurrency test starts 8 processes that each grade 1,000 items as a different annotator in
one database file, kills 3 of them with SIGKILL part-way, and then checks that every grade whose
``grade()`` call had returned (the worker logs it, fsynced, only after the call returns) is in
the database exactly once, that ``PRAGMA integrity_check`` says ``ok`` and that the history
agrees with the judgments. Run with ``-s`` to see the numbers.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.annotator import AnnotatorHandle
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, PoolItem, PoolSettings, Progress
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.throttle import SignInThrottle
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import topic_id

PROCESSES = 8
GRADES = 1_000
KILLED = 3
SESSION = "durability"
PASSPHRASE = "correct horse"
TOKEN = "durability-admin-token"


def _worker(db: str, log: str, annotator: str, seed: int) -> None:
    """Grade every item in the session's order; log each sentence id after grade() returns."""
    rng = random.Random(seed)
    with JudgmentStore(db) as store:
        handle = store.sign_in(SESSION, annotator, PASSPHRASE)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            while (item := handle.next_item()) is not None:
                grade = rng.randint(1, 4)
                handle.grade(item.item_id, grade)
                os.write(fd, f"{item.sentence_id} {grade}\n".encode())
                os.fsync(fd)
        finally:
            os.close(fd)


def _read_log(path: Path) -> dict[int, int]:
    """Logged sentence id → grade (a line cut short by the kill is not a logged grade)."""
    if not path.exists():
        return {}
    logged: dict[int, int] = {}
    for line in path.read_text().splitlines(keepends=True):
        if line.endswith("\n"):
            sid, grade = map(int, line.split())
            assert sid not in logged, f"{path.name}: sentence {sid} logged twice"
            logged[sid] = grade
    return logged


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _kill_each_after(victims: list[tuple[multiprocessing.process.BaseProcess, Path, int]]) -> None:
    """SIGKILL each process once its log holds its number of grades, all watched at once (watched one after the
    other, a later victim could finish its run while an earlier one was still short of its count)."""
    deadline = time.monotonic() + 50
    waiting = list(victims)
    while waiting and time.monotonic() < deadline:
        for victim in list(waiting):
            process, log, lines = victim
            if _lines(log) >= lines or not process.is_alive():
                if process.is_alive():  # never signal a pid that may already have been reaped
                    process.kill()
                waiting.remove(victim)
        time.sleep(0.002)
    for process, _, _ in waiting:
        if process.is_alive():
            process.kill()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_concurrent_writers_survive_sigkill(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    record_property: Callable[[str, object], None],
) -> None:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    db = tmp_path / "judgments.db"
    items = [PoolItem("q", "e", sid, f"sentence {sid}") for sid in range(GRADES)]
    with JudgmentStore(db) as store:
        store.create_session(SESSION, "/idx", items, PoolSettings(("m",), 10, 0))
        for n in range(PROCESSES):
            store.admin(TOKEN).add_annotator(SESSION, f"annotator{n}", PASSPHRASE)

    context = multiprocessing.get_context("spawn")
    logs = [tmp_path / f"worker{n}.log" for n in range(PROCESSES)]
    workers = [
        context.Process(target=_worker, args=(str(db), str(logs[n]), f"annotator{n}", n))
        for n in range(PROCESSES)
    ]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    rng = random.Random(2010)
    victims = sorted(rng.sample(range(PROCESSES), KILLED))
    # each dies somewhere in the first two thirds of its run
    _kill_each_after([(workers[n], logs[n], rng.randrange(50, 2 * GRADES // 3)) for n in victims])
    for worker in workers:
        worker.join(timeout=120)
    elapsed = time.perf_counter() - start

    assert [w.exitcode for n, w in enumerate(workers) if n not in victims] == [0] * (
        PROCESSES - KILLED
    )
    assert all(workers[n].exitcode == -signal.SIGKILL for n in victims)

    logged = {f"annotator{n}": _read_log(logs[n]) for n in range(PROCESSES)}
    with JudgmentStore(db) as store:
        admin = store.admin(TOKEN)
        stored: dict[str, dict[int, int]] = {name: {} for name in logged}
        for judgment in admin.all_judgments(SESSION):
            assert judgment.sentence_id not in stored[judgment.annotator]  # exactly once
            stored[judgment.annotator][judgment.sentence_id] = judgment.grade
        integrity = store._conn.execute("PRAGMA integrity_check").fetchone()[0]
        problems = store.check()
        history = admin.history(SESSION)

    for n in range(PROCESSES):
        name = f"annotator{n}"
        for sid, grade in logged[name].items():  # every returned commit is there, unchanged
            assert stored[name].get(sid) == grade, (name, sid)
        unlogged = len(stored[name]) - len(logged[name])
        # a victim may be killed after a commit returned and before it was logged: at most one
        assert unlogged == 0 if n not in victims else 0 <= unlogged <= 1, (name, unlogged)
        if n not in victims:
            assert len(stored[name]) == GRADES
    assert integrity == "ok"
    assert problems == []  # includes: the latest history row per key equals the judgment
    total = sum(len(grades) for grades in stored.values())
    assert len(history) == total and {h.action for h in history} == {"set"}

    written = sum(len(grades) for grades in logged.values())
    at_kill = {f"annotator{n}": len(logged[f"annotator{n}"]) for n in victims}
    print(
        f"\ndurability: {PROCESSES} processes, {written} grades logged, {total} in the database,"
        f" {KILLED} killed by SIGKILL (grades before the kill: {at_kill}),"
        f" {elapsed:.1f} s, {total / elapsed:.0f} commits/s"
    )
    record_property("grades_logged", written)
    record_property("grades_stored", total)
    record_property("processes_killed", KILLED)
    record_property("elapsed_s", round(elapsed, 2))


# --------------------------------------------------------------------------- isolation


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JudgmentStore:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    opened = JudgmentStore(tmp_path / "iso.db")
    items = [PoolItem("q", "e", sid, f"sentence {sid}") for sid in range(4)]
    opened.create_session("s", "/idx", items, PoolSettings())
    opened.create_session("t", "/idx", items[:1], PoolSettings())
    for name in ("alice", "bob"):
        opened.admin(TOKEN).add_annotator("s", name, PASSPHRASE)
    return opened


def table_counts(store: JudgmentStore) -> dict[str, int]:
    tables = ("sessions", "pool_items", "annotators", "judgments", "history", "skips")
    conn = store._conn
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_an_annotator_never_sees_or_changes_another_annotators_grades(
    store: JudgmentStore,
) -> None:
    alice = store.sign_in("s", "alice", PASSPHRASE)
    bob = store.sign_in("s", "bob", PASSPHRASE)
    alice.grade(1, 4, note="alice's reason")
    alice.grade(2, 1)
    alice.skip(3)

    assert bob.my_judgments() == []
    assert bob.progress() == Progress(total=4, graded=0, skipped=0)
    assert bob.next_item().item_id == 1  # type: ignore[union-attr]
    assert bob.undo() is None  # alice's actions are not bob's to undo

    bob.grade(1, 2)  # the same item: bob's own row, alice's untouched
    assert [(j.annotator, j.grade, j.note) for j in alice.my_judgments()] == [
        ("alice", 4, "alice's reason"),
        ("alice", 1, None),
    ]
    assert [(j.annotator, j.grade) for j in bob.my_judgments()] == [("bob", 2)]
    bob.undo()
    assert bob.my_judgments() == [] and len(alice.my_judgments()) == 2
    assert alice.progress() == Progress(total=4, graded=2, skipped=1)

    # a handle offers nothing that takes another annotator or another session
    public = {name for name in dir(AnnotatorHandle) if not name.startswith("_")}
    assert public == {"grade", "undo", "skip", "next_item", "item", "my_judgments", "progress", "check_access",
                      "flag", "note", "show", "suggestions", "grade_of", "state_of", "item_at",  # own items only
                      "signed_in_as", "web_session_hash", "bind_web_session", "end_web_session",
                      "session_is_open", "belongs_to"}  # its own web session, session and store only
    with pytest.raises(SentretError, match="not in session 's'"):
        alice.grade(5, 3)  # item 5 is session t's
    with pytest.raises(SentretError, match="not in session 's'"):
        alice.item(5)


def test_admin_actions_refuse_without_the_token(store: JudgmentStore) -> None:
    store.sign_in("s", "alice", PASSPHRASE).grade(1, 3)
    before = table_counts(store)
    store.throttle = SignInThrottle(free=100)  # eight failures in a row; slowing down: annotation/test_throttle.py
    for wrong in ("", "guess", TOKEN.upper(), TOKEN[:-1]):
        with pytest.raises(SentretError, match=r"^wrong admin token$"):
            store.admin(wrong)
        with pytest.raises(SentretError, match=r"^wrong admin token$"):
            Admin(store, wrong)
    assert table_counts(store) == before
    assert store.session("s").is_open  # nothing was closed
    store.admin(TOKEN).close_session("s")
    assert not store.session("s").is_open


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("session", "name", "passphrase", "message"),
    [
        ("s", "alice", "wrong", "^wrong name or passphrase for session 's'$"),
        ("s", "mallory", PASSPHRASE, "^wrong name or passphrase for session 's'$"),  # not an annotator
        ("t", "alice", PASSPHRASE, "^wrong name or passphrase for session 't'$"),  # alice is s's only
        ("nope", "alice", PASSPHRASE, "^no session named 'nope'$"),
        ("closed", "alice", PASSPHRASE, "^session 'closed' is closed; ask the organiser$"),
    ],
)
def test_sign_in_refusals_are_clear_and_write_nothing(
    store: JudgmentStore, session: str, name: str, passphrase: str, message: str
) -> None:
    store.create_session("closed", "/idx", [PoolItem("q", "e", 1)], PoolSettings())
    store.admin(TOKEN).add_annotator("closed", "alice", PASSPHRASE)
    store.admin(TOKEN).close_session("closed")
    before = table_counts(store)
    with pytest.raises(SentretError, match=message):
        store.sign_in(session, name, passphrase)
    assert table_counts(store) == before


def test_malformed_qrels_give_the_line_and_write_nothing(store: JudgmentStore) -> None:
    topic = topic_id("q", "e")
    qrels = f"{topic} 0 0 4\n{topic} 0 1 3\n\n{topic} 0 2\n{topic} 0 3 1\n"
    before = table_counts(store)
    with pytest.raises(SentretError, match=r"^qrels line 4: expected 4 fields"):
        store.admin(TOKEN).import_qrels("s", qrels.splitlines(), "trec", scale="1-4")
    assert table_counts(store) == before
    with pytest.raises(SentretError, match=r"^no session named 'x'$"):
        store.admin(TOKEN).import_qrels("x", [f"{topic} 0 0 3"], "trec")
    assert table_counts(store) == before


def test_a_database_locked_by_another_writer_delays_a_grade_without_losing_it(
    store: JudgmentStore,
) -> None:
    alice = store.sign_in("s", "alice", PASSPHRASE)
    other = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock for 0.3 s
    release = threading.Timer(0.3, lambda: other.execute("ROLLBACK"))
    release.start()
    start = time.perf_counter()
    alice.grade(1, 3)
    waited = time.perf_counter() - start
    release.join()
    other.close()
    assert waited >= 0.25
    assert [j.grade for j in alice.my_judgments()] == [3]
