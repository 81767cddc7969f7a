"""How it works: one model's formula, its parameters and what they do to a query's ranking.

For teaching. Pick a model; its formula, paper and parameter controls (built from the
registry's declared ranges, steps and descriptions) come up, and the top 10 of the current
query re-rank as a control moves. Below: each query term's contribution to a chosen sentence's
score (per field, mixture component or neighbour), the sets of Blanco & Zaragoza (SIGIR 2010) Fig. 1 for a chosen entity
with their growth over k, and a second model's top 10 beside the first's.

This module composes the page; its parts live in :mod:`sentret_core.ui.howto`.
"""

from __future__ import annotations

import time

import streamlit as st

from sentret_core.defaults import DEFAULT_RANKER, EXPLORE_K
from sentret_core.index import artefacts
from sentret_core.index.reader import Index
from sentret_core.models import ModelSpec, get_model
from sentret_core.support.teaching import control_kind, slider_options
from sentret_core.ui.howto.compare import compare
from sentret_core.ui.howto.computations import MAX_GROWTH_K, TOP, ranked
from sentret_core.ui.howto.contributions import contributions
from sentret_core.ui.howto.controls import changed, parameter_controls, query_input, seed_params
from sentret_core.ui.howto.ranking import ranking_table
from sentret_core.ui.howto.sets import fig1_sets
from sentret_core.ui.offered import offered_models, untrained_label
from sentret_core.ui.state import PERSIST, Stages, credit, current_index, current_index_path, guarded, page_setup
from sentret_core.ui.text import md
from sentret_core.ui.url import UrlReader, is_ascii_integer, show_warnings, write

PARAM_PREFIX = "p."  # a parameter's URL key: p.k1=0.9


def _from_url(names: list[str]) -> None:
    """Seed the page's widgets from the URL once per session; a bad value is named in a warning.

    Keys: ``q``, ``model``, ``p.<name>`` for each parameter off its default, ``sentence`` (the one
    explained), ``compare`` (the second model), ``k`` and ``entity`` (Fig. 1).
    """
    if st.session_state.get("howto_seeded"):
        return
    st.session_state["howto_seeded"] = True
    url = UrlReader()
    if url.has("q"):
        st.session_state["howto_query"] = url.text("q")
        st.session_state["howto_from_explore"] = st.session_state.get("explore_query")
    current = st.session_state.get("howto_model")
    fallback = DEFAULT_RANKER if DEFAULT_RANKER in names else names[0]
    model = url.choice("model", names, current if current in names else fallback)
    st.session_state["howto_model"] = model
    values = {}
    specs = {p.name: p for p in get_model(model).param_specs()}
    for key, raw in url.params.items():
        if not key.startswith(PARAM_PREFIX):
            continue
        name = key[len(PARAM_PREFIX) :]
        spec = specs.get(name)
        if spec is None:
            url.warnings.append(f"The link's {key}={raw!r} is not a parameter of {model}; it was left out.")
            continue
        try:
            value = spec.convert(raw)
            if spec.artefact is not None and value not in {
                str(r["name"]) for r in artefacts.available(str(current_index_path()), str(spec.artefact))
            }:
                raise ValueError(f"no trained {spec.artefact} artefact is named {value!r}")
            if control_kind(spec) == "grid" and value not in slider_options(spec):
                raise ValueError("not on the control's grid")
        except Exception:  # any bad value is named, and the default used
            url.warnings.append(f"The link's {key}={raw!r} is not allowed ({spec.allowed()}); "
                                f"using {spec.default!r} instead.")
            continue
        values[name] = value
    seed_params(model, values)
    if url.has("k"):
        st.session_state["howto_k"] = url.integer("k", 1, MAX_GROWTH_K, int(st.session_state.get("howto_k", EXPLORE_K)))
    if url.has("sentence"):
        raw = url.text("sentence")
        if is_ascii_integer(raw):  # str.isdigit() accepts "²", which int() refuses
            st.session_state["howto_sentence"] = st.session_state["howto_link_sentence"] = int(raw)
        else:
            url.warnings.append(f"The link's sentence={raw!r} is not a sentence id; explaining the ranking's "
                                "first sentence instead.")
    if url.has("compare"):
        st.session_state["howto_compare"] = url.choice("compare", [m for m in names if m != model], None)
    if url.has("entity"):
        st.session_state["howto_entity"] = st.session_state["howto_link_entity"] = url.text("entity")
    st.session_state["howto_url_warnings"] = url.warnings


