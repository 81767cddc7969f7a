"""The How it works page's Fig. 1 tab: S_q, Ŝ_q, S_qe and Ŝ_qe for a chosen entity, and their growth over k."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from sentret_core.defaults import EXPLORE_K
from sentret_core.index.reader import Index
from sentret_core.models import ModelSpec
from sentret_core.support.sets import first_hits
from sentret_core.support.teaching import SetSizes
from sentret_core.ui.glossary import COLUMN_HELP
from sentret_core.ui.howto.computations import (
    MAX_GROWTH_K,
    WINDOW,
    EntityChoice,
    ParamItems,
    fig1,
    judged_relevant,
    query_entities,
    ranked,
)
from sentret_core.ui.render import shorten
from sentret_core.ui.state import PERSIST, guarded
from sentret_core.ui.text import html_text, md, show_html


def fig1_sets(index: Index, path: str, query: str, spec: ModelSpec, params: ParamItems) -> None:
    """Choose k and an entity of S_q; the sizes of the four sets, the Venn diagram and the growth curve."""
    st.markdown(
        f"S_q is the top k under **{spec.display_name}**; Ŝ_q adds the ±{WINDOW} sentences around each "
        "of them in its document; S_qe and Ŝ_qe keep the sentences that mention the entity "
        "(Blanco & Zaragoza, SIGIR 2010, §3, Fig. 1)."
    )
    if "howto_k" not in st.session_state:
        explore_k = st.session_state.get("explore_k")
        st.session_state["howto_k"] = int(explore_k) if isinstance(explore_k, int) else EXPLORE_K
    c1, c2 = st.columns([1, 3])
    k = int(c1.number_input("k = |S_q|", min_value=1, max_value=MAX_GROWTH_K, step=10, key="howto_k",
                            persist_state=PERSIST))
    choices = guarded("compute the entities", query_entities, path, query, spec.name, params, k)
    if not choices:
        if choices is not None:
            st.info("No entity is mentioned in S_q; raise k or change the query.")
        return
    keys = [f"{c.text}|{c.label}" for c in choices]
    wanted = st.session_state.get("explore_url_entity")
    if st.session_state.get("howto_entity") not in keys:
        linked = st.session_state.pop("howto_link_entity", None)
        if linked is not None and linked == st.session_state.get("howto_entity"):
            st.warning(md(f"The link's entity={linked!r} is not among the entities of S_q; "
                          f"showing {keys[0]!r} instead."))
        st.session_state["howto_entity"] = wanted if wanted in keys else keys[0]
    by_key = dict(zip(keys, choices))
    chosen = c2.selectbox(
        "Entity (by KLD in S_q)",
        keys,
        key="howto_entity",
        format_func=lambda key: (
            f"{by_key[key].text} ({by_key[key].label}) · in {by_key[key].frequency} of S_q"
        ),
    )
    entity = by_key[chosen or keys[0]]
    data = guarded("compute the sets", fig1, path, query, spec.name, params, k, entity.entity)
    if data is None:
        return
    sizes, growth = data
    _sizes(sizes)
    left, right = st.columns([2, 3])
    with left:
        show_html(venn_svg(sizes, entity))
    with right:
        _growth_chart(growth, k, entity)
    _first_relevant(index, path, query, spec, params, entity)


def _sizes(sizes: SetSizes) -> None:
    cols = st.columns(6)
    cols[0].metric("|S| (all sentences)", f"{sizes.sentences:,}")
    cols[1].metric("|S_q|", f"{sizes.top:,}", help="The top k sentences for the query under the chosen model")
    cols[2].metric("|Ŝ_q|", f"{sizes.context:,}", help=f"S_q plus the {WINDOW} sentences before and after each")
    cols[3].metric(
        "mention e", f"{sizes.entity:,}", help="Sentences of the whole index that mention the entity"
    )
    cols[4].metric("|S_qe|", f"{sizes.top_entity:,}", help=COLUMN_HELP["|S_qe|"])
    cols[5].metric("|Ŝ_qe|", f"{sizes.context_entity:,}", help=COLUMN_HELP["|Ŝ_qe|"])


def _growth_chart(growth: pd.DataFrame, k: int, entity: EntityChoice) -> None:
    """|S_qe| and |Ŝ_qe| over k on a log scale, the chosen k dashed."""
    long = growth.melt(id_vars="k", value_vars=["|S_qe|", "|Ŝ_qe|"], var_name="set", value_name="sentences")
    chart: dict[str, Any] = {
        "height": 260,
        "layer": [
            {
                # where |S_qe| = |Ŝ_qe| the lines coincide: Ŝ_qe is drawn wide and pale beneath, S_qe
                # narrow, dashed and with square points on top, so both stay visible
                "mark": {"type": "line", "point": {"size": 45}, "tooltip": True},
                "encoding": {
                    "x": {"field": "k", "type": "quantitative", "scale": {"type": "log"},
                          "title": "k (log scale)"},
                    "y": {"field": "sentences", "type": "quantitative",
                          "title": "sentences mentioning e"},
                    "color": {"field": "set", "type": "nominal", "title": None,
                              "scale": {"domain": ["|S_qe|", "|Ŝ_qe|"], "range": ["#3b82f6", "#ea580c"]}},
                    "strokeDash": {"field": "set", "type": "nominal", "legend": None,
                                   "scale": {"domain": ["|S_qe|", "|Ŝ_qe|"], "range": [[6, 3], [1, 0]]}},
                    "strokeWidth": {"field": "set", "type": "nominal", "legend": None,
                                    "scale": {"domain": ["|S_qe|", "|Ŝ_qe|"], "range": [2, 6]}},
                    "shape": {"field": "set", "type": "nominal", "title": None,
                              "scale": {"domain": ["|S_qe|", "|Ŝ_qe|"], "range": ["square", "circle"]}},
                },
            },
            {"mark": {"type": "rule", "strokeDash": [4, 4], "color": "gray"},
             "encoding": {"x": {"datum": k, "type": "quantitative"}}},
        ],
    }
    st.vega_lite_chart(long, chart, width="stretch")
    st.caption(f"How |S_qe| and |Ŝ_qe| grow with k for {md(entity.text)}; the dashed line is the chosen k.")


def _first_relevant(
    index: Index, path: str, query: str, spec: ModelSpec, params: ParamItems, entity: EntityChoice
) -> None:
    """Where the first relevant sentence enters S_qe and Ŝ_qe, once there are judgments (Blanco & Zaragoza,
    SIGIR 2010, Fig. 2)."""
    relevant = judged_relevant(query, entity.entity)
    if relevant is None:
        st.caption(
            "No judgments for this (query, entity): the curve counts every sentence that mentions the "
            "entity. With graded judgments it becomes Fig. 2 of Blanco & Zaragoza (SIGIR 2010) — the k at "
            "which the first *relevant* sentence enters S_qe and Ŝ_qe."
        )
        return
    ranking = ranked(path, query, spec.name, params, MAX_GROWTH_K).ids
    hit, hit_context = first_hits(index, ranking, relevant, WINDOW)
    st.caption(
        f"First relevant sentence enters S_qe at k = {hit if hit is not None else 'never'} and "
        f"Ŝ_qe at k = {hit_context if hit_context is not None else 'never'}."
    )


def venn_svg(sizes: SetSizes, entity: EntityChoice) -> str:
    """Fig. 1 of Blanco & Zaragoza (SIGIR 2010) as a small SVG: S ⊃ Ŝ_q ⊃ S_q, and the sentences mentioning e
    across them."""
    name = html_text(shorten(f"{entity.text} ({entity.label})", 28))
    return f"""
