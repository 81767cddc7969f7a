"""The disagreement view of the Admin page (and of a reviewer's Annotate page): the items annotators graded
differently, side by side, and the "Adjudicate" control that records an adjudicated grade, kept apart
from the annotators' own (:mod:`sentret_core.annotation.adjudication`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from sentret_core.annotation.adjudication import Adjudicator, Disagreement, adjudicate, disagreements
from sentret_core.annotation.records import GRADE_LABELS, GRADES, SessionInfo
from sentret_core.ui.annotators import session_caption
from sentret_core.ui.state import error_guard, guarded
from sentret_core.ui.text import md

RULE = ("An adjudicated grade replaces the annotators' grades of its item in qrels exports and evaluation "
        "(majority and mean rules); their own grades stay as they are.")
DONE = "admin_adjudication_done"  # the last adjudication's message, shown after the rerun that follows it
SHORT = 120  # sentence characters shown in the table (the chosen item's in full below)


def grade_label(grade: int) -> str:
    return f"{grade} · {GRADE_LABELS[grade]}"


def disagreement_table(found: list[Disagreement]) -> pd.DataFrame:
    """One row per item: what the annotators saw, then each annotator's grade in a column of its own."""
    annotators = sorted({who for d in found for who, _ in d.grades}, key=str.casefold)
    rows = []
    for d in found:
        given = dict(d.grades)
        text = d.text if len(d.text) <= SHORT else d.text[: SHORT - 1] + "…"
        rows.append({"item": d.position + 1, "query": d.query, "entity": d.entity, "sentence": text,
                     **{who: given.get(who, "—") for who in annotators},
                     "adjudicated": d.adjudicated if d.adjudicated is not None else "—",
                     "by": d.adjudicated_by or "—"})
    return pd.DataFrame(rows).astype(str)


def disagreement_view(admin: Adjudicator, info: SessionInfo) -> None:
    """The disagreements of session ``info`` and the control that adjudicates one of them."""
    st.subheader("Disagreements")
    st.caption(f"{session_caption(info)} · {RULE}")
    if (message := st.session_state.pop(DONE, None)) is not None:
        st.success(message)
    found = guarded("list the disagreements", disagreements, admin, info.name)
    if found is None:
        return
    if not found:
        st.info("No item has been graded differently by two annotators yet.")
        return
    open_items = sum(d.adjudicated is None for d in found)
    st.caption(f"{len(found)} item{'s' if len(found) != 1 else ''} graded differently; "
               f"{open_items} not adjudicated yet.")
    st.dataframe(disagreement_table(found), hide_index=True, width="stretch")
    by_id = {d.item_id: d for d in found}
    item_id = st.selectbox("Item to adjudicate", list(by_id), key="admin_adjudicate_item",
                           format_func=lambda i: f"#{by_id[i].position + 1} · {by_id[i].entity} · "
                           + ", ".join(f"{who} {grade}" for who, grade in by_id[i].grades))
    if item_id is None or item_id not in by_id:
        return
    chosen = by_id[item_id]
    st.markdown(f"**{md(chosen.query)}** · entity **{md(chosen.entity)}** · *{md(chosen.title)}*")
    st.markdown(f"> {md(chosen.text)}")
    st.caption(" · ".join(f"{md(who)}: {md(grade_label(grade))}" for who, grade in chosen.grades))
    current = chosen.adjudicated
    grade = st.radio("Adjudicated grade", list(GRADES), index=None if current is None else GRADES.index(current),
                     key=f"admin_adjudicate_grade_{item_id}", format_func=grade_label, horizontal=True)
    left, right = st.columns(2)
    if left.button("Adjudicate", key="admin_adjudicate", type="primary", disabled=grade is None):
        _record(admin, info, chosen, grade)
    if current is not None and right.button("Clear the adjudication", key="admin_adjudicate_clear"):
        _record(admin, info, chosen, None)


def _record(admin: Adjudicator, info: SessionInfo, item: Disagreement, grade: int | None) -> None:
    with error_guard("record the adjudication"):
        adjudicate(admin, info.name, item.item_id, grade)
        what = f"adjudicated as {grade_label(grade)}" if grade is not None else "no longer adjudicated"
        st.session_state[DONE] = f"Session {md(info.name)}: item #{item.position + 1} ({md(item.entity)}) {what}."
        st.rerun()
