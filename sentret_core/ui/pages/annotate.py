"""Annotate: grade (query, entity, sentence) triples of a session, one at a time, 1-4 from the keyboard.

An annotator signs in with a name and the session's passphrase; the browser session then holds
their :class:`~sentret_core.judgments.AnnotatorHandle`, which reads and writes their own grades
only. Every grade is committed when it is given, so closing the tab loses nothing and signing
in again resumes at the first item not yet graded or skipped.

Keyboard: 1-4 grade and advance, u undo, s skip, b back, n return to the current item, t show
or hide the context (Streamlit itself uses c and r). Streamlit has no key handler, so a
tiny component adds a ``keydown`` listener to the page that clicks the matching button (found
by its widget key's ``st-key-…`` class). Keys typed into a text field are left alone; keys
pressed while the app is still handling the previous one are queued, so a fast typist never
grades the item they have just left (grade buttons carry the item id in their key as well).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import streamlit as st

from sentret_core.annotation.annotator import AnnotatorHandle
from sentret_core.annotation.records import GRADE_LABELS, ItemView
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.topics import judgments_db_path, open_store, split_entity_key
from sentret_core.defaults import DEFAULT_WINDOW
from sentret_core.errors import SentretError
from sentret_core.index.format import is_index
from sentret_core.index.reader import Index
from sentret_core.ui.highlight import Span, highlight
from sentret_core.ui.render import sentence_html
from sentret_core.ui.state import remember_explore_query

HANDLE = "annotate_handle"
CURSOR = "annotate_cursor"  # the item id being revisited; None = the next item to grade
FLASH = "annotate_flash"
CONTEXT = "annotate_context"
ANCHOR = "annotate_anchor"  # the id of an item of the session shown last, to find others from
GRADE_KEY = "grade{grade}_{item}"
SHORTCUTS = {**{str(g): f"grade{g}_" for g in GRADE_LABELS}, "u": "annotate_undo", "s": "annotate_skip",
             "b": "annotate_back", "n": "annotate_current", "t": "annotate_context"}  # fmt: skip


@st.cache_resource(show_spinner=False)
def cached_store(path: str) -> JudgmentStore:
    """One store (one WAL connection, thread-safe) per database file and process."""
    return open_store(path)


def app_store() -> JudgmentStore:
    """The app's judgments database (``$SENTRET_JUDGMENTS_DB`` or ``data/judgments/sentret.sqlite``)."""
    return cached_store(str(judgments_db_path()))


def session_index(path: str) -> Index | None:
    """The index a session was pooled from, if it is still there (for highlighting and context)."""
    from sentret_core.ui.state import load_index

    if not is_index(Path(path)):
        return None
    try:
        return load_index(path)
    except SentretError:
        return None


def render() -> None:

    remember_explore_query()  # for the Admin page's "Add the Explore page's query"
    st.title("Annotate")
    st.caption(
        "Does the sentence explain why the entity matters to the query? "
        "Grade 1 non-relevant · 2 fairly relevant · 3 relevant · 4 very relevant."
    )
    try:
        store = app_store()
    except SentretError as err:
        st.error(str(err))
        return
    handle: AnnotatorHandle | None = st.session_state.get(HANDLE)
    if handle is None:
        _sign_in(store)
        return
    _annotate(store, handle)


# --------------------------------------------------------------------------- sign-in


def _sign_in(store: JudgmentStore) -> None:
    default = st.query_params.get("session", "")
    with st.form("annotate_sign_in"):
        session = st.text_input("Session", value=default, key="annotate_session")
        name = st.text_input("Your name", key="annotate_name")
        passphrase = st.text_input("Session passphrase", type="password", key="annotate_passphrase")
        submitted = st.form_submit_button("Sign in", type="primary")
    if not submitted:
        st.info("Sign in with your name and the passphrase the organiser gave you.")
        return
    try:
        handle = store.sign_in(session.strip(), name, passphrase)
    except SentretError as err:
        st.error(str(err))
        return
    st.session_state[HANDLE] = handle
    st.session_state[CURSOR] = None
    st.query_params["session"] = handle.session
    st.rerun()


