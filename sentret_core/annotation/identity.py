"""Who an annotator is: signing in with a personal secret, and the admin's annotator management.

The admin adds each annotator to a session (:meth:`AnnotatorAdmin.add_annotator`) and hands them
their secret, shown once: a sign-in link with a token, and a passphrase to type with their name.
Only scrypt hashes of both are stored. Signing in with either gives an AnnotatorHandle that reads
and writes that annotator's grades only; nobody else's secret opens it. Failed sign-ins are slowed
down per name and client, per client, and per name from every client, counted in the database
(:mod:`.throttle`), except from a browser known for that annotator (:mod:`.known_browsers`). Every change
the admin makes (rename, disable, enable, a new secret, remove) bumps the annotator's credential
counter, which signs out any browser signed in before; each is written to the append-only ``annotator_log``.

A removed annotator's grades stay in the database and in the history, but count nowhere (progress,
agreement, export, evaluation); the name becomes free for someone else.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from sentret_core.annotation import known_browsers
from sentret_core.annotation.annotator import AnnotatorHandle
from sentret_core.annotation.auth import (
    MAX_SECRET,
    hash_passphrase,
    name_key,
    new_passphrase,
    new_token,
    normalise_name,
    passphrase_matches,
    split_token,
    timestamp_now,
)
from sentret_core.annotation.connect import has_column, has_table
from sentret_core.annotation.records import PERSON, AnnotatorInfo, AnnotatorSecret
from sentret_core.annotation.roles import ANNOTATOR, check_role, role_of
from sentret_core.annotation.throttle import Key, ceiling_of
from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.annotation.store import JudgmentStore

MIN_PASSPHRASE = 8

_ROW = "id, name, kind, passphrase_hash, token_hash, disabled, credential, role"


# ----------------------------------------------------------------------------- signing in


def sign_in_with_passphrase(
    store: JudgmentStore, session: str, name: str, passphrase: str, client: str, known: object = None
) -> AnnotatorHandle:
    """An annotator's handle, for their name and personal passphrase (see the module docstring); ``known``:
    the browser's known-browser id, if it sent one (:mod:`.known_browsers`)."""
    key = name_key(name)
    session, client = str(session), str(client)
    found: list[tuple[int, bool, Any]] = []

    def right() -> bool:
        with store.db.read() as conn:
            session_id, _, is_open = store.db.session_row(conn, session)
            row = conn.execute(
                f"SELECT {_ROW} FROM annotators WHERE session_id = ? AND name_key = ? AND removed_at IS NULL",
                (session_id, key),
            ).fetchone()
        found.append((session_id, is_open, row))
        given = passphrase if isinstance(passphrase, str) and len(passphrase) <= MAX_SECRET else ""
        stored = row[3] if row is not None and row[2] == PERSON else None
        return passphrase_matches(given, stored) and bool(given)

    target, others = ("name", session, key, client), (("client", client),)
    browser = store.known_browsers.annotator_key(store, known, session, key) if known is not None else None
    if not store.throttle.attempt(store, target, others, f"for {normalise_name(name)!r}", right,
                                  ceiling=ceiling_of("name", session, key), known=browser):
        raise SentretError(f"wrong name or passphrase for session {session!r}")
    return _handle(store, session, *found[0])


def sign_in_with_link(
    store: JudgmentStore, session: str, token: str, client: str, known: object = None
) -> AnnotatorHandle:
    """An annotator's handle, for the token of their sign-in link (``known``: as for a passphrase)."""
    session, client = str(session), str(client)
    parsed = split_token(token)
    found: list[tuple[int, bool, Any]] = []

    def right() -> bool:
        with store.db.read() as conn:
            session_id, _, is_open = store.db.session_row(conn, session)
            row = None
            if parsed is not None:
                row = conn.execute(
                    f"SELECT {_ROW} FROM annotators WHERE session_id = ? AND id = ? AND removed_at IS NULL",
                    (session_id, parsed[0]),
                ).fetchone()
        found.append((session_id, is_open, row))
        stored = row[4] if row is not None and row[2] == PERSON else None
        return passphrase_matches(parsed[1] if parsed else "", stored)

    target: Key
    others: tuple[Key, ...]
    ceiling = browser = None
    if parsed is None:  # no secret to check, but the same cost and the same count as a wrong one
        target, others = ("client", client), ()
    else:
        target, others = ("link", session, str(parsed[0]), client), (("client", client),)
        ceiling = ceiling_of("link", session, str(parsed[0]))
        if known is not None:
            browser = store.known_browsers.key(store, known, known_browsers.annotator(parsed[0]))
    if not store.throttle.attempt(store, target, others, "with this link", right, ceiling=ceiling, known=browser):
        raise SentretError(
            f"this sign-in link is not valid for session {session!r} (it may have been replaced); "
            "ask the organiser for a new one"
        )
    return _handle(store, session, *found[0])


