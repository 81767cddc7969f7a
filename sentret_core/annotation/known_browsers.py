"""Known browsers: a browser that signed in as someone before, so that strangers' failures never hold it up.

Everyone behind one proxy or tunnel is one client to the throttle (:mod:`.client_address`), and a
name's ceiling counts failures from every client (:mod:`.throttle`): a stranger can make a name wait.
So every successful sign-in also marks the browser as *known* for whom it signed in as (an annotator,
or the admin): a row of ``known_browsers`` found by the SHA-256 of a random id that the browser keeps in
a cookie of its own, which outlives sign-out and the web session (``LIFETIME_S``, renewed at every
sign-in). A sign-in attempt from a known browser for that same person is counted under the browser's
own key instead of the name's, the client's and the ceiling: its right secret is never refused for
others' failures, and its own wrong ones slow down only itself.

A known browser signs nobody in: the secret is checked all the same. Its rows end at their expiry,
with the annotator (a removed annotator's name may be someone else's later: the row names the
annotator's id), and, for the admin, when the admin token changes (:func:`.web_sessions.end_other_tokens`).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sentret_core.annotation.throttle import Key

if TYPE_CHECKING:
    from sentret_core.annotation.store import JudgmentStore

LIFETIME_S = 30 * 24 * 3600.0  # a month of sign-ins from the same browser
MAX_ID = 200  # longer presented ids (a known browser's, a web session's) are refused unread
ADMIN = "admin"  # the admin's ``who``; an annotator's is "annotator:<id>"


def annotator(annotator_id: int) -> str:
    """The ``who`` of the annotator with id ``annotator_id`` (ids are unique across sessions)."""
    return f"annotator:{int(annotator_id)}"


def _hash(browser_id: str) -> str:
    return hashlib.sha256(browser_id.encode("ascii")).hexdigest()


def _well_formed(browser_id: object) -> bool:
    return isinstance(browser_id, str) and 0 < len(browser_id) <= MAX_ID and browser_id.isascii()


class KnownBrowsers:
    """Marking browsers known and finding them; ``clock`` gives wall-clock seconds (tests pass a fake)."""

    def __init__(self, *, lifetime: float = LIFETIME_S, clock: Callable[[], float] = time.time) -> None:
        self.lifetime, self.clock = lifetime, clock

    def remember(self, store: JudgmentStore, who: str, presented: object = None) -> str:
        """Mark the browser known for ``who`` (just signed in) for ``lifetime`` seconds; returns the id its
        cookie keeps: ``presented`` (the id the browser sent) if it names a live known browser, else a new one."""
        now = self.clock()
        with store.db.transaction() as conn:
            conn.execute("DELETE FROM known_browsers WHERE expires_at <= ?", (now,))
            live = _well_formed(presented) and conn.execute(
                "SELECT 1 FROM known_browsers WHERE id_hash = ? LIMIT 1", (_hash(str(presented)),)).fetchone()
            browser_id = str(presented) if live else secrets.token_urlsafe(32)
            conn.execute("INSERT OR REPLACE INTO known_browsers (id_hash, who, expires_at) VALUES (?, ?, ?)",
                         (_hash(browser_id), who, now + self.lifetime))
        return browser_id

    def key(self, store: JudgmentStore, presented: object, who: str) -> Key | None:
        """The throttle key of the browser that sent ``presented``, if it is known for ``who``; else None."""
        if not _well_formed(presented) or store.read_only:
            return None
        id_hash = _hash(str(presented))
        with store.db.read() as conn:
            row = conn.execute("SELECT expires_at FROM known_browsers WHERE id_hash = ? AND who = ?",
                               (id_hash, who)).fetchone()
        if row is None or self.clock() >= float(row[0]):
            return None
        return ("known", id_hash, who)

    def annotator_key(self, store: JudgmentStore, presented: object, session: str, name_key: str) -> Key | None:
        """:meth:`key` for the annotator now called ``name_key`` in ``session`` (None: no such annotator)."""
        if not _well_formed(presented) or store.read_only:
            return None
        with store.db.read() as conn:
            row = conn.execute(
                "SELECT a.id FROM annotators a JOIN sessions s ON s.id = a.session_id"
                " WHERE s.name = ? AND a.name_key = ? AND a.removed_at IS NULL", (session, name_key)).fetchone()
        return None if row is None else self.key(store, presented, annotator(int(row[0])))
