"""The Annotate page's button callbacks: grade, undo, skip, back, return to the current item, flag,
save a note and jump to one of the annotator's own grades.

A key or a click made while signed out, or refused because the web session just ended, is never
dropped in silence: the next run says that it was not saved and why (the sign-in form shows it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec

import streamlit as st

from sentret_core.annotation.annotator import AnnotatorHandle, SignedOut
from sentret_core.annotation.records import ItemView
from sentret_core.errors import SentretError
from sentret_core.ui.annotate.keys import CURSOR, HANDLE, NOTE_KEY, flash
from sentret_core.ui.state import error_message

P = ParamSpec("P")


def action(name: str) -> Callable[[Callable[Concatenate[AnnotatorHandle, P], None]], Callable[P, None]]:
    """A callback run with the signed-in annotator's handle; without one, or when it fails, the reason
    is left for the next run to show (see :func:`~sentret_core.ui.annotate.keys.flash`)."""

    def wrap(func: Callable[Concatenate[AnnotatorHandle, P], None]) -> Callable[P, None]:
        @functools.wraps(func)
        def run(*args: P.args, **kwargs: P.kwargs) -> None:
            handle: AnnotatorHandle | None = st.session_state.get(HANDLE)
            if handle is None:
                flash("error", f"Not saved: you are signed out, so your {name} was not applied. "
                               f"Sign in, then {name} again.")
                return
            try:
                func(handle, *args, **kwargs)
            except SignedOut as err:
                flash("error", f"Not saved: your {name} was not applied, because {err}. Then {name} again.")
            except Exception as err:
                flash("error", error_message(name, err))

        return run

    return wrap


@action("grade")
def grade(handle: AnnotatorHandle, item: int, position: int, value: int, note: str | None = None) -> None:
    """Grade ``item``, with the note typed in its box (else ``note``, the one it had); its flag stays as it is."""
    revisiting = st.session_state.get(CURSOR) is not None
    if not revisiting and handle.grade_of(item) is not None:
        # the page showed the next item to grade, never a graded one: a late key meant for the item
        # just graded (the watch's rerun can end a key's wait early), or another tab's page
        flash("info", f"Your grade {value} was for item {position + 1}, which is already graded: not applied. "
                      "Press it again to grade the item shown, or Back to change that one.")
        return
    typed = st.session_state.get(NOTE_KEY.format(item=item))
    handle.grade(item, value, typed if isinstance(typed, str) else note)
    st.session_state[CURSOR] = _after(handle, item, position) if revisiting else None


def _item_at(handle: AnnotatorHandle, position: int) -> ItemView | None:
    """The item at ``position`` of the annotator's own queue; None outside it."""
    if position < 0:
        return None
    try:
        return handle.item_at(position)
    except SentretError:  # after the last item
        return None


def _after(handle: AnnotatorHandle, item: int, position: int) -> int | None:
    """After regrading a revisited item: the next one already seen, else the next to grade."""
    following = _item_at(handle, position + 1)
    frontier = handle.next_item()
    if following is not None and (frontier is None or following.position < frontier.position):
        return following.item_id
    return None


@action("undo")
def undo(handle: AnnotatorHandle) -> None:
    item = handle.undo()
    if item is None:
        flash("info", "Nothing to undo.")
        return
    frontier = handle.next_item()
    at_frontier = frontier is not None and frontier.item_id == item.item_id
    st.session_state[CURSOR] = None if at_frontier else item.item_id
    flash("info", f"Undid your last change (item {item.position + 1}). A grade taken back leaves the item's note "
                  "and flag as they are; a note or flag change brings back the one before.")


@action("skip")
def skip(handle: AnnotatorHandle, item: int) -> None:
    handle.skip(item)
    st.session_state[CURSOR] = None


@action("go back")
def back(handle: AnnotatorHandle, position: int) -> None:
    if position <= 0:
        flash("info", "This is the first item.")
        return
    previous = _item_at(handle, position - 1)
    if previous is None:
        flash("info", "Cannot go back from here: use Undo to return to your last grade.")
        return
    st.session_state[CURSOR] = previous.item_id


def current() -> None:
    st.session_state[CURSOR] = None


@action("flag")
def flag(handle: AnnotatorHandle, item: int, flagged: bool) -> None:
    """Flag or unflag the item, graded or not: stored at once."""
    handle.flag(item, not flagged)


@action("save the note")
def save_note(handle: AnnotatorHandle, item: int) -> None:
    typed = st.session_state.get(NOTE_KEY.format(item=item))
    handle.note(item, typed if isinstance(typed, str) else None)
    flash("info", "Note saved.")


@action("jump to the item")
def jump(handle: AnnotatorHandle, choice_key: str) -> None:
    position = st.session_state.get(choice_key)
    if isinstance(position, int):
        st.session_state[CURSOR] = handle.item_at(position).item_id
