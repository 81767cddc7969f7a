"""The Annotate page's companions to the item: the session's guidelines, the annotator's own list
of grades (jump back to any), the note and flag of the item, and a watch on the sign-in.

The watch is a fragment that reruns every ``WATCH_S`` seconds: when the web session has ended
(expired, access changed, signed out in another tab) or the session was closed or reopened, it
reruns the page, so the page says so before the annotator presses another key; in the last
``WARN_S`` seconds of a sign-in it says when it ends.
"""

from __future__ import annotations

import math
import time

import streamlit as st

from sentret_core.annotation.annotator import AnnotatorHandle, SignedOut
from sentret_core.annotation.marks import ItemState
from sentret_core.annotation.records import GRADE_LABELS, ItemView, Judgment
from sentret_core.annotation.suggested import Suggestion
from sentret_core.errors import SentretError
from sentret_core.ui.annotate.actions import flag, jump, save_note
from sentret_core.ui.annotate.keys import EXPIRES, HIDE_SUGGESTIONS, NOTE_KEY
from sentret_core.ui.text import html_text, md, show_html

WATCH_S = 20.0
WARN_S = 15 * 60.0
JUMP_KEY = "annotate_jump_choice"


def show_guidelines(text: str, expanded: bool) -> None:
    """The session's guidelines, as the admin typed them (escaped: shown as text, line breaks kept)."""
    if not text:
        return
    with st.expander("Guidelines", expanded=expanded):
        lines = "<br>".join(html_text(line) for line in text.splitlines())
        show_html(f'<div class="annotate-guidelines">{lines}</div>')


def note_and_flag(item: ItemView, state: ItemState) -> None:
    """The item's note box (saved with the grade, or at once with "Save note", graded or not) and its flag
    (stored at once, graded or not)."""
    columns = st.columns([5, 1, 1])
    columns[0].text_area("Note (optional, saved with your grade)", value=state.note or "",
                         key=NOTE_KEY.format(item=item.item_id), height=68, max_chars=5000)
    columns[1].button("Save note", key="annotate_save_note", on_click=save_note, args=(item.item_id,))
    columns[2].button("⚑ Unflag (f)" if state.flagged else "⚑ Flag (f)", key="annotate_flag", on_click=flag,
                      args=(item.item_id, state.flagged), type="primary" if state.flagged else "secondary")
    if state.flagged:
        st.caption("Flagged for the organiser" + ("" if state.grade is not None else " (kept until you grade it)")
                   + ".")


def my_grades(judgments: list[Judgment]) -> None:
    """This annotator's own grades, in the session's order, with a way to jump back to any."""
    with st.expander(f"Your grades ({len(judgments)})", expanded=False):
        if not judgments:
            st.caption("None yet.")
            return
        rows = [{"item": j.position + 1, "grade": f"{j.grade} · {GRADE_LABELS[j.grade]}",
                 "flag": "⚑" if j.flagged else "", "query": j.query, "entity": j.entity, "note": j.note or ""}
                for j in judgments]
        st.dataframe(rows, hide_index=True, width="stretch")
        labels = {j.position: f"Item {j.position + 1} · grade {j.grade}" + (" · ⚑" if j.flagged else "")
                  for j in judgments}
        columns = st.columns([4, 1])
        columns[0].selectbox("Jump to item", list(labels), format_func=labels.__getitem__, key=JUMP_KEY)
        columns[1].button("Go", key="annotate_jump", on_click=jump, args=(JUMP_KEY,), width="stretch")


@st.fragment(run_every=WATCH_S)
def watch(handle: AnnotatorHandle, shown_open: bool) -> None:
    """Rerun the page when the sign-in ended or the session was closed or reopened (module docstring)."""
    try:
        handle.check_access()
        is_open = handle.session_is_open()
    except SignedOut:
        st.rerun(scope="app")
    except SentretError:
        return  # a busy database: try again at the next watch
    if is_open != shown_open:
        st.rerun(scope="app")
    expires = st.session_state.get(EXPIRES)
    if isinstance(expires, float):
        left = expires - time.time()
        if 0 < left <= WARN_S:
            st.warning(f"Your sign-in ends in {math.ceil(left / 60)} min; your grades are saved. "
                       "Sign in again then to go on.")


def show_suggestions(suggested: list[Suggestion]) -> None:
    """The grades models or files suggest for the item, unless the annotator hides them (to grade unanchored)."""
    if not suggested:
        return
    hidden = st.toggle("Hide suggestions", key=HIDE_SUGGESTIONS, help="A suggestion is a model's guess, shown to "
                       "be corrected; hide them to grade without it (the organiser sees how often grades equal them).")
    if not hidden:
        shown = " · ".join(f"**{s.grade}** {GRADE_LABELS[s.grade]} ({md(s.source)})" for s in suggested)
        st.caption(f"Suggested: {shown}: a guess to correct, not a grade.")
