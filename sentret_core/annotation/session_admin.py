"""A session's admin (:mod:`.roles`): everything the admin token may do to one session, with a personal
secret. They cannot reach another session, create sessions, or give anyone the admin role; the
admin token's holder does that. Every call checks the access they signed in with."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.review import only_in
from sentret_core.annotation.roles import SESSION_ADMIN
from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.annotation.annotator import AnnotatorHandle
    from sentret_core.annotation.store import JudgmentStore


class SessionAdmin(Admin):
    """An :class:`Admin` of the signed-in person's session only."""

    def __init__(self, store: JudgmentStore, handle: AnnotatorHandle) -> None:  # no admin token: the handle
        if not handle.belongs_to(store):
            raise SentretError("this sign-in belongs to another judgments database")
        if handle.role != SESSION_ADMIN:
            raise SentretError(f"{handle.annotator!r} is not an admin of session {handle.session!r}")
        self._store, self._handle = store, handle
        self.session = handle.session

    @property
    def acting_as(self) -> str:
        return self._handle.annotator

    def session_id(self, conn: sqlite3.Connection, session: str) -> int:
        return only_in(self._handle, conn, session)

    def may_give(self, role: str) -> str:
        if role == SESSION_ADMIN:
            raise SentretError("only the holder of the admin token makes someone a session's admin")
        return role

    def may_change(self, role: str, name: str) -> None:
        if role == SESSION_ADMIN:
            raise SentretError(f"{name!r} is an admin of this session: only the holder of the admin token changes them")
