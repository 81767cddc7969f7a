"""The Annotate page's sign-in: an annotator's own sign-in link, or their name and personal passphrase.

A sign-in link is ``/annotate?session=S&token=T``: the token is read from ``st.query_params`` once
and removed from the address at once (so it stays out of the history and of screenshots), then
checked. Otherwise the form asks for the session, the name and the annotator's personal
passphrase. Failed attempts are slowed down per name and client, and per client (the browser's IP
address), counted in the judgments database so that every app process shares them.
"""

from __future__ import annotations

import streamlit as st

from sentret_core.annotation.annotator import AnnotatorHandle
from sentret_core.annotation.store import JudgmentStore
from sentret_core.ui.annotate.keys import ANCHOR, CURSOR, FLASH, HANDLE
from sentret_core.ui.state import guarded
from sentret_core.ui.text import md


def client_id() -> str:
    """Who is trying to sign in, for slowing down repeated failures: the IP address (local: "local").

    Not a per-browser session id: a guesser gets a new one with every connection. Behind a reverse
    proxy every browser has the proxy's address, so they share one count.
    """
    try:
        address = st.context.ip_address
    except Exception:  # no browser connection (e.g. a test runner)
        address = None
    return address if isinstance(address, str) and address else "local"  # a test runner's is a mock


def sign_in(store: JudgmentStore) -> None:
    """Sign in from a sign-in link, else ask for the session, the name and the personal passphrase;
    once they are right the page reruns signed in."""
    default = st.query_params.get("session", "")
    token = st.query_params.get("token")
    if token is not None:
        del st.query_params["token"]  # never left in the address bar
        handle = guarded("sign in with the link", store.sign_in_with_token, default.strip(), token, client=client_id())
        if handle is not None:
            _signed_in(handle)
    with st.form("annotate_sign_in"):
        session = st.text_input("Session", value=default, key="annotate_session")
        name = st.text_input("Your name", key="annotate_name")
        passphrase = st.text_input("Your passphrase", type="password", key="annotate_passphrase")
        submitted = st.form_submit_button("Sign in", type="primary")
    if not submitted:
        st.info(
            "Open the sign-in link the organiser gave you, or sign in with your name and your own "
            "passphrase. Nobody else's works for you, and yours works for nobody else."
        )
        return
    handle = guarded("sign in", store.sign_in, session.strip(), name, passphrase, client=client_id())
    if handle is not None:
        _signed_in(handle)


def _signed_in(handle: AnnotatorHandle) -> None:
    st.session_state[HANDLE] = handle
    st.session_state[CURSOR] = None
    st.query_params["session"] = handle.session
    st.rerun()


def signed_out_notice(message: str) -> None:
    """Sign out after the annotator's access changed, and say why."""
    sign_out()
    st.error(md(message))


def sign_out() -> None:
    for key in (HANDLE, CURSOR, FLASH, ANCHOR):
        st.session_state.pop(key, None)
