"""The Admin page's people of a session: add annotators, reviewers and (for the admin token) the session's
admins; give them a new secret, change their role, rename, disable, remove.

A new annotator's secret — a sign-in link with a token, and a personal passphrase — is shown once,
right after it is made; only scrypt hashes are stored, so a lost secret is replaced, never shown
again. Every change signs the annotator's open browsers out.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.identity import sign_in_link
from sentret_core.annotation.records import AnnotatorSecret, SessionInfo
from sentret_core.annotation.roles import ANNOTATOR, ROLE_HELP, ROLES, SESSION_ADMIN
from sentret_core.ui.state import error_guard, guarded
from sentret_core.ui.text import md

NEW_SECRET = "admin_new_secret"  # the secret just made, shown once after the rerun
DONE = "admin_annotator_done"  # what the last action did, shown after the rerun
DEFAULT_BASE = "http://localhost:8501"


def app_base_url() -> str:
    """The app's address as this browser sees it (for sign-in links), without the page's path."""
    try:
        url = st.context.url
    except Exception:  # no browser connection (e.g. a test runner)
        url = None
    if not url:
        return DEFAULT_BASE
    base = url.split("?", 1)[0].rstrip("/")
    return base[: -len("/admin")] if base.endswith("/admin") else base


def session_caption(info: SessionInfo) -> str:
    """``Session: NAME``, above every admin action, so that none acts on a session by surprise."""
    return f"Session: **{md(info.name)}**"


def manage_annotators(admin: Admin, info: SessionInfo) -> None:
    """The session's annotators, the secret just made (once), and the forms that change them."""
    st.subheader("Annotators")
    st.caption(session_caption(info))
    _show_secret(info)
    done = st.session_state.pop(DONE, None)
    if done:
        st.success(md(done))
    people = guarded("list the annotators", admin.annotators, info.name)
    if people is None:
        return
    if people:
        table = pd.DataFrame(
            [{"annotator": p.name, "role": p.role, "status": p.status, "graded": p.graded, "sign-in link": p.has_link,
              "passphrase": p.has_passphrase, "added": p.created_at[:19].replace("T", " ")} for p in people]
        )
        st.dataframe(table, hide_index=True, width="stretch")
    else:
        st.info("No annotator yet: add each person who will grade; each gets their own sign-in link and passphrase.")
    with st.form("admin_add_annotator", clear_on_submit=True):
        name = st.text_input("Name of a new annotator", key="admin_annotator_new",
                             help="Names are unique in a session regardless of case and spaces")
        role = st.radio("Role", _roles(admin), key="admin_annotator_role", horizontal=True,
                        format_func=_role_label, help=" · ".join(f"{r}: {h}" for r, h in ROLE_HELP.items()))
        add = st.form_submit_button("Add person")
    if add:
        with error_guard("add the person"):
            _keep(admin.add_annotator(info.name, name, role=role or ANNOTATOR))
            st.rerun()
    if people:
        _change(admin, info, [p.name for p in people])


def _keep(secret: AnnotatorSecret) -> None:
    st.session_state[NEW_SECRET] = secret


def _show_secret(info: SessionInfo) -> None:
    secret: AnnotatorSecret | None = st.session_state.pop(NEW_SECRET, None)
    if secret is None or secret.session != info.name:
        return
    st.success(
        f"Secret for **{md(secret.name)}** — shown this once, only its hash is kept: send the link (or the "
        "name and passphrase) to this person alone."
    )
    st.code(sign_in_link(app_base_url(), secret), language=None)
    st.code(f"passphrase: {secret.passphrase}", language=None)


def _change(admin: Admin, info: SessionInfo, names: list[str]) -> None:
    who = st.selectbox("Change an annotator", names, key="admin_annotator_pick")
    if who is None:
        return
    cols = st.columns(4)
    if cols[0].button("New link and passphrase", key="admin_annotator_secret",
                      help="The old ones stop working; their open browsers are signed out"):
        with error_guard("make a new secret"):
            _keep(admin.new_secret(info.name, who))
            st.rerun()
    if cols[1].button("Disable", key="admin_annotator_disable", help="No sign-in, no grading; grades still count"):
        _act("disable the annotator", admin.disable_annotator, info.name, who, f"Disabled {who}.")
    if cols[2].button("Enable", key="admin_annotator_enable"):
        _act("enable the annotator", admin.enable_annotator, info.name, who, f"Enabled {who}.")
    sure = cols[3].checkbox("Confirm removal", key="admin_annotator_sure")
    if cols[3].button("Remove", key="admin_annotator_remove", disabled=not sure,
                      help="Their grades count nowhere any more but stay in the history"):
        _act("remove the annotator", admin.remove_annotator, info.name, who,
             f"Removed {who}: their grades stay in the history only.")
    left, right = st.columns([3, 1])
    role_left, role_right = st.columns([3, 1])
    role = role_left.selectbox("Role", _roles(admin), key="admin_annotator_role_to", format_func=_role_label)
    if role_right.button("Change role", key="admin_annotator_set_role", help="They are signed out; grades stay"):
        _act("change the role", lambda session, name: admin.set_role(session, name, role or ANNOTATOR), info.name,
             who, f"{who} is now {role}.")
    new_name = left.text_input("New name", key="admin_annotator_rename_to")
    if right.button("Rename", key="admin_annotator_rename"):
        with error_guard("rename the annotator"):
            shown = admin.rename_annotator(info.name, who, new_name)
            st.session_state[DONE] = f"Renamed {who} to {shown}."
            st.rerun()


def _roles(admin: Admin) -> list[str]:
    """The roles this admin may give: a session's admin cannot make another."""
    return [r for r in ROLES if r != SESSION_ADMIN or admin.acting_as is None]


def _role_label(role: str) -> str:
    return f"{role} — {ROLE_HELP[role]}"


def _act(what: str, action: Callable[[str, str], None], session: str, who: str, done: str) -> None:
    with error_guard(what):
        action(session, who)
        st.session_state[DONE] = done
        st.rerun()
