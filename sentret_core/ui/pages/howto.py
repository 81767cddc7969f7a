"""How it works: one model's formula, its parameters and what they do to a query's ranking.

For teaching. Pick a model; its formula, paper and parameter controls (built from the
registry's declared ranges, steps and descriptions) come up, and the top 10 of the current
query re-rank as a control moves. Below: each query term's contribution to a chosen sentence's
score (per field, mixture component or neighbour), seed 002's Fig. 1 sets for a chosen entity
with their growth over k, and a second model's top 10 beside the first's.

Heavy objects (the index and its derived arrays) are cached per process by ``load_index``;
every pure result (a ranking, an explanation, the Fig. 1 sizes) by ``st.cache_data``.
"""

from __future__ import annotations

import html
import logging
import math
import time
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from sentret_core.defaults import EXPLORE_K
from sentret_core.errors import SentretError
from sentret_core.index.reader import Index
from sentret_core.models import ModelSpec, ParamSpec, explain, get_model, list_models, score, top_k
from sentret_core.models.records import Explanation
from sentret_core.support.entities import DEFAULT_EXCLUDED_LABELS, entity_stats
from sentret_core.support.sets import first_hits
from sentret_core.support.teaching import (
    EXTRA_TERM,
    SetSizes,
    contribution_parts,
    control_kind,
    entity_growth,
    log_ks,
    overlap,
    rank_changes,
    set_sizes,
    slider_options,
)
from sentret_core.ui.highlight import highlight
from sentret_core.ui.render import sentence_html, term_spans
from sentret_core.ui.state import credit, current_index, current_index_path

log = logging.getLogger(__name__)
T = TypeVar("T")

TOP = 10
MAX_GROWTH_K = 10_000  # the coverage curve's k runs 1 → 10⁴, as in seed 002 Fig. 2
WINDOW = 2  # Ŝ_q adds ±2 sentences (SPEC "Entity support")
PERSIST: Any = "session"  # widget values survive a visit to another page
ParamItems = tuple[tuple[str, Any], ...]


# --- cached computations (pure: index path + arguments → small results) ---------------------------


class Ranked(NamedTuple):
    ids: np.ndarray  # rank order
    scores: np.ndarray
    terms: tuple[str, ...]
    candidates: int
    reason: str | None
    oov: tuple[str, ...]


def _index(path: str) -> Index:
    from sentret_core.ui.state import load_index

    return load_index(path)


@st.cache_data(show_spinner=False, max_entries=512)
def ranked(path: str, query: str, model: str, params: ParamItems, k: int) -> Ranked:
    scores = score(_index(path), query, model, **dict(params))
    top = top_k(scores, k)
    return Ranked(np.asarray(top.ids), np.asarray(top.scores), top.terms, len(scores), top.reason, top.oov)


@st.cache_data(show_spinner=False, max_entries=256)
def explained(path: str, query: str, sentence: int, model: str, params: ParamItems) -> Explanation:
    return explain(_index(path), query, sentence, model, **dict(params))


class EntityChoice(NamedTuple):
    entity: int
    text: str
    label: str
    frequency: int  # |S_qe|
    kld: float


@st.cache_data(show_spinner=False, max_entries=128)
def query_entities(path: str, query: str, model: str, params: ParamItems, k: int) -> list[EntityChoice]:
    """The entities of S_q by KLD (seed 002's best single score), CARDINAL and ORDINAL left out."""
    index = _index(path)
    top = ranked(path, query, model, params, k).ids
    stats = entity_stats(index, top)
    labels = index.entity_labels
    keep = [i for i, e in enumerate(stats.ids) if labels[int(e)] not in DEFAULT_EXCLUDED_LABELS]
    order = sorted(keep, key=lambda i: (-stats.kld[i], -stats.frequency[i], int(stats.ids[i])))[:30]
    return [
        EntityChoice(
            int(stats.ids[i]),
            index.entity_texts[int(stats.ids[i])],
            labels[int(stats.ids[i])],
            int(stats.frequency[i]),
            float(stats.kld[i]),
        )
        for i in order
    ]


