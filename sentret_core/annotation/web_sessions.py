"""Browser sign-ins that survive reloads, new tabs and server restarts, for a bounded time.

Signing in (an annotator with their own secret, the admin with the admin token) starts a *web
session*: a row of ``web_sessions`` (schema v5) found by the SHA-256 of a random 256-bit id. The
browser keeps only the id (the app puts it in a cookie, see ``ui/browser_session.py``); the
database keeps only its hash, so a copy of the file signs nobody in. A web session ends:

* at ``expires_at`` — a fixed time after sign-in (``ANNOTATOR_LIFETIME_S``, ``ADMIN_LIFETIME_S``),
  never extended, so a stolen id is worth a bounded time; at exactly ``expires_at`` it has ended;
* for an annotator, as soon as the admin re-keys, renames, disables or removes them (the row
  holds the credential counter it was made under, which every such change bumps, see
  :mod:`.identity`);
* for the admin, as soon as the admin token changes (the row holds SHA-256(id ‖ token), so the
  token itself is never stored);
* at sign-out (the row is deleted).

An ended web session stays ended: the row is deleted as soon as a resume finds it over, so a clock set
back afterwards revives nothing, and a clock that reads earlier than the sign-in (by more than
``CLOCK_SKEW_S``) ends it too. An admin web session found made under another token is deleted the same
way, so rotating a leaked token and rotating back does not revive it. Nor does it when no browser came back
while the other token was in force: the database keeps the scrypt hash of the token the admin's sign-ins
were made under, and a store opened for writing with another ``$SENTRET_ADMIN_TOKEN`` (a restart), like
any admin sign-in or resume under another token, ends every admin web session and known browser
(:func:`end_other_tokens`): a web session's token check is erased, so no token matches it again, and the
row is deleted when its browser comes back (and is told the token changed) or at its expiry.

Every action of an annotator's handle checks its web session in the transaction that acts
(:meth:`AnnotatorHandle.check_access`), so an ended session refuses the very next action.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from sentret_core.annotation.annotator import AnnotatorHandle, SignedOut
from sentret_core.annotation.auth import hash_passphrase, passphrase_matches
from sentret_core.annotation.known_browsers import ADMIN, MAX_ID
from sentret_core.errors import SentretError

if TYPE_CHECKING:
    import sqlite3

    from sentret_core.annotation.store import JudgmentStore

ANNOTATOR_LIFETIME_S = 12 * 3600.0  # a working day: signing in again costs one link click
ADMIN_LIFETIME_S = 8 * 3600.0
CLOCK_SKEW_S = 300.0  # a clock this much behind a sign-in's time is set back, not drifting


class SessionEnded(SignedOut):
    """The web session is over (expired, revoked or signed out); the message says which, if known."""


class Resumed(NamedTuple):
    handle: AnnotatorHandle
    expires_at: float


def _hash(web_id: str) -> str:
    return hashlib.sha256(web_id.encode("utf-8", "surrogatepass")).hexdigest()


def _admin_check(web_id: str, token: str) -> str:
    return hashlib.sha256(f"{web_id}\n{token}".encode("utf-8", "surrogatepass")).hexdigest()


def _well_formed(web_id: object) -> bool:
    return isinstance(web_id, str) and 0 < len(web_id) <= MAX_ID and web_id.isascii()


@functools.lru_cache(maxsize=8)
def _token_is(token: str, stored: str) -> bool:
    return passphrase_matches(token, stored)  # scrypt: once per process and token


def _same_token(conn: sqlite3.Connection, token: str) -> bool:
    row = conn.execute("SELECT token_hash FROM admin_token").fetchone()
    return row is not None and _token_is(token, str(row[0]))


def end_other_tokens(store: JudgmentStore, token: str) -> None:
    """Unless the admin's sign-ins were made under ``token`` (the admin token now), end them all: every admin
    web session (its token check erased) and every browser known as the admin's; ``token``'s hash is kept
    for the next check."""
    with store.db.read() as conn:
        if _same_token(conn, token):
            return
    with store.db.transaction() as conn:
        if _same_token(conn, token):
            return
        # the checks erased, nothing can match them again; each row goes when its browser is told why, or at expiry
        conn.execute("UPDATE web_sessions SET admin_check = '' WHERE kind = 'admin'")
        conn.execute("DELETE FROM known_browsers WHERE who = ?", (ADMIN,))
        conn.execute("INSERT OR REPLACE INTO admin_token (id, token_hash) VALUES (1, ?)", (hash_passphrase(token),))


class WebSessions:
    """Starting, resuming and ending web sessions; ``clock`` gives wall-clock seconds (tests pass a fake)."""

    def __init__(
        self,
        *,
        annotator_lifetime: float = ANNOTATOR_LIFETIME_S,
        admin_lifetime: float = ADMIN_LIFETIME_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.annotator_lifetime, self.admin_lifetime, self.clock = annotator_lifetime, admin_lifetime, clock

    # ----------------------------------------------------------------- annotators

    def start_annotator(self, store: JudgmentStore, handle: AnnotatorHandle) -> str:
        """A new web session for a freshly signed-in ``handle``; returns its id (for the browser only).
        ``handle`` is bound to it from now on: ending the web session ends the handle."""
        web_id = secrets.token_urlsafe(32)
        now = self.clock()
        with store.db.transaction() as conn:
            handle.check_access(conn)
            self._forget_ended(conn, now)
            conn.execute(
                "INSERT INTO web_sessions (id_hash, kind, session_id, annotator_id, credential, created_at,"
                " expires_at) VALUES (?, 'annotator', ?, ?, ?, ?, ?)",
                (_hash(web_id), *handle.signed_in_as, now,
                 now + self.annotator_lifetime),
            )
        handle.bind_web_session(_hash(web_id), self)
        return web_id

    def resume_annotator(self, store: JudgmentStore, web_id: object) -> Resumed:
        """The handle of the annotator signed in as web session ``web_id``; :class:`SessionEnded`
        (saying why) if it has expired or their access changed, or if there is no such session."""
        if not _well_formed(web_id):
            raise SessionEnded("this browser's sign-in is not valid; sign in again")
        assert isinstance(web_id, str)
        with store.db.read() as conn:
            row = conn.execute(
                "SELECT w.expires_at, w.credential, s.id, s.name, a.id, a.name, a.role FROM web_sessions w"
                " JOIN sessions s ON s.id = w.session_id JOIN annotators a ON a.id = w.annotator_id"
                " WHERE w.id_hash = ? AND w.kind = 'annotator'",
                (_hash(web_id),),
            ).fetchone()
        if row is None:
            raise SessionEnded("your sign-in has ended (you signed out, or it was removed); sign in again")
        expires_at, credential, session_id, session, annotator_id, name, role = row
        handle = AnnotatorHandle(store, int(session_id), str(session), int(annotator_id), str(name), int(credential),
                                 str(role))
        handle.bind_web_session(_hash(web_id), self)
        try:
            handle.check_access()  # SignedOut/SessionEnded: expired, disabled, removed or re-keyed
        except SignedOut:
            self._forget(store, _hash(web_id))
            raise
        return Resumed(handle, float(expires_at))

    def _over(self, created_at: float, expires_at: float) -> bool:
        now = self.clock()
        return now >= expires_at or now < created_at - CLOCK_SKEW_S

    def check(self, conn: sqlite3.Connection, id_hash: str, session: str) -> None:
        """Inside a handle's transaction: :class:`SessionEnded` if its web session is over."""
        row = conn.execute("SELECT created_at, expires_at FROM web_sessions WHERE id_hash = ?",
                           (id_hash,)).fetchone()
        if row is None:
            raise SessionEnded(f"you are signed out of session {session!r} (you signed out elsewhere); sign in again")
        if self._over(float(row[0]), float(row[1])):
            raise SessionEnded(
                f"your sign-in to session {session!r} expired after {self.annotator_lifetime / 3600:g} h; "
                "sign in again with your link or passphrase (your grades are all saved)"
            )

    def expires_at(self, store: JudgmentStore, handle: AnnotatorHandle) -> float | None:
        """When ``handle``'s web session ends (None: it has none, or it is gone)."""
        id_hash = handle.web_session_hash
        if id_hash is None:
            return None
        with store.db.read() as conn:
            row = conn.execute("SELECT expires_at FROM web_sessions WHERE id_hash = ?", (id_hash,)).fetchone()
        return None if row is None else float(row[0])

    # ----------------------------------------------------------------- the admin

    def start_admin(self, store: JudgmentStore, token: str) -> str:
        """A new admin web session for the (already checked) admin ``token``; returns its id."""
        end_other_tokens(store, token)
        web_id = secrets.token_urlsafe(32)
        now = self.clock()
        with store.db.transaction() as conn:
            self._forget_ended(conn, now)
            conn.execute(
                "INSERT INTO web_sessions (id_hash, kind, admin_check, created_at, expires_at)"
                " VALUES (?, 'admin', ?, ?, ?)",
                (_hash(web_id), _admin_check(web_id, token), now, now + self.admin_lifetime),
            )
        return web_id

    def resume_admin(self, store: JudgmentStore, web_id: object, token: str) -> None:
        """Nothing if ``web_id`` is a live admin web session made with ``token`` (the admin token
        now); :class:`SessionEnded` saying why otherwise."""
        if not _well_formed(web_id):
            raise SessionEnded("this browser's admin sign-in is not valid; enter the admin token again")
        assert isinstance(web_id, str)
        with store.db.read() as conn:
            row = conn.execute(
                "SELECT admin_check, created_at, expires_at FROM web_sessions WHERE id_hash = ? AND kind = 'admin'",
                (_hash(web_id),),
            ).fetchone()
        if row is None:
            raise SessionEnded("your admin sign-in has ended; enter the admin token again")
        if self._over(float(row[1]), float(row[2])):
            self._forget(store, _hash(web_id))
            raise SessionEnded(
                f"your admin sign-in expired after {self.admin_lifetime / 3600:g} h; enter the admin token again"
            )
        if not hmac.compare_digest(str(row[0]), _admin_check(web_id, token)):
            self._forget(store, _hash(web_id))  # made under another token: ended for good
            raise SessionEnded("the admin token has changed since you signed in; enter the new one")
        if not store.read_only:
            with store.db.read() as conn:
                changed = not _same_token(conn, token)
            if changed:  # made under this token, but another was in force since: ended like every admin sign-in
                end_other_tokens(store, token)
                raise SessionEnded("the admin token has changed since you signed in; enter the admin token again")

    # ----------------------------------------------------------------- both

    def end(self, store: JudgmentStore, web_id: object) -> None:
        """Sign out: the web session ``web_id`` no longer signs anyone in (nothing if there is none)."""
        if not _well_formed(web_id):
            return
        assert isinstance(web_id, str)
        self._forget(store, _hash(web_id))

    @staticmethod
    def _forget(store: JudgmentStore, id_hash: str) -> None:
        try:
            with store.db.transaction() as conn:
                conn.execute("DELETE FROM web_sessions WHERE id_hash = ?", (id_hash,))
        except SentretError:
            pass  # a read-only or busy file: an ended session is refused all the same

    @staticmethod
    def _forget_ended(conn: sqlite3.Connection, now: float) -> None:
        conn.execute("DELETE FROM web_sessions WHERE expires_at <= ?", (now,))
