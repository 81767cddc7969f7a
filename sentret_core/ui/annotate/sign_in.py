"""The Annotate page's sign-in: an annotator's own sign-in link, or their name and personal passphrase.

A sign-in link is ``/annotate?session=S&token=T``: the token is read from ``st.query_params`` once
and removed from the address at once (so it stays out of the history and of screenshots), then
checked. Otherwise the form asks for the session, the name and the annotator's personal
passphrase. Failed attempts are slowed down per name and client, per client (the browser's address:
the TCP peer unless the admin named trusted proxies, :mod:`sentret_core.annotation.client_address`) and
per name from every client, counted in the judgments database so that every app process shares them; a
browser that signed in as that annotator before is slowed down by its own failures only
(:mod:`sentret_core.annotation.known_browsers`).

Signing in starts a web session (:mod:`sentret_core.annotation.web_sessions`) whose id the browser
keeps in a cookie (:mod:`sentret_core.ui.browser_session`): a reload, a new tab or a server restart
resumes it without a word; when it has ended (expired, signed out, access changed), the sign-in
form says why.
"""

from __future__ import annotations

import os

import streamlit as st

from sentret_core.annotation import known_browsers
from sentret_core.annotation.annotator import AnnotatorHandle, SignedOut
from sentret_core.annotation.client_address import AddressPolicy, throttle_client
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from sentret_core.ui.annotate.keys import ANCHOR, CURSOR, ENDED, EXPIRES, HANDLE, WEB_ID, show_flash
from sentret_core.ui.browser_session import (
    ANNOTATOR_COOKIE,
    KNOWN_COOKIE,
    current_cookie,
    forget,
    read_cookie,
    remember,
)
from sentret_core.ui.state import error_message, guarded
from sentret_core.ui.text import md


def client_id() -> str:
    """Who is trying to sign in, for slowing down repeated failures: the connection's address ("local" for
    this machine), an ``X-Forwarded-For`` address only from a proxy the admin named (``--trusted-proxy``;
    :func:`~sentret_core.annotation.client_address.throttle_client` says why it is sound).

    Not a per-browser session id: a guesser gets a new one with every connection. Behind a reverse
    proxy that is not named every browser has the proxy's address, so they share one count.
    """
    try:
        address = st.context.ip_address
        forwarded = [value for value in st.context.headers.get_all("X-Forwarded-For") if isinstance(value, str)]
    except Exception:  # no browser connection (e.g. a test runner, whose context is a mock)
        address, forwarded = None, []
    return throttle_client(address, forwarded, AddressPolicy.from_environment(os.environ))


def known_browser() -> str | None:
    """The id of this browser's known-browser cookie, if it has one (annotation/known_browsers.py)."""
    return current_cookie(KNOWN_COOKIE)


def remember_browser(store: JudgmentStore, who: str) -> None:
    """After a sign-in as ``who``: mark this browser known for them, and keep its id in its cookie."""
    browser = guarded("remember this browser", store.known_browsers.remember, store, who, known_browser())
    if browser is not None:
        remember(KNOWN_COOKIE, browser, store.known_browsers.lifetime)


def resume(store: JudgmentStore) -> AnnotatorHandle | None:
    """The annotator this browser signed in as before (its cookie's web session), if it is still on;
    if it has ended, the cookie is cleared and the sign-in form will say why."""
    web_id = read_cookie(ANNOTATOR_COOKIE)
    if web_id is None:
        return None
    try:
        resumed = store.web_sessions.resume_annotator(store, web_id)
    except SignedOut as err:
        forget(ANNOTATOR_COOKIE)
        st.session_state[ENDED] = str(err)
        return None
    except SentretError as err:  # a busy database: not signed out, only not yet
        st.error(md(error_message("resume your sign-in", err)))
        return None
    st.session_state[HANDLE] = resumed.handle
    st.session_state[WEB_ID] = web_id
    st.session_state[EXPIRES] = resumed.expires_at
    return resumed.handle


def sign_in(store: JudgmentStore) -> None:
    """Sign in from a sign-in link, else ask for the session, the name and the personal passphrase;
    once they are right the page reruns signed in. Says first why this browser is signed out, if it
    was signed in, and what became of a key pressed meanwhile."""
    ended = st.session_state.pop(ENDED, None)
    if ended is not None:
        st.error(f"You are signed out: {md(ended)}")
    show_flash()
    default = st.query_params.get("session", "")
    token = st.query_params.get("token")
    if token is not None:
        del st.query_params["token"]  # never left in the address bar
        handle = guarded("sign in with the link", store.sign_in_with_token, default.strip(), token, client=client_id(),
                         known=known_browser())
        if handle is not None:
            _signed_in(store, handle)
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
    handle = guarded("sign in", store.sign_in, session.strip(), name, passphrase, client=client_id(),
                     known=known_browser())
    if handle is not None:
        _signed_in(store, handle)


def _signed_in(store: JudgmentStore, handle: AnnotatorHandle) -> None:
    remember_browser(store, known_browsers.annotator(handle.signed_in_as[1]))
    web_id = guarded("remember your sign-in", store.web_sessions.start_annotator, store, handle)
    if web_id is not None:
        remember(ANNOTATOR_COOKIE, web_id, store.web_sessions.annotator_lifetime)
        st.session_state[WEB_ID] = web_id
        st.session_state[EXPIRES] = store.web_sessions.clock() + store.web_sessions.annotator_lifetime
    st.session_state[HANDLE] = handle
    st.session_state[CURSOR] = None
    st.query_params["session"] = handle.session
    st.rerun()


def signed_out_notice(message: str) -> None:
    """Leave the grading view after the annotator's web session ended; the sign-in form says why."""
    _forget_browser()
    st.session_state[ENDED] = message


def sign_out() -> None:
    """The Sign out button: this browser's web session ends (in every tab) and its cookie is cleared."""
    handle: AnnotatorHandle | None = st.session_state.get(HANDLE)
    web_id = st.session_state.get(WEB_ID)
    if handle is not None and web_id is not None:
        handle.end_web_session(web_id)
    _forget_browser()


def _forget_browser() -> None:
    forget(ANNOTATOR_COOKIE)
    for key in (HANDLE, CURSOR, ANCHOR, WEB_ID, EXPIRES):
        st.session_state.pop(key, None)
