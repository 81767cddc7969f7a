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
after a restart resumes the web session; within one connection the session state holds it.
"""

from __future__ import annotations

import json

import streamlit as st

ANNOTATOR_COOKIE = "sentret_annotator"
ADMIN_COOKIE = "sentret_admin"
_PENDING = "browser_session_pending"  # [(cookie, value, max-age)] to write in this run
_FORGOTTEN = "browser_session_forgotten"  # cookies cleared in this connection: their old value is stale

_SCRIPT = """<script>
(function () {
  const doc = window.parent.document;
  const secure = window.parent.location.protocol === "https:" ? "; Secure" : "";
  for (const [name, value, age] of %s) {
    doc.cookie = name + "=" + encodeURIComponent(value) + "; Max-Age=" + age + "; Path=/; SameSite=Strict" + secure;
  }
})();
</script>"""


def read_cookie(name: str) -> str | None:
    """The cookie ``name`` this browser sent when it connected (None: none, or cleared since)."""
    if name in st.session_state.get(_FORGOTTEN, ()):
        return None
    value = _sent_cookies().get(name)
    return value if isinstance(value, str) and value else None


def _sent_cookies() -> dict[str, str]:
    try:
        return dict(st.context.cookies)
    except Exception:  # no browser connection (a test runner)
        return {}


def remember(name: str, value: str, lifetime_s: float) -> None:
    """Keep ``value`` in cookie ``name`` for ``lifetime_s`` seconds (written by :func:`write_cookies`)."""
    st.session_state.setdefault(_PENDING, []).append((name, value, max(0, int(lifetime_s))))
    forgotten = st.session_state.get(_FORGOTTEN, set())
    forgotten.discard(name)


def forget(name: str) -> None:
    """Clear cookie ``name`` (sign-out, or a session found ended)."""
    st.session_state.setdefault(_FORGOTTEN, set()).add(name)
    st.session_state.setdefault(_PENDING, []).append((name, "", 0))


def write_cookies() -> None:
    """Draw the component that writes the cookies left by :func:`remember` and :func:`forget`."""
    pending = st.session_state.pop(_PENDING, None)
    if not pending:
        return
    script = _SCRIPT % json.dumps([list(p) for p in pending]).replace("</", "<\\/")
    if hasattr(st, "iframe"):
        st.iframe(script, height=1)
    else:  # Streamlit before st.iframe
        import streamlit.components.v1 as components

        components.html(script, height=0)
