"""Back and Forward: one browser-history entry per view a user asked for, and the URL as the view on return.

Streamlit's page turns every change of ``st.query_params`` into a history entry of its own
(``history.pushState``), so one run made several entries and Back stepped through half-written URLs
(about 11 entries when ``/`` opened, 2 per query). Three small pieces fix it:

* :data:`SHIM`, a script put once into the page (:func:`install`), decides each ``pushState`` Streamlit
  makes: a new entry only when the user clicked or typed since the last entry *and* the view changed
  (another page, or another value of an :data:`ENTRY_KEYS` key: the query, the entity, the index;
  filling in an entity or index the URL lacked is no new view). Anything else (a slider, a model)
  replaces the current entry. Back and Forward make no entries: Streamlit replaces while it runs a
  history step.
* :func:`set_url` changes the URL in one step, and on a session's first run (a page load, before the
  shim is in the page) does not tell the browser at all: the address stays the link that was opened,
  and the next run writes the page's full URL.
* :func:`restore_from_url`: on a run Back or Forward started, the page forgets its view state, so it is
  seeded from the URL again exactly as when a link is opened; the URL is the view.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import urlencode

import streamlit as st

ENTRY_KEYS = ("q", "entity", "index")  # a change of one of these (or of the page) is a new history entry
FILLED_IN = ("entity", "index")  # ... except when the URL lacked it: a page filling in what a link left out

# Runs in the page itself (st.html with JavaScript), once per page load: the patched pushState lives in
# the page's window, where Streamlit calls it.
SHIM = """<script>
(() => {
  const w = window;
  if (w.sentretHistory) return;
  const keys = %s, filledIn = %s;
  const h = w.history, push = h.pushState.bind(h), replace = h.replaceState.bind(h);
  let acted = false;  // the user clicked or typed since the last entry was made
  const newView = (url) => {
    const from = new URL(w.location.href), to = new URL(url, w.location.href);
    return from.pathname !== to.pathname || keys.some((k) => {
      const was = from.searchParams.get(k), is = to.searchParams.get(k);
      return was !== is && !(was === null && filledIn.includes(k));
    });
  };
  for (const type of ["pointerdown", "keydown"]) w.addEventListener(type, () => { acted = true; }, true);
  w.addEventListener("popstate", () => { acted = false; }, true);
  h.pushState = function (state, unused, url) {
    if (acted && url != null && newView(url)) {
      acted = false;
      return push(state, unused, url);
    }
    return replace(state, unused, url);
  };
  w.sentretHistory = { keys, filledIn };
})();
</script>"""


def install() -> None:
    """Put :data:`SHIM` into the page (the sidebar, where an empty block takes no room); it acts once per load.
    Counts the session's full runs too: see :func:`first_run`."""
    st.session_state[_RUNS] = int(st.session_state.get(_RUNS, 0)) + 1
    st.sidebar.html(SHIM % (json.dumps(list(ENTRY_KEYS)), json.dumps(list(FILLED_IN))), unsafe_allow_javascript=True)


_RUNS = "sentret_history_runs"  # full runs of this session (one per page load, click or key)


def first_run() -> bool:
    """Whether this is the first run of the session (a page load): the shim is not in the page yet, so
    every URL change would be a history entry of its own. (A fragment's rerun comes later.)"""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    fragment_run = bool(ctx is not None and getattr(ctx, "fragment_ids_this_run", None))
    return int(st.session_state.get(_RUNS, 0)) <= 1 and not fragment_run


def set_url(params: dict[str, str]) -> None:
    """Make the URL's query parameters ``params``, in one step. On the session's first run the browser is
    not told (the page shows the view the link named; the next run writes it out, see :data:`SHIM`):
    Streamlit would make a history entry of it before the shim is there to stop it."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None and first_run():
        try:
            with ctx.session_state.query_params() as query_params:
                query_params.clear_with_no_forward_msg(preserve_embed=True)
                for key, value in params.items():
                    query_params.set_with_no_forward_msg(key, value)
                ctx.query_string = urlencode(query_params._query_params, doseq=True)
            return
        except AttributeError:  # another Streamlit: tell the browser after all
            pass
    st.query_params.from_dict(params)


def is_history_step() -> bool:
    """Whether this run was started by the browser's Back or Forward (Streamlit says so in the run's context)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and getattr(ctx, "is_history_navigation", False))


# The state a page seeds from its URL once per session, by the prefix of its session-state keys. Keys that
# hold more than the view (an admin's sign-in form for training) are kept.
PAGE_STATE = {"Explore": "explore_", "How it works": "howto_"}
KEPT = ("_train_",)


_FROM_URL = "sentret_view_from_url"  # set for the next run: the page reads its view from the URL again


def read_url_next_run() -> None:
    """Have the next run take the view from the URL, as a Back step does: for a change the widgets'
    labels cannot carry (a model's label loses "training in the background": Streamlit keeps a
    choice by its label, so the browser's old choice would be dropped)."""
    st.session_state[_FROM_URL] = True


def restore_from_url(page: str) -> None:
    """On a Back or Forward step (or when asked by :func:`read_url_next_run`), forget ``page``'s view
    state so the page reads it from the URL again."""
    asked = bool(st.session_state.pop(_FROM_URL, False))
    if asked or is_history_step():
        forget_view_state(PAGE_STATE.get(page, ()))


def forget_view_state(prefixes: str | Sequence[str]) -> None:
    """Drop every session-state key that starts with one of ``prefixes`` (except :data:`KEPT` ones)."""
    prefixes = (prefixes,) if isinstance(prefixes, str) else tuple(prefixes)
    if not prefixes:
        return
    for key in [str(k) for k in st.session_state]:
        if key.startswith(prefixes) and not any(part in key for part in KEPT):
            del st.session_state[key]
