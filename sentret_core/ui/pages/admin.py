"""Admin: create assessment sessions, open or close them, manage their annotators, follow progress and
agreement, adjudicate disagreements, export and import.

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
from sentret_core.annotation.agreement_summary import MIN_SHARED, AgreementSummary, Coefficient, agreement_summary
from sentret_core.annotation.auth import admin_token
from sentret_core.annotation.interchange import hf_records, jsonl_lines, label_studio_tasks
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, IMPORT_SCALES, RULES, SCALES, Judgment, SessionInfo
from sentret_core.annotation.scales import AUTO, qrels_grades, read_scale, relevance_rule, scale_note
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.time_on_task import by_annotator
from sentret_core.ui.admin_sign_in import token_form
from sentret_core.ui.annotators import manage_annotators, session_caption
from sentret_core.ui.disagreements import disagreement_view
from sentret_core.ui.judgments import page_store
from sentret_core.ui.session_form import create_session_form, guidelines_editor, pick_session
from sentret_core.ui.state import error_guard, index_label, page_setup, uploaded_text
from sentret_core.ui.suggestions_admin import suggestions_part
from sentret_core.ui.text import md


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
               "measure agreement, export qrels.")
    store = page_store()
    if store is None:
        return
    admin = token_form(store, "admin")
    if admin is None:
        st.caption("A session's reviewer or admin signs in on the Annotate page, with their own link or passphrase.")
        return
    sessions = store.sessions()
    st.subheader("Sessions")
    if sessions:
        st.dataframe(_sessions_table(sessions), hide_index=True, width="stretch")
    else:
        st.info("No session yet: create one below.")
    create_session_form(store)
    if not sessions:
        return
    names = [s.name for s in sessions]
    st.divider()
    name = pick_session(names)  # the newest, or the one just created
    if name is None:
        return
    administer(store, admin, next(s for s in sessions if s.name == name))


def administer(store: JudgmentStore, admin: Admin, info: SessionInfo) -> None:
    """Every part that acts on one session; also what a session's admin sees on the Annotate page."""
    _open_close(admin, info)
    guidelines_editor(store, admin, info.name)
    manage_annotators(admin, info)
    _progress_and_agreement(admin, info)
    _flags_and_notes(admin, info)
    suggestions_part(admin, info)
    disagreement_view(admin, info)
    _export(admin, info)
    _import(admin, info)


def _flags_and_notes(admin: Admin, info: SessionInfo) -> None:
    """The judgments an annotator flagged for the organiser or wrote a note on (they travel with the
    grade into the CSV and JSONL exports too)."""
    st.subheader("Flags and notes")
    st.caption(session_caption(info))
    marked = [j for j in admin.all_judgments(info.name) if j.flagged or j.note]
    if not marked:
        st.info("No annotator has flagged an item or written a note yet.")
        return
    flagged = sum(j.flagged for j in marked)
    st.caption(f"{flagged} flagged · {sum(bool(j.note) for j in marked)} with a note")
    st.dataframe(pd.DataFrame([{"item": j.position + 1, "annotator": j.annotator, "flag": "⚑" if j.flagged else "",
                                "grade": j.grade, "note": j.note or "", "query": j.query, "entity": j.entity,
                                "sentence": j.text} for j in marked]),
                 hide_index=True, width="stretch")


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
                "index": index_label(s.index_path),
                "entities": s.settings.ranking.describe(),
                "created": s.created_at[:19].replace("T", " "),
            }
            for s in sessions
        ]
    )


# --------------------------------------------------------------------------- manage


def _open_close(admin: Admin, info: SessionInfo) -> None:
    state = "open" if info.is_open else "closed"
    left, right = st.columns([3, 1])
    order = info.item_order
    shared = order.describe() if order is not None else "every item graded by every annotator, in one order"
    left.markdown(f"Session **{md(info.name)}** is **{state}** · {info.n_items} items · "
                  f"index {md(index_label(info.index_path))} · {md(shared)}")
    if info.is_open:
        if right.button("Close session", key="admin_close"):
            _act("close the session", admin.close_session, info.name)
    elif right.button("Reopen session", key="admin_reopen"):
        _act("reopen the session", admin.reopen_session, info.name)


