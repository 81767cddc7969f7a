"""Annotator identity: personal secrets, names, disabling and removal, slowing
down repeated failures, and the migration of databases made before personal secrets."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from sentret_core.annotation import auth
from sentret_core.annotation.annotator import SignedOut
from sentret_core.annotation.auth import hash_passphrase, name_key, normalise_name, split_token
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, PoolItem, PoolSettings, Progress
from sentret_core.annotation.schema import MIGRATIONS
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.throttle import SignInThrottle
from sentret_core.errors import SentretError

TOKEN = "identity-admin-token"
ITEMS = [PoolItem("q", "e", sid, f"sentence {sid}") for sid in range(4)]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    with JudgmentStore(tmp_path / "identity.db") as opened:
        opened.create_session("s", "/idx", ITEMS, PoolSettings())
        opened.create_session("t", "/idx", ITEMS[:1], PoolSettings())
        yield opened


def rows(store: JudgmentStore) -> dict[str, int]:
    tables = ("annotators", "judgments", "history", "skips", "annotator_log")
    return {t: store._conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


# --------------------------------------------------------------------------- impersonation


def test_nobody_signs_in_as_another_annotator(store: JudgmentStore) -> None:
    store.throttle = SignInThrottle(free=100)  # many failures in a row here; slowing down is tested below
    admin = store.admin(TOKEN)
    alice, bob = admin.add_annotator("s", "alice"), admin.add_annotator("s", "bob")
    store.sign_in("s", "alice", alice.passphrase).grade(1, 4)
    before = rows(store)
    # bob knows his own secrets and alice's name: nothing of his opens alice's account
    with pytest.raises(SentretError, match=r"^wrong name or passphrase for session 's'$"):
        store.sign_in("s", "alice", bob.passphrase)
    assert store.sign_in_with_token("s", bob.token).annotator == "bob"
    forged = f"{alice.token.split('.')[0]}.{bob.token.split('.')[1]}"  # alice's id, bob's secret
    with pytest.raises(SentretError, match="sign-in link is not valid"):
        store.sign_in_with_token("s", forged)
    with pytest.raises(SentretError, match="sign-in link is not valid"):
        store.sign_in_with_token("t", alice.token)  # a link of session s is no link of t
    for garbage in ("", "alice", "1", "1.", ".x", "x.y", "99999999999999999999.x", "1." + "x" * 2000):
        with pytest.raises(SentretError, match="sign-in link is not valid"):
            store.sign_in_with_token("s", garbage)
    assert rows(store) == before  # failed sign-ins write nothing
    bob_handle = store.sign_in("s", "bob", bob.passphrase)
    bob_handle.grade(1, 1)
    assert [(j.annotator, j.grade) for j in store.admin(TOKEN).all_judgments("s")] == [("alice", 4), ("bob", 1)]


def test_secrets_are_stored_only_as_scrypt_hashes(store: JudgmentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = store.admin(TOKEN).add_annotator("s", "alice", "a chosen passphrase")
    assert secret.passphrase == "a chosen passphrase"
    stored = store._conn.execute("SELECT passphrase_hash, token_hash FROM annotators").fetchone()
    assert all(h.startswith("scrypt$16384$8$1$") for h in stored)
    store._conn.execute("PRAGMA wal_checkpoint(FULL)")
    raw = store.path.read_bytes()
    assert secret.token.encode() not in raw and secret.token.split(".")[1].encode() not in raw
    assert b"a chosen passphrase" not in raw
    # checked by recomputing scrypt and comparing with hmac.compare_digest, also for unknown names
    calls = {"scrypt": 0, "compare": 0}
    real_scrypt, real_compare = hashlib.scrypt, hmac.compare_digest

    def scrypt(*args: object, **kwargs: object) -> bytes:
        calls["scrypt"] += 1
        return real_scrypt(*args, **kwargs)  # type: ignore[arg-type]

    def compare(a: bytes, b: bytes) -> bool:
        calls["compare"] += 1
        return real_compare(a, b)

    monkeypatch.setattr(auth.hashlib, "scrypt", scrypt)
    monkeypatch.setattr(auth.hmac, "compare_digest", compare)
    store.sign_in("s", "alice", "a chosen passphrase")
    assert calls == {"scrypt": 1, "compare": 1}
    with pytest.raises(SentretError):
        store.sign_in("s", "nobody", "a chosen passphrase")
    assert calls["scrypt"] == 2  # an unknown name costs the same hash: the time tells nothing
    with pytest.raises(SentretError, match="8 to 1024 characters"):
        store.admin(TOKEN).add_annotator("s", "bob", "short")


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("given", "shown"),
    [("Alice ", "Alice"), ("  alice", "alice"), ("ALICE", "ALICE"), ("Al\u00a0 ice", "Al ice"),
     ("\uff41lice", "alice"), ("ﬁona", "fiona")],
)
def test_names_are_normalised_and_compared_case_folded(given: str, shown: str) -> None:
    assert normalise_name(given) == shown
    assert name_key(given) == shown.casefold()


@pytest.mark.parametrize(
    ("bad", "message"),
    [("", "empty"), ("   ", "empty"), ("ali\u200bce", "invisible"), ("a\tb\x07", "control"),
     ("x" * 201, "at most 200"), (None, "must be text")],
)
def test_bad_names_are_refused(store: JudgmentStore, bad: object, message: str) -> None:
    before = rows(store)
    with pytest.raises(SentretError, match=message):
        store.admin(TOKEN).add_annotator("s", bad)  # type: ignore[arg-type]
    assert rows(store) == before


def test_one_name_one_annotator_per_session(store: JudgmentStore) -> None:
    admin = store.admin(TOKEN)
    alice = admin.add_annotator("s", "Alice ")
    for same in ("alice", " ALICE", "Alice"):
        with pytest.raises(SentretError, match="already has an annotator named"):
            admin.add_annotator("s", same)
    assert admin.add_annotator("t", "alice").name == "alice"  # another session: another annotator
    handle = store.sign_in("s", "  aLiCe ", alice.passphrase)
    assert handle.annotator == "Alice"
    handle.grade(1, 3)
    assert list(admin.progress_by_annotator("s")) == ["Alice"]  # one row, not "Alice " and "alice"
    assert admin.rename_annotator("s", "alice", "ALICE") == "ALICE"  # same key: allowed
    admin.add_annotator("s", "bob")
    with pytest.raises(SentretError, match="already has an annotator named 'Alice'"):
        admin.rename_annotator("s", "bob", "Alice")
    with pytest.raises(SentretError, match="no annotator named 'carol'"):
        admin.rename_annotator("s", "carol", "dave")


# --------------------------------------------------------------------------- disable, remove, re-key


def test_disabled_annotators_cannot_sign_in_or_grade(store: JudgmentStore) -> None:
    admin = store.admin(TOKEN)
    secret = admin.add_annotator("s", "alice")
    handle = store.sign_in("s", "alice", secret.passphrase)
    handle.grade(1, 4)
    admin.disable_annotator("s", "ALICE")
    before = rows(store)
    for act in (lambda: handle.grade(2, 3), lambda: handle.skip(2), handle.undo, handle.next_item, handle.progress):
        with pytest.raises(SignedOut, match="signed out of session 's'"):
            act()
    with pytest.raises(SentretError, match=r"^your access to session 's' is disabled; ask the organiser$"):
        store.sign_in("s", "alice", secret.passphrase)
    with pytest.raises(SentretError, match="disabled"):
        store.sign_in_with_token("s", secret.token)
    assert rows(store) == before
    assert [j.grade for j in admin.all_judgments("s")] == [4]  # a disabled annotator's grades still count
    assert [a.status for a in admin.annotators("s")] == ["disabled"]
    admin.enable_annotator("s", "alice")
    store.sign_in("s", "alice", secret.passphrase).grade(2, 3)  # a new sign-in works again


def test_removed_annotators_count_nowhere_but_stay_in_the_history(store: JudgmentStore) -> None:
    admin = store.admin(TOKEN)
    secret = admin.add_annotator("s", "alice")
    handle = store.sign_in("s", "alice", secret.passphrase)
    handle.grade(1, 4)
    handle.grade(2, 2)
    admin.add_annotator("s", "bob")
    admin.remove_annotator("s", "Alice")
    assert list(admin.progress_by_annotator("s")) == ["bob"]
    assert admin.all_judgments("s") == [] and admin.export_qrels("s") == ""
    history = admin.history("s")
    assert [(h.new_grade, h.annotator.startswith("alice (removed ")) for h in history] == [(4, True), (2, True)]
    assert store._conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == 2  # no grade deleted
    assert store.check() == []
    with pytest.raises(SignedOut):
        handle.grade(3, 1)
    with pytest.raises(SentretError, match="wrong name or passphrase"):
        store.sign_in("s", "alice", secret.passphrase)
    with pytest.raises(SentretError, match="not valid"):
        store.sign_in_with_token("s", secret.token)
    with pytest.raises(SentretError, match="no annotator named 'alice'"):
        admin.remove_annotator("s", "alice")
    again = admin.add_annotator("s", "alice")  # the name is free: a new annotator, without the old grades
    assert store.sign_in("s", "alice", again.passphrase).progress() == Progress(4, 0, 0)
    actions = [action for _, action, _, _ in admin.annotator_log("s")]
    assert actions == ["add", "secret", "add", "secret", "remove", "add", "secret"]


def test_a_new_secret_replaces_the_old_one_and_signs_out(store: JudgmentStore) -> None:
    admin = store.admin(TOKEN)
    old = admin.add_annotator("s", "alice")
    handle = store.sign_in_with_token("s", old.token)
    new = admin.new_secret("s", "alice")
    assert new.token != old.token and new.passphrase != old.passphrase
    with pytest.raises(SignedOut):
        handle.grade(1, 3)
    with pytest.raises(SentretError):
        store.sign_in("s", "alice", old.passphrase)
    with pytest.raises(SentretError):
        store.sign_in_with_token("s", old.token)
    store.sign_in_with_token("s", new.token).grade(1, 3)
    assert split_token(new.token) is not None and split_token("1.a b") == (1, "a b")


def test_import_annotators_never_sign_in(store: JudgmentStore) -> None:
    admin = store.admin(TOKEN)
    admin.import_qrels("s", ["q:e 0 0 2"], "gold")
    with pytest.raises(SentretError, match="holds imported grades"):
        admin.new_secret("s", "gold")
    with pytest.raises(SentretError, match="wrong name or passphrase"):
        store.sign_in("s", "gold", "")
    assert [(a.name, a.status) for a in admin.annotators("s")] == [("gold", "imported grades")]


# --------------------------------------------------------------------------- slowing down failures


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_repeated_failures_are_slowed_down_per_name_and_client_and_per_client(store: JudgmentStore) -> None:
    clock = Clock()
    store.throttle = SignInThrottle(free=3, base=1.0, cap=60.0, window=900.0, clock=clock)
    alice = store.admin(TOKEN).add_annotator("s", "alice")
    store.admin(TOKEN).add_annotator("s", "bob", "bob's passphrase")
    for _ in range(3):  # three free failures from client A
        with pytest.raises(SentretError, match="wrong name or passphrase"):
            store.sign_in("s", "alice", "guess", client="A")
    # the fourth attempt from A waits 1 s after the third failure, even with the right passphrase
    with pytest.raises(SentretError, match=r"^too many failed sign-ins for 'alice': try again in 1 s$"):
        store.sign_in("s", "alice", alice.passphrase, client="A")
    with pytest.raises(SentretError, match="too many failed sign-ins"):
        store.sign_in("s", "bob", "bob's passphrase", client="A")  # per client: another name waits too
    # per name *and* client: A's failures do not lock alice out from her own client B
    assert store.sign_in("s", "alice", alice.passphrase, client="B").annotator == "alice"
    assert store.sign_in("s", "bob", "bob's passphrase", client="C").annotator == "bob"
    for _ in range(4):  # 3 free failures from D, then a 4th 1 s later: the wait doubles
        with pytest.raises(SentretError, match="wrong name or passphrase"):
            store.sign_in("s", "alice", "guess again", client="D")
        clock.now += 1.0 if _ == 2 else 0.0
    clock.now += 1.5
    with pytest.raises(SentretError, match="try again in 1 s"):
        store.sign_in("s", "alice", alice.passphrase, client="D")  # 1.5 s after the 4th failure, 2 s due
    clock.now += 0.5
    assert store.sign_in("s", "alice", alice.passphrase, client="D").annotator == "alice"
    assert store.throttle.wait(store, ("name", "s", "alice", "D")) == 0.0  # a success clears the name …
    with pytest.raises(SentretError, match="wrong name or passphrase"):
        store.sign_in("s", "carol", "guess", client="D")
    assert store.throttle.wait(store, ("client", "D")) == 4.0  # … not the client: its 5th failure, 1·2^2 s
    clock.now += 901.0  # failures are forgotten after the window
    assert store.throttle.wait(store, ("client", "A")) == 0.0
    assert store.throttle.wait(store, ("client", "D")) == 0.0


def test_the_wait_doubles_up_to_its_cap(store: JudgmentStore) -> None:
    clock = Clock()
    store.throttle = throttle = SignInThrottle(free=2, base=1.0, cap=8.0, window=900.0, clock=clock)
    waits = []
    for _ in range(7):
        clock.now += 100.0  # each attempt long after the last one's wait
        assert throttle.attempt(store, ("k",), (), "with k", lambda: False) is False
        waits.append(throttle.wait(store, ("k",)))
    assert waits == [0.0, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]  # the first two failed attempts free, then 1·2^(f−2), cap 8


# --------------------------------------------------------------------------- migration


def test_a_v2_database_keeps_every_grade_and_waits_for_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before v3 a name and the shared passphrase signed anyone in, so "Alice" and "alice " could be two
    annotators. Migration keeps both (the second renamed "alice #<id>"), every grade and the history; the
    shared passphrase signs nobody in, and each annotator waits for a secret from the admin."""
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    path = tmp_path / "v2.db"
    conn = sqlite3.connect(path)
    for step in (*MIGRATIONS[0], *MIGRATIONS[1]):
        assert isinstance(step, str)
        conn.execute(step)
    conn.execute("PRAGMA user_version = 2")
    conn.execute(
        "INSERT INTO sessions VALUES (1, 'old', '/idx', '[]', '[]', ?, ?, 1, '2024-01-01')",
        (PoolSettings().to_json(), hash_passphrase("shared")),
    )
    conn.executemany(
        "INSERT INTO pool_items VALUES (?, 1, 'q', 'e', ?, ?, 'text', 'title')", [(1, 100, 0), (2, 101, 1)]
    )
    conn.executemany(
        "INSERT INTO annotators VALUES (?, 1, ?, 'person', '2024-01-01')",
        [(1, "Alice"), (2, "alice "), (3, "bob"), (4, "Al  ice"), (5, "Al ice"), (6, "alice #2")],
    )
    for annotator, grade in ((1, 4), (2, 1), (3, 3)):
        conn.execute(
            "INSERT INTO judgments (session_id, item_id, annotator_id, grade, created_at, updated_at)"
            " VALUES (1, 1, ?, ?, '2024-01-01', '2024-01-01')",
            (annotator, grade),
        )
        conn.execute(
            "INSERT INTO history (session_id, item_id, annotator_id, action, old_grade, new_grade, at)"
            " VALUES (1, 1, ?, 'set', NULL, ?, '2024-01-01')",
            (annotator, grade),
        )
    conn.commit()
    conn.close()

    with JudgmentStore(path) as store:
        store.throttle = SignInThrottle(free=100)
        admin = store.admin(TOKEN)
        graded = [(j.annotator, j.grade) for j in admin.all_judgments("old")]
        assert graded == [("Alice", 4), ("alice #2.2", 1), ("bob", 3)]  # "alice #2" was taken
        names = sorted(a.name for a in admin.annotators("old"))
        assert names == ["Al ice", "Al ice #5", "Alice", "alice #2", "alice #2.2", "bob"]
        assert len(admin.history("old")) == 3 and store.check() == []
        assert [a.status for a in admin.annotators("old")] == ["no secret yet"] * 6
        for name in ("Alice", "alice", "bob"):
            with pytest.raises(SentretError, match="wrong name or passphrase"):
                store.sign_in("old", name, "shared")
        secret = admin.new_secret("old", "bob")
        handle = store.sign_in("old", "bob", secret.passphrase)
        assert [j.grade for j in handle.my_judgments()] == [3]
        admin.rename_annotator("old", "alice #2.2", "alice (second)")
        admin.rename_annotator("old", "Al ice #5", "Al")
        assert "alice (second)" in {a.name for a in admin.annotators("old")}


def test_a_removed_annotators_record_name_is_not_reused(store: JudgmentStore) -> None:
    admin = store.admin(TOKEN)
    admin.add_annotator("s", "alice")
    admin.remove_annotator("s", "alice")
    [entry] = admin.annotator_log("s")[-1:]
    removed = entry[0]
    assert removed.startswith("alice (removed ") and removed.endswith(", #1)")
    before = rows(store)
    with pytest.raises(SentretError, match="is that of a removed annotator's record"):
        admin.add_annotator("s", removed)
    assert rows(store) == before


def test_lone_surrogates_are_refused_not_crashed_on(store: JudgmentStore) -> None:
    secret = store.admin(TOKEN).add_annotator("s", "alice")
    with pytest.raises(SentretError, match="wrong name or passphrase"):
        store.sign_in("s", "alice", "\udc00")
    with pytest.raises(SentretError, match="not valid"):
        store.sign_in_with_token("s", secret.token.split(".")[0] + ".\udc00")
    with pytest.raises(SentretError, match="invisible"):
        store.sign_in("s", "ali\ud800ce", secret.passphrase)
    with pytest.raises(SentretError, match=r"^wrong admin token$"):
        store.admin("\ud800")
