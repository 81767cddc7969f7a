"""Where a browser keeps its web session's id (:mod:`sentret_core.annotation.web_sessions`): a cookie.

Why a cookie: Streamlit's session state dies with the server process and with every reload, so
on its own a restart signs everyone out. Streamlit 1.67 reads cookies (``st.context.cookies``,
sent with the connection) but cannot set one from Python, and has no HttpOnly cookie of its own
for an app. A URL query parameter would survive a reload, but the pages rewrite their addresses
(Explore drops what it does not know) and a new tab opened on a bare address would not carry it.
So a zero-height component sets a first-party cookie from the page (``path=/``,
``SameSite=Strict``, ``Secure`` under https, ``Max-Age`` = the web session's lifetime). A script
can set it, so it is not HttpOnly; what it holds is only an opaque random id, whose SHA-256 is
what the database keeps, which ends at a fixed expiry, at sign-out and at any change of access,
and every page draws user text escaped (``ui/text.py``), which is what would otherwise let a
script read it. The cookie is read when a browser connects: a reload, a new tab or a reconnection
after a restart resumes the web session; within one connection the session state holds it. A third cookie,
``sentret_browser``, marks the browser as known for whom it signed in as
(:mod:`sentret_core.annotation.known_browsers`): it outlives sign-out and signs nobody in; it only keeps
strangers' failed sign-ins from holding up this browser's right secret.

The component is drawn again, the same, in every run of the connection, not only in the run that signed in: its
script runs when the browser has loaded it, and a component drawn once is gone at the next run, so a click
soon after signing in, on a loaded machine, could remove it before it ran, and a reload then found no cookie.
Its text does not change from run to run (the cookie's expiry is a date, not an age), so the browser keeps the
one it loaded.
"""

from __future__ import annotations

import json
import time

import streamlit as st

ANNOTATOR_COOKIE = "sentret_annotator"
ADMIN_COOKIE = "sentret_admin"
KNOWN_COOKIE = "sentret_browser"  # a known browser's id (annotation/known_browsers.py): kept past sign-out
_WRITTEN = "browser_session_written"  # {cookie: (value, expiry in ms since 1970)} set in this connection
_FORGOTTEN = "browser_session_forgotten"  # cookies cleared in this connection: their old value is stale

_SCRIPT = """<script>
(function () {
  const doc = window.parent.document;
  const secure = window.parent.location.protocol === "https:" ? "; Secure" : "";
  for (const [name, value, expires] of %s) {
    doc.cookie = name + "=" + encodeURIComponent(value) + "; Expires=" + new Date(expires).toUTCString() +
      "; Path=/; SameSite=Strict" + secure;
  }
})();
</script>"""


def read_cookie(name: str) -> str | None:
    """The cookie ``name`` this browser sent when it connected (None: none, or cleared since)."""
    if name in st.session_state.get(_FORGOTTEN, ()):
        return None
    value = _sent_cookies().get(name)
    return value if isinstance(value, str) and value else None


def current_cookie(name: str) -> str | None:
    """The cookie ``name`` as this browser has it now: set in this connection (by :func:`remember`), else sent."""
    written = st.session_state.get(_WRITTEN, {}).get(name)
    if written is not None and written[0]:
        return str(written[0])
    return read_cookie(name)


def _sent_cookies() -> dict[str, str]:
    try:
        return dict(st.context.cookies)
    except Exception:  # no browser connection (a test runner)
        return {}


def remember(name: str, value: str, lifetime_s: float) -> None:
    """Keep ``value`` in cookie ``name`` for ``lifetime_s`` seconds (written by :func:`write_cookies`)."""
    expires = int((time.time() + max(0.0, lifetime_s)) * 1000)
    st.session_state.setdefault(_WRITTEN, {})[name] = (value, expires)
    forgotten = st.session_state.get(_FORGOTTEN, set())
    forgotten.discard(name)


def forget(name: str) -> None:
    """Clear cookie ``name`` (sign-out, or a session found ended): it expires in 1970."""
    st.session_state.setdefault(_FORGOTTEN, set()).add(name)
    st.session_state.setdefault(_WRITTEN, {})[name] = ("", 0)


def write_cookies() -> None:
    """Draw the component that writes the cookies :func:`remember` and :func:`forget` set in this connection: in
    every run, the same (see the module's docstring)."""
    written = st.session_state.get(_WRITTEN)
    if not written:
        return
    cookies = [[name, value, expires] for name, (value, expires) in sorted(written.items())]
    script = _SCRIPT % json.dumps(cookies).replace("</", "<\\/")
    if hasattr(st, "iframe"):
        st.iframe(script, height=1)
    else:  # Streamlit before st.iframe
        import streamlit.components.v1 as components

        components.html(script, height=0)
