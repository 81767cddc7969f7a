"""Which annotation sessions read an index: one that an open session uses may not be replaced or deleted.

A session keeps the path of the index it was pooled from and shows its sentences, their context and
their entities from it while annotators grade; replacing that index under an open session would show
them other sentences. A closed session takes no grades, and its items keep the sentence text they
were pooled with.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from sentret_core.annotation.records import SessionInfo
from sentret_core.errors import SentretError


def _same_folder(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them is missing: compare the paths themselves
        return Path(a).resolve() == Path(b).resolve()


def sessions_using(sessions: Iterable[SessionInfo], index: str | Path, *, open_only: bool = True) -> list[str]:
    """The names of the sessions (the open ones, by default) pooled from the index folder ``index``."""
    return [s.name for s in sessions if (s.is_open or not open_only) and _same_folder(s.index_path, index)]


def refuse_if_in_use(sessions: Iterable[SessionInfo], index: str | Path, action: str = "replace") -> None:
    """Raise a SentretError naming the open sessions that use ``index``, if any, before it is ``action``-d."""
    users = sessions_using(sessions, index)
    if users:
        names = ", ".join(repr(name) for name in users)
        which = "session" if len(users) == 1 else "sessions"
        raise SentretError(
            f"The index {Path(index).name!r} is used by the open annotation {which} {names}: close "
            f"{'it' if len(users) == 1 else 'them'} on the Admin page before you {action} it."
        )
