"""Admin: create assessment sessions, open or close them, follow progress and agreement, export and import.

Protected by the admin token: ``$SENTRET_ADMIN_TOKEN``, or — when it is not set — a token
generated once per server process and printed to the server log (stderr) the first time the
app's script runs, i.e. when the first browser connects.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable

import pandas as pd
import streamlit as st

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.agreement_summary import agreement_summary
from sentret_core.annotation.auth import admin_token
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, RULES, SessionInfo
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.topics import DEFAULT_DEPTH, DEFAULT_TOP_ENTITIES
from sentret_core.defaults import DEFAULT_SUPPORT_MODELS
from sentret_core.ui.admin_sign_in import token_form
from sentret_core.ui.judgments import page_store
from sentret_core.ui.pages.explore import model_title, support_models
from sentret_core.ui.state import (
    EXPLORE_QUERY,
    current_index,
    current_index_path,
    error_guard,
    guarded,
    page_setup,
    remember_explore_query,
    uploaded_text,
)
from sentret_core.ui.text import md

CREATED = "admin_created"  # messages about the session just created, shown after the rerun


@functools.cache
def announce_admin_token() -> bool:
    """Print a generated admin token to the server log once per process; True if one was printed."""
    if os.environ.get(ADMIN_TOKEN_ENV, "").strip():
        return False
    print(
        f"sentret: admin token for this server process: {admin_token()} "
        f"(set {ADMIN_TOKEN_ENV} to choose your own)",
        file=sys.stderr,
        flush=True,
    )
    return True


announce_admin_token()


def render() -> None:
    page_setup("Admin", "Assessment sessions: pool the candidates of (query, entity) pairs, follow the grading, "
               "measure agreement, export qrels.")  # fmt: skip
    store = page_store()
    if store is None:
        return
    admin = token_form(store, "admin")
    if admin is None:
        return
    sessions = store.sessions()
    st.subheader("Sessions")
    if sessions:
        st.dataframe(_sessions_table(sessions), hide_index=True, width="stretch")
    else:
        st.info("No session yet: create one below.")
    for kind, message in st.session_state.pop(CREATED, []):
        (st.success if kind == "success" else st.warning)(message)
    _create(store)
    if not sessions:
        return
    names = [s.name for s in sessions]
    st.divider()
    name = st.selectbox("Session", names, index=len(names) - 1, key="admin_session")
    if name is None:
        return
    info = next(s for s in sessions if s.name == name)
    _open_close(admin, info)
    _progress_and_agreement(admin, info)
    _export(admin, info)
    _import(admin, info)


def _sessions_table(sessions: list[SessionInfo]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "session": s.name,
                "open": s.is_open,
                "items": s.n_items,
                "queries": len(s.queries),
                "(query, entity) pairs": len(s.entities),
                "models": ", ".join(s.settings.models),
                "depth": s.settings.depth,
                "seed": s.settings.seed,
                "index": s.index_path,
                "created": s.created_at[:19].replace("T", " "),
            }
            for s in sessions
        ]
    )


# --------------------------------------------------------------------------- create


def _use_explore_query() -> None:
    remember_explore_query()
    line = st.session_state.get(EXPLORE_QUERY, "")  # the query alone: all its top entities
    if not line:
        st.session_state["admin_flash"] = "The Explore page has no current query: run one there first."
        return
    existing = str(st.session_state.get("admin_topics", "") or "").rstrip("\n")
    st.session_state["admin_topics"] = f"{existing}\n{line}".strip("\n") if existing else line


def _create(store: JudgmentStore) -> None:
    with st.expander("Create a session", expanded=not store.sessions()):
        flash = st.session_state.pop("admin_flash", None)
        if flash:
            st.warning(flash)
        left, right = st.columns(2)
        name = left.text_input("Session name", key="admin_new_name")
        passphrase = right.text_input("Annotators' passphrase", type="password", key="admin_new_passphrase")
        st.text_area(
            "Topics: one `query<TAB>entity` per line; without an entity, the query's top entities",
            key="admin_topics",
            height=140,
            placeholder="picasso peace\tPicasso|PERSON\nspanish civil war",
        )
        st.button("Add the Explore page's query", key="admin_from_explore", on_click=_use_explore_query)
        c1, c2, c3 = st.columns(3)
        depth = c1.number_input("Pool depth (top-n per model)", 1, 1000, DEFAULT_DEPTH, key="admin_depth")
        top = c2.number_input("Top entities per query without an entity", 1, 100, DEFAULT_TOP_ENTITIES,
                              key="admin_top_entities")  # fmt: skip
        seed = c3.number_input("Shuffle seed", 0, 2**31 - 1, 0, key="admin_seed")
        models = st.multiselect("Pooling models", support_models(), default=list(DEFAULT_SUPPORT_MODELS),
                                key="admin_models", format_func=model_title)  # fmt: skip
        st.caption(f"Index: {md(current_index_path())} (choose another on the Corpus page)")
        if not st.button("Create session", type="primary", key="admin_create"):
            return
        index = current_index()
        if index is None:
            return
        created = guarded(
            "create the session", create_session,
            store, name, index, str(st.session_state.get("admin_topics", "")), passphrase,
            models=models, depth=int(depth), seed=int(seed), top_entities=int(top),
        )  # fmt: skip
        if created is None:
            return
        info, plan = created
        done = (f"Created session {md(repr(info.name))}: {info.n_items} items over {len(plan.topics)} (query, "
                "entity) pairs. Annotators sign in on the Annotate page with its passphrase.")  # fmt: skip
        messages = [("success", done)]
        messages += [("warning", f"Left out: {md(note)}") for note in plan.notes]
        st.session_state[CREATED] = messages
        st.rerun()  # list the new session


# --------------------------------------------------------------------------- manage


def _open_close(admin: Admin, info: SessionInfo) -> None:
    state = "open" if info.is_open else "closed"
    left, right = st.columns([3, 1])
    left.markdown(f"Session **{md(info.name)}** is **{state}** · {info.n_items} items · "
                  f"index {md(info.index_path)}")  # fmt: skip
    if info.is_open:
        if right.button("Close session", key="admin_close"):
            _act("close the session", admin.close_session, info.name)
    elif right.button("Reopen session", key="admin_reopen"):
        _act("reopen the session", admin.reopen_session, info.name)


def _act(what: str, action: Callable[[str], object], name: str) -> None:
    with error_guard(what):
        action(name)
        st.rerun()  # the table of sessions shows the change


def _progress_and_agreement(admin: Admin, info: SessionInfo) -> None:
    st.subheader("Progress")
    progress = admin.progress_by_annotator(info.name)
    if not progress:
        st.info("Nobody has signed in to this session yet.")
    else:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "annotator": who,
                        "graded": p.graded,
                        "skipped": p.skipped,
                        "remaining": p.remaining,
                        "done": f"{p.graded / p.total:.0%}" if p.total else "—",
                    }
                    for who, p in progress.items()
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    st.subheader("Agreement")
    summary = agreement_summary(admin.all_judgments(info.name))
    cols = st.columns(4)
    cols[0].metric("Items shared by ≥ 2 annotators", f"{summary.shared}")
    cols[1].metric("Graded by everyone", f"{summary.complete}")
    cols[2].metric("Fleiss' κ", _number(summary.fleiss))
    cols[3].metric("Krippendorff's α (ordinal)", _number(summary.alpha))
    if summary.pairs:
        st.dataframe(
            pd.DataFrame(
                [
                    {"annotator A": a, "annotator B": b, "shared items": n, "Cohen's κ": _number(k)}
                    for a, b, n, k in summary.pairs
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    for note in summary.notes:
        st.caption(md(note))


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _export(admin: Admin, info: SessionInfo) -> None:
    st.subheader("Export")
    annotators = list(admin.progress_by_annotator(info.name))
    left, right = st.columns(2)
    rule: str = left.selectbox("Adjudication (qrels)", list(RULES), key="admin_rule",
                          help="majority: most frequent grade (ties to the lower); mean: rounded half up; "
                          "annotator: one annotator's grades") or "majority"  # fmt: skip
    who = None
    if rule == "annotator":
        if not annotators:
            st.info("Nobody has graded yet.")
            return
        who = right.selectbox("Annotator", annotators, key="admin_rule_annotator")
    with error_guard("export the session"):
        _downloads(admin, info, rule, who)


def _downloads(admin: Admin, info: SessionInfo, rule: str, who: str | None) -> None:
    qrels = admin.export_qrels(info.name, rule=rule, annotator=who)
    csv_text = admin.export_csv(info.name)
    jsonl = admin.export_jsonl(info.name)
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in info.name)
    cols = st.columns(3)
    cols[0].download_button("Download qrels", qrels, f"{stem}.{rule}.qrels", "text/plain", key="admin_qrels")
    cols[1].download_button("Download CSV", csv_text, f"{stem}.csv", "text/csv", key="admin_csv")
    cols[2].download_button("Download JSONL", jsonl, f"{stem}.jsonl", "application/jsonl", key="admin_jsonl")
    with st.expander(f"qrels preview ({qrels.count(chr(10))} lines; grade ≥ 3 is relevant)"):
        st.code(qrels[:20_000] or "(no judgments yet)", language=None)


def _import(admin: Admin, info: SessionInfo) -> None:
    st.subheader("Import")
    kind = st.radio("Format", ["qrels", "jsonl"], horizontal=True, key="admin_import_format",
                    help="qrels: 'topic 0 sentence_id grade' lines, as one pseudo-annotator; "
                    "jsonl: judgments exported by this page")  # fmt: skip
    who = st.text_input("Import as annotator", value="imported", key="admin_import_annotator",
                        disabled=kind != "qrels")  # fmt: skip
    upload = st.file_uploader("File", key=f"admin_import_file_{kind}")
    if upload is None or not st.button("Import", key="admin_import"):
        return
    with error_guard(f"import {upload.name}"):
        lines = uploaded_text(upload).splitlines()
        changed = admin.import_qrels(info.name, lines, who) if kind == "qrels" else admin.import_jsonl(info.name, lines)
        st.success(f"Imported {md(upload.name)}: {changed} judgment(s) added or changed.")
