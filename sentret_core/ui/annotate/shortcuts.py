"""The Annotate page's keyboard shortcuts: 1-4 grade, u undo, s skip, b back, n current item, t context,
f flag (see :data:`LEGEND`).

Streamlit has no key handler, so a zero-height component installs one on the page. The handler
(``HANDLER_JS``) is a small state machine that lives in the *page's* window, not in the
component's frame: Streamlit replaces the frame whenever the page's layout shifts (the message
after an undo, the context after ``t``), and a timer belonging to a removed frame never fires
again — which once left a ``busy`` flag set for good, so that no key worked until a reload.

The state machine: a key is queued; when the app is idle and no press is waiting for its answer,
the head of the queue clicks its button (found by the widget key's ``st-key-…`` class; grade
buttons carry the item id too) and the handler is *busy* until the rerun that click caused has
finished — seen either as the app's script state going back to ``notRunning`` or as a component
of a newer run — or, failing both, until ``timeout_ms`` has passed. After such a timeout a grade
key never presses the button of the item graded last until the page has been redrawn: the
answer may only be late, and the key was meant for the next item. A key whose button is absent
or disabled does nothing, as a click on it would. Keys typed into a text field are left alone. A key
is never dropped in silence: one pressed while the page has lost its server (Streamlit's
``data-test-connection-state`` is not ``CONNECTED``: a restart, a network cut), one still queued when the
server goes away, one older than five times the timeout and an eleventh waiting key are each refused at
once with a notice on the page (``#sentret-key-refused``) that says so and asks for the key again. When the
page finds a server again, Streamlit reruns it (Annotate has a timed fragment), and a press sent just before
that rerun began was swallowed by it (seen in Chromium: half of the keys pressed the moment a restarted server
answered were never stored); so keys wait, queued, until that rerun has finished (at most ``timeout_ms``).
Streamlit itself uses c and r.

Why not ``st.button(shortcut=...)`` (Streamlit ≥ 1.52): its handler sets the button's trigger at
keydown, whatever the script is doing. A key pressed while a grade's rerun is still drawing presses
the button of the item just graded (grade buttons are keyed by item), and two presses before a rerun
starts are one trigger: keys would be lost or misapplied. Hence the queue above, kept.
"""

from __future__ import annotations

import hashlib
import json

import streamlit as st

from sentret_core.annotation.records import GRADE_LABELS

SHORTCUTS = {**{str(g): f"grade{g}_" for g in GRADE_LABELS}, "u": "annotate_undo", "s": "annotate_skip",
             "b": "annotate_back", "n": "annotate_current", "t": "annotate_context",
             "f": "annotate_flag"}
LEGEND = ("**Keys** · **1**–**4** grade (1 non-relevant · 2 fairly relevant · 3 relevant · 4 very relevant)"
          " · **f** flag · **s** skip · **u** undo · **b** back · **n** current item · **t** context"
          " · click outside the note box first")
TIMEOUT_MS = 6000  # a press not answered by then frees the handler (a lost or very slow rerun)
RUN = "annotate_keys_run"  # session-state counter: each run's component carries its number

