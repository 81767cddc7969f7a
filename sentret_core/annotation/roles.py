"""What a person of a session does: an *annotator* grades; a *reviewer* adjudicates the items annotators
graded differently and cannot grade; a session's *admin* administers that one session (its annotators,
reviewers, guidelines, suggestions, adjudication, export and import) with a personal secret instead of the
admin token, and cannot give anyone the admin role. All three sign in the same way, on the Annotate page
(:mod:`.identity`); the holder of the admin token administers every session.

Only annotators share the session's items (:mod:`.item_order`) and appear in its progress; a person who
graded and later became a reviewer keeps their grades, which still count.
"""

from __future__ import annotations

import sqlite3

from sentret_core.annotation.connect import has_column
from sentret_core.errors import SentretError

ANNOTATOR, REVIEWER, SESSION_ADMIN = "annotator", "reviewer", "admin"
ROLES = (ANNOTATOR, REVIEWER, SESSION_ADMIN)
ROLE_HELP = {
    ANNOTATOR: "grades the session's items",
    REVIEWER: "adjudicates the items annotators graded differently; does not grade",
    SESSION_ADMIN: "administers this session only, signing in with a personal secret",
}


def check_role(role: object) -> str:
    if role not in ROLES:
        raise SentretError(f"a role is one of {', '.join(ROLES)}; got {role!r}")
    assert isinstance(role, str)
    return role


def graders(conn: sqlite3.Connection, alias: str = "") -> str:
    """The SQL condition (``AND …``) that keeps annotators and drops reviewers and session admins; empty
    on a database opened read-only before roles existed (everyone was an annotator)."""
    if not has_column(conn, "annotators", "role"):
        return ""
    return f" AND {alias + '.' if alias else ''}role = '{ANNOTATOR}'"


def role_of(conn: sqlite3.Connection, annotator_id: int) -> str:
    if not has_column(conn, "annotators", "role"):
        return ANNOTATOR
    row = conn.execute("SELECT role FROM annotators WHERE id = ?", (annotator_id,)).fetchone()
    return ANNOTATOR if row is None else str(row[0])


def not_a_grader(role: str, session: str) -> SentretError:
    """The refusal a reviewer or session admin gets on trying to grade, note, flag, skip or undo."""
    what = "a reviewer adjudicates" if role == REVIEWER else "a session's admin administers it"
    return SentretError(f"you are signed in to session {session!r} as its {role}: {what} and does not grade")
