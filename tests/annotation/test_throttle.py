"""Sign-in throttles that hold: counted in the judgments database, so a second
process and a restart see every failure; keyed by name and client; checked and counted atomically, so a
burst of concurrent guesses checks at most the free number of secrets; the admin token throttled too.

Every test uses a fixed clock: no real time passes, so after ``free`` = 3 failures every further attempt
under the same key must wait 1 s (base · 2^(3 − 3)) and is refused without checking the secret.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sentret_core.annotation import identity
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, PoolItem, PoolSettings
from sentret_core.annotation.schema import MIGRATIONS, SCHEMA_VERSION
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.throttle import SignInThrottle
from sentret_core.errors import SentretError
from tests.conftest import at_once

TOKEN = "throttle-admin-token"
NOW = 5000.0
WRONG = "wrong name or passphrase for session 's'"
TOO_MANY = "too many failed sign-ins for 'alice': try again in 1 s"  # 3 failures: 1·2^(3−3) = 1 s


class FixedClock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def opened(path: Path, clock: FixedClock | None = None) -> JudgmentStore:
    store = JudgmentStore(path)
    store.throttle = SignInThrottle(free=3, base=1.0, cap=60.0, window=900.0, clock=clock or FixedClock())
    return store


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A database with session "s" and annotator alice; yields its path and alice's passphrase."""
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    path = tmp_path / "throttle.sqlite"
    with opened(path) as store:
        store.create_session("s", "/idx", [PoolItem("q", "e", 1, "a sentence")], PoolSettings())
        secret = store.admin(TOKEN).add_annotator("s", "alice", "alice's own passphrase")
    yield path, secret.passphrase


def outcome(store: JudgmentStore, passphrase: str, client: str) -> str:
    try:
        return "signed in as " + store.sign_in("s", "alice", passphrase, client=client).annotator
    except SentretError as exc:
        return str(exc)


def fail_in_another_process(path: str, times: int, client: str) -> list[str]:
    with opened(Path(path)) as store:
        return [outcome(store, "a guess", client) for _ in range(times)]


def run_elsewhere(path: Path, times: int, client: str) -> list[str]:
    with multiprocessing.get_context("spawn").Pool(1) as processes:
        return processes.apply(fail_in_another_process, (str(path), times, client))


def test_a_second_process_sees_the_first_ones_failures(db: tuple[Path, str]) -> None:
    path, passphrase = db
    with opened(path) as store:  # this process's store is open all along, as an app process's is
        assert run_elsewhere(path, 3, "A") == [WRONG] * 3  # another process: three free failures
        assert outcome(store, passphrase, "A") == TOO_MANY  # this one sees them: even the right one waits
        assert run_elsewhere(path, 1, "A") == [TOO_MANY]  # and a third process too
        assert outcome(store, passphrase, "B") == "signed in as alice"  # alice's own client is not locked


def test_failures_survive_a_restart(db: tuple[Path, str]) -> None:
    path, passphrase = db
    with opened(path) as store:
        assert [outcome(store, "a guess", "A") for _ in range(3)] == [WRONG] * 3
    with opened(path) as restarted:  # a new store object on the same file: the counts are in the file
        assert outcome(restarted, passphrase, "A") == TOO_MANY
    clock = FixedClock(NOW + 1.0)  # one second later the wait is over
    with opened(path, clock) as later:
        assert outcome(later, passphrase, "A") == "signed in as alice"