def _to_url(query: str, model: str, params: tuple[tuple[str, object], ...]) -> None:
    values: dict[str, object] = {"q": query.strip(), "model": model}
    values.update({PARAM_PREFIX + name: value for name, value in params})
    for key, state in (("sentence", "howto_sentence"), ("compare", "howto_compare"), ("k", "howto_k"),
                       ("entity", "howto_entity")):
        values[key] = st.session_state.get(state) if query.strip() else None
    write(values, list(values))


def render() -> None:
    page_setup(
        "How it works",
        "Pick a model, move its parameters and watch the ranking change; see what each query term adds "
        "to a sentence's score, the sets of Fig. 1 of Blanco & Zaragoza (SIGIR 2010), and how two models differ "
        "on one query.",
    )
    index = current_index()
    if index is None:
        return
    names = offered_models()
    path = str(current_index_path())
    _from_url(names)
    show_warnings(st.session_state.get("howto_url_warnings", []))
    top_row = st.columns([3, 2])
    with top_row[0]:
        query = query_input()
    with top_row[1]:
        if st.session_state.get("howto_model") not in names:
            st.session_state["howto_model"] = DEFAULT_RANKER if DEFAULT_RANKER in names else names[0]
        model = st.selectbox("Model", names, key="howto_model", persist_state=PERSIST,
                             format_func=lambda n: model_label(n, path))
    body(path, query, get_model(model or names[0]).name)
    credit(index)


@st.fragment
def body(path: str, query: str, model: str) -> None:
    """The parameters and everything they change: a slider reruns only this part."""
    from sentret_core.ui.state import load_index

    stages = Stages("how-it-works body")
    try:
        _body(load_index(path), path, query, model, stages)
    finally:
        stages.done()


def _body(index: Index, path: str, query: str, model: str, stages: Stages) -> None:
    started = time.perf_counter()
    spec: ModelSpec = get_model(model)
    left, right = st.columns([1, 2], gap="large")
    with left:
        st.markdown("**Parameters**")
        values = parameter_controls(spec)
    params = changed(spec, values)
    stages.mark("parameters")
    with right:  # the formula beside the parameters: both on a projector's first screen (1093 × 614 CSS px)
        st.latex(spec.formula)
        st.caption(f"**{spec.display_name}.** {spec.description}")
        with st.expander("Paper", expanded=False):  # a long citation list would push the ranking down
            st.caption(f"**Paper:** {spec.paper}")
        if not query.strip():
            _to_url(query, spec.name, params)
            st.info("Type a query to see its ranking.")
            return
        clock = time.perf_counter()
        # instant once warm; a model's first use on an index derives its statistics (postings, lengths)
        with st.spinner(f"Scoring with {spec.display_name}…", show_time=True):
            result = guarded("compute the ranking", ranked, path, query, spec.name, params, TOP)
        rank_ms = (time.perf_counter() - clock) * 1000
        if result is None:
            _to_url(query, spec.name, params)
            return
        if result.reason:
            _to_url(query, spec.name, params)
            st.warning(f"No ranking: {md(result.reason)}.")
            return
        stages.mark("ranking")
        ranking_table(index, path, query, spec, params, result)
        timing = st.empty()  # below the table, which comes first on a small screen
        stages.mark("ranking table")
    _link_sentence_warning([int(s) for s in result.ids])
    tabs = st.tabs(["Term contributions", "Fig. 1 of Blanco & Zaragoza: S_q, Ŝ_q, S_qe, Ŝ_qe", "Compare two models"])
    with tabs[0]:
        contributions(index, path, query, spec, params, result)
        stages.mark("contributions")
    with tabs[1]:
        fig1_sets(index, path, query, spec, params)
        stages.mark("fig. 1")
    with tabs[2]:
        compare(index, path, query, spec, params, result)
        stages.mark("compare")
    _to_url(query, spec.name, params)
    page_ms = (time.perf_counter() - started) * 1000
    st.session_state["howto_timing"] = {"rank_ms": rank_ms, "page_ms": page_ms}
    timing.caption(
        f"{result.candidates:,} candidate sentences · terms **{md(' '.join(result.terms))}**"
        + (f" (not in the index: {md(', '.join(result.oov))})" if result.oov else "")
        + f" · ranked in {rank_ms:.1f} ms · page drawn in {page_ms:.0f} ms"
    )


def model_label(name: str, path: str) -> str:
    """A model in the chooser, marked when the trained artefact it reads is missing (trained below, never on use)."""
    return f"{get_model(name).display_name} ({name})" + untrained_label(name, path)


def _link_sentence_warning(ids: list[int]) -> None:
    """A linked sentence that is not in the top 10 is named (once), not silently replaced."""
    linked = st.session_state.pop("howto_link_sentence", None)
    if linked is not None and linked not in ids:
        st.warning(md(f"The link's sentence={linked} is not in this ranking's top {TOP}; "
                      f"explaining sentence {ids[0]} instead."))
