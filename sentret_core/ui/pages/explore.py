"""Explore: a query's entities and their support sentences, side by side under several models.

Every widget's value lives in the URL (``q``, ``ranker``, ``k``, ``score``, ``labels``, ``models``,
``per``, ``restating``, ``graph``, ``entity``, the learned ranker as ``p.ltr.model``; the index as
``index``), so a link reproduces the view;
a value the page cannot use is named in a warning. Speed: the query box reruns the page; everything
below it is one fragment, so a setting or an entity pick reruns only that part, and the support
result is cached per (index, query, settings). Each support column is one HTML block; the entity
graph is drawn only when asked for.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import streamlit as st

from sentret_core import defaults
from sentret_core.index.reader import Index
from sentret_core.support.engine import support
from sentret_core.support.entity_stats import ENTITY_SCORES
from sentret_core.support.records import EntitySupport, SupportResult, SupportSentence
from sentret_core.support.registry import support_model
from sentret_core.support.restating import split_restating
from sentret_core.support.weighting import ENTITY_WEIGHTINGS
from sentret_core.ui.downloads import entities_csv, entities_json, file_stem
from sentret_core.ui.entity_graph import entity_graph_dot
from sentret_core.ui.entity_table import (
    ROW_PICK_JS,
    ROW_PICK_KEY,
    SUPPORT_ANCHOR,
    entity_table_html,
    glossary_markdown,
)
from sentret_core.ui.explore_seed import FIRST_EXAMPLE, MAX_MODELS, example_queries, seed_from_url, url_warnings
from sentret_core.ui.glossary import (
    ALL_KLD_ZERO,
    NOT_COMPARABLE,
    WEIGHTING_HELP,
    WEIGHTING_NAMES,
    WHAT_IT_IS,
    k_help,
    ranks_text,
    took_text,
)
from sentret_core.ui.glossary import COLUMN_TITLES as SCORE_NAMES
from sentret_core.ui.judgments import explore_judged, judged_mark, judged_summary
from sentret_core.ui.offered import (
    LTR_MODEL,
    default_ranker,
    is_learned,
    learned_params,
    model_title,
    offered_models,
    stored_rankers,
    support_models,
    untrained_label,
)
from sentret_core.ui.render import shorten, support_html
from sentret_core.ui.state import (
    PERSIST,
    Stages,
    credit,
    current_index,
    current_index_path,
    guarded,
    page_setup,
)
from sentret_core.ui.text import html_text, md, show_html
from sentret_core.ui.theme import run_script
from sentret_core.ui.url import write

URL_KEYS = ("q", "entity", "ranker", "k", "score", "weighting", "labels", "models", "per", "restating", "graph",
            LTR_MODEL)
TOP_ENTITIES = defaults.DEFAULT_SUPPORT_ENTITIES
SPARE = 10  # entities asked for beyond the 20 shown, so setting restating ones aside still shows 20
SHORT_QUERY = 60  # a longer query is shown cut, its full text on hover


def model_option(name: str) -> str:
    """A model's name in a list: marked when it needs a trained artefact the index does not have yet; a
    learned ranker's also by its code name, so that typing "ltr" finds it. A label never changes with
    another widget (Streamlit keeps a multiselect's choice by label)."""
    if is_learned(name):
        return f"{model_title(name)} · {name}"
    missing = untrained_label(name, str(current_index_path())) if support_model(name) is None else ""
    return model_title(name) + missing


@st.cache_data(show_spinner=False, max_entries=128)
def cached_support(path: str, query: str, ranker: str, k: int, score: str, weighting: str, labels: tuple[str, ...],
                   models: tuple[str, ...], per_entity: int, learned: str | None = None) -> SupportResult:
    from sentret_core.ui.state import load_index

    return support(load_index(path), query, ranker=ranker, k=k, entity_score=score, entity_labels=labels,
                   models=models, per_entity=per_entity, top_entities=TOP_ENTITIES + SPARE,
                   params=learned_params(learned), entity_weighting=weighting)


# --- the URL ---------------------------------------------------------------------------------------


# --- the page --------------------------------------------------------------------------------------


def render() -> None:
    stages = Stages("explore page")
    page_setup("Explore", "Which entities matter to a query, and which sentences say why — under several models "
               "side by side.")
    stages.mark("setup")
    index = current_index()
    stages.mark("index")
    if index is None:
        return
    seed_from_url(index)
    examples = example_queries()
    left, right = st.columns([3, 2])
    with right:
        example = st.selectbox("Example queries", ["—", *examples], key="explore_example")
        if example != "—" and example != st.session_state.get("explore_last_example"):
            st.session_state["explore_last_example"] = example
            st.session_state["explore_query"] = example
            st.session_state["explore_url_entity"] = None
    with left:
        query = st.text_input("Query", key="explore_query", persist_state=PERSIST,
                              placeholder="e.g. Marie Curie and radioactivity")
    url_warnings(query)
    stages.mark("query box")
    stages.done()
    results(str(current_index_path()), query.strip())
    credit(index)


@st.fragment
def results(path: str, query: str) -> None:
    """The settings and everything they change; a widget here reruns only this part."""
    from sentret_core.ui.state import load_index

    stages = Stages("explore results")
    try:
        _results(load_index(path), path, query, stages)
    finally:
        stages.done()


def _results(index: Index, path: str, query: str, stages: Stages) -> None:
    sentence_models = offered_models()
    with st.expander("Ranking settings", expanded=False):
        c1, c2, c3 = st.columns(3)
        ranker = c1.selectbox("Ranker (gives S_q)", sentence_models, key="explore_ranker", persist_state=PERSIST,
                              format_func=model_option)
        k = c2.number_input("k = |S_q|", min_value=1, max_value=defaults.APP_MAX_K, step=50, key="explore_k",
                            persist_state=PERSIST, help=k_help(index.N))
        score = c3.radio("Entity score", ENTITY_SCORES, key="explore_score", persist_state=PERSIST,
                         format_func=SCORE_NAMES.get, horizontal=True)
        weighting = st.radio("Each sentence of S_q counts by", ENTITY_WEIGHTINGS, key="explore_weighting",
                             persist_state=PERSIST, format_func=WEIGHTING_NAMES.get, horizontal=True,
                             help=WEIGHTING_HELP)
        labels = st.multiselect("Entity labels", sorted(index.entity_labels.names), key="explore_labels",
                                persist_state=PERSIST)
        learned = _learned_picker()
        models = st.multiselect("Support models, side by side", support_models(), key="explore_models",
                                persist_state=PERSIST, format_func=model_option,
                                max_selections=MAX_MODELS)
        c4, c5 = st.columns(2)
        per_entity = c4.slider("Support sentences per model", 1, 10, key="explore_per_entity",
                               persist_state=PERSIST)
        set_aside = c5.toggle("Set aside entities that only restate the query", key="explore_restating",
                              persist_state=PERSIST,
                              help="An entity whose every term is a query term (\"Spanish\" for \"Spanish Civil "
                                   "War\") goes to a collapsed group below the table, not away.")
    state: dict[str, Any] = {"q": query, "ranker": ranker, "k": int(k), "score": score, "weighting": weighting,
                             "labels": labels,
                             "models": models, "per": int(per_entity), "restating": bool(set_aside),
                             "graph": bool(st.session_state.get("explore_graph"))}
    used = learned if any(is_learned(m) for m in (ranker, *models) if m) else None
    state[LTR_MODEL] = used
    state["entity"] = st.session_state.get("explore_url_entity") if query else None
    stages.mark("settings")
    if not query:
        write(state, URL_KEYS)
        st.info(f"{WHAT_IT_IS} Type a query, or pick one of the examples.")
        return
    if query == st.session_state.get(FIRST_EXAMPLE):
        st.caption(f"{WHAT_IT_IS} Here, the first example query; type your own above, or pick another example.")
    if not models:
        write(state, URL_KEYS)
        st.error("Choose at least one support model.")
        return
    if not labels:
        write(state, URL_KEYS)
        st.error("Choose at least one entity label.")
        return
    asked = time.perf_counter()
    result = guarded("find the support sentences", cached_support, path, query, str(ranker), int(k), str(score),
                     str(weighting), tuple(labels), tuple(models), int(per_entity), used)
    served_ms = (time.perf_counter() - asked) * 1000
    if result is None:
        write(state, URL_KEYS)
        return
    if result.reason:
        write(state, URL_KEYS)
        st.warning(f"No entities to show: {md(result.reason)}.")
        return
    stages.mark("support")
    if set_aside:
        kept, restating = split_restating(index, result.terms, result.entities)
        kept = kept[:TOP_ENTITIES]
    else:
        kept, restating = list(result.entities[:TOP_ENTITIES]), []
    short = html_text(shorten(result.query, SHORT_QUERY))
    show_html(
        f'<p class="sentret-terms"><small>Query <span title="{html_text(result.query)}">“{short}”</span> · terms '
        f"<b>{html_text(' '.join(result.terms))}</b> · |S_q| = {result.n_top:,} (top {result.k:,} under "
        f"{html_text(model_title(result.ranker, used))}) · |Ŝ_q| = {result.n_context:,} with "
        f"±{defaults.DEFAULT_WINDOW} context sentences · "
        f"{took_text(sum(result.timings.values()) * 1000, served_ms)}</small></p>"
    )
    stages.mark("restating")
    shown = _entity_table(result, kept, restating)
    stages.mark("entity table")
    explain(path, result, shown, len(kept), state)
    stages.mark("entity fragment")
    if st.toggle("Entity graph: the query, its entities and the documents that support them", key="explore_graph",
                 persist_state=PERSIST):
        st.graphviz_chart(entity_graph_dot(_with(result, kept)))
    stages.mark("graph")


def _learned_picker() -> str | None:
    """The stored ranker ``ltr.v1`` reads (shown when one is stored); a vanished one falls back to the default."""
    rankers = stored_rankers()
    if not rankers:
        return None
    if st.session_state.get("explore_ltr_model") not in rankers:
        st.session_state["explore_ltr_model"] = default_ranker(rankers)
    chosen = st.selectbox("Learned ranker (read by ltr.v1)", rankers, key="explore_ltr_model",
                          persist_state=PERSIST, help="A stored ranker, by the name it was learned under.")
    return str(chosen) if chosen is not None else None


def _with(result: SupportResult, entities: list[EntitySupport]) -> SupportResult:
    from dataclasses import replace

    return replace(result, entities=tuple(entities))


def _entity_table(
    result: SupportResult, kept: list[EntitySupport], restating: list[EntitySupport]
) -> list[EntitySupport]:
    """The entities in one table (the chosen score as a bar), the restating ones in a collapsed group,
    the columns' glossary and the downloads; the entities a user may choose to explain, in that order."""
    if kept:
        st.subheader(f"Entities, by {SCORE_NAMES[result.entity_score]}")
        gaps = [e.entity.rank for e in restating if e.entity.rank < kept[-1].entity.rank]
        if gaps:
            st.caption(f"Ranks count every entity: {ranks_text(gaps)} only restate{'s' if len(gaps) == 1 else ''} "
                       "the query, set aside below.")
        show_html(entity_table_html(kept, result.entity_score))
    run_script(ROW_PICK_JS)
    if restating:
        with st.expander(f"Restating the query: {len(restating)} entit{'y' if len(restating) == 1 else 'ies'} "
                         "set aside", expanded=False):
            st.caption("Every term of these entities is a query term, so they say nothing the query did not. "
                       "They can still be explained below.")
            show_html(entity_table_html(restating, result.entity_score))
    shown = [*kept, *restating]
    if result.entity_score == "kld" and shown and all(e.entity.kld == 0 for e in shown):
        st.info(ALL_KLD_ZERO.format(k=max(1, result.n_top // 10)))
    with st.expander("What the columns mean", expanded=False):
        st.markdown(glossary_markdown(result.entity_score))
    stem = file_stem(result.query)
    c1, c2, _ = st.columns([1, 1, 3])
    # the files are made on click (a callable), not on every rerun of the page
    c1.download_button("Download CSV", partial(entities_csv, result, kept, restating), f"{stem}.csv", "text/csv",
                       key="explore_download_csv", on_click="ignore",
                       help="The entities and their support sentences, one row per sentence.")
    c2.download_button("Download JSON", partial(entities_json, result, kept, restating), f"{stem}.json",
                       "application/json", key="explore_download_json", on_click="ignore",
                       help="The request, the entities and their support sentences.")
    return shown


def _picked() -> None:
    """A click on a row of the entity table: explain that entity (the box is emptied for the next click)."""
    key = st.session_state.get(ROW_PICK_KEY)
    if key:
        st.session_state["explore_entity"] = key
        st.session_state["explore_url_entity"] = key
    st.session_state[ROW_PICK_KEY] = ""


@st.fragment
def explain(path: str, result: SupportResult, shown: list[EntitySupport], n_kept: int, state: dict[str, Any]) -> None:
    """The entity chooser and its support columns: picking an entity reruns only this part."""
    from sentret_core.ui.state import load_index

    stages = Stages("explore entity")
    keys = [f"{e.entity.text}|{e.entity.label}" for e in shown]
    names = {key: f"{e.entity.rank}. {e.entity.text} ({e.entity.label})" for key, e in zip(keys, shown)}
    for key in keys[n_kept:]:
        names[key] += " · restates the query"
    wanted = st.session_state.get("explore_url_entity")
    if st.session_state.get("explore_entity") not in keys:
        if wanted and wanted not in keys and wanted == st.session_state.pop("explore_link_entity", None):
            st.warning(md(f"The link's entity={wanted!r} is not among this query's entities; "
                          f"showing {keys[0]!r} instead."))
        st.session_state["explore_entity"] = wanted if wanted in keys else keys[0]
    with st.container(key="sentret-row-pick"):
        st.text_input("Entity picked in the table", key=ROW_PICK_KEY, on_change=_picked, label_visibility="collapsed")
    choice = st.selectbox("Entity to explain", keys, key="explore_entity", format_func=names.__getitem__,
                          help="Or click the entity's row in the table.")
    position = keys.index(choice) if choice is not None and choice in keys else 0
    st.session_state["explore_url_entity"] = keys[position]
    write({**state, "entity": keys[position]}, URL_KEYS)
    stages.mark("chooser")
    _support_columns(load_index(path), result, shown[position], state.get(LTR_MODEL))
    stages.mark("columns")
    stages.done()


def _support_columns(index: Index, result: SupportResult, entity: EntitySupport, learned: str | None) -> None:
    e = entity.entity
    short = html_text(shorten(result.query, SHORT_QUERY))
    show_html(f'<h3 id="{SUPPORT_ANCHOR}" tabindex="-1">Why {html_text(e.text)} ({html_text(e.label)}) matters to '
              f'<span title="{html_text(result.query)}">“{short}”</span></h3>')
    if len(result.models) > 1:
        st.caption(NOT_COMPARABLE)
    agreed = entity.agreement()
    judged = explore_judged(str(index.path), result.query, f"{e.text}|{e.label}")  # the team's grades, if any
    columns = st.columns(len(result.models))
    for column, model in zip(columns, result.models):
        sentences = entity.sentences[model]
        title = html_text(model_title(model, learned))
        parts = [f"<p><b>{title}</b><br><small>{entity.candidates[model]} candidate sentences</small>"
                 f"{judged_summary(judged, [s.sentence for s in sentences])}</p>"]
        if not sentences:
            parts.append('<p class="sentret-none"><small>No candidate sentence: no sentence mentioning this '
                         "entity is in this model's top k.</small></p>")
        for s in sentences:
            parts.append(_sentence_card(index, s, e.entity, agreed.get(s.sentence, []) if s.rank == 1 else [],
                                        judged_mark(judged, s.sentence)))
        show_html(f'<div class="support-column">{"".join(parts)}</div>', column)


def _sentence_card(index: Index, s: SupportSentence, entity: int, agreeing: list[str], judged: str) -> str:
    """One support sentence as HTML, its context sentences (±DEFAULT_WINDOW) in a closed ``<details>``."""
    body = support_html(index, s, entity)
    mark = f" · ✅ top sentence of {len(agreeing)} models" if agreeing else ""
    meta = f"#{s.rank} · score {s.score:.3f} · <i>{html_text(s.title)}</i>{mark}{judged}"
    context = ""
    if s.context:
        before = "".join(f"<p style='opacity:0.7'>{html_text(c.text)}</p>" for c in s.context if c.offset < 0)
        after = "".join(f"<p style='opacity:0.7'>{html_text(c.text)}</p>" for c in s.context if c.offset > 0)
        context = (f"<details><summary><small>Context (±{defaults.DEFAULT_WINDOW} sentences)</small></summary>"
                   f"{before}<p><b>{html_text(s.text)}</b></p>{after}</details>")
    return f'<div class="support"><small>{meta}</small><p>{body}</p>{context}</div>'