def _handle(store: JudgmentStore, session: str, session_id: int, is_open: bool, row: Any) -> AnnotatorHandle:
    annotator_id, shown, _, _, _, disabled, credential, role = row
    if disabled:
        raise SentretError(f"your access to session {session!r} is disabled; ask the organiser")
    if not is_open:
        raise SentretError(f"session {session!r} is closed; ask the organiser")
    return AnnotatorHandle(store, session_id, session, int(annotator_id), str(shown), int(credential), str(role))


# ----------------------------------------------------------------------------- the admin's side


class AnnotatorAdmin:
    """The admin's annotator management (mixed into :class:`~sentret_core.annotation.admin.Admin`)."""

    _store: JudgmentStore

    @property
    def store(self) -> JudgmentStore:
        """The store administered (its :attr:`~.store.JudgmentStore.db` for adjudication and session setup)."""
        return self._store

    @property
    def acting_as(self) -> str | None:
        """Who acts, for the logs: None for the admin token; a session admin's name (:mod:`.session_admin`)."""
        return None

    def annotators(self, session: str) -> list[AnnotatorInfo]:
        """The session's annotators (people and imports; removed ones are left out), by name."""
        with self._store.db.read() as conn:
            session_id = self.session_id(conn, session)
            role = "a.role" if has_column(conn, "annotators", "role") else f"'{ANNOTATOR}'"
            rows = conn.execute(
                "SELECT a.name, a.kind, a.disabled, a.passphrase_hash IS NOT NULL, a.token_hash IS NOT NULL,"
                " (SELECT count(*) FROM judgments j WHERE j.session_id = a.session_id AND j.annotator_id = a.id),"
                f" a.created_at, {role} FROM annotators a WHERE a.session_id = ? AND a.removed_at IS NULL"
                " ORDER BY a.name_key",
                (session_id,),
            ).fetchall()
        return [AnnotatorInfo(r[0], r[1], bool(r[2]), bool(r[3]), bool(r[4]), int(r[5]), r[6], r[7]) for r in rows]

    def add_annotator(
        self, session: str, name: str, passphrase: str | None = None, *, role: str = ANNOTATOR
    ) -> AnnotatorSecret:
        """Add a person to ``session`` with a new secret (returned once; only hashes are kept).

        ``passphrase``: the personal passphrase to use (at least 8 characters); default generated.
        ``role``: what they do there (:mod:`.roles`): grade (the default), review, or administer it.
        """
        shown, key = normalise_name(name), name_key(name)
        chosen = _check_passphrase(passphrase)
        role = self.may_give(check_role(role))
        with self._store.db.transaction() as conn:
            session_id = self.session_id(conn, session)
            if _find(conn, session_id, key) is not None:
                raise SentretError(f"session {session!r} already has an annotator named {shown!r}")
            _name_free(conn, session_id, shown, None)
            annotator_id = int(
                conn.execute(
                    "INSERT INTO annotators (session_id, name, name_key, kind, created_at, role)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (session_id, shown, key, PERSON, timestamp_now(), role),
                ).lastrowid
                or 0
            )
            _log(conn, session_id, annotator_id, "add", shown if role == ANNOTATOR else f"{shown} ({role})")
            return _new_secret(conn, session, session_id, annotator_id, shown, chosen)

    def new_secret(self, session: str, name: str, passphrase: str | None = None) -> AnnotatorSecret:
        """Replace an annotator's link and passphrase (the old ones stop working, and the browsers
        signed in with them are signed out); also how annotators of older sessions get a secret."""
        chosen = _check_passphrase(passphrase)
        with self._store.db.transaction() as conn:
            session_id, annotator_id, shown, kind = self._person_or_import(conn, session, name)
            if kind != PERSON:
                raise SentretError(f"{shown!r} holds imported grades; nobody signs in as it")
            return _new_secret(conn, session, session_id, annotator_id, shown, chosen)

    def set_role(self, session: str, name: str, role: str) -> None:
        """Make a person an annotator, a reviewer or the session's admin (:mod:`.roles`); their open browsers
        are signed out, and their grades, if any, stay and still count."""
        role = self.may_give(check_role(role))
        with self._store.db.transaction() as conn:
            session_id, annotator_id, shown, kind = self._person_or_import(conn, session, name)
            if kind != PERSON:
                raise SentretError(f"{shown!r} holds imported grades; it has no role")
            if role_of(conn, annotator_id) == role:
                return
            conn.execute("UPDATE annotators SET role = ?, credential = credential + 1 WHERE id = ?",
                         (role, annotator_id))
            conn.execute("INSERT INTO role_log (session_id, annotator_id, role, at) VALUES (?, ?, ?, ?)",
                         (session_id, annotator_id, role, timestamp_now()))

    def may_give(self, role: str) -> str:
        """``role``, if this admin may give it (the admin token may give every role)."""
        return role

    def may_change(self, role: str, name: str) -> None:
        """Refuse to change a person of ``role`` whom this admin may not change (the admin token may change anyone)."""

    def session_id(self, conn: sqlite3.Connection, session: str) -> int:
        """The id of ``session``, which this admin administers (the admin token: every session)."""
        return self._store.db.session_row(conn, session)[0]

    def rename_annotator(self, session: str, name: str, new_name: str) -> str:
        """Give an annotator another name (unique in the session once case-folded); returns it."""
        shown, key = normalise_name(new_name), name_key(new_name)
        with self._store.db.transaction() as conn:
            session_id, annotator_id, old, _ = self._person_or_import(conn, session, name)
            other = _find(conn, session_id, key)
            if other is not None and other != annotator_id:
                raise SentretError(f"session {session!r} already has an annotator named {shown!r}")
            _name_free(conn, session_id, shown, annotator_id)
            conn.execute(
                "UPDATE annotators SET name = ?, name_key = ?, credential = credential + 1 WHERE id = ?",
                (shown, key, annotator_id),
            )
            _log(conn, session_id, annotator_id, "rename", f"{old} → {shown}")
        return shown

    def disable_annotator(self, session: str, name: str) -> None:
        """Stop an annotator from signing in and grading (their grades still count)."""
        self._set_disabled(session, name, True)

    def enable_annotator(self, session: str, name: str) -> None:
        self._set_disabled(session, name, False)

    def _set_disabled(self, session: str, name: str, disabled: bool) -> None:
        with self._store.db.transaction() as conn:
            session_id, annotator_id, _, _ = self._person_or_import(conn, session, name)
            conn.execute(
                "UPDATE annotators SET disabled = ?, credential = credential + 1 WHERE id = ?",
                (int(disabled), annotator_id),
            )
            _log(conn, session_id, annotator_id, "disable" if disabled else "enable", None)

    def remove_annotator(self, session: str, name: str) -> None:
        """Remove an annotator: their secret is erased and their grades count nowhere any more, but
        stay in the history (:meth:`Admin.history`); the name becomes free."""
        with self._store.db.transaction() as conn:
            session_id, annotator_id, shown, _ = self._person_or_import(conn, session, name)
            stamp = timestamp_now()
            removed = f"{shown} (removed {stamp[:19].replace('T', ' ')}, #{annotator_id})"
            conn.execute(
                "UPDATE annotators SET name = ?, name_key = NULL, passphrase_hash = NULL, token_hash = NULL,"
                " disabled = 1, removed_at = ?, credential = credential + 1 WHERE id = ?",
                (removed, stamp, annotator_id),
            )
            _log(conn, session_id, annotator_id, "remove", shown)

    def annotator_log(self, session: str) -> list[tuple[str, str, str | None, str]]:
        """The admin's changes to the session's annotators: (annotator, action, detail, at), oldest first;
        a change of role is action ``role`` with the new role as its detail."""
        with self._store.db.read() as conn:
            session_id = self.session_id(conn, session)
            roles = (" UNION ALL SELECT a.name, 'role', r.role, r.at, 1, r.id FROM role_log r"
                     " JOIN annotators a ON a.id = r.annotator_id WHERE r.session_id = ?1"
                     if has_table(conn, "role_log") else "")
            rows = conn.execute(
                "SELECT a.name, l.action, l.detail, l.at, 0, l.id FROM annotator_log l"
                f" JOIN annotators a ON a.id = l.annotator_id WHERE l.session_id = ?1{roles} ORDER BY 4, 5, 6",
                (session_id,),
            ).fetchall()
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def _person_or_import(self, conn: sqlite3.Connection, session: str, name: str) -> tuple[int, int, str, str]:
        session_id = self.session_id(conn, session)
        found = _find(conn, session_id, name_key(name))
        if found is None:
            raise SentretError(f"no annotator named {normalise_name(name)!r} in session {session!r}")
        shown, kind = conn.execute("SELECT name, kind FROM annotators WHERE id = ?", (found,)).fetchone()
        self.may_change(role_of(conn, found), str(shown))
        return session_id, found, str(shown), str(kind)


