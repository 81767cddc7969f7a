"""The Annotate page's session-state keys, and the message an action leaves for the next run to show."""

from __future__ import annotations

import streamlit as st

from sentret_core.ui.text import md

HANDLE = "annotate_handle"
CURSOR = "annotate_cursor"  # the item id being revisited; None = the next item to grade
FLASH = "annotate_flash"
CONTEXT = "annotate_context"
ANCHOR = "annotate_anchor"  # the id of an item of the session shown last, to find others from
GRADE_KEY = "grade{grade}_{item}"
WEB_ID = "annotate_web_id"  # the id of this browser's web session (also in its cookie)
EXPIRES = "annotate_expires"  # when that web session ends (wall-clock seconds)
NOTE_KEY = "annotate_note_{item}"  # the note box of an item
HIDE_SUGGESTIONS = "annotate_hide_suggestions"  # the annotator hides the models' suggestions
ENDED = "annotate_ended"  # why the web session ended, for the sign-in form to say


def flash(kind: str, message: str) -> None:
    """Leave ``message`` ("error" or "info") for the next run: a button callback cannot place elements."""
    st.session_state[FLASH] = (kind, message)


def show_flash() -> None:
    """The message the last action left, if any (shown once, as text: it may quote a name)."""
    left = st.session_state.pop(FLASH, None)
    if left is not None:
        (st.error if left[0] == "error" else st.info)(md(left[1]))
