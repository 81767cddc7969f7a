"""The admin sign-in every admin action shares: the Admin and Evaluate pages, and building, replacing or
deleting an index on the Corpus page. Signing in once, on any of them, signs this browser session in
on all of them; the token is checked again at every action, so a changed token signs everyone out.
Wrong tokens are slowed down per client (the browser's IP address), counted in the judgments database.
"""

from __future__ import annotations

import streamlit as st

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from sentret_core.ui.annotate.sign_in import client_id
from sentret_core.ui.state import guarded

TOKEN = "admin_verified_token"  # the verified token of this browser session
NEEDS_TOKEN = "This page needs the admin token."
WRONG_TOKEN = "wrong admin token"  # Admin's message


def signed_in_token() -> str | None:
    """The admin token this browser session signed in with, if any (checked when it is used)."""
    token = st.session_state.get(TOKEN)
    return token if isinstance(token, str) else None


def admin_for(store: JudgmentStore) -> Admin | None:
    """This browser session's :class:`Admin`, if it signed in with the admin token."""
    token = signed_in_token()
    if token is None:
        return None
    try:
        return store.admin(token, client=client_id())
    except SentretError as exc:
        if str(exc) == WRONG_TOKEN:  # the token changed (e.g. the server restarted with another one)
            st.session_state.pop(TOKEN, None)
        return None  # else the database is busy, or this client must wait: signed in still


def token_form(store: JudgmentStore, key: str, why: str = NEEDS_TOKEN) -> Admin | None:
    """Ask for the admin token (saying ``why``); the Admin once it is right (remembered for this
    browser session)."""
    admin = admin_for(store)
    if admin is not None:
        return admin
    with st.form(f"{key}_token_form"):
        token = st.text_input("Admin token", type="password", key=f"{key}_token",
                              help=f"${ADMIN_TOKEN_ENV}, or the token printed in the server log")  # fmt: skip
        submitted = st.form_submit_button("Sign in as admin")
    if submitted:
        admin = guarded("check the admin token", store.admin, token.strip(), client=client_id())
        if admin is not None:
            st.session_state[TOKEN] = token.strip()
        return admin
    st.info(why)
    return None
