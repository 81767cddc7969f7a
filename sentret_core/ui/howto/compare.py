"""The How it works page's "Compare two models" tab: two top 10s side by side, their overlap and rank changes."""

from __future__ import annotations

import streamlit as st

from sentret_core.index.reader import Index
from sentret_core.models import ModelSpec, get_model
from sentret_core.support.teaching import overlap, rank_changes
from sentret_core.ui.howto.computations import TOP, ParamItems, Ranked, ranked
from sentret_core.ui.howto.ranking import ranking_html
from sentret_core.ui.offered import offered_models
from sentret_core.ui.state import PERSIST, guarded
from sentret_core.ui.text import md, show_html


def compare(index: Index, path: str, query: str, spec: ModelSpec, params: ParamItems, result: Ranked) -> None:
    """The chosen model (with the parameters set above) beside a second one (with its defaults)."""
    names = [m for m in offered_models() if m != spec.name]
    if st.session_state.get("howto_compare") not in names:
        fallback = "bm25.v1" if spec.name == "bm25f.v1" else "bm25f.v1"
        st.session_state["howto_compare"] = fallback if fallback in names else names[0]
    other = st.selectbox("Compare with", names, key="howto_compare", persist_state=PERSIST,
                         format_func=lambda n: f"{get_model(n).display_name} ({n})")
    if other is None:
        return
    st.caption(
        f"{spec.display_name} with the parameters set above; "
        f"{get_model(other).display_name} with its defaults."
    )
    second = guarded("compute the second ranking", ranked, path, query, other, (), TOP)
    if second is None:
        return
    a, b = [int(s) for s in result.ids], [int(s) for s in second.ids]
    shared = overlap(a, b)
    cols = st.columns(3)
    cols[0].metric("Shared sentences in the two top 10s", f"{shared.shared} of {max(len(a), len(b))}")
    cols[1].metric("Jaccard overlap", f"{shared.jaccard:.2f}")
    cols[2].metric("Only in one list", f"{len(shared.only_a)} + {len(shared.only_b)}")
    left, right = st.columns(2)
    with left:
        st.markdown(f"**{spec.display_name}**")
        changes = [c.label for c in rank_changes(b, a)]
        show_html(ranking_html(index, a, result.scores, changes, result.terms, "vs other"))
    with right:
        st.markdown(f"**{get_model(other).display_name}**")
        if second.reason:
            st.warning(f"No ranking: {md(second.reason)}.")
        else:
            changes = [c.label for c in rank_changes(a, b)]
            show_html(ranking_html(index, b, second.scores, changes, second.terms, "vs other"))