<svg viewBox="0 0 420 250" width="100%" role="img"
     aria-label="Venn diagram of S, Ŝ_q, S_q and the entity's sentences"
     style="max-width:460px;font-family:sans-serif;font-size:13px">
  <rect x="2" y="2" width="416" height="246" rx="8" fill="#f8fafc" stroke="#94a3b8"/>
  <text x="12" y="20" fill="#475569">S · {sizes.sentences:,} sentences</text>
  <circle cx="150" cy="135" r="100" fill="#bfdbfe" fill-opacity="0.7" stroke="#3b82f6"/>
  <text x="70" y="60" fill="#1e3a8a">Ŝ_q · {sizes.context:,}</text>
  <circle cx="150" cy="145" r="55" fill="#60a5fa" fill-opacity="0.75" stroke="#1d4ed8"/>
  <text x="112" y="150" fill="#0f172a">S_q · {sizes.top:,}</text>
  <ellipse cx="290" cy="145" rx="115" ry="70" fill="#fdba74" fill-opacity="0.55" stroke="#ea580c"/>
  <text x="300" y="230" fill="#9a3412" text-anchor="middle">mention e · {sizes.entity:,}</text>
  <text x="300" y="245" fill="#9a3412" text-anchor="middle" font-size="11">{name}</text>
  <text x="222" y="132" fill="#0f172a" font-weight="bold">S_qe · {sizes.top_entity:,}</text>
  <text x="222" y="190" fill="#0f172a" font-weight="bold">Ŝ_qe · {sizes.context_entity:,}</text>
</svg>"""
