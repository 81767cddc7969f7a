"""Slowing down repeated failed sign-ins, counted in the judgments database.

Attempts are rows of the ``sign_in_attempts`` table (schema v4), so every process that opens the
database (several app processes, the CLI) shares one count, and a restart forgets nothing. Each
attempt is counted under several keys: the (session, name, client) that was tried — a stranger who
fails Alice's name from their client slows down only that client on Alice's name, never Alice on
hers — and the client alone, which slows down one client trying many names. An annotator's *client*
is what the app can really tell apart: the browser's IP address (see ``ui/annotate/sign_in.py``);
a per-browser session id would not do, since a guesser gets a new one with every connection.

The first ``free`` failures under a key within ``window`` seconds cost nothing; after that, every
attempt under that key must wait ``base · 2^(failures − free)`` seconds (at most ``cap``) after the
key's last failure, and an attempt made sooner is refused without checking the secret. Checking the
wait and counting the attempt under the name and client happen in one ``BEGIN IMMEDIATE``
transaction *before* the secret is checked, so concurrent guesses are serialised: a burst of N
guesses at one name from one client checks at most ``free`` secrets. The client-wide key counts
failures once they are known (so that people signing in at once from one address, or from one
machine, do not hold each other up). A success clears the name's failures, not the client's: a
client cannot reset its count by signing in to an account of its own.

Two more keys hold when the client cannot be told apart (everyone behind one proxy or tunnel is one
client, see :mod:`.client_address`). A *ceiling* per name across every client — ``("every client", …)``
— counted before the check like the name and client: its first ``ceiling_free`` failures cost nothing,
then every try at that name waits as above, from any client. It is a growing wait, never a lock-out, and a
success does not clear it (only the window forgets), so a guesser who rotates addresses checks at most
``ceiling_free`` secrets at once and then one per wait. And a *known browser* — one that signed in as that
name before and shows its cookie for it (:mod:`.known_browsers`) — is counted under its own key instead of
all of these: strangers' failures never hold up the right secret from such a browser, and its own failures
slow down only itself.

A store opened read-only is a local reading of the file by someone who holds it: nothing is counted.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sentret_core.errors import SentretError

if TYPE_CHECKING:
    import sqlite3

    from sentret_core.annotation.store import JudgmentStore

FREE_FAILURES = 3
CEILING_FREE_FAILURES = 10  # failures at one name from every client together before the name itself waits
BASE_DELAY_S = 1.0
MAX_DELAY_S = 60.0
WINDOW_S = 15 * 60.0

Key = tuple[str, ...]
EVERY_CLIENT = "every client"  # the first part of a ceiling's key


def ceiling_of(*name: str) -> Key:
    """The ceiling's key for the name ``name`` (e.g. ``("name", session, name key)``), across every client."""
    return (EVERY_CLIENT, *name)


class SignInThrottle:
    """The policy of slowing down (see the module docstring); the counts live in the store's file.

    ``clock`` gives seconds on a clock every process shares (wall time; tests pass a fake one).
    """

    def __init__(
        self,
        *,
        free: int = FREE_FAILURES,
        ceiling_free: int = CEILING_FREE_FAILURES,
        base: float = BASE_DELAY_S,
        cap: float = MAX_DELAY_S,
        window: float = WINDOW_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.free, self.ceiling_free, self.base, self.cap, self.window = free, ceiling_free, base, cap, window
        self.clock = clock

    def wait(self, store: JudgmentStore, key: Key) -> float:
        """How many seconds an attempt under ``key`` must still wait (0: it may go ahead)."""
        with store.db.read() as conn:
            return self._wait(conn, key, self.clock())

    def attempt(
        self,
        store: JudgmentStore,
        target: Key,
        others: tuple[Key, ...],
        what: str,
        check: Callable[[], bool],
        *,
        ceiling: Key | None = None,
        known: Key | None = None,
        cheap: bool = False,
    ) -> bool:
        """``check()`` (is the secret right?) unless ``target``, ``ceiling`` or one of ``others`` must still
        wait (SentretError naming the attempt, ``what``, and the wait). A wrong secret (or an error in
        ``check``) counts as a failure under every key; a right one clears ``target``'s failures.

        ``target`` (the name and client) and ``ceiling`` (the name, every client) are counted *before* the
        check, in the transaction that checks the wait, so that concurrent guesses at one name are
        serialised; ``others`` (the client alone) only once the check failed, so that several people
        signing in at once from one address do not hold each other up. ``known``: the key of a known
        browser (see the module docstring), which then stands for all of them. ``cheap``: the check costs
        nothing (a constant-time comparison), so it runs inside the transaction, and a success writes
        nothing; otherwise (scrypt) the secret is checked after the transaction, so the write lock is not
        held meanwhile.
        """
        if store.read_only:
            return check()
        if known is not None:
            target, others, ceiling = known, (), None
        before = (target,) if ceiling is None else (target, ceiling)
        keys = (*before, *others)
        if cheap:
            with store.db.transaction() as conn:
                now = self._refuse_if_waiting(conn, keys, what)
                right = check()
                if right:
                    conn.execute("DELETE FROM sign_in_attempts WHERE key = ?", (_text(target),))
                else:
                    self._count(conn, keys, now)
            return right
        with store.db.transaction() as conn:
            now = self._refuse_if_waiting(conn, keys, what)
            rows = [conn.execute("INSERT INTO sign_in_attempts (key, at) VALUES (?, ?)", (_text(key), now)).lastrowid
                    for key in before]
        right = False
        try:
            right = check()
        finally:
            with store.db.transaction() as conn:
                if right:  # the name's failures go, and this attempt's count at the ceiling (not the others')
                    conn.execute("DELETE FROM sign_in_attempts WHERE key = ?", (_text(target),))
                    conn.executemany("DELETE FROM sign_in_attempts WHERE id = ?", [(row,) for row in rows])
                else:
                    self._count(conn, others, now)
        return right

    # ----------------------------------------------------------------- inside a transaction

    def _refuse_if_waiting(self, conn: sqlite3.Connection, keys: tuple[Key, ...], what: str) -> float:
        now = self.clock()
        conn.execute("DELETE FROM sign_in_attempts WHERE at < ?", (now - self.window,))
        wait = max((self._wait(conn, key, now) for key in keys), default=0.0)
        if wait > 0:
            raise SentretError(f"too many failed sign-ins {what}: try again in {math.ceil(wait)} s")
        return now

    def _wait(self, conn: sqlite3.Connection, key: Key, now: float) -> float:
        failures, last = conn.execute(
            "SELECT count(*), max(at) FROM sign_in_attempts WHERE key = ? AND at >= ?",
            (_text(key), now - self.window),
        ).fetchone()
        free = self.ceiling_free if key[:1] == (EVERY_CLIENT,) else self.free
        if failures < free:
            return 0.0
        delay = min(self.cap, self.base * 2.0 ** min(failures - free, 64))
        return max(0.0, min(delay, float(last) + delay - now))  # min: a clock set back waits no longer

    def _count(self, conn: sqlite3.Connection, keys: tuple[Key, ...], now: float) -> None:
        conn.executemany("INSERT INTO sign_in_attempts (key, at) VALUES (?, ?)", [(_text(key), now) for key in keys])


def _text(key: Key) -> str:
    """The key as stored: JSON (ASCII, so a lone surrogate cannot break it); a long one by its hash."""
    text = json.dumps(list(key))
    return text if len(text) <= 512 else "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()
