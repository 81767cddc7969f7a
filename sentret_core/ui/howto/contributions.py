"""The How it works page's "Term contributions" tab: one sentence's score, term by term and part by part."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import streamlit as st

from sentret_core.index.reader import Index
from sentret_core.models import ModelSpec
from sentret_core.models.core.records import Explanation
from sentret_core.support.teaching import EXTRA_TERM, Parts, contribution_parts
from sentret_core.ui.glossary import NEGATIVE_BARS, POSITIVE_BARS
from sentret_core.ui.howto.computations import ParamItems, Ranked, explained
from sentret_core.ui.howto.features import feature_contributions
from sentret_core.ui.render import sentence_html, shorten
from sentret_core.ui.state import guarded
from sentret_core.ui.text import html_text, show_html


def contributions(
    index: Index, path: str, query: str, spec: ModelSpec, params: ParamItems, result: Ranked
) -> None:
    """A sentence of the ranking, its score beside the sum of its explanation, and that explanation."""
    ids = [int(s) for s in result.ids]
    if st.session_state.get("howto_sentence") not in ids:
        st.session_state["howto_sentence"] = ids[0]
    docs = np.asarray(index.sent_doc)
    sentence = st.selectbox(
        "Sentence of the ranking",
        ids,
        key="howto_sentence",
        # no rank in the label: the list is re-ranked under a kept choice, and the label would go stale
        format_func=lambda s: f"{index.titles[int(docs[s])]}: {shorten(index.texts[s])}",
    )
    if sentence is None:
        return
    shown = float(result.scores[ids.index(sentence)])
    parts = guarded("compute the explanation", explained, path, query, sentence, spec.name, params)
    if parts is None:
        return
    body = sentence_html(index, sentence, list(result.terms))
    title = html_text(index.titles[int(docs[sentence])])
    meta = f"<small>rank {ids.index(sentence) + 1} · <i>{title}</i> · sentence {sentence}</small>"
    show_html(f'<div class="sentence">{meta}<p>{body}</p></div>')
    same = math.isclose(parts.total, shown, rel_tol=spec.explain_tolerance, abs_tol=spec.explain_tolerance)
    cols = st.columns(3)
    cols[0].metric("Score in the ranking", f"{shown:.6f}")
    cols[1].metric("Sum of the contributions", f"{parts.total:.6f}")
    cols[2].metric("Check", "equal ✓" if same else "differs ✗")
    if not same:
        st.warning(f"The explanation's total {parts.total!r} differs from the ranking's score {shown!r}.")
    if "feature" in parts.columns:  # a learned ranker: features, not query terms
        feature_contributions(parts)
        return
    view = contribution_parts(parts)
    chart_col, table_col = st.columns([2, 3])
    with chart_col:
        st.markdown(f"**Contribution by term, split by {view.split}**")
        if view.frame.empty:
            st.info("No query term in this sentence.")
        else:
            _chart(parts, view)
            negative = float(view.frame["value"].sum()) < 0
            st.caption(NEGATIVE_BARS if negative else POSITIVE_BARS)
        st.caption(view.note + ".")
    with table_col:
        _formula_rows(parts)


def _chart(parts: Explanation, view: Parts) -> None:
    """Each term's contribution as a bar, stacked by field, mixture component or neighbour."""
    order = [*dict.fromkeys(t for t in parts.terms if t in set(view.frame["term"]))]
    if EXTRA_TERM in set(view.frame["term"]):
        order.append(EXTRA_TERM)
    chart: dict[str, Any] = {
        "height": 260,
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {"field": "term", "type": "nominal", "sort": order, "title": None,
                  "axis": {"labelAngle": 0}},
            "y": {"field": "value", "type": "quantitative", "aggregate": "sum",
                  "title": "contribution (↑ adds to the score)"},
            "color": {"field": "part", "type": "nominal", "title": view.split,
                      "sort": list(dict.fromkeys(view.frame["part"]))},
            "tooltip": [{"field": "term"}, {"field": "part"},
                        {"field": "value", "type": "quantitative", "format": ".4f"}],
        },
    }
    # a Vega-Lite spec, not Altair: Altair's schema validation costs ~30 ms per chart per rerun
    st.vega_lite_chart(view.frame, chart, width="stretch")


def _formula_rows(parts: Explanation) -> None:
    """The explanation as a table, with the query-independent addends and intermediate values below it."""
    st.markdown("**Each term's row of the formula**")
    st.dataframe(parts.to_frame(), hide_index=True, width="stretch")
    for name, value in parts.extra.items():
        st.caption(f"plus {name} = {value:.6f} (independent of the query)")
    if parts.notes:
        notes = ", ".join(f"{k} = {v:.4g}" for k, v in parts.notes.items())
        st.caption(f"Intermediate values: {notes}")