@st.cache_data(show_spinner=False, max_entries=128)
def fig1(
    path: str, query: str, model: str, params: ParamItems, k: int, entity: int
) -> tuple[SetSizes, pd.DataFrame]:
    index = _index(path)
    full = ranked(path, query, model, params, MAX_GROWTH_K).ids
    sizes = set_sizes(index, full, entity, k, WINDOW)
    growth = entity_growth(index, full, entity, log_ks(max(len(full), 1)), WINDOW)
    return sizes, growth


def judged_relevant(query: str, entity: int) -> frozenset[int] | None:
    """Sentences judged relevant (grade ≥ 3) for the topic (query, entity), or None without judgments.

    The hook for the judgment store: once the app has one open, return the relevant sentence
    ids here and the page shows where the first of them enters S_qe and Ŝ_qe (seed 002 Fig. 2,
    per topic; ``evaluate.coverage_curve`` over many topics gives the figure itself).
    """
    return None


# --- helpers --------------------------------------------------------------------------------------


def safely(what: str, func: Callable[..., T], *args: Any) -> T | None:
    """Call ``func``; a user-caused error shows as ``st.error``, anything else too (and goes to the log)."""
    try:
        return func(*args)
    except SentretError as err:
        st.error(str(err))
    except Exception as err:  # never a traceback on the page
        log.exception("How it works: %s failed", what)
        st.error(f"Could not compute {what}: {type(err).__name__}: {err}. The server log has the details.")
    return None


def _key(model: str, name: str) -> str:
    return f"howto_p_{model}_{name}"


def _own_key(model: str, name: str) -> str:
    return f"howto_own_{model}_{name}"


def _label(spec: ParamSpec) -> str:
    return f"${spec.symbol}$ — `{spec.name}`" if spec.symbol else f"`{spec.name}`"


def _help(spec: ParamSpec) -> str:
    text = f"{spec.description}. Allowed: {spec.allowed()}."
    if spec.grid:
        text += f" The papers tuned over {', '.join(f'{g:g}' for g in spec.grid)}."
    return text


def _reset(model: str) -> None:
    for spec in get_model(model).param_specs():
        st.session_state.pop(_key(model, spec.name), None)
        st.session_state.pop(_own_key(model, spec.name), None)


def param_control(model: str, spec: ParamSpec) -> Any:
    """One parameter's widget, built from its declared range, step, choices and description."""
    key, label, help_text = _key(model, spec.name), _label(spec), _help(spec)
    kind = control_kind(spec)
    if spec.nullable:
        own = st.toggle(f"own {label}", key=_own_key(model, spec.name), help=help_text, persist_state=PERSIST)
        if not own:
            return None
    default = spec.default
    if default is None:  # a nullable parameter switched on: start at the middle of its range
        default = spec.type((spec.min or 0) + ((spec.max or 1) - (spec.min or 0)) / 2)
    if kind == "select":
        options = list(spec.choices or ())
        return st.selectbox(label, options, index=options.index(default), key=key, help=help_text,
                            persist_state=PERSIST)  # fmt: skip
    if kind == "toggle":
        return st.toggle(label, value=bool(default), key=key, help=help_text, persist_state=PERSIST)
    if kind == "grid":
        options = slider_options(spec)
        return st.select_slider(label, options, value=default, key=key, help=help_text, persist_state=PERSIST,
                                format_func=lambda v: f"{v:g}")  # fmt: skip
    if kind == "number":
        return st.number_input(label, value=default, key=key, help=help_text, persist_state=PERSIST)
    if spec.type is int:
        low, high = int(spec.min or 0), int(spec.max or 0)
        return st.slider(label, low, high, int(default), step=int(spec.step or 1), key=key, help=help_text,
                         persist_state=PERSIST)  # fmt: skip
    step = float(spec.step or 0.01)
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return st.slider(label, float(spec.min or 0.0), float(spec.max or 0.0), float(default), step=step,
                     key=key, help=help_text, format=f"%.{decimals}f", persist_state=PERSIST)  # fmt: skip


