"""The sign-in ceiling per name across every client, and known browsers, on real SQLite files.

A guesser who can claim a new client for every guess (a forged X-Forwarded-For, many addresses) still
checks at most the ceiling's free number of secrets at one name, and then one per growing wait; but the
right secret from a browser that signed in as that person before is never refused for strangers' failures.
The admin token likewise; and an admin sign-in made under a token stays ended once another token was in
force, even if its browser never came back meanwhile.

Every test uses a fixed clock (no real time passes) unless it moves it: after the free failures every
further attempt under the same key must wait base · 2^(failures − free) seconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sentret_core.annotation import identity, known_browsers
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, PoolItem, PoolSettings
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.throttle import SignInThrottle
from sentret_core.annotation.web_sessions import SessionEnded
from sentret_core.errors import SentretError
from tests.conftest import at_once

TOKEN = "known-admin-token"
WRONG = "wrong name or passphrase for session 's'"
WAIT = "too many failed sign-ins for 'carol'"


class Clock:
    def __init__(self, now: float = 5000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def opened(path: Path, clock: Clock) -> JudgmentStore:
    store = JudgmentStore(path)
    store.throttle = SignInThrottle(free=3, ceiling_free=10, base=1.0, cap=60.0, window=900.0, clock=clock)
    store.known_browsers = known_browsers.KnownBrowsers(clock=clock)
    store.web_sessions.clock = clock
    return store


@pytest.fixture
def carol(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[JudgmentStore, Clock, str]]:
    """A store with session "s" and annotators carol and bob; yields it, its clock and carol's passphrase."""
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    clock = Clock()
    with opened(tmp_path / "known.sqlite", clock) as store:
        store.create_session("s", "/idx", [PoolItem("q", "e", 1, "a sentence")], PoolSettings())
        store.admin(TOKEN).add_annotator("s", "bob", "bob's own passphrase")
        yield store, clock, store.admin(TOKEN).add_annotator("s", "carol", "carol's own passphrase").passphrase


def outcome(store: JudgmentStore, passphrase: str, client: str, known: str | None = None) -> str:
    try:
        return "signed in as " + store.sign_in("s", "carol", passphrase, client=client, known=known).annotator
    except SentretError as exc:
        return str(exc)


def test_guesses_from_ever_new_clients_meet_a_ceiling_per_name(carol: tuple[JudgmentStore, Clock, str]) -> None:
    store, clock, passphrase = carol
    # before: each forged client had three free guesses of its own, so 20 clients → 20 passphrases checked
    answers = [outcome(store, f"guess {n}", client=f"203.0.113.{n}") for n in range(20)]
    assert answers[:10] == [WRONG] * 10
    assert all(a.startswith(WAIT) for a in answers[10:])  # refused unchecked: no new client helps
    assert outcome(store, passphrase, client="198.51.100.1").startswith(WAIT)  # a wait for the name, from anywhere
    # a growing wait, not a lock-out: 1 s after the 10th failure one more guess is checked, then 2 s, then 4 s ...
    waits = []
    for _ in range(4):
        step = 0
        while outcome(store, "a guess", client=f"198.51.100.{step}").startswith(WAIT):
            clock.now += 1.0
            step += 1
        waits.append(step)
    assert waits == [1, 2, 4, 8]
    clock.now += 16.0
    assert outcome(store, passphrase, client="198.51.100.200") == "signed in as carol"  # the wait over: she is in


