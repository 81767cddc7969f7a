"""The Admin page's "Suggestions" part: give a session's sentences a model's suggested grades, and see how
often each annotator's grade equalled them (sentret_core.annotation.suggestions)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.records import SessionInfo
from sentret_core.annotation.suggestions import add_suggestions, agreement_with_suggestions, model_suggestions
from sentret_core.errors import SentretError
from sentret_core.ui.judgments import session_index
from sentret_core.ui.offered import model_title, support_models
from sentret_core.ui.state import error_guard, index_label
from sentret_core.ui.text import md


def suggestions_part(admin: Admin, info: SessionInfo) -> None:
    st.subheader("Suggestions")
    st.caption("A model's guessed grade for each pooled sentence, shown to annotators to correct (each may hide "
               "them) and never counted as a grade. From a model: its ranking of each topic's sentences, the best "
               "quarter 4, then 3, 2 and 1. From a file: `sentret judgments suggest … --file`.")
    left, right = st.columns([3, 1])
    model = left.selectbox("Model", support_models(), key="admin_suggest_model", format_func=model_title)
    if right.button("Suggest grades", key="admin_suggest", help="replaces this model's earlier suggestions"):
        with error_guard("suggest grades"):
            index = session_index(info.index_path)
            if index is None:
                raise SentretError(f"the index this session was pooled from ({index_label(info.index_path)}) "
                                   "cannot be opened")
            count = add_suggestions(admin, info.name, str(model),
                                    model_suggestions(admin, info.name, index, str(model)))
            st.success(f"Stored {count} suggestions from {md(str(model))}.")
    agreed = agreement_with_suggestions(admin, info.name)
    if not agreed:
        st.info("No annotator has graded a suggested sentence yet.")
        return
    st.dataframe(pd.DataFrame([{
        "annotator": a.annotator, "source": a.source, "compared": a.compared,
        "same grade": f"{a.same_grade / a.compared:.0%}", "same relevance (≥ 3 or not)":
        f"{a.same_relevance / a.compared:.0%}"} for a in agreed]), hide_index=True, width="stretch")
