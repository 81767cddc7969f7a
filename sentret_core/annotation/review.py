"""A session's reviewer (:mod:`.roles`): reads its disagreements and adjudicates them, in that session only,
with the access they signed in with (checked at every call, as an annotator's handle is)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from sentret_core.annotation.adjudication import Disagreement, adjudicate, disagreements
from sentret_core.annotation.roles import REVIEWER, SESSION_ADMIN
from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.annotation.annotator import AnnotatorHandle
    from sentret_core.annotation.store import JudgmentStore


def only_in(handle: AnnotatorHandle, conn: sqlite3.Connection, session: str) -> int:
    """The id of ``session`` if it is ``handle``'s and the handle still acts for its person, else SentretError."""
    handle.check_access(conn)
    if session != handle.session:
        raise SentretError(f"you are signed in to session {handle.session!r} only, not to {session!r}")
    return handle.signed_in_as[0]


class Reviewer:
    """A reviewer's (or a session admin's) adjudication of one session."""

    def __init__(self, store: JudgmentStore, handle: AnnotatorHandle) -> None:
        if not handle.belongs_to(store):
            raise SentretError("this sign-in belongs to another judgments database")
        if handle.role not in (REVIEWER, SESSION_ADMIN):
            raise SentretError(f"{handle.annotator!r} is an annotator of session {handle.session!r}: "
                               "only its reviewers and admins adjudicate")
        self._store, self._handle = store, handle
        self.session = handle.session

    @property
    def store(self) -> JudgmentStore:
        return self._store

    @property
    def acting_as(self) -> str:
        return self._handle.annotator

    def session_id(self, conn: sqlite3.Connection, session: str) -> int:
        return only_in(self._handle, conn, session)

    def disagreements(self) -> list[Disagreement]:
        """The session's items graded differently (as :func:`.adjudication.disagreements`)."""
        return disagreements(self, self.session)

    def adjudicate(self, item_id: int, grade: int | None) -> bool:
        """Record (or, with None, clear) the adjudicated grade of an item; whether anything changed."""
        return adjudicate(self, self.session, item_id, grade)
