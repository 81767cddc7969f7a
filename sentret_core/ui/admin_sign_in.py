"""The admin sign-in every admin action shares: the Admin and Evaluate pages, and building, replacing or
deleting an index on the Corpus page. Signing in once, on any of them, signs this browser session in
on all of them; the token is checked again at every action, so a changed token signs everyone out.
Wrong tokens are slowed down per client (the browser's address, see ``ui/annotate/sign_in.py``) and from
every client, counted in the judgments database; a browser that signed in as the admin before is slowed
down by its own failures only, so strangers' wrong tokens never refuse the admin's right one.

Signing in starts an admin web session (:mod:`sentret_core.annotation.web_sessions`) named by a
cookie (:mod:`sentret_core.ui.browser_session`): a reload, a new tab or a server restart keeps the
admin signed in until it expires, until the admin token changes (the form then says why), or until
the admin signs out ("Sign out as admin" ends the web session in the database, so every tab is out).
"""

from __future__ import annotations

import streamlit as st

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.auth import admin_token
from sentret_core.annotation.known_browsers import ADMIN
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.web_sessions import SessionEnded
from sentret_core.errors import SentretError
from sentret_core.ui.annotate.sign_in import client_id, known_browser, remember_browser
from sentret_core.ui.browser_session import ADMIN_COOKIE, forget, read_cookie, remember, write_cookies
from sentret_core.ui.state import error_message, guarded
from sentret_core.ui.text import md

TOKEN = "admin_verified_token"  # the verified token of this browser session
WEB_ID = "admin_web_id"  # the id of its admin web session (also in its cookie)
ENDED = "admin_sign_in_ended"  # why the admin web session ended, for the form to say
SIGNED_OUT = "admin_signed_out"  # the admin just signed out, for the form to say
NEEDS_TOKEN = "This page needs the admin token."
WRONG_TOKEN = "wrong admin token"  # Admin's message


def signed_in_token() -> str | None:
    """The admin token this browser session signed in with, if any (checked when it is used)."""
    token = st.session_state.get(TOKEN)
    return token if isinstance(token, str) else None


def admin_for(store: JudgmentStore) -> Admin | None:
    """This browser session's :class:`Admin`, if it signed in with the admin token."""
    token = signed_in_token()
    if token is not None and not _still_on(store, token):
        return None
    token = token or _resume(store)
    if token is None:
        return None
    try:
        return store.admin(token, client=client_id(), known=known_browser())
    except SentretError as exc:
        if str(exc) == WRONG_TOKEN:  # the token changed (e.g. the server restarted with another one)
            st.session_state.pop(TOKEN, None)
            st.session_state[ENDED] = "the admin token has changed since you signed in; enter the new one"
            forget(ADMIN_COOKIE)
        return None  # else the database is busy, or this client must wait: signed in still


def _still_on(store: JudgmentStore, token: str) -> bool:
    """Whether this browser session's admin web session is still on (signing out in another tab, or
    its expiry, ends it here too); a browser session without one (it could not be stored) stays on."""
    web_id = st.session_state.get(WEB_ID)
    if web_id is None:
        return True
    try:
        store.web_sessions.resume_admin(store, web_id, token)
    except SessionEnded as err:
        _forget_admin()
        st.session_state[ENDED] = str(err)
        return False
    except SentretError:  # a busy database: not signed out, only not checked
        pass
    return True


def _forget_admin() -> None:
    for key in (TOKEN, WEB_ID):
        st.session_state.pop(key, None)
    forget(ADMIN_COOKIE)


def sign_out(store: JudgmentStore) -> None:
    """The "Sign out as admin" button: the admin web session ends in the database (every tab and a
    reload are signed out) and this browser's cookie is cleared."""
    web_id = st.session_state.get(WEB_ID) or read_cookie(ADMIN_COOKIE)
    if web_id is not None:
        store.web_sessions.end(store, web_id)
    _forget_admin()
    st.session_state[SIGNED_OUT] = True


def _sign_out_button(store: JudgmentStore, key: str) -> None:
    st.button("Sign out as admin", key=f"{key}_sign_out", on_click=sign_out, args=(store,),
              help="End this admin sign-in (in every tab of this browser, and after a reload)")


def _resume(store: JudgmentStore) -> str | None:
    """The admin token, if this browser's cookie names a live admin web session made with it."""
    web_id = read_cookie(ADMIN_COOKIE)
    if web_id is None:
        return None
    token = admin_token()
    try:
        store.web_sessions.resume_admin(store, web_id, token)
    except SessionEnded as err:
        forget(ADMIN_COOKIE)
        st.session_state[ENDED] = str(err)
        return None
    except SentretError as err:  # a busy database: not signed out, only not yet
        st.error(md(error_message("resume your admin sign-in", err)))
        return None
    st.session_state[TOKEN] = token
    st.session_state[WEB_ID] = web_id
    return token


def token_form(store: JudgmentStore, key: str, why: str = NEEDS_TOKEN) -> Admin | None:
    """Ask for the admin token (saying ``why``); the Admin once it is right (remembered for this
    browser session)."""
    admin = admin_for(store)
    write_cookies()
    if admin is not None:
        _sign_out_button(store, key)
        return admin
    ended = st.session_state.pop(ENDED, None)
    if st.session_state.pop(SIGNED_OUT, False):
        st.success("You signed out as admin.")
    elif ended is not None:
        st.warning(f"You are signed out as admin: {md(ended)}")
    with st.form(f"{key}_token_form"):
        token = st.text_input("Admin token", type="password", key=f"{key}_token",
                              help=f"${ADMIN_TOKEN_ENV}, or the token printed in the server log")
        submitted = st.form_submit_button("Sign in as admin")
    if submitted:
        admin = guarded("check the admin token", store.admin, token.strip(), client=client_id(),
                        known=known_browser())
        if admin is not None:
            st.session_state[TOKEN] = token.strip()
            remember_browser(store, ADMIN)
            web_id = guarded("remember the admin sign-in", store.web_sessions.start_admin, store, token.strip())
            if web_id is not None:
                st.session_state[WEB_ID] = web_id
                remember(ADMIN_COOKIE, web_id, store.web_sessions.admin_lifetime)
                write_cookies()
            _sign_out_button(store, key)
        return admin
    st.info(why)
    return None