HANDLER_JS = r"""function install(win, keysJson, timeoutMs, version) {
  "use strict";
  const doc = win.document;
  const keys = JSON.parse(keysJson);
  const TEXT = /^(text|password|number|search|email|url|tel|date|time|datetime-local|month|week)$/;
  // busy: a press waits for its rerun; mark: [runs finished, newest component run] when pressed;
  // graded: the item of the last grade pressed, and the mark then
  // rejoined: runs finished when the page found a server again (null: not since), and when
  const state = {queue: [], busy: false, pressedAt: 0, mark: [0, 0], finished: 0, run: 0,
                 graded: null, timer: null, pressed: [], rejoined: null, rejoinedAt: 0};
  function scriptState() {
    const app = doc.querySelector('[data-testid="stApp"]');
    return app ? app.getAttribute("data-test-script-state") : null;
  }
  function idle() { return scriptState() === "notRunning"; }
  function connected() {  // the page's websocket to the server (Streamlit's own attribute; absent: assume so)
    const app = doc.querySelector('[data-testid="stApp"]');
    const found = app ? app.getAttribute("data-test-connection-state") : null;
    return found === null || found === "CONNECTED";
  }
  function refuse(key, why) {  // a key not sent is said on the page at once, never dropped in silence
    let note = doc.getElementById("sentret-key-refused");
    if (note === null) {
      note = doc.createElement("div");
      note.id = "sentret-key-refused";
      note.setAttribute("role", "alert");
      note.style.cssText = "position:fixed;bottom:1rem;left:50%;transform:translateX(-50%);z-index:1000000;" +
        "padding:0.6rem 1rem;border-radius:0.4rem;background:#b00020;color:#fff;max-width:90vw";
      doc.body.appendChild(note);
    }
    note.textContent = "Not saved: your key \u201c" + key + "\u201d was not sent, because " + why +
      " Press it again once the page answers.";
    note.hidden = false;
  }
  function accepted() {
    const note = doc.getElementById("sentret-key-refused");
    if (note !== null) note.hidden = true;
  }
  function shownRun() {  // the run number of the newest shortcuts component on the page
    let newest = 0;
    for (const frame of doc.querySelectorAll("iframe[srcdoc]")) {
      const found = /sentret-run=([0-9]+)/.exec(frame.getAttribute("srcdoc") || "");
      if (found) newest = Math.max(newest, Number(found[1]));
    }
    return newest;
  }
  function find(prefix) {
    for (const box of doc.querySelectorAll('[class*="st-key-' + prefix + '"]')) {
      if (box.closest('[data-stale="true"]')) continue;
      const control = box.querySelector("button, input[type=checkbox]");
      if (control && !control.disabled) return control;
    }
    return null;
  }
  function rejoining(now) {  // back on a server whose rerun of the page has not finished yet (bounded)
    if (state.rejoined === null) return false;
    if (state.finished > state.rejoined || now - state.rejoinedAt > timeoutMs) state.rejoined = null;
    return state.rejoined !== null;
  }
  function redrawnSince(mark) { return state.finished > mark[0] || state.run > mark[1]; }
  function gradedItem(control) {  // the item id of a grade button (st-key-grade3_17 → "17"), else null
    const box = control.closest('[class*="st-key-grade"]');
    const name = box ? [...box.classList].find((c) => c.startsWith("st-key-grade")) : null;
    return name ? name.slice(name.indexOf("_") + 1) : null;
  }
  function tick() {
    state.timer = null;
    const now = Date.now();
    if (state.busy && ((redrawnSince(state.mark) && idle()) || now - state.pressedAt > timeoutMs)) {
      state.busy = false;
    }
    if (!connected() && state.queue.length > 0) {  // the server went away meanwhile: say so for every key
      state.queue.splice(0).forEach(([key]) => refuse(key, "the server stopped answering (it may be restarting)."));
      return;
    }
    if (rejoining(now)) { schedule(); return; }  // the page's own rerun on reconnecting comes first
    while (!state.busy && state.queue.length > 0 && idle()) {
      const [key, since] = state.queue[0];
      if (now - since > 5 * timeoutMs) {  // too old to mean anything now
        state.queue.shift();
        refuse(key, "the page did not answer for " + Math.round(5 * timeoutMs / 1000) + " s.");
        continue;
      }
      const control = find(keys[key]);
      if (control === null) { state.queue.shift(); continue; }  // nothing to press here: the key does nothing
      const item = gradedItem(control);
      const last = state.graded;
      if (item !== null && last !== null && last.item === item && !redrawnSince(last.mark)) break;  // late answer
      state.queue.shift();
      state.busy = true;
      state.pressedAt = now;
      state.mark = [state.finished, Math.max(state.run, shownRun())];
      if (item !== null) state.graded = {item: item, mark: state.mark};
      state.pressed.push(key);
      if (state.pressed.length > 100) state.pressed.shift();
      accepted();
      control.click();
    }
    if (state.busy || state.queue.length > 0) schedule();
  }
  function schedule() { if (state.timer === null) state.timer = win.setTimeout(tick, 25); }
  function typing(target) {
    if (!target || !target.tagName) return false;
    const tag = target.tagName.toUpperCase();
    if (tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable) return true;
    return tag === "INPUT" && TEXT.test(String(target.type || "text").toLowerCase());
  }
  function onKey(event) {
    if (event.repeat || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const key = String(event.key || "").toLowerCase();
    if (!keys[key] || !doc.querySelector('[class*="st-key-annotate_undo"]')) return;  // not on Annotate
    event.preventDefault();
    event.stopPropagation();
    if (!connected()) { refuse(key, "the server is not answering (it may be restarting)."); return; }
    if (state.queue.length < 10) state.queue.push([key, Date.now()]);
    else refuse(key, "ten keys were already waiting for the page.");
    tick();
  }
  const observer = new MutationObserver(function (records) {
    records.forEach(function (record, i) {  // the value after a change: the next one's old value
      const name = record.attributeName;
      const later = records.slice(i + 1).find((r) => r.attributeName === name && r.target === record.target);
      const next = later ? later.oldValue : record.target.getAttribute(name);
      if (name === "data-test-script-state" && record.oldValue !== "notRunning" && next === "notRunning") {
        state.finished += 1;
      }
      if (name === "data-test-connection-state" && record.oldValue !== "CONNECTED" && next === "CONNECTED") {
        state.rejoined = state.finished;  // the reconnect's rerun would swallow a press sent before it
        state.rejoinedAt = Date.now();
      }
    });
    if (state.busy || state.queue.length > 0) schedule();
  });
  observer.observe(doc.documentElement, {subtree: true, attributes: true, attributeOldValue: true,
                                         attributeFilter: ["data-test-script-state", "data-test-connection-state"]});
  if (win.__sentretAnnotateKeys) doc.removeEventListener("keydown", win.__sentretAnnotateKeys, true);
  doc.addEventListener("keydown", onKey, true);
  win.__sentretAnnotateKeys = onKey;
  win.__sentretAnnotateState = state;
  return {
    version: version,
    state: state,
    rerun: function (run) { state.run = Math.max(state.run, run); schedule(); },
    uninstall: function () {
      doc.removeEventListener("keydown", onKey, true);
      observer.disconnect();
      if (state.timer !== null) win.clearTimeout(state.timer);
    },
  };
}"""

