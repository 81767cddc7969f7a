"""The Annotate page's sign-in form (name and the session's passphrase) and sign-out."""

from __future__ import annotations

import streamlit as st

from sentret_core.annotation.store import JudgmentStore
from sentret_core.ui.annotate.keys import ANCHOR, CURSOR, FLASH, HANDLE
from sentret_core.ui.state import guarded


def sign_in(store: JudgmentStore) -> None:
    """Ask for the session, a name and the passphrase; once they are right the page reruns signed in."""
    default = st.query_params.get("session", "")
    with st.form("annotate_sign_in"):
        session = st.text_input("Session", value=default, key="annotate_session")
        name = st.text_input("Your name", key="annotate_name")
        passphrase = st.text_input("Session passphrase", type="password", key="annotate_passphrase")
        submitted = st.form_submit_button("Sign in", type="primary")
    if not submitted:
        st.info("Sign in with your name and the passphrase the organiser gave you.")
        return
    handle = guarded("sign in", store.sign_in, session.strip(), name, passphrase)
    if handle is None:
        return
    st.session_state[HANDLE] = handle
    st.session_state[CURSOR] = None
    st.query_params["session"] = handle.session
    st.rerun()


def sign_out() -> None:
    for key in (HANDLE, CURSOR, FLASH, ANCHOR):
        st.session_state.pop(key, None)
