"""Annotate: grade (query, entity, sentence) triples of a session, one at a time, 1-4 from the keyboard.

An annotator signs in with their own sign-in link, or their name and personal passphrase; the
browser session then holds their :class:`~sentret_core.annotation.annotator.AnnotatorHandle`, which
reads and writes their own grades only (and stops working once the admin disables, removes or
re-keys them: the page then signs them out). Signing in starts a web session kept in the database
and named by a cookie, so a reload, a new tab or a server restart keeps the annotator signed in
until it expires (:mod:`sentret_core.ui.browser_session`). Every grade is committed when it is
given, so closing the tab loses nothing and signing in again resumes at the first item not yet
graded or skipped. Beside the item: the session's guidelines, a key legend, a note and a flag,
and the annotator's own list of grades. A session's reviewer signs in the same way and sees its
disagreements to adjudicate instead; a session's admin, the Admin page's parts for that session.

This module composes the page; its parts (sign-in, the button callbacks, the item, the buttons
and the keyboard shortcuts) live in :mod:`sentret_core.ui.annotate`.
"""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from sentret_core.annotation.annotator import AnnotatorHandle, SignedOut
from sentret_core.annotation.marks import ItemState
from sentret_core.annotation.records import ItemView, Judgment, Progress, SessionInfo
from sentret_core.annotation.roles import ANNOTATOR, REVIEWER, ROLE_HELP
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.suggested import Suggestion
from sentret_core.errors import SentretError
from sentret_core.ui.annotate.buttons import buttons
from sentret_core.ui.annotate.extras import my_grades, note_and_flag, show_guidelines, show_suggestions, watch
from sentret_core.ui.annotate.item import show_context, show_item
from sentret_core.ui.annotate.keys import ANCHOR, CURSOR, HANDLE, show_flash
from sentret_core.ui.annotate.shortcuts import LEGEND, shortcuts
from sentret_core.ui.annotate.sign_in import resume, sign_in, sign_out, signed_out_notice
from sentret_core.ui.browser_session import write_cookies
from sentret_core.ui.disagreements import disagreement_view
from sentret_core.ui.judgments import page_store
from sentret_core.ui.pages.admin import administer
from sentret_core.ui.state import guarded, page_setup
from sentret_core.ui.text import md


def render() -> None:
    page_setup(
        "Annotate",
        "Does the sentence explain why the entity matters to the query? "
        "Grade 1 non-relevant · 2 fairly relevant · 3 relevant · 4 very relevant.",
    )
    store = page_store()
    if store is None:
        return
    handle: AnnotatorHandle | None = st.session_state.get(HANDLE) or resume(store)
    if handle is not None:
        try:
            handle.check_access()
        except SignedOut as err:
            signed_out_notice(str(err))
            handle = None
        except SentretError:
            pass  # e.g. a busy database: reading the items below says so
    write_cookies()
    if handle is None:
        sign_in(store)
        return
    if handle.role == ANNOTATOR:
        _annotate(store, handle)
    else:
        _review_or_administer(store, handle)


def _signed_in(handle: AnnotatorHandle) -> None:
    top = st.columns([4, 1])
    who, session = md(handle.annotator), md(handle.session)
    as_role = "" if handle.role == ANNOTATOR else f" ({handle.role})"
    top[0].markdown(f"Signed in as **{who}**{as_role} · session **{session}**")
    top[1].button("Sign out", key="annotate_sign_out", on_click=sign_out)


def _review_or_administer(store: JudgmentStore, handle: AnnotatorHandle) -> None:
    """A reviewer adjudicates the session's disagreements; a session's admin administers it (roles.py)."""
    _signed_in(handle)
    st.caption(f"You {ROLE_HELP[handle.role]}.")
    info = guarded("read the session", store.session, handle.session)
    if info is None:
        return
    if handle.role == REVIEWER:
        reviewer = guarded("open the review", store.reviewer, handle)
        if reviewer is not None:
            disagreement_view(reviewer, info)
    else:
        admin = guarded("open the session's administration", store.session_admin, handle)
        if admin is not None:
            administer(store, admin, info)


class _View(NamedTuple):
    """What one run of the grading view reads from the store."""

    info: SessionInfo
    progress: Progress
    cursor: int | None
    item: ItemView | None
    mine: Judgment | None  # this annotator's judgment of the item, if any
    state: ItemState | None  # this annotator's grade, note and flag of the item (given before grading too)
    judgments: list[Judgment]  # all of this annotator's, in the session's order
    guidelines: str
    narrative: str  # what the item's topic asks ("" when the admin wrote none)
    suggested: list[Suggestion]  # the grades models or files suggest for the item


def _read(store: JudgmentStore, handle: AnnotatorHandle) -> _View:
    info = store.session(handle.session)
    progress = handle.progress()
    cursor = st.session_state.get(CURSOR)
    item = handle.item(cursor) if cursor is not None else handle.next_item()
    judgments = handle.my_judgments()
    by_key = {(j.query, j.entity, j.sentence_id): j for j in judgments}
    mine = by_key.get((item.query, item.entity, item.sentence_id)) if item is not None else None
    state = handle.state_of(item.item_id) if item is not None else None
    narrative = store.narratives(handle.session).get((item.query, item.entity), "") if item is not None else ""
    suggested = handle.suggestions(item.item_id) if item is not None else []
    return _View(info, progress, cursor, item, mine, state, judgments, store.guidelines(handle.session), narrative,
                 suggested)


def _annotate(store: JudgmentStore, handle: AnnotatorHandle) -> None:
    _signed_in(handle)
    view = guarded("read your items", _read, store, handle)
    if view is None:
        return
    show_flash()
    watch(handle, view.info.is_open)
    if not view.info.is_open:
        st.error(f"Session {md(repr(view.info.name))} is closed: grades are not taken until the organiser reopens it.")
    show_guidelines(view.guidelines, expanded=not view.judgments)
    progress = view.progress
    done = progress.graded / progress.total if progress.total else 1.0
    st.progress(done, text=f"{progress.graded} of {progress.total} graded · {progress.skipped} skipped")
    if view.item is None:
        st.success(f"All {progress.total} items are graded — thank you! Use Back or Undo to change a grade.")
        buttons(None, None, progress.total)
        _footer(view)
        return
    st.session_state[ANCHOR] = view.item.item_id
    guarded("note the item shown (time on task)", handle.show, view.item.item_id)
    given = view.mine.grade if view.mine is not None else None
    index = show_item(view.info.index_path, view.item, given, view.cursor is not None, view.narrative)
    state = view.state or ItemState(given, None, False)
    buttons(view.item, given, progress.total, state.note)
    show_suggestions(view.suggested)
    note_and_flag(view.item, state)
    show_context(index, view.item)
    _footer(view)


def _footer(view: _View) -> None:
    st.caption(LEGEND)
    my_grades(view.judgments)
    shortcuts()
