"""Slowing down repeated failed sign-ins, per annotator name and per client.

Each failure is remembered for ``window`` seconds under two keys: the (session, name) that was tried
and the client that tried it (an IP address, or whatever the caller identifies a client by). The
first ``free`` failures under a key cost nothing; after that, every attempt under that key must
wait ``base · 2^(failures − free)`` seconds (at most ``cap``) after the key's last failure, and an
attempt made sooner is refused without checking the secret. A success clears its name's failures,
not the client's: a client cannot reset its count by signing in to an account of its own.

The counts live in memory, one :class:`SignInThrottle` per :class:`JudgmentStore` (the app keeps one
store per process), so a restart forgets them.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable

from sentret_core.errors import SentretError

FREE_FAILURES = 3
BASE_DELAY_S = 1.0
MAX_DELAY_S = 60.0
WINDOW_S = 15 * 60.0
MAX_KEYS = 100_000  # beyond this many remembered keys the oldest are dropped


class SignInThrottle:
    """Failed sign-ins per key, and the wait they impose (see the module docstring)."""

    def __init__(
        self,
        *,
        free: int = FREE_FAILURES,
        base: float = BASE_DELAY_S,
        cap: float = MAX_DELAY_S,
        window: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.free, self.base, self.cap, self.window = free, base, cap, window
        self.clock = clock
        self._failures: dict[Hashable, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: Hashable, now: float) -> deque[float]:
        found = self._failures.get(key)
        if found is None:
            return deque()
        while found and now - found[0] > self.window:
            found.popleft()
        if not found:
            del self._failures[key]
        return found

    def wait(self, key: Hashable) -> float:
        """How many seconds an attempt under ``key`` must still wait (0: it may go ahead)."""
        with self._lock:
            now = self.clock()
            failures = self._recent(key, now)
            if len(failures) < self.free:
                return 0.0
            delay = min(self.cap, self.base * 2.0 ** (len(failures) - self.free))
            return max(0.0, failures[-1] + delay - now)

    def check(self, keys: tuple[Hashable, ...], what: str) -> None:
        """Raise a SentretError when any of ``keys`` must still wait; ``what`` names the attempt."""
        wait = max((self.wait(key) for key in keys), default=0.0)
        if wait > 0:
            raise SentretError(
                f"too many failed sign-ins {what}: try again in {math.ceil(wait)} s"
            )

    def failed(self, keys: tuple[Hashable, ...]) -> None:
        with self._lock:
            now = self.clock()
            for key in keys:
                self._recent(key, now)
                self._failures.setdefault(key, deque()).append(now)
            while len(self._failures) > MAX_KEYS:
                self._failures.pop(next(iter(self._failures)))

    def succeeded(self, key: Hashable) -> None:
        with self._lock:
            self._failures.pop(key, None)