def _sign_out() -> None:
    for key in (HANDLE, CURSOR, FLASH, ANCHOR):
        st.session_state.pop(key, None)


# --------------------------------------------------------------------------- actions (button callbacks)


def _flash(kind: str, message: str) -> None:
    st.session_state[FLASH] = (kind, message)


def _guard(action: str) -> AnnotatorHandle | None:
    handle: AnnotatorHandle | None = st.session_state.get(HANDLE)
    if handle is None:
        _flash("error", f"sign in to {action}")
    return handle


def _grade(item: int, position: int, grade: int) -> None:
    handle = _guard("grade")
    if handle is None:
        return
    try:
        handle.grade(item, grade)
        revisiting = st.session_state.get(CURSOR) is not None
        st.session_state[CURSOR] = _after(handle, item, position) if revisiting else None
    except SentretError as err:
        _flash("error", str(err))


def _item_at(handle: AnnotatorHandle, known: ItemView, position: int) -> ItemView | None:
    """The item at ``position`` of the session's order, found from an item ``known`` to be in it.

    A session's items are inserted in one transaction in position order, so their ids run in
    the same order without gaps; the item found is checked, so nothing else can be returned.
    """
    try:
        found = handle.item(known.item_id + position - known.position)
    except SentretError:  # outside the session (before the first or after the last item)
        return None
    return found if found.position == position else None


def _after(handle: AnnotatorHandle, item: int, position: int) -> int | None:
    """After regrading a revisited item: the next one already seen, else the next to grade."""
    following = _item_at(handle, handle.item(item), position + 1)
    frontier = handle.next_item()
    if following is not None and (frontier is None or following.position < frontier.position):
        return following.item_id
    return None


def _undo() -> None:
    handle = _guard("undo")
    if handle is None:
        return
    try:
        item = handle.undo()
    except SentretError as err:
        _flash("error", str(err))
        return
    if item is None:
        _flash("info", "Nothing to undo.")
        return
    frontier = handle.next_item()
    at_frontier = frontier is not None and frontier.item_id == item.item_id
    st.session_state[CURSOR] = None if at_frontier else item.item_id
    _flash("info", f"Undid your last grade (item {item.position + 1}).")


def _skip(item: int) -> None:
    handle = _guard("skip")
    if handle is None:
        return
    try:
        handle.skip(item)
        st.session_state[CURSOR] = None
    except SentretError as err:
        _flash("error", str(err))


def _back(position: int) -> None:
    handle = _guard("go back")
    if handle is None:
        return
    if position <= 0:
        _flash("info", "This is the first item.")
        return
    anchor = st.session_state.get(ANCHOR)
    try:
        known = handle.item(anchor) if anchor is not None else None
    except SentretError:
        known = None
    previous = _item_at(handle, known, position - 1) if known is not None else None
    if previous is None:
        _flash("info", "Cannot go back from here: use Undo to return to your last grade.")
        return
    st.session_state[CURSOR] = previous.item_id


def _current() -> None:
    st.session_state[CURSOR] = None


# --------------------------------------------------------------------------- the grading view


def _annotate(store: JudgmentStore, handle: AnnotatorHandle) -> None:
    top = st.columns([4, 1])
    who, session = html.escape(handle.annotator), html.escape(handle.session)
    top[0].markdown(f"Signed in as **{who}** · session **{session}**")
    top[1].button("Sign out", key="annotate_sign_out", on_click=_sign_out)
    try:
        info = store.session(handle.session)
        progress = handle.progress()
        cursor = st.session_state.get(CURSOR)
        item = handle.item(cursor) if cursor is not None else handle.next_item()
        mine = {(j.query, j.entity, j.sentence_id): j.grade for j in handle.my_judgments()}
    except SentretError as err:
        st.error(str(err))
        return
    flash = st.session_state.pop(FLASH, None)
    if flash is not None:
        (st.error if flash[0] == "error" else st.info)(flash[1])
    if not info.is_open:
        st.error(f"Session {info.name!r} is closed: grades are not taken until the organiser reopens it.")
    done = progress.graded / progress.total if progress.total else 1.0
    st.progress(done, text=f"{progress.graded} of {progress.total} graded · {progress.skipped} skipped")
    if item is None:
        st.success(f"All {progress.total} items are graded — thank you! Use Back or Undo to change a grade.")
        _controls(None, None, progress.total)
        _shortcuts()
        return
    current = mine.get((item.query, item.entity, item.sentence_id))
    st.session_state[ANCHOR] = item.item_id
    index = _show_item(info.index_path, item, current, cursor is not None)
    _controls(item, current, progress.total)
    _context(index, item)
    _shortcuts()