def parameter_controls(spec: ModelSpec) -> dict[str, Any]:
    specs = spec.param_specs()
    if not specs:
        st.caption("This model has no parameters.")
        return {}
    values: dict[str, Any] = {}
    for p in specs:
        if not p.nullable and not p.expensive:
            values[p.name] = param_control(spec.name, p)
    expensive = [p for p in specs if p.expensive]
    if expensive:
        with st.form(f"howto_train_{spec.name}"):
            st.caption("Changing these retrains the model (tens of seconds on the demo corpus), so they apply "
                       "when you press the button.")  # fmt: skip
            for p in expensive:
                values[p.name] = param_control(spec.name, p)
            st.form_submit_button("Apply and retrain")
    nullable = [p for p in specs if p.nullable]
    if nullable:
        with st.expander("Per-field overrides"):
            for p in nullable:
                values[p.name] = param_control(spec.name, p)
    st.button("Reset to defaults", on_click=_reset, args=(spec.name,), key=f"howto_reset_{spec.name}")
    return values


def _changed(spec: ModelSpec, values: dict[str, Any]) -> ParamItems:
    """The parameters that differ from the model's defaults, as a hashable cache key."""
    defaults = {p.name: p.default for p in spec.param_specs()}
    return tuple(sorted((k, v) for k, v in values.items() if v != defaults.get(k)))


def _query() -> str:
    """The query: the Explore page's when it has one the user has not overridden here."""
    explore = st.session_state.get("explore_query")
    if isinstance(explore, str) and explore.strip() and explore != st.session_state.get("howto_from_explore"):
        st.session_state["howto_from_explore"] = explore
        st.session_state["howto_query"] = explore
    if "howto_query" not in st.session_state:
        st.session_state["howto_query"] = "Spanish Civil War"
    return str(st.text_input("Query", key="howto_query", persist_state=PERSIST,
                             help="Taken from the Explore page when you have typed one there."))  # fmt: skip