def _find(conn: sqlite3.Connection, session_id: int, key: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM annotators WHERE session_id = ? AND name_key = ? AND removed_at IS NULL", (session_id, key)
    ).fetchone()
    return None if row is None else int(row[0])


def _name_free(conn: sqlite3.Connection, session_id: int, shown: str, annotator_id: int | None) -> None:
    """A removed annotator keeps its (renamed) record: its exact name is not free."""
    row = conn.execute(
        "SELECT 1 FROM annotators WHERE session_id = ? AND name = ? AND id IS NOT ?", (session_id, shown, annotator_id)
    ).fetchone()
    if row is not None:
        raise SentretError(f"the name {shown!r} is that of a removed annotator's record; choose another")


def _check_passphrase(passphrase: str | None) -> str | None:
    if passphrase is None:
        return None
    if not isinstance(passphrase, str) or not MIN_PASSPHRASE <= len(passphrase) <= MAX_SECRET:
        raise SentretError(f"a personal passphrase must be text of {MIN_PASSPHRASE} to {MAX_SECRET} characters")
    return passphrase


def _new_secret(
    conn: sqlite3.Connection, session: str, session_id: int, annotator_id: int, shown: str, chosen: str | None
) -> AnnotatorSecret:
    token, passphrase = new_token(annotator_id), chosen or new_passphrase()
    conn.execute(
        "UPDATE annotators SET token_hash = ?, passphrase_hash = ?, credential = credential + 1 WHERE id = ?",
        (hash_passphrase(token.partition(".")[2]), hash_passphrase(passphrase), annotator_id),
    )
    _log(conn, session_id, annotator_id, "secret", None)
    return AnnotatorSecret(session, shown, token, passphrase)


def _log(conn: sqlite3.Connection, session_id: int, annotator_id: int, action: str, detail: str | None) -> None:
    conn.execute(
        "INSERT INTO annotator_log (session_id, annotator_id, action, detail, at) VALUES (?, ?, ?, ?, ?)",
        (session_id, annotator_id, action, detail, timestamp_now()),
    )



def sign_in_link(base_url: str, secret: AnnotatorSecret) -> str:
    """The Annotate page's sign-in link for ``secret``: ``<base_url>/annotate?session=S&token=T``."""
    from urllib.parse import urlencode

    return f"{base_url.rstrip('/')}/annotate?{urlencode({'session': secret.session, 'token': secret.token})}"