def test_concurrent_guesses_from_many_clients_check_at_most_the_ceiling(
    carol: tuple[JudgmentStore, Clock, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, clock, _ = carol
    checked: list[str] = []
    real = identity.passphrase_matches

    def counted(given: str, stored: str | None) -> bool:
        checked.append(given)
        return real(given, stored)

    monkeypatch.setattr(identity, "passphrase_matches", counted)
    stores = [opened(store.path, clock) for _ in range(30)]
    results: list[str] = []
    at_once([lambda n=n: results.append(outcome(stores[n], f"guess {n}", client=f"203.0.113.{n}")) for n in range(30)])
    for other in stores:
        other.close()
    assert len(checked) == 10 and results.count(WRONG) == 10


def test_a_known_browser_signs_in_whatever_strangers_did(carol: tuple[JudgmentStore, Clock, str]) -> None:
    store, _, passphrase = carol
    handle = store.sign_in("s", "carol", passphrase, client="local")
    browser = store.known_browsers.remember(store, known_browsers.annotator(handle.signed_in_as[1]))
    # the case: 12 wrong sign-ins for carol from "local" (everyone behind one tunnel), and guesses from
    # rotating clients past the ceiling
    assert [outcome(store, "a guess", "local") for _ in range(12)][:3] == [WRONG] * 3
    [outcome(store, "a guess", f"203.0.113.{n}") for n in range(20)]
    assert outcome(store, passphrase, "local").startswith(WAIT)  # today: refused; a new browser still waits
    assert outcome(store, passphrase, "local", known=browser) == "signed in as carol"  # her own browser: in
    # its own wrong passphrases slow down only itself: three free, then it waits like anyone
    assert [outcome(store, "typo", "local", known=browser) for _ in range(4)][:3] == [WRONG] * 3
    assert outcome(store, passphrase, "local", known=browser).startswith(WAIT)
    # known for carol is not known for bob, and a made-up or over-long id is no known browser
    with pytest.raises(SentretError, match="too many failed sign-ins for 'bob'"):  # "local" waits, for any name
        store.sign_in("s", "bob", "bob's own passphrase", client="local", known=browser)
    for forged in ("made-up", "x" * 500, "é", 7):
        assert store.known_browsers.annotator_key(store, forged, "s", "carol") is None


def test_a_known_browser_survives_a_link_sign_in_and_a_restart_but_not_its_expiry(
    carol: tuple[JudgmentStore, Clock, str],
) -> None:
    store, clock, _ = carol
    link = store.admin(TOKEN).new_secret("s", "carol").token
    handle = store.sign_in_with_token("s", link, client="local")
    who = known_browsers.annotator(handle.signed_in_as[1])
    browser = store.known_browsers.remember(store, who)
    assert store.known_browsers.remember(store, who, browser) == browser  # the same id, renewed
    assert store.known_browsers.remember(store, who, "not ours") != "not ours"  # never an id the browser chose
    for n in range(20):  # a guesser with rotating clients at carol's link
        with pytest.raises(SentretError):
            store.sign_in_with_token("s", f"{link.split('.')[0]}.guess{n}", client=f"203.0.113.{n}")
    with pytest.raises(SentretError, match="too many failed sign-ins with this link"):
        store.sign_in_with_token("s", link, client="local")
    with opened(store.path, clock) as restarted:  # rows in the file: a restart keeps the browser known
        assert restarted.sign_in_with_token("s", link, client="local", known=browser).annotator == "carol"
        clock.now += known_browsers.LIFETIME_S
        assert restarted.known_browsers.key(restarted, browser, who) is None  # a month later: a stranger again


def test_the_admin_token_has_a_ceiling_and_the_admins_browser_passes_it(
    carol: tuple[JudgmentStore, Clock, str],
) -> None:
    store, _, _ = carol
    browser = store.known_browsers.remember(store, known_browsers.ADMIN)
    answers = []
    for n in range(20):  # today: 20 of 20 tokens checked, each from a new forged client
        try:
            store.admin(f"guess {n}", client=f"203.0.113.{n}")
        except SentretError as exc:
            answers.append(str(exc))
    assert answers[:10] == ["wrong admin token"] * 10
    assert all(a.startswith("too many failed sign-ins with the admin token") for a in answers[10:])
    for _ in range(8):  # and 8 wrong tokens from "local", where the admin is too
        with pytest.raises(SentretError):
            store.admin("wrong", client="local")
    with pytest.raises(SentretError, match="too many failed sign-ins"):
        store.admin(TOKEN, client="local")  # today the admin is locked out too
    assert store.admin(TOKEN, client="local", known=browser).all_judgments("s") == []  # the admin's browser: in
    with pytest.raises(SentretError, match="wrong admin token"):
        store.admin("wrong", client="local", known=browser)  # still checked: a known browser is no token


def test_an_admin_sign_in_stays_ended_after_a_token_came_and_went_unseen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Token T → cookie; a restart with T′ that no admin browser visits; a restart with T: the cookie is refused."""
    db = tmp_path / "rotate.sqlite"
    monkeypatch.setenv(ADMIN_TOKEN_ENV, "token-T")
    with JudgmentStore(db) as store:
        web_id = store.web_sessions.start_admin(store, "token-T")
        browser = store.known_browsers.remember(store, known_browsers.ADMIN)
        store.web_sessions.resume_admin(store, web_id, "token-T")
    monkeypatch.setenv(ADMIN_TOKEN_ENV, "token-T-prime")
    JudgmentStore(db).close()  # the server restarted with T′ opens its database; nobody signs in as admin
    monkeypatch.setenv(ADMIN_TOKEN_ENV, "token-T")
    with JudgmentStore(db) as store:
        with pytest.raises(SessionEnded, match="admin token has changed"):  # today: accepted again
            store.web_sessions.resume_admin(store, web_id, "token-T")
        with pytest.raises(SessionEnded, match="has ended"):
            store.web_sessions.resume_admin(store, web_id, "token-T")  # and the row is gone
        assert store.known_browsers.key(store, browser, known_browsers.ADMIN) is None
        assert "token-T" not in str(store.db.connection.execute("SELECT token_hash FROM admin_token").fetchall())
        fresh = store.web_sessions.start_admin(store, "token-T")  # signing in again works as before
        store.web_sessions.resume_admin(store, fresh, "token-T")