def _short(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# --- the page -------------------------------------------------------------------------------------


def render() -> None:
    started = time.perf_counter()
    st.title("How it works")
    st.caption(
        "Pick a model, move its parameters and watch the ranking change; see what each query term adds "
        "to a sentence's score, the sets of seed 002's Fig. 1, and how two models differ on one query."
    )
    index = current_index()
    if index is None:
        return
    path = str(current_index_path())
    models = list_models()
    names = [m.name for m in models]
    top_row = st.columns([3, 2])
    with top_row[0]:
        query = _query()
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
    params = _changed(spec, values)
    with right:
        timing = st.empty()
        if not query.strip():
            st.info("Type a query to see its ranking.")
            return
        clock = time.perf_counter()
        # instant once warm; a model's first use builds its statistics (the class-based LM learns its
        # word classes, which takes a while on a large index)
        with st.spinner(f"Scoring with {spec.display_name}…", show_time=True):
            result = safely("the ranking", ranked, path, query, spec.name, params, TOP)
        rank_ms = (time.perf_counter() - clock) * 1000
        if result is None:
            return
        if result.reason:
            st.warning(f"No ranking: {result.reason}.")
            return
        _ranking_table(index, path, query, spec, params, result)
    tabs = st.tabs(["Term contributions", "Seed 002 Fig. 1: S_q, Ŝ_q, S_qe, Ŝ_qe", "Compare two models"])
    with tabs[0]:
        _contributions(index, path, query, spec, params, result)
    with tabs[1]:
        _fig1(index, path, query, spec, params)
    with tabs[2]:
        _compare(index, path, query, spec, params, result)
    credit(index)
    page_ms = (time.perf_counter() - started) * 1000
    st.session_state["howto_timing"] = {"rank_ms": rank_ms, "page_ms": page_ms}
    timing.caption(
        f"{result.candidates:,} candidate sentences · terms **{' '.join(result.terms)}**"
        + (f" (not in the index: {', '.join(result.oov)})" if result.oov else "")
        + f" · ranked in {rank_ms:.1f} ms · page drawn in {page_ms:.0f} ms"
    )


RANKING_CSS = (
    "<style>table.sentret-ranking{width:100%;border-collapse:collapse;font-size:0.9rem}"
    "table.sentret-ranking th{text-align:left;font-weight:600;color:#6b7280;border-bottom:1px solid #e5e7eb;"
    "padding:2px 6px;white-space:nowrap}"
    "table.sentret-ranking td{vertical-align:top;border-bottom:1px solid #f1f5f9;padding:4px 6px}"
    "table.sentret-ranking td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
    "table.sentret-ranking td.change{white-space:nowrap;text-align:center}"
    "table.sentret-ranking small{color:#6b7280}</style>"
)


def ranking_html(
    index: Index, ids: list[int], scores: np.ndarray, changes: list[str], terms: tuple[str, ...], change: str
) -> str:
    """A ranking as an HTML table: rank, rank change, score and the whole sentence with its terms marked.

    Every piece of corpus text is escaped (``highlight`` escapes the sentence, ``html.escape`` the
    title). Each row carries its sentence id and exact score as data attributes.
    """
    docs = np.asarray(index.sent_doc)
    rows = []
    for rank, (sentence, value, moved) in enumerate(zip(ids, scores, changes), start=1):
        body = highlight(index.texts[sentence], term_spans(index, sentence, list(terms)))
        title = html.escape(index.titles[int(docs[sentence])])
        rows.append(
            f'<tr data-sentence="{sentence}" data-score="{float(value)!r}"><td class="num">{rank}</td>'
            f'<td class="change">{html.escape(moved)}</td><td class="num">{float(value):.4f}</td>'
            f"<td><small><i>{title}</i></small><br>{body}</td></tr>"
        )
    head = f"<tr><th>#</th><th>{html.escape(change)}</th><th>score</th><th>sentence</th></tr>"
    return f'{RANKING_CSS}<table class="sentret-ranking">{head}{"".join(rows)}</table>'


def _ranking_table(
    index: Index, path: str, query: str, spec: ModelSpec, params: ParamItems, result: Ranked
) -> None:
    st.subheader(f"Top {TOP}")
    ids = [int(s) for s in result.ids]
    changes = ["="] * len(ids)
    if params:
        defaults = safely("the default ranking", ranked, path, query, spec.name, (), TOP)
        if defaults is not None:
            changes = [c.label for c in rank_changes(defaults.ids.tolist(), ids)]
    st.markdown(ranking_html(index, ids, result.scores, changes, result.terms, "vs defaults"),
                unsafe_allow_html=True)  # fmt: skip
    st.caption("vs defaults: the rank change against the model's default parameters (↑ up, ↓ down, "
               "new: not in the default top 10). Query terms are marked.")  # fmt: skip


def _contributions(
    index: Index, path: str, query: str, spec: ModelSpec, params: ParamItems, result: Ranked
) -> None:
    ids = [int(s) for s in result.ids]
    if st.session_state.get("howto_sentence") not in ids:
        st.session_state["howto_sentence"] = ids[0]
    docs = np.asarray(index.sent_doc)
    sentence = st.selectbox(
        "Sentence of the ranking",
        ids,
        key="howto_sentence",
        # no rank in the label: the list is re-ranked under a kept choice, and the label would go stale
        format_func=lambda s: f"{index.titles[int(docs[s])]}: {_short(index.texts[s])}",
    )
    if sentence is None:
        return
    shown = float(result.scores[ids.index(sentence)])
    parts = safely("the explanation", explained, path, query, sentence, spec.name, params)
    if parts is None:
        return
    body = sentence_html(index, sentence, list(result.terms))
    title = html.escape(index.titles[int(docs[sentence])])
    meta = f"<small>rank {ids.index(sentence) + 1} · <i>{title}</i> · sentence {sentence}</small>"
    st.markdown(f'<div class="sentence">{meta}<p>{body}</p></div>', unsafe_allow_html=True)
    same = math.isclose(parts.total, shown, rel_tol=1e-9, abs_tol=1e-9)
    cols = st.columns(3)
    cols[0].metric("Score in the ranking", f"{shown:.6f}")
    cols[1].metric("Sum of the contributions", f"{parts.total:.6f}")
    cols[2].metric("Check", "equal ✓" if same else "differs ✗")
    if not same:
        st.warning(f"The explanation's total {parts.total!r} differs from the ranking's score {shown!r}.")
    view = contribution_parts(parts)
    chart_col, table_col = st.columns([2, 3])
    with chart_col:
        st.markdown(f"**Contribution by term, split by {view.split}**")
        if view.frame.empty:
            st.info("No query term in this sentence.")
        else:
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
                          "title": "contribution"},
                    "color": {"field": "part", "type": "nominal", "title": view.split,
                              "sort": list(dict.fromkeys(view.frame["part"]))},
                    "tooltip": [{"field": "term"}, {"field": "part"},
                                {"field": "value", "type": "quantitative", "format": ".4f"}],
                },
            }  # fmt: skip
            # a Vega-Lite spec, not Altair: Altair's schema validation costs ~30 ms per chart per rerun
            st.vega_lite_chart(view.frame, chart, width="stretch")
        st.caption(view.note + ".")
    with table_col:
        st.markdown("**Each term's row of the formula**")
        st.dataframe(parts.to_frame(), hide_index=True, width="stretch")
        for name, value in parts.extra.items():
            st.caption(f"plus {name} = {value:.6f} (independent of the query)")
        if parts.notes:
            notes = ", ".join(f"{k} = {v:.4g}" for k, v in parts.notes.items())
            st.caption(f"Intermediate values: {notes}")


