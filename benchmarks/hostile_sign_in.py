"""Hostile sign-ins: guessers who forge their address, strangers who try to lock someone out, ended sign-ins
brought back, and garbage where an address, a proxy list or a browser id should be.

    .venv/bin/python benchmarks/hostile_sign_in.py [--json out.json] [--quiet]

Every case runs on a fresh judgments database (real SQLite, a clock that stands still unless the case moves
it) through the public API: ``JudgmentStore.sign_in``, ``sign_in_with_token``, ``admin``, web sessions and
known browsers, ``client_address.throttle_client`` and ``sentret app --trusted-proxy``. The same attacks
against a real server over its websocket, with forged ``X-Forwarded-For`` headers, are
``tests/cli/test_app_trusted_proxy.py``.

Outcomes: **access** (a guess checked beyond the policy: more secrets tried at one name than its ceiling, a
forged address counted as a new client, an ended sign-in accepted, a browser known for someone else let
through), **wrong** (the right secret refused where it must pass, or a result other than the one
documented), **raw** (an exception that is not a SentretError, or an internal error from the CLI), **ok**.
The exit code is 1 if any case is not ok.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sentret_core.annotation import identity, known_browsers  # noqa: E402
from sentret_core.annotation.client_address import (  # noqa: E402
    UNVERIFIED,
    AddressPolicy,
    parse_trusted,
    server_environment,
    throttle_client,
)
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, PoolItem, PoolSettings  # noqa: E402
from sentret_core.annotation.store import JudgmentStore  # noqa: E402
from sentret_core.annotation.throttle import CEILING_FREE_FAILURES, FREE_FAILURES, SignInThrottle  # noqa: E402
from sentret_core.annotation.web_sessions import SessionEnded  # noqa: E402
from sentret_core.errors import SentretError  # noqa: E402

TOKEN = "hostile-admin-token"
PASSPHRASE = "carol's own passphrase"
OUTCOMES = ("access", "wrong", "raw", "ok")


class Clock:
    def __init__(self) -> None:
        self.now = 10_000.0

    def __call__(self) -> float:
        return self.now


class Bad(Exception):
    """A case's finding: ``outcome`` (access or wrong) and what happened."""

    def __init__(self, outcome: str, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome


def expect(condition: bool, outcome: str, message: str) -> None:
    if not condition:
        raise Bad(outcome, message)


@contextlib.contextmanager
def fresh() -> Iterator[tuple[JudgmentStore, Clock]]:
    """A database with session "s" (annotators carol and bob) and its store, under a fixed clock."""
    clock = Clock()
    with tempfile.TemporaryDirectory() as folder:
        store = JudgmentStore(Path(folder) / "hostile.sqlite")
        store.throttle = SignInThrottle(clock=clock)
        store.known_browsers = known_browsers.KnownBrowsers(clock=clock)
        store.web_sessions.clock = clock
        try:
            store.create_session("s", "/idx", [PoolItem("q", "e", 1, "a sentence")], PoolSettings())
            store.admin(TOKEN).add_annotator("s", "carol", PASSPHRASE)
            store.admin(TOKEN).add_annotator("s", "bob", "bob's own passphrase")
            yield store, clock
        finally:
            store.close()


def checked_secrets(seen: list[str]) -> Callable[[str, str | None], bool]:
    real = identity.passphrase_matches

    def counted(given: str, stored: str | None) -> bool:
        seen.append(given)
        return real(given, stored)

    return counted


@contextlib.contextmanager
def counting() -> Iterator[list[str]]:
    """The passphrases and link secrets the store checks (scrypt) while the block runs."""
    seen: list[str] = []
    real = identity.passphrase_matches
    identity.passphrase_matches = checked_secrets(seen)  # type: ignore[assignment]
    try:
        yield seen
    finally:
        identity.passphrase_matches = real  # type: ignore[assignment]


def attempt(call: Callable[[], Any]) -> str:
    try:
        call()
        return "in"
    except SentretError as exc:
        return str(exc)


# ----------------------------------------------------------------------------- the cases


def rotating_clients_at_a_name() -> None:
    with fresh() as (store, _), counting() as seen:
        for n in range(40):
            attempt(lambda n=n: store.sign_in("s", "carol", f"guess {n}", client=f"203.0.113.{n}"))
        expect(len(seen) <= CEILING_FREE_FAILURES, "access", f"{len(seen)} passphrases checked for 40 clients")


def rotating_clients_at_a_link() -> None:
    with fresh() as (store, _):
        carol = store.sign_in("s", "carol", PASSPHRASE).signed_in_as[1]
        with counting() as seen:
            for n in range(40):
                attempt(lambda n=n: store.sign_in_with_token("s", f"{carol}.guess{n}", client=f"203.0.113.{n}"))
        expect(len(seen) <= CEILING_FREE_FAILURES, "access", f"{len(seen)} link secrets checked for 40 clients")


def rotating_clients_at_the_admin_token() -> None:
    with fresh() as (store, _):
        answers = [attempt(lambda n=n: store.admin(f"guess {n}", client=f"203.0.113.{n}")) for n in range(40)]
        checked = answers.count("wrong admin token")
        expect(checked <= CEILING_FREE_FAILURES, "access", f"{checked} admin tokens checked for 40 clients")


def concurrent_rotating_clients() -> None:
    with fresh() as (store, clock), counting() as seen:
        stores = []
        for _ in range(24):
            other = JudgmentStore(store.path)
            other.throttle = SignInThrottle(clock=clock)
            stores.append(other)
        start = threading.Barrier(len(stores))

        def guess(n: int) -> None:
            start.wait()
            attempt(lambda: stores[n].sign_in("s", "carol", f"guess {n}", client=f"203.0.113.{n}"))

        threads = [threading.Thread(target=guess, args=(n,)) for n in range(len(stores))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for other in stores:
            other.close()
        expect(len(seen) <= CEILING_FREE_FAILURES, "access", f"{len(seen)} checked in a burst from 24 clients")


def growing_wait_not_a_lock_out() -> None:
    with fresh() as (store, clock):
        for n in range(CEILING_FREE_FAILURES):
            attempt(lambda n=n: store.sign_in("s", "carol", f"guess {n}", client=f"203.0.113.{n}"))
        refused = attempt(lambda: store.sign_in("s", "carol", PASSPHRASE, client="198.51.100.1"))
        expect(refused.startswith("too many failed sign-ins"), "access", f"no wait at the ceiling: {refused}")
        clock.now += 60.0  # at most the cap
        answer = attempt(lambda: store.sign_in("s", "carol", PASSPHRASE, client="198.51.100.1"))
        expect(answer == "in", "wrong", f"still refused after the longest wait: {answer}")


def stranger_locks_carol_out_behind_one_address() -> None:
    with fresh() as (store, _):
        handle = store.sign_in("s", "carol", PASSPHRASE, client="local")
        browser = store.known_browsers.remember(store, known_browsers.annotator(handle.signed_in_as[1]))
        for n in range(12):
            attempt(lambda n=n: store.sign_in("s", "carol", f"guess {n}", client="local"))
        for n in range(20):
            attempt(lambda n=n: store.sign_in("s", "carol", f"guess {n}", client=f"203.0.113.{n}"))
        answer = attempt(lambda: store.sign_in("s", "carol", PASSPHRASE, client="local", known=browser))
        expect(answer == "in", "wrong", f"carol's own browser refused: {answer}")


def stranger_locks_the_admin_out() -> None:
    with fresh() as (store, _):
        browser = store.known_browsers.remember(store, known_browsers.ADMIN)
        for n in range(8):
            attempt(lambda n=n: store.admin(f"guess {n}", client="local"))
        for n in range(20):
            attempt(lambda n=n: store.admin(f"guess {n}", client=f"203.0.113.{n}"))
        answer = attempt(lambda: store.admin(TOKEN, client="local", known=browser))
        expect(answer == "in", "wrong", f"the admin's own browser refused: {answer}")


def a_browser_known_for_bob_guesses_at_carol() -> None:
    with fresh() as (store, _):
        bob = store.sign_in("s", "bob", "bob's own passphrase").signed_in_as[1]
        browser = store.known_browsers.remember(store, known_browsers.annotator(bob))
        with counting() as seen:
            for n in range(20):
                attempt(lambda n=n: store.sign_in("s", "carol", f"guess {n}", client=f"203.0.113.{n}", known=browser))
        expect(len(seen) <= CEILING_FREE_FAILURES, "access", f"bob's browser got {len(seen)} guesses at carol")


def a_known_browser_guessing_is_slowed_down() -> None:
    with fresh() as (store, _):
        carol = store.sign_in("s", "carol", PASSPHRASE).signed_in_as[1]
        browser = store.known_browsers.remember(store, known_browsers.annotator(carol))
        with counting() as seen:
            for n in range(20):
                attempt(lambda n=n: store.sign_in("s", "carol", f"guess {n}", client=f"203.0.113.{n}", known=browser))
        expect(len(seen) <= FREE_FAILURES, "access", f"a known browser got {len(seen)} guesses")


def forged_browser_ids() -> None:
    with fresh() as (store, _):
        for forged in ("", "x" * 100_000, "\udcff", "é", None, 7, b"raw", ["list"], "made-up"):
            expect(store.known_browsers.annotator_key(store, forged, "s", "carol") is None, "access",
                   f"{forged!r} taken for a known browser")
            expect(store.known_browsers.key(store, forged, known_browsers.ADMIN) is None, "access",
                   f"{forged!r} taken for the admin's browser")
            attempt(lambda forged=forged: store.sign_in("s", "carol", "guess", client="local", known=forged))
            attempt(lambda forged=forged: store.admin("guess", client="local", known=forged))


def admin_token_rotated_and_back_unseen() -> None:
    saved = os.environ.get(ADMIN_TOKEN_ENV)
    try:
        with tempfile.TemporaryDirectory() as folder:
            db = Path(folder) / "rotate.sqlite"
            os.environ[ADMIN_TOKEN_ENV] = "token-T"
            with JudgmentStore(db) as store:
                web_id = store.web_sessions.start_admin(store, "token-T")
            os.environ[ADMIN_TOKEN_ENV] = "token-T-prime"
            JudgmentStore(db).close()
            os.environ[ADMIN_TOKEN_ENV] = "token-T"
            with JudgmentStore(db) as store:
                try:
                    store.web_sessions.resume_admin(store, web_id, "token-T")
                except SessionEnded:
                    return
                raise Bad("access", "an admin sign-in made under T came back after T′ and back to T")
    finally:
        if saved is None:
            os.environ.pop(ADMIN_TOKEN_ENV, None)
        else:
            os.environ[ADMIN_TOKEN_ENV] = saved


def forged_forwarded_for() -> None:
    sentret_app = AddressPolicy.from_environment(server_environment(()))
    bare = AddressPolicy.from_environment({})
    trusted = AddressPolicy.from_environment(server_environment(parse_trusted(["127.0.0.1"])))
    forged = [f"203.0.113.{n}" for n in range(20)]
    mine = {throttle_client(None, [a], sentret_app) for a in forged}
    expect(mine == {"local"}, "access", f"sentret app counted forged addresses as {sorted(mine)[:3]}…")
    unknown = {throttle_client(a, [a], bare) for a in forged}
    expect(unknown == {UNVERIFIED}, "access", f"a bare server counted forged addresses as {sorted(unknown)[:3]}…")
    named = {throttle_client(a, [a], trusted) for a in forged}
    expect(len(named) == 20, "wrong", "a named proxy's addresses were not believed")


def garbage_addresses() -> None:
    policies = [AddressPolicy.from_environment(env) for env in (
        {}, server_environment(()), {"SENTRET_TRUSTED_PROXY": "\udcff", "FORWARDED_ALLOW_IPS": "*"},
        {"SENTRET_TRUSTED_PROXY": "1.2.3.4/99", "FORWARDED_ALLOW_IPS": "x" * 10_000})]
    for reported in (None, "", "::1", "[::1]:80", "1.2.3.4:99999", "\udcff", "a" * 100_000, 7, "::ffff:127.0.0.1"):
        for header in ([], ["\udcff"], ["," * 10_000], ["1.2.3.4, " * 5_000], ["[::1", "]:x"]):
            for policy in policies:
                key = throttle_client(reported, header, policy)
                expect(isinstance(key, str) and len(key) <= 100, "wrong", f"{str(reported)[:20]!r}: key {key[:40]!r}")


def bad_trusted_proxy_options() -> None:
    from sentret_core.cli.main import main

    for value in ("*", "1.2.3.4/99", "proxy.example", "\udcff", "a" * 10_000, "10.0.0.1,*", "::1/200"):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["app", "--trusted-proxy", value])
        text = err.getvalue()
        if "Traceback" in text or "internal error" in text:
            raise Bad("raw", f"--trusted-proxy {value[:20]!r}: {text[-200:]}")
        expect(code == 2 and "--trusted-proxy" in text, "wrong", f"--trusted-proxy {value[:20]!r}: exit {code}")


CASES: dict[str, Callable[[], None]] = {
    "40 rotating clients at one name": rotating_clients_at_a_name,
    "40 rotating clients at one sign-in link": rotating_clients_at_a_link,
    "40 rotating clients at the admin token": rotating_clients_at_the_admin_token,
    "a burst from 24 clients at once": concurrent_rotating_clients,
    "the ceiling is a wait, not a lock-out": growing_wait_not_a_lock_out,
    "12 wrong for carol from 'local', then hers": stranger_locks_carol_out_behind_one_address,
    "8 wrong admin tokens from 'local', then the admin's": stranger_locks_the_admin_out,
    "a browser known for bob guesses at carol": a_browser_known_for_bob_guesses_at_carol,
    "a known browser guessing": a_known_browser_guessing_is_slowed_down,
    "forged known-browser ids": forged_browser_ids,
    "admin token T, T′ unseen, T again": admin_token_rotated_and_back_unseen,
    "forged X-Forwarded-For": forged_forwarded_for,
    "garbage addresses and headers": garbage_addresses,
    "bad --trusted-proxy values": bad_trusted_proxy_options,
}


def run_case(name: str, case: Callable[[], None]) -> dict[str, str]:
    os.environ.setdefault(ADMIN_TOKEN_ENV, TOKEN)
    try:
        case()
    except Bad as bad:
        return {"case": name, "outcome": bad.outcome, "message": str(bad)}
    except SentretError as exc:
        return {"case": name, "outcome": "wrong", "message": f"unexpected refusal: {exc}"}
    except Exception as exc:  # every other exception is what this counts
        return {"case": name, "outcome": "raw", "message": f"{type(exc).__name__}: {exc}"[:300]}
    return {"case": name, "outcome": "ok", "message": ""}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write every case's outcome here")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args(argv)
    os.environ[ADMIN_TOKEN_ENV] = TOKEN
    results = [run_case(name, case) for name, case in CASES.items()]
    if not args.quiet:
        for result in results:
            print(f"{result['outcome']:7} {result['case']}" + (f": {result['message']}" if result["message"] else ""))
    counts = Counter(result["outcome"] for result in results)
    print(f"{len(results)} cases: " + ", ".join(f"{counts.get(o, 0)} {o}" for o in OUTCOMES))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=True))
    return 0 if counts.get("ok", 0) == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