def test_concurrent_guesses_check_at_most_the_free_number_of_passphrases(
    db: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = db
    checked: list[str] = []
    real = identity.passphrase_matches

    def counted(given: str, stored: str | None) -> bool:
        checked.append(given)
        return real(given, stored)

    monkeypatch.setattr(identity, "passphrase_matches", counted)
    stores = [opened(path) for _ in range(40)]  # 40 connections, as 40 app processes would have
    results: list[str] = []
    at_once([lambda n=n: results.append(outcome(stores[n], f"guess {n}", "attacker")) for n in range(40)])
    for store in stores:
        store.close()
    # today's code checked all 40; counted before checking, only the 3 free guesses reach scrypt
    assert len(checked) == 3
    assert sorted(results) == sorted([WRONG] * 3 + [TOO_MANY] * 37)


def test_people_signing_in_at_once_from_one_address_do_not_hold_each_other_up(db: tuple[Path, str]) -> None:
    path, _ = db
    with opened(path) as store:
        secrets = [store.admin(TOKEN).add_annotator("s", f"person {n}").passphrase for n in range(8)]
    stores = [opened(path) for _ in range(8)]
    results: list[str] = []

    def sign_in(number: int) -> None:
        try:
            results.append(stores[number].sign_in("s", f"person {number}", secrets[number]).annotator)
        except SentretError as exc:
            results.append(str(exc))

    at_once([lambda n=n: sign_in(n) for n in range(8)])
    for store in stores:
        store.close()
    # the client-wide count holds failures only: eight right passphrases at once all go through
    assert sorted(results) == [f"person {n}" for n in range(8)]


def guess_in_a_process(path: str, number: int, start: Any) -> str:
    with opened(Path(path)) as store:
        start.wait()
        return outcome(store, f"guess {number}", "attacker")


def test_concurrent_guesses_from_processes_are_serialised(db: tuple[Path, str]) -> None:
    path, _ = db
    context = multiprocessing.get_context("spawn")
    start = context.Manager().Barrier(6)
    with context.Pool(6) as processes:
        results = processes.starmap(guess_in_a_process, [(str(path), n, start) for n in range(6)])
    assert sorted(results) == sorted([WRONG] * 3 + [TOO_MANY] * 3)


def test_a_stranger_cannot_lock_an_annotator_out_of_her_own_client(db: tuple[Path, str]) -> None:
    path, passphrase = db
    with opened(path) as store:
        stranger = [outcome(store, "a guess", "10.0.0.66") for _ in range(25)]
        assert stranger == [WRONG] * 3 + [TOO_MANY] * 22
        assert outcome(store, passphrase, "10.0.0.7") == "signed in as alice"  # alice, from her client
        with pytest.raises(SentretError, match="too many failed sign-ins with this link"):
            store.sign_in_with_token("s", "1.not-the-secret", client="10.0.0.66")  # per client: any name


def test_the_admin_token_is_throttled_per_client(db: tuple[Path, str]) -> None:
    path, _ = db
    clock = FixedClock()
    with opened(path, clock) as store:
        answers = []
        for number in range(25):  # today: 25 × "wrong admin token", each at once
            try:
                store.admin(f"guess {number}", client="10.0.0.66")
            except SentretError as exc:
                answers.append(str(exc))
        waiting = "too many failed sign-ins with the admin token: try again in 1 s"
        assert answers == ["wrong admin token"] * 3 + [waiting] * 22
        with pytest.raises(SentretError, match="too many failed sign-ins with the admin token"):
            store.admin(TOKEN, client="10.0.0.66")  # not even the right token is checked meanwhile
        assert store.admin(TOKEN, client="10.0.0.7").all_judgments("s") == []  # the admin's own client
    clock.now += 1.0
    with opened(path, clock) as restarted:  # counted in the file: a restart does not reset it
        restarted.admin(TOKEN, client="10.0.0.66")  # one second later: checked, right, and cleared
        for _ in range(3):
            with pytest.raises(SentretError, match=r"^wrong admin token$"):
                restarted.admin("again", client="10.0.0.66")  # three free failures once more


def test_a_v3_database_opens_and_gains_the_attempts_table(tmp_path: Path) -> None:
    path = tmp_path / "v3.sqlite"
    conn = sqlite3.connect(path)
    for steps in MIGRATIONS[:3]:
        for step in steps:
            conn.execute(step) if isinstance(step, str) else step(conn)
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    with JudgmentStore(path, read_only=True) as reader:  # read-only: readable as it is, nothing counted
        assert reader.sessions() == []
    with JudgmentStore(path) as store:
        assert store._conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 4
        assert store._conn.execute("SELECT count(*) FROM sign_in_attempts").fetchone()[0] == 0