def _fig1(index: Index, path: str, query: str, spec: ModelSpec, params: ParamItems) -> None:
    st.markdown(
        f"S_q is the top k under **{spec.display_name}**; Ŝ_q adds the ±{WINDOW} sentences around each "
        "of them in its document; S_qe and Ŝ_qe keep the sentences that mention the entity "
        "(seed 002 §3, Fig. 1)."
    )
    if "howto_k" not in st.session_state:
        explore_k = st.session_state.get("explore_k")
        st.session_state["howto_k"] = int(explore_k) if isinstance(explore_k, int) else EXPLORE_K
    c1, c2 = st.columns([1, 3])
    k = int(c1.number_input("k = |S_q|", min_value=1, max_value=MAX_GROWTH_K, step=10, key="howto_k",
                            persist_state=PERSIST))  # fmt: skip
    choices = safely("the entities", query_entities, path, query, spec.name, params, k)
    if not choices:
        if choices is not None:
            st.info("No entity is mentioned in S_q; raise k or change the query.")
        return
    keys = [f"{c.text}|{c.label}" for c in choices]
    wanted = st.session_state.get("explore_url_entity")
    if st.session_state.get("howto_entity") not in keys:
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
    data = safely("the sets", fig1, path, query, spec.name, params, k, entity.entity)
    if data is None:
        return
    sizes, growth = data
    cols = st.columns(6)
    cols[0].metric("|S| (all sentences)", f"{sizes.sentences:,}")
    cols[1].metric("|S_q|", f"{sizes.top:,}")
    cols[2].metric("|Ŝ_q|", f"{sizes.context:,}")
    cols[3].metric(
        "mention e", f"{sizes.entity:,}", help="Sentences of the whole index that mention the entity"
    )
    cols[4].metric("|S_qe|", f"{sizes.top_entity:,}")
    cols[5].metric("|Ŝ_qe|", f"{sizes.context_entity:,}")
    left, right = st.columns([2, 3])
    with left:
        st.markdown(_venn_svg(sizes, entity), unsafe_allow_html=True)
    with right:
        long = growth.melt(
            id_vars="k", value_vars=["|S_qe|", "|Ŝ_qe|"], var_name="set", value_name="sentences"
        )
        chart: dict[str, Any] = {
            "height": 260,
            "layer": [
                {
                    "mark": {"type": "line", "point": True, "tooltip": True},
                    "encoding": {
                        "x": {"field": "k", "type": "quantitative", "scale": {"type": "log"},
                              "title": "k (log scale)"},
                        "y": {"field": "sentences", "type": "quantitative",
                              "title": "sentences mentioning e"},
                        "color": {"field": "set", "type": "nominal", "title": None},
                    },
                },
                {"mark": {"type": "rule", "strokeDash": [4, 4], "color": "gray"},
                 "encoding": {"x": {"datum": k, "type": "quantitative"}}},
            ],
        }  # fmt: skip
        st.vega_lite_chart(long, chart, width="stretch")
        st.caption(f"How |S_qe| and |Ŝ_qe| grow with k for {entity.text}; the dashed line is the chosen k.")
    relevant = judged_relevant(query, entity.entity)
    if relevant is None:
        st.caption(
            "No judgments for this (query, entity): the curve counts every sentence that mentions the "
            "entity. With graded judgments it becomes seed 002's Fig. 2 — the k at which the first "
            "*relevant* sentence enters S_qe and Ŝ_qe."
        )
    else:
        ranking = ranked(path, query, spec.name, params, MAX_GROWTH_K).ids
        hit, hit_context = first_hits(index, ranking, relevant, WINDOW)
        st.caption(
            f"First relevant sentence enters S_qe at k = {hit if hit is not None else 'never'} and "
            f"Ŝ_qe at k = {hit_context if hit_context is not None else 'never'}."
        )


