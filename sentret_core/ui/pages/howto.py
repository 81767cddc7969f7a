"""How it works: one model's formula, its parameters and what they do to a query's ranking.

For teaching. Pick a model; its formula, paper and parameter controls (built from the
registry's declared ranges, steps and descriptions) come up, and the top 10 of the current
query re-rank as a control moves. Below: each query term's contribution to a chosen sentence's
score (per field, mixture component or neighbour), seed 002's Fig. 1 sets for a chosen entity
with their growth over k, and a second model's top 10 beside the first's.

This module composes the page; its parts live in :mod:`sentret_core.ui.howto`.
"""

from __future__ import annotations

import time

import streamlit as st

from sentret_core.models import get_model
from sentret_core.ui.howto.compare import compare
from sentret_core.ui.howto.computations import TOP, ranked
from sentret_core.ui.howto.contributions import contributions
from sentret_core.ui.howto.controls import changed, parameter_controls, query_input
from sentret_core.ui.howto.ranking import ranking_table
from sentret_core.ui.howto.sets import fig1_sets
from sentret_core.ui.offered import offered_models
from sentret_core.ui.state import PERSIST, credit, current_index, current_index_path, guarded, page_setup
from sentret_core.ui.text import md


def render() -> None:
    started = time.perf_counter()
    page_setup(
        "How it works",
        "Pick a model, move its parameters and watch the ranking change; see what each query term adds "
        "to a sentence's score, the sets of seed 002's Fig. 1, and how two models differ on one query.",
    )
    index = current_index()
    if index is None:
        return
    path = str(current_index_path())
    names = offered_models()
    top_row = st.columns([3, 2])
    with top_row[0]:
        query = query_input()
    with top_row[1]:
        if st.session_state.get("howto_model") not in names:
            st.session_state["howto_model"] = "bm25f.v1" if "bm25f.v1" in names else names[0]
        model = st.selectbox("Model", names, key="howto_model", persist_state=PERSIST,
                             format_func=lambda n: f"{get_model(n).display_name} ({n})")  # fmt: skip
    spec = get_model(model or names[0])
    st.latex(spec.formula)
    st.caption(f"**{spec.display_name}.** {spec.description}  \n**Paper:** {spec.paper}")

    left, right = st.columns([1, 2], gap="large")
    with left:
        st.markdown("**Parameters**")
        values = parameter_controls(spec)
    params = changed(spec, values)
    with right:
        timing = st.empty()
        if not query.strip():
            st.info("Type a query to see its ranking.")
            return
        clock = time.perf_counter()
        # instant once warm; a model's first use on an index derives its statistics (postings, lengths)
        with st.spinner(f"Scoring with {spec.display_name}…", show_time=True):
            result = guarded("compute the ranking", ranked, path, query, spec.name, params, TOP)
        rank_ms = (time.perf_counter() - clock) * 1000
        if result is None:
            return
        if result.reason:
            st.warning(f"No ranking: {md(result.reason)}.")
            return
        ranking_table(index, path, query, spec, params, result)
    tabs = st.tabs(["Term contributions", "Seed 002 Fig. 1: S_q, Ŝ_q, S_qe, Ŝ_qe", "Compare two models"])
    with tabs[0]:
        contributions(index, path, query, spec, params, result)
    with tabs[1]:
        fig1_sets(index, path, query, spec, params)
    with tabs[2]:
        compare(index, path, query, spec, params, result)
    credit(index)
    page_ms = (time.perf_counter() - started) * 1000
    st.session_state["howto_timing"] = {"rank_ms": rank_ms, "page_ms": page_ms}
    timing.caption(
        f"{result.candidates:,} candidate sentences · terms **{md(' '.join(result.terms))}**"
        + (f" (not in the index: {md(', '.join(result.oov))})" if result.oov else "")
        + f" · ranked in {rank_ms:.1f} ms · page drawn in {page_ms:.0f} ms"
    )