def _show_item(index_path: str, item: ItemView, current: int | None, revisiting: bool) -> Index | None:
    """The item's query, entity and sentence (highlighted); the session's index if it is available."""
    text, label = split_entity_key(item.entity)
    index = session_index(index_path)
    if index is not None and not _same_sentence(index, item):
        index = None  # not the index the session was pooled from: use the snapshot
    where = f"Item {item.position + 1}" + (" · revisiting" if revisiting else "")
    if current is not None:
        where += f" · your grade: **{current}** ({GRADE_LABELS[current]})"
    st.caption(where)
    shown = f"{html.escape(text)} <small>({html.escape(label)})</small>" if label else html.escape(text)
    st.markdown(
        f'<div class="annotate-topic"><p><b>Query</b> &nbsp; {html.escape(item.query)}</p>'
        f"<p><b>Entity</b> &nbsp; {shown}</p></div>",
        unsafe_allow_html=True,
    )
    body = _sentence(index, item) if index is not None else _snapshot_html(item)
    title = f"<small><i>{html.escape(item.title)}</i></small>" if item.title else ""
    st.markdown(
        f'<div class="annotate-sentence" style="font-size:1.25em;line-height:1.7;padding:0.6em 0.9em;'
        f'border-left:4px solid #999;background:rgba(128,128,128,0.06)">{title}<p>{body}</p></div>',
        unsafe_allow_html=True,
    )
    return index


def _context(index: Index | None, item: ItemView) -> None:
    if st.toggle("Show context (t)", key=CONTEXT):
        if index is None:
            st.info("The index this session was pooled from is not available: no context to show.")
        else:
            st.markdown(_context_html(index, item), unsafe_allow_html=True)


def _same_sentence(index: Index, item: ItemView) -> bool:
    return 0 <= item.sentence_id < index.N and index.texts[item.sentence_id] == item.text


def _sentence(index: Index, item: ItemView) -> str:
    from sentret_core.models.query import normalise

    text, label = split_entity_key(item.entity)
    entity = index.entity_index.get((text, label)) if label else None
    try:
        terms = normalise(index, item.query)
    except SentretError:
        terms = []
    return sentence_html(index, item.sentence_id, terms, entity)


def _snapshot_html(item: ItemView) -> str:
    """Without the index: the snapshot text, the entity's text and the query's words marked."""
    text, label = split_entity_key(item.entity)
    sentence = item.text
    spans = []
    focus = None
    for match in re.finditer(re.escape(text), sentence, flags=re.IGNORECASE) if text else ():
        span = Span(match.start(), match.end(), label or "ENTITY")
        focus = focus or span
        if span != focus:
            spans.append(span)
    words = {w.casefold() for w in re.findall(r"\w{3,}", item.query)}
    for match in re.finditer(r"\w+", sentence):
        if match.group().casefold() in words:
            spans.append(Span(match.start(), match.end()))
    return highlight(sentence, spans, focus)


def _context_html(index: Index, item: ItemView) -> str:
    around = index.neighbours(item.sentence_id, DEFAULT_WINDOW)
    parts = []
    for n in around.tolist():
        if n == item.sentence_id:
            parts.append(f"<p><b>{html.escape(index.texts[n])}</b></p>")
        else:
            parts.append(f"<p style='color:#6b7280'>{html.escape(index.texts[n])}</p>")
    return "".join(parts)