def _venn_svg(sizes: SetSizes, entity: Any) -> str:
    """Seed 002 Fig. 1 as a small SVG: S ⊃ Ŝ_q ⊃ S_q, and the sentences mentioning e across them."""
    name = html.escape(_short(f"{entity.text} ({entity.label})", 28))
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


def _compare(
    index: Index, path: str, query: str, spec: ModelSpec, params: ParamItems, result: Ranked
) -> None:
    names = [m.name for m in list_models() if m.name != spec.name]
    if st.session_state.get("howto_compare") not in names:
        fallback = "bm25.v1" if spec.name == "bm25f.v1" else "bm25f.v1"
        st.session_state["howto_compare"] = fallback if fallback in names else names[0]
    other = st.selectbox("Compare with", names, key="howto_compare", persist_state=PERSIST,
                         format_func=lambda n: f"{get_model(n).display_name} ({n})")  # fmt: skip
    if other is None:
        return
    st.caption(
        f"{spec.display_name} with the parameters set above; "
        f"{get_model(other).display_name} with its defaults."
    )
    second = safely("the second ranking", ranked, path, query, other, (), TOP)
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
        st.markdown(ranking_html(index, a, result.scores, changes, result.terms, "vs other"),
                    unsafe_allow_html=True)  # fmt: skip
    with right:
        st.markdown(f"**{get_model(other).display_name}**")
        if second.reason:
            st.warning(f"No ranking: {second.reason}.")
        else:
            changes = [c.label for c in rank_changes(a, b)]
            st.markdown(ranking_html(index, b, second.scores, changes, second.terms, "vs other"),
                        unsafe_allow_html=True)  # fmt: skip
