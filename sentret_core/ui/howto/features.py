"""How it works for a learned ranker: one sentence's score, feature by feature (the linear model's
weight times the standardised feature, or LightGBM's exact TreeSHAP value)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from sentret_core.models.core.records import Explanation
from sentret_core.ui.glossary import feature_label


def feature_contributions(parts: Explanation) -> None:
    frame = parts.to_frame()
    frame = frame.reindex(frame["contribution"].abs().sort_values(ascending=False).index)
    frame.insert(0, "meaning", [feature_label(str(name)) for name in frame["feature"]])
    chart_col, table_col = st.columns([2, 3])
    with chart_col:
        st.markdown("**Contribution by feature**")
        shown = frame[frame["contribution"] != 0].head(15)
        st.vega_lite_chart(shown, {
            "height": 320,
            "mark": {"type": "bar", "tooltip": True},
            "encoding": {
                "y": {"field": "meaning", "type": "nominal", "sort": list(shown["meaning"]), "title": None,
                      "axis": {"labelLimit": 260}},
                "x": {"field": "contribution", "type": "quantitative"},
                "tooltip": [{"field": "meaning"}, {"field": "feature"}, {"field": "value", "format": ".4f"},
                            {"field": "contribution", "format": ".4f"}],
            },
        }, width="stretch")
        base = ", ".join(f"{k} = {v:.4f}" for k, v in parts.extra.items())
        st.caption(f"The score is the sum of the bars plus the {base}. A bar to the right raises the score, "
                   "one to the left lowers it.")
    with table_col:
        st.markdown("**Each feature's value and part of the score**")
        st.dataframe(pd.DataFrame(frame), hide_index=True, width="stretch",
                     column_config={"meaning": "feature", "feature": "code name"})
        if parts.notes.get("in C") == 0.0:
            st.caption("This sentence is outside the first stage's top sentences, so ltr.v1 does not rank it; "
                       "it is explained as if it were among them.")
