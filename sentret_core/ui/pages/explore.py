"""Explore: a query's entities and their support sentences, side by side under several models.

The view's state (query, entity, ranker, k, entity score, labels, models) lives in the URL, so a
link reproduces it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from sentret_core.defaults import DEFAULT_SUPPORT_MODELS, EXPLORE_K
from sentret_core.index.entity_stats import ENTITY_SCORES
from sentret_core.index.reader import Index
from sentret_core.models import get_model
from sentret_core.support.context import ENTITY_MODELS, POSITION
from sentret_core.support.engine import support
from sentret_core.support.entities import DEFAULT_EXCLUDED_LABELS
from sentret_core.support.records import SupportResult, SupportSentence
from sentret_core.ui.entity_graph import entity_graph_dot
from sentret_core.ui.offered import offered_models
from sentret_core.ui.render import support_html
from sentret_core.ui.state import PERSIST, credit, current_index, current_index_path, guarded, page_setup
from sentret_core.ui.text import html_text, md, show_html

QUERY_FILE = Path(__file__).resolve().parents[2] / "data" / "queries" / "demo.txt"
SCORE_NAMES = {"kld": "KLD", "frequency": "frequency", "rarity": "rarity", "combination": "combination"}
URL_KEYS = ("q", "entity", "ranker", "k", "score", "labels", "models")


def example_queries() -> list[str]:
    if not QUERY_FILE.is_file():
        return []
    lines = QUERY_FILE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def support_models() -> list[str]:
    return [*offered_models(), POSITION, *ENTITY_MODELS]


def model_title(name: str) -> str:
    if name == POSITION:
        return "Position (eq. 8)"
    if name in ENTITY_MODELS:
        how, score = name.split("-", 1)
        return f"{'Sum' if how == 'sum' else 'Average'} of {SCORE_NAMES[score]} (eq. 7)"
    return get_model(name).display_name


@st.cache_data(show_spinner=False, max_entries=64)
def cached_support(path: str, query: str, ranker: str, k: int, score: str, labels: tuple[str, ...],
                   models: tuple[str, ...], per_entity: int) -> SupportResult:  # fmt: skip
    from sentret_core.ui.state import load_index

    return support(load_index(path), query, ranker=ranker, k=k, entity_score=score, entity_labels=labels,
                   models=models, per_entity=per_entity, top_entities=20)  # fmt: skip


def _from_url(index: Index) -> None:
    """Seed the widgets from the URL once per session."""
    if st.session_state.get("explore_seeded"):
        return
    params = st.query_params
    examples = example_queries()
    st.session_state["explore_query"] = params.get("q", examples[1] if len(examples) > 1 else "")
    st.session_state["explore_ranker"] = params.get("ranker", "bm25f.v1")
    st.session_state["explore_k"] = _int(params.get("k"), EXPLORE_K)
    st.session_state["explore_score"] = params.get("score", "kld")
    labels = sorted(set(index.entity_labels))
    wanted = params.get("labels")
    chosen = wanted.split(",") if wanted else [lab for lab in labels if lab not in DEFAULT_EXCLUDED_LABELS]
    st.session_state["explore_labels"] = [lab for lab in chosen if lab in labels]
    models = params.get("models")
    known = set(support_models())
    chosen = models.split(",") if models else list(DEFAULT_SUPPORT_MODELS)
    st.session_state["explore_models"] = [m for m in chosen if m in known]
    st.session_state["explore_url_entity"] = params.get("entity")
    st.session_state["explore_seeded"] = True


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


def _to_url(state: dict[str, Any]) -> None:
    for key in URL_KEYS:
        value = state.get(key)
        if value in (None, "", []):
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = ",".join(value) if isinstance(value, list) else str(value)


def render() -> None:
    page_setup("Explore", "Which entities matter to a query, and which sentences say why — under several models "
               "side by side.")  # fmt: skip
    index = current_index()
    if index is None:
        return
    _from_url(index)
    examples = example_queries()
    left, right = st.columns([3, 2])
    with right:
        example = st.selectbox("Example queries", ["—", *examples], key="explore_example")
        if example != "—" and example != st.session_state.get("explore_last_example"):
            st.session_state["explore_last_example"] = example
            st.session_state["explore_query"] = example
            st.session_state["explore_url_entity"] = None
    with left:
        query = st.text_input("Query", key="explore_query", persist_state=PERSIST, placeholder="e.g. Picasso and peace")
    models_all = support_models()
    sentence_models = offered_models()
    with st.expander("Ranking settings", expanded=False):
        c1, c2, c3 = st.columns(3)
        ranker = c1.selectbox(
            "Ranker (gives S_q)", sentence_models, key="explore_ranker", persist_state=PERSIST, format_func=model_title
        )
        k = c2.number_input(
            "k = |S_q|", min_value=1, max_value=100_000, step=50, key="explore_k", persist_state=PERSIST
        )
        score = c3.radio(
            "Entity score",
            ENTITY_SCORES,
            key="explore_score",
            persist_state=PERSIST,
            format_func=SCORE_NAMES.get,
            horizontal=True,
        )
        labels = st.multiselect(
            "Entity labels", sorted(set(index.entity_labels)), key="explore_labels", persist_state=PERSIST
        )
        models = st.multiselect("Support models, side by side", models_all, key="explore_models", persist_state=PERSIST,
                                format_func=model_title, max_selections=4)  # fmt: skip
        per_entity = st.slider("Support sentences per model", 1, 10, 3, key="explore_per_entity", persist_state=PERSIST)
    if not query.strip():
        st.info("Type a query, or pick one of the examples.")
        return
    if not models:
        st.error("Choose at least one support model.")
        return
    if not labels:
        st.error("Choose at least one entity label.")
        return
    result = guarded("find the support sentences", cached_support, str(current_index_path()), query, str(ranker),
                     int(k), str(score), tuple(labels), tuple(models), per_entity)  # fmt: skip
    if result is None:
        return
    state = {"q": query, "ranker": ranker, "k": int(k), "score": score, "labels": labels, "models": models}
    if result.reason:
        _to_url(state)
        st.warning(f"No entities to show: {md(result.reason)}.")
        return
    st.caption(
        f"Terms: **{md(' '.join(result.terms))}** · |S_q| = {result.n_top:,} (top {result.k:,} under "
        f"{model_title(result.ranker)}) · |Ŝ_q| = {result.n_context:,} with ±2 context sentences · "
        f"{sum(result.timings.values()) * 1000:.1f} ms"
    )
    entity = _entity_table(result)
    state["entity"] = f"{entity.entity.text}|{entity.entity.label}"
    _to_url(state)
    _support_columns(index, result, entity)
    with st.expander("Entity graph: the query, its entities and the documents that support them"):
        st.graphviz_chart(entity_graph_dot(result))
    credit(index)


def _entity_table(result: SupportResult) -> Any:
    rows = pd.DataFrame(
        [
            {
                "rank": e.entity.rank,
                "entity": e.entity.text,
                "label": e.entity.label,
                "|S_qe|": e.entity.frequency,
                "|Ŝ_qe|": e.entity.context_frequency,
                "frequency": e.entity.frequency,
                "rarity": round(e.entity.rarity, 4),
                "combination": round(e.entity.combination, 4),
                "KLD": round(e.entity.kld, 5),
            }
            for e in result.entities
        ]
    )
    names = [f"{e.entity.rank}. {e.entity.text} ({e.entity.label})" for e in result.entities]
    wanted = st.session_state.get("explore_url_entity")
    keys = [f"{e.entity.text}|{e.entity.label}" for e in result.entities]
    if wanted in keys and st.session_state.get("explore_entity") not in names:
        st.session_state["explore_entity"] = names[keys.index(wanted)]
    elif st.session_state.get("explore_entity") not in names:
        st.session_state["explore_entity"] = names[0]
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Entities")
        st.dataframe(rows.drop(columns=["frequency"]), hide_index=True, width="stretch", height=280)
    with right:
        column = SCORE_NAMES[result.entity_score]
        chart = rows.assign(name=[f"{e.entity.text} ({e.entity.label})" for e in result.entities])
        st.subheader(f"Entity score: {column}")
        st.bar_chart(chart, x="name", y=column, horizontal=True, height=280, sort=f"-{column}")
    choice = st.selectbox("Entity to explain", names, key="explore_entity")
    position = names.index(choice) if choice is not None and choice in names else 0
    st.session_state["explore_url_entity"] = keys[position]
    return result.entities[position]


def _support_columns(index: Index, result: SupportResult, entity: Any) -> None:
    e = entity.entity
    st.subheader(f"Why {md(e.text)} ({md(e.label)}) matters to “{md(result.query)}”")
    agreed = entity.agreement()
    columns = st.columns(len(result.models))
    for column, model in zip(columns, result.models):
        with column:
            count = entity.candidates[model]
            title = html_text(model_title(model))
            show_html(f"<p><b>{title}</b><br><small>{count} candidate sentences</small></p>")
            sentences = entity.sentences[model]
            if not sentences:
                st.info("No candidate sentence: no sentence mentioning this entity is in this model's top k.")
            for s in sentences:
                _sentence_card(index, s, e.entity, agreed.get(s.sentence, []) if s.rank == 1 else [])


def _sentence_card(index: Index, s: SupportSentence, entity: int, agreeing: list[str]) -> None:
    body = support_html(index, s, entity)
    mark = f" · ✅ top sentence of {len(agreeing)} models" if agreeing else ""
    meta = f"#{s.rank} · score {s.score:.3f} · <i>{html_text(s.title)}</i>{mark}"
    show_html(f'<div class="support"><small>{meta}</small><p>{body}</p></div>')
    if s.context:
        with st.expander("Context (±2 sentences)"):
            before = [c for c in s.context if c.offset < 0]
            after = [c for c in s.context if c.offset > 0]
            html = [f"<p style='color:#6b7280'>{html_text(c.text)}</p>" for c in before]
            html.append(f"<p><b>{html_text(s.text)}</b></p>")
            html += [f"<p style='color:#6b7280'>{html_text(c.text)}</p>" for c in after]
            show_html("".join(html))
