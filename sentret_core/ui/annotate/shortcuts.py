"""The Annotate page's keyboard shortcuts: 1-4 grade, u undo, s skip, b back, n current item, t context.

Streamlit has no key handler, so a tiny component adds a ``keydown`` listener to the page that
clicks the matching button (found by its widget key's ``st-key-…`` class). Keys typed into a
text field are left alone; keys pressed while the app is still handling the previous one are
queued, so a fast typist never grades the item they have just left (grade buttons carry the
item id in their key as well). Streamlit itself uses c and r.
"""

from __future__ import annotations

import json

import streamlit as st

from sentret_core.annotation.records import GRADE_LABELS

SHORTCUTS = {**{str(g): f"grade{g}_" for g in GRADE_LABELS}, "u": "annotate_undo", "s": "annotate_skip",
             "b": "annotate_back", "n": "annotate_current", "t": "annotate_context"}  # fmt: skip

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


def shortcuts() -> None:
    """Keyboard shortcuts: a zero-height component that clicks the button of the key pressed."""
    script = _SCRIPT % json.dumps(SHORTCUTS)
    if hasattr(st, "iframe"):
        st.iframe(script, height=1)
    else:  # Streamlit before st.iframe
        import streamlit.components.v1 as components

        components.html(script, height=0)
