"""The Annotate page's buttons: the four grades, then undo, skip, back and the current item."""

from __future__ import annotations

import streamlit as st

from sentret_core.annotation.records import GRADE_LABELS, ItemView
from sentret_core.ui.annotate.actions import back, current, grade, skip, undo
from sentret_core.ui.annotate.keys import ANCHOR, CURSOR, GRADE_KEY


def buttons(item: ItemView | None, given: int | None, total: int, note: str | None = None) -> None:
    """The grade buttons (``given``, the grade already given, highlighted; ``note``, its note, kept
    unless the note box says otherwise) and the navigation buttons."""
    grades = st.columns(4)
    for column, (value, label) in zip(grades, GRADE_LABELS.items()):
        column.button(
            f"{value} · {label}",
            key=GRADE_KEY.format(grade=value, item=item.item_id if item else "none"),
            on_click=grade,
            args=(item.item_id, item.position, value, note) if item else (0, 0, value),
            disabled=item is None,
            type="primary" if given == value else "secondary",
            width="stretch",
        )
    others = st.columns(4)
    others[0].button("↶ Undo (u)", key="annotate_undo", on_click=undo, width="stretch")
    others[1].button("Skip (s)", key="annotate_skip", on_click=skip, args=(item.item_id if item else 0,),
                     disabled=item is None or given is not None, width="stretch")
    position = item.position if item is not None else total
    others[2].button("← Back (b)", key="annotate_back", on_click=back, args=(position,), width="stretch",
                     disabled=item is None and st.session_state.get(ANCHOR) is None)
    others[3].button("Current item → (n)", key="annotate_current", on_click=current,
                     disabled=st.session_state.get(CURSOR) is None, width="stretch")