def _controls(item: ItemView | None, current: int | None, total: int) -> None:
    grades = st.columns(4)
    for column, (grade, label) in zip(grades, GRADE_LABELS.items()):
        column.button(
            f"{grade} · {label}",
            key=GRADE_KEY.format(grade=grade, item=item.item_id if item else "none"),
            on_click=_grade,
            args=(item.item_id, item.position, grade) if item else (0, 0, grade),
            disabled=item is None,
            type="primary" if current == grade else "secondary",
            width="stretch",
        )
    others = st.columns(4)
    others[0].button("↶ Undo (u)", key="annotate_undo", on_click=_undo, width="stretch")
    others[1].button("Skip (s)", key="annotate_skip", on_click=_skip, args=(item.item_id if item else 0,),
                     disabled=item is None or current is not None, width="stretch")  # fmt: skip
    position = item.position if item is not None else total
    others[2].button("← Back (b)", key="annotate_back", on_click=_back, args=(position,), width="stretch",
                     disabled=item is None and st.session_state.get(ANCHOR) is None)  # fmt: skip
    others[3].button("Current item → (n)", key="annotate_current", on_click=_current,
                     disabled=st.session_state.get(CURSOR) is None, width="stretch")  # fmt: skip


_SCRIPT = """
<script>
(function () {
  // Keys are queued and each is pressed only once the app is idle and the previous press has
  // been handled (its rerun finished), so a fast typist never grades the item they just left.
  const win = window.parent;
  const doc = win.document;
  const keys = %s;
  const MAX_WAIT_MS = 5000;
  if (win.__sentretAnnotateKeys) doc.removeEventListener("keydown", win.__sentretAnnotateKeys, true);
  const state = win.__sentretAnnotateState || (win.__sentretAnnotateState = {queue: [], busy: false});
  function running() {
    const app = doc.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute("data-test-script-state") === "running";
  }
  function find(prefix) {
    for (const box of doc.querySelectorAll('[class*="st-key-' + prefix + '"]')) {
      if (box.getAttribute("data-stale") === "true") continue;
      const control = box.querySelector("button, input[type=checkbox]");
      if (control && !control.disabled) return {box: box, control: control};
    }
    return null;
  }
  function pump() {
    if (state.busy || state.queue.length === 0) return;
    const [prefix, since] = state.queue[0];
    const found = running() ? null : find(prefix);
    if (!found) {
      if (Date.now() - since > MAX_WAIT_MS) state.queue.shift();
      win.setTimeout(pump, 40);
      return;
    }
    state.queue.shift();
    state.busy = true;
    const name = [...found.box.classList].find((c) => c.startsWith("st-key-"));
    const clicked = Date.now();
    let started = false;
    found.control.click();
    (function settle() {
      started = started || running();
      const replaced = !found.box.isConnected || !found.box.classList.contains(name);
      if ((started && !running()) || (replaced && !running()) || Date.now() - clicked > MAX_WAIT_MS) {
        state.busy = false;
        win.setTimeout(pump, 0);
      } else {
        win.setTimeout(settle, 20);
      }
    })();
  }
  function onKey(event) {
    if (event.repeat || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const tag = target && target.tagName ? target.tagName.toUpperCase() : "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    if (target && target.isContentEditable) return;
    const prefix = keys[event.key];
    if (!prefix || !doc.querySelector('[class*="st-key-annotate_undo"]')) return;  // not on Annotate
    event.preventDefault();
    event.stopPropagation();
    if (state.queue.length < 10) state.queue.push([prefix, Date.now()]);
    pump();
  }
  win.__sentretAnnotateKeys = onKey;
  doc.addEventListener("keydown", onKey, true);
})();
</script>
"""


def _shortcuts() -> None:
    """Keyboard shortcuts: a zero-height component that clicks the button of the key pressed."""
    import json

    script = _SCRIPT % json.dumps(SHORTCUTS)
    if hasattr(st, "iframe"):
        st.iframe(script, height=1)
    else:  # Streamlit before st.iframe
        import streamlit.components.v1 as components

        components.html(script, height=0)