VERSION = hashlib.sha256(HANDLER_JS.encode()).hexdigest()[:12]

_COMPONENT = """<script>
// sentret-run=%(run)d
(function () {
  // The handler is compiled in the page's window (win.Function), so it outlives this frame.
  const win = window.parent;
  let api = win.__sentretAnnotate;
  if (!api || api.version !== %(version)s) {
    if (api) api.uninstall();
    const install = new win.Function("return " + %(source)s)();
    api = win.__sentretAnnotate = install(win, JSON.stringify(%(keys)s), %(timeout)d, %(version)s);
  }
  api.rerun(%(run)d);
})();
</script>
"""


def component_html(run: int, timeout_ms: int = TIMEOUT_MS) -> str:
    """The component's document for run number ``run``: installs the handler once, reports the run."""
    return _COMPONENT % {"run": run, "version": _literal(VERSION), "source": _literal(HANDLER_JS),
                         "keys": _literal(SHORTCUTS), "timeout": timeout_ms}


def _literal(value: object) -> str:
    """``value`` as a JavaScript literal (JSON) that never closes the script element (``</``)."""
    return json.dumps(value).replace("</", "<\\/")


def shortcuts() -> None:
    """Keyboard shortcuts: a zero-height component, new on every run (its run number tells the
    handler that the rerun a press caused has been drawn)."""
    run = int(st.session_state.get(RUN, 0)) + 1
    st.session_state[RUN] = run
    script = component_html(run)
    if hasattr(st, "iframe"):
        st.iframe(script, height=1)
    else:  # Streamlit before st.iframe
        import streamlit.components.v1 as components

        components.html(script, height=0)
