"""Web sessions ("sign-in that survives"): a browser's sign-in kept in SQLite for a bounded
time, across store re-openings (a server restart), with expiry exactly at the boundary (fake clock)
and revocation by re-key, disable, removal, sign-out and a changed admin token."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from sentret_core.annotation.annotator import SignedOut
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, PoolItem, PoolSettings
from sentret_core.annotation.schema import MIGRATIONS
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.web_sessions import SessionEnded, WebSessions
from sentret_core.errors import SentretError

TOKEN = "web-admin-token"
ITEMS = [PoolItem("q", "e", sid, f"sentence {sid}") for sid in range(3)]


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    path = tmp_path / "web.db"
    with JudgmentStore(path) as store:
        store.create_session("s", "/idx", ITEMS, PoolSettings())
        store.admin(TOKEN).add_annotator("s", "alice", "alice-passphrase")
    yield path


def opened(path: Path, clock: Clock, lifetime: float = 100.0) -> JudgmentStore:
    store = JudgmentStore(path)
    store.web_sessions = WebSessions(annotator_lifetime=lifetime, admin_lifetime=lifetime, clock=clock)
    return store


def test_a_web_session_survives_a_restart_and_ends_exactly_at_its_expiry(db: Path) -> None:
    clock = Clock(1000.0)
    with opened(db, clock) as store:
        handle = store.sign_in("s", "alice", "alice-passphrase")
        web_id = store.web_sessions.start_annotator(store, handle)
        handle.grade(1, 4)
    # only the hash is stored: the id itself is nowhere in the file
    assert web_id.encode() not in db.read_bytes()
    clock.now = 1099.999  # signed in at 1000 for 100 s: still in at 1099.999
    with opened(db, clock) as store:  # a new process: nothing in memory survives but the file
        resumed = store.web_sessions.resume_annotator(store, web_id)
        assert (resumed.handle.annotator, resumed.expires_at) == ("alice", 1100.0)
        resumed.handle.grade(2, 3)
        clock.now = 1100.0  # at exactly 1000 + 100 the session has ended, for the handle in hand too
        with pytest.raises(SessionEnded, match="expired after"):
            resumed.handle.grade(3, 2)
        with pytest.raises(SessionEnded, match="expired after"):
            store.web_sessions.resume_annotator(store, web_id)
        assert [(j.sentence_id, j.grade) for j in store.admin(TOKEN).all_judgments("s")] == [(0, 4), (1, 3)]


@pytest.mark.parametrize("change", ["new secret", "disable", "remove", "rename"])
def test_a_change_of_access_ends_the_web_session_at_once(db: Path, change: str) -> None:
    clock = Clock(0.0)
    with opened(db, clock) as store:
        handle = store.sign_in("s", "alice", "alice-passphrase")
        web_id = store.web_sessions.start_annotator(store, handle)
        admin = store.admin(TOKEN)
        {"new secret": lambda: admin.new_secret("s", "alice"), "disable": lambda: admin.disable_annotator("s", "alice"),
         "remove": lambda: admin.remove_annotator("s", "alice"),
         "rename": lambda: admin.rename_annotator("s", "alice", "alicia")}[change]()
        with pytest.raises(SignedOut, match="changed or disabled your access"):
            handle.grade(1, 4)
        with pytest.raises(SignedOut):
            store.web_sessions.resume_annotator(store, web_id)
        assert store.admin(TOKEN).all_judgments("s") == []


def test_signing_out_ends_the_session_everywhere_and_garbage_is_refused(db: Path) -> None:
    clock = Clock(0.0)
    with opened(db, clock) as store:
        handle = store.sign_in("s", "alice", "alice-passphrase")
        web_id = store.web_sessions.start_annotator(store, handle)
        other_tab = store.web_sessions.resume_annotator(store, web_id).handle
        store.web_sessions.end(store, web_id)
        with pytest.raises(SessionEnded, match="signed out elsewhere"):
            other_tab.grade(1, 4)
        for garbage in (web_id, "", "x" * 201, None, 7, "é"):
            with pytest.raises(SessionEnded, match="sign in again"):
                store.web_sessions.resume_annotator(store, garbage)


def test_the_admin_web_session_ends_with_its_expiry_or_a_new_token(db: Path) -> None:
    clock = Clock(50.0)
    with opened(db, clock) as store:
        web_id = store.web_sessions.start_admin(store, TOKEN)
        other_browser = store.web_sessions.start_admin(store, TOKEN)
        stored = store._conn.execute("SELECT admin_check FROM web_sessions").fetchone()[0]
        assert TOKEN not in stored and web_id not in stored
        clock.now = 149.0
        store.web_sessions.resume_admin(store, web_id, TOKEN)  # 50 + 100 > 149: still signed in
        with pytest.raises(SessionEnded, match="admin token has changed"):
            store.web_sessions.resume_admin(store, web_id, "another-token")
        clock.now = 150.0
        with pytest.raises(SessionEnded, match="expired after"):
            store.web_sessions.resume_admin(store, other_browser, TOKEN)
        with pytest.raises(SessionEnded, match="has ended"):  # an annotator's id is no admin's
            store.web_sessions.resume_admin(store, store.web_sessions.start_annotator(
                store, store.sign_in("s", "alice", "alice-passphrase")), TOKEN)


def test_a_version_4_database_opens_and_gains_web_sessions(tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    conn = sqlite3.connect(path)
    for steps in MIGRATIONS[:4]:
        for step in steps:
            step(conn) if callable(step) else conn.execute(step)
    conn.execute("PRAGMA user_version = 4")
    conn.execute(
        "INSERT INTO sessions (name, index_path, queries, entities, settings, passphrase_hash, created_at)"
        " VALUES ('old', '/idx', '[]', '[]', ?, '', 'then')",
        (PoolSettings().to_json(),),
    )
    conn.commit()
    conn.close()
    with JudgmentStore(tmp_path / "v4.db") as store:
        assert store.session("old").name == "old"
        assert store._conn.execute("SELECT count(*) FROM web_sessions").fetchone()[0] == 0
    with pytest.raises(SentretError, match="no session named"):
        JudgmentStore(path).session("gone")


def test_an_ended_sign_in_stays_ended_when_the_clock_goes_back(db: Path) -> None:
    clock = Clock(1000.0)
    with opened(db, clock) as store:
        handle = store.sign_in("s", "alice", "alice-passphrase")
        web_id = store.web_sessions.start_annotator(store, handle)
        admin_id = store.web_sessions.start_admin(store, TOKEN)
        clock.now = 1100.0  # both have ended
        with pytest.raises(SessionEnded, match="expired after"):
            store.web_sessions.resume_annotator(store, web_id)
        with pytest.raises(SessionEnded, match="expired after"):
            store.web_sessions.resume_admin(store, admin_id, TOKEN)
        clock.now = 1050.0  # the clock set back into their lifetime: they stay ended
        with pytest.raises(SessionEnded, match="has ended"):
            store.web_sessions.resume_annotator(store, web_id)
        with pytest.raises(SessionEnded, match="has ended"):
            store.web_sessions.resume_admin(store, admin_id, TOKEN)
        fresh = store.web_sessions.start_annotator(store, store.sign_in("s", "alice", "alice-passphrase"))
        clock.now = 1050.0 - 301.0  # more than CLOCK_SKEW_S before it was made: set back, not drifting
        with pytest.raises(SessionEnded, match="expired"):
            store.web_sessions.resume_annotator(store, fresh)


def test_an_admin_sign_in_made_under_a_rotated_token_does_not_come_back(db: Path) -> None:
    clock = Clock(0.0)
    with opened(db, clock) as store:
        admin_id = store.web_sessions.start_admin(store, TOKEN)
        store.web_sessions.resume_admin(store, admin_id, TOKEN)
        with pytest.raises(SessionEnded, match="admin token has changed"):  # restarted with a new token
            store.web_sessions.resume_admin(store, admin_id, "a-new-token")
        with pytest.raises(SessionEnded, match="has ended"):  # and back to the leaked one: still ended
            store.web_sessions.resume_admin(store, admin_id, TOKEN)