def _act(what: str, action: Callable[[str], object], name: str) -> None:
    with error_guard(what):
        action(name)
        st.rerun()  # the table of sessions shows the change


def _duration(seconds: float | None) -> str:
    """"42 s", "3 min 05 s", "1 h 02 min"; "—" when not measured."""
    if seconds is None:
        return "—"
    whole = round(seconds)
    if whole < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def _progress_and_agreement(admin: Admin, info: SessionInfo) -> None:
    st.subheader("Progress")
    progress = admin.progress_by_annotator(info.name)
    if not progress:
        st.info("No annotator has been added to this session yet.")
    else:
        timed = {t.annotator: t for t in by_annotator(admin.all_judgments(info.name))}
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "annotator": who,
                        "graded": p.graded,
                        "skipped": p.skipped,
                        "remaining": p.remaining,
                        "done": f"{p.graded / p.total:.0%}" if p.total else "—",
                        "median time per item": _duration(timed[who].median_s) if who in timed else "—",
                        "time on task": _duration(timed[who].total_s) if who in timed else "—",
                    }
                    for who, p in progress.items()
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    st.subheader("Agreement")
    summary = _agreement(admin.all_judgments(info.name))
    cols = st.columns(4)
    cols[0].metric("Items shared by ≥ 2 annotators", f"{summary.shared}")
    cols[1].metric("Graded by everyone", f"{summary.complete}")
    cols[2].metric("Fleiss' κ", _number(summary.fleiss), help=_detail(summary.fleiss))
    cols[3].metric("Krippendorff's α (ordinal)", _number(summary.alpha), help=_detail(summary.alpha))
    st.caption(f"Fleiss' κ: {md(_detail(summary.fleiss))} · Krippendorff's α: {md(_detail(summary.alpha))}")
    if summary.pairs:
        st.dataframe(
            pd.DataFrame(
                [
                    {"annotator A": a, "annotator B": b, "shared items": k.n, "Cohen's κ": _number(k),
                     "95% CI (bootstrap)": _ci(k), "same grade": summary.percent_of(a, b).text(),
                     "note": k.note or ""}
                    for a, b, k in summary.pairs
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    st.caption(
        f"A coefficient is given on {MIN_SHARED} or more shared items only; the interval is the percentile "
        "bootstrap over items (2,000 resamples). \"Same grade\" is raw percent agreement (not corrected for "
        "chance), given on any number of shared items."
    )
    for note in summary.notes:
        st.caption(md(note))


@st.cache_data(show_spinner="Computing agreement and its bootstrap intervals…", max_entries=32)
def _agreement(judgments: list[Judgment]) -> AgreementSummary:
    """The agreement summary, computed once per set of judgments (the bootstrap takes a moment)."""
    return agreement_summary(judgments)


def _number(value: Coefficient) -> str:
    return "—" if value.value is None else f"{value.value:.3f}"


def _ci(value: Coefficient) -> str:
    return "—" if value.low is None or value.high is None else f"{value.low:.3f} to {value.high:.3f}"


def _detail(value: Coefficient) -> str:
    return value.note or f"95% CI {_ci(value)}; n = {value.n}"


def _export(admin: Admin, info: SessionInfo) -> None:
    st.subheader("Export")
    st.caption(f"{session_caption(info)} · {relevance_rule()}")
    annotators = list(admin.progress_by_annotator(info.name))
    left, middle, right = st.columns(3)
    scale: str = middle.selectbox("qrels scale", list(SCALES), key="admin_scale",
                                  help="trec: 0 non-relevant, 1 fairly relevant, 2 relevant, 3 very relevant "
                                  "(`trec_eval -l 2` counts what this app calls relevant); 1-4: the grades as "
                                  "stored") or "trec"
    rule: str = left.selectbox("Adjudication (qrels)", list(RULES), key="admin_rule",
                          help="majority: most frequent grade (ties to the lower); mean: rounded half up "
                          "(under both, an adjudicated item takes its adjudicated grade); annotator: one "
                          "annotator's grades") or "majority"
    who = None
    if rule == "annotator":
        if not annotators:
            st.info("Nobody has graded yet.")
            return
        who = right.selectbox("Annotator", annotators, key="admin_rule_annotator")
    with error_guard("export the session"):
        _downloads(admin, info, rule, who, scale)


def _downloads(admin: Admin, info: SessionInfo, rule: str, who: str | None, scale: str) -> None:
    qrels = admin.export_qrels(info.name, rule=rule, annotator=who, scale=scale)
    csv_text = admin.export_csv(info.name)
    jsonl = admin.export_jsonl(info.name)
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in info.name)
    cols = st.columns(4)
    cols[0].download_button("Download qrels", qrels, f"{stem}.{rule}.{scale}.qrels", "text/plain", key="admin_qrels")
    cols[1].download_button("Download CSV", csv_text, f"{stem}.csv", "text/csv", key="admin_csv")
    cols[2].download_button("Download JSONL", jsonl, f"{stem}.jsonl", "application/jsonl", key="admin_jsonl")
    cols[3].download_button("Download topics", admin.export_topics(info.name), f"{stem}.topics.tsv",
                            "text/tab-separated-values", key="admin_topics",
                            help="for `sentret run --topics`: its qids are the qrels' topic ids")
    other = st.columns(4)
    other[0].download_button("Download for Label Studio", label_studio_tasks(admin, info.name),
                             f"{stem}.label-studio.json", "application/json", key="admin_label_studio",
                             help="Label Studio JSON tasks with their annotations; the labeling interface is in "
                             "docs/annotation.md, and Label Studio's JSON export imports back here")
    other[1].download_button("Download for Hugging Face", hf_records(admin, info.name), f"{stem}.hf.jsonl",
                             "application/jsonl", key="admin_hf",
                             help="one pool item a line with its grades and majority label: "
                             "datasets.load_dataset('json', data_files=...)")
    with st.expander(f"qrels preview ({qrels.count(chr(10))} lines; {scale_note(scale)})"):
        st.code(qrels[:20_000] or "(no judgments yet)", language=None)


def _import(admin: Admin, info: SessionInfo) -> None:
    st.subheader("Import")
    st.caption(session_caption(info))
    kind = st.radio("Format", ["qrels", "jsonl", "label-studio", "hf-jsonl"], horizontal=True,
                    key="admin_import_format",
                    help="qrels: 'topic 0 docno grade' lines (or internal sentence ids), as one import annotator; "
                    "jsonl, label-studio (Label Studio's JSON export) and hf-jsonl: judgments that name their "
                    "annotators, each person's as '<name> (imported)'. "
                    "Imported grades never overwrite a person's.")
    left, right = st.columns(2)
    who = left.text_input("Import as annotator", value="imported", key="admin_import_annotator",
                          disabled=kind != "qrels")
    scale = right.selectbox("qrels scale", [AUTO, *IMPORT_SCALES], key="admin_import_scale", disabled=kind != "qrels",
                            help="auto: sniffed from the values; trec: 0-3 (as exported); 1-4; binary: 0 "
                            "non-relevant, 1 relevant",
                            ) or "trec"
    upload = st.file_uploader("File", key=f"admin_import_file_{kind}")
    if upload is None or not st.button("Import", key="admin_import"):
        return
    with error_guard(f"import {upload.name}"):
        text = uploaded_text(upload)
        lines = text.splitlines()
        if kind == "qrels":
            changed = admin.import_qrels(info.name, lines, who, scale=scale)
        else:
            changed = admin.import_jsonl(info.name, jsonl_lines(str(kind), text))
        st.success(f"Imported {md(upload.name)}: {changed} judgment(s) added or changed.")
        if kind == "qrels" and qrels_grades(lines):
            st.caption(read_scale(qrels_grades(lines), scale).sentence() + ".")
