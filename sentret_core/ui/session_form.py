"""The Admin page's "Create a session" form: a name, the topics (an editable table, a TSV file, the
Explore page's query) and the pooling settings.

Everything sits in one ``st.form``: typing, Tab and Enter run nothing (Enter does not submit
either), so no rerun can collapse the expander or clear a field while the admin is still filling
it in; only "Preview the pairs" sends the form. It pools the topics and shows the (query, entity)
pairs (restating entities left out as Explore does, :mod:`~sentret_core.annotation.session_setup`);
"Create session" then stores that very pool, selects the new session and clears the name, the
topics and the upload, so a second click cannot create it again. Topics are (query, entity) rows; a row without an
entity stands for the query's top entities. A TSV file holds one ``query<TAB>entity<TAB>narrative`` per line
(entity and narrative optional; a ``query<TAB>entity[<TAB>narrative]`` header, blank and ``#`` lines are skipped). The
form also takes the session's guidelines for its annotators, which :func:`guidelines_editor`
changes later.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.item_order import MAX_GRADERS, ItemOrder
from sentret_core.annotation.narratives import MAX_NARRATIVE, check_narrative
from sentret_core.annotation.records import EntityRanking
from sentret_core.annotation.session_setup import (
    MAX_GUIDELINES,
    PoolPlan,
    build_pool,
    check_session_name,
    create_session,
    set_guidelines,
    topic_label,
)
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.topics import DEFAULT_DEPTH, DEFAULT_TOP_ENTITIES, TopicLine, parse_topics
from sentret_core.defaults import APP_MAX_K, DEFAULT_SUPPORT_MODELS
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import topic_id
from sentret_core.models import list_models
from sentret_core.support.entity_stats import ENTITY_SCORES
from sentret_core.support.weighting import ENTITY_WEIGHTINGS
from sentret_core.ui.offered import model_title, support_models
from sentret_core.ui.state import (
    EXPLORE_QUERY,
    current_index,
    current_index_path,
    guarded,
    index_label,
    uploaded_text,
)
from sentret_core.ui.text import md

FORM = "admin_create_form"
TABLE = "admin_topics_table"
FILE = "admin_topics_file"
CREATED = "admin_form_created"  # messages about the session just created, shown after the rerun
PREVIEW = "admin_form_preview"  # (name, plan) previewed, waiting for "Create session"
GENERATION = "admin_form_generation"  # bumped after a creation: the cleared fields get new widgets
GUIDELINES = "admin_new_guidelines"  # the guidelines field (its widget key is field_key(GUIDELINES))
JUST_CREATED = "admin_form_just_created"  # the session to select after the rerun
SESSION_PICK = "admin_session"
COLUMNS = ("query", "entity", "narrative")
CLEARED = ("admin_new_name", TABLE, FILE, "admin_from_explore", GUIDELINES)  # the fields a creation clears


def field_key(key: str, generation: int | None = None) -> str:
    """The widget key of a field: a new one after each creation (``generation``, by default the
    form's), so the field starts empty (an uploader cannot be emptied any other way)."""
    if generation is None:
        generation = int(st.session_state.get(GENERATION, 0))
    return key if generation == 0 or key not in CLEARED else f"{key}~{generation}"


def pick_session(names: list[str]) -> str | None:
    """The Admin page's session picker: the newest session, or the one just created."""
    just = st.session_state.pop(JUST_CREATED, None)
    if just in names:
        st.session_state[SESSION_PICK] = just  # set before the widget exists in this run: allowed
        index = 0  # ignored: the state's value wins (and a non-zero one would warn)
    else:
        index = len(names) - 1
    return st.selectbox("Session", names, index=index, key=SESSION_PICK)


def create_session_form(store: JudgmentStore) -> None:
    """The messages about the session just created, then the form in an expander (open while
    there is no session)."""
    for kind, message in st.session_state.pop(CREATED, []):
        (st.success if kind == "success" else st.warning)(message)
    with st.expander("Create a session", expanded=not store.sessions(), key="admin_create_open"):
        values = _form()
        if values is not None:
            _preview(store, **values)
        previewed: tuple[str, PoolPlan, ItemOrder] | None = st.session_state.get(PREVIEW)
        if previewed is not None:
            _show_preview(store, *previewed)


def _form() -> dict[str, Any] | None:
    """The form's widgets; their values once "Create session" is pressed, else None."""
    explore = str(st.session_state.get(EXPLORE_QUERY, "") or "")
    with st.form(FORM, enter_to_submit=False, border=False):
        name = st.text_input("Session name", key=field_key("admin_new_name"))
        st.markdown("**Topics** — one (query, entity) per row; leave the entity empty for the query's top "
                    "entities. An entity is `text|LABEL` (e.g. `Picasso|PERSON`) or its text. A narrative (optional) "
                    "says what the topic asks, in words the annotators read while grading.")
        table = st.data_editor(
            pd.DataFrame({c: pd.Series(dtype="string") for c in COLUMNS}),
            key=field_key(TABLE),
            num_rows="dynamic",
            hide_index=True,
            width="stretch",
            column_config={
                "query": st.column_config.TextColumn("query", width="large"),
                "entity": st.column_config.TextColumn("entity (optional)", width="medium"),
                "narrative": st.column_config.TextColumn("narrative (optional)", width="large",
                                                         max_chars=MAX_NARRATIVE),
            },
        )
        upload = st.file_uploader("…and/or a topics file (TSV): a query, a tab and an entity per line, then "
                                  "optionally a tab and a narrative; the entity may be empty", type=["tsv", "txt"],
                                  key=field_key(FILE))
        add_explore = st.checkbox(
            f"Add the Explore page's query ({md(explore)})"
            if explore
            else "Add the Explore page's query (none yet: run one there first)",
            key=field_key("admin_from_explore"),
            disabled=not explore,
        )
        c1, c2, c3 = st.columns(3)
        depth = c1.number_input("Pool depth (top-n per model)", 1, 1000, DEFAULT_DEPTH, key="admin_depth")
        top = c2.number_input("Top entities per query without an entity", 1, 100, DEFAULT_TOP_ENTITIES,
                              key="admin_top_entities")
        seed = c3.number_input("Shuffle seed", 0, 2**31 - 1, 0, key="admin_seed")
        o1, o2, o3 = st.columns(3)
        graders = o1.number_input("Annotators per shared item (0 = every annotator)", 0, MAX_GRADERS, 0,
                                  key="admin_graders")
        overlap = o2.number_input("Shared items (%): the rest are split, one annotator each", 0, 100, 100,
                                  key="admin_overlap")
        shuffle = o3.checkbox("Each annotator in their own shuffled order", value=True, key="admin_shuffle",
                              help="Topics and the items of a topic in a seeded order of each annotator's own "
                              "(a topic's items stay together); off: one shared order")
        models = st.multiselect("Pooling models", support_models(), default=list(DEFAULT_SUPPORT_MODELS),
                                key="admin_models", format_func=model_title)
        ranking = _ranking_fields()
        st.text_area("Guidelines for the annotators (optional; shown on their grading page as written)",
                     key=field_key(GUIDELINES), max_chars=MAX_GUIDELINES, height=100)
        st.caption(f"Index: {md(index_label(current_index_path()))} (choose another on the Corpus page)")
        if not st.form_submit_button("Preview the pairs", type="primary", key="admin_preview",
                                     help="Pool the topics and show the (query, entity) pairs; nothing is "
                                     "stored until Create session"):
            return None
    return {"name": name, "table": table, "upload": upload, "explore": explore if add_explore else "",
            "models": models, "ranking": ranking, "depth": int(depth), "top": int(top), "seed": int(seed),
            "graders": int(graders), "overlap": int(overlap), "shuffle": bool(shuffle)}


def explore_ranking() -> EntityRanking:
    """The entity ranking the Explore page shows in this browser session (its defaults before a visit there);
    a learned ranker as Explore's ranker is not offered for pooling (its first stage is BM25F then)."""
    state, plain = st.session_state, EntityRanking()
    ranker, k = state.get("explore_ranker"), state.get("explore_k")
    score, weighting = state.get("explore_score"), state.get("explore_weighting")
    return EntityRanking(
        ranker if isinstance(ranker, str) and ranker in pooling_rankers() else plain.ranker,
        k if isinstance(k, int) and not isinstance(k, bool) else plain.k,
        score if isinstance(score, str) and score in ENTITY_SCORES else plain.score,
        weighting if isinstance(weighting, str) and weighting in ENTITY_WEIGHTINGS else plain.weighting,
    )


def pooling_rankers() -> list[str]:
    return [spec.name for spec in list_models() if spec.family != "ltr"]


def _ranking_fields() -> EntityRanking:
    """How a query without an entity gets its entities (and S_q its sentences): Explore's choices by default."""
    shown = explore_ranking()
    rankers = pooling_rankers()
    st.markdown("**Entities of a query without one**, and the sentences they come from: as on the Explore page "
                "unless changed here")
    r1, r2, r3, r4 = st.columns(4)
    ranker = r1.selectbox("Ranker (gives S_q)", rankers, index=rankers.index(shown.ranker), key="admin_pool_ranker",
                          format_func=model_title)
    k = r2.number_input("k (sentences in S_q)", 1, APP_MAX_K, shown.k, key="admin_pool_k")
    score = r3.selectbox("Entity score", ENTITY_SCORES, index=ENTITY_SCORES.index(shown.score),
                         key="admin_pool_score")
    weighting = r4.selectbox("Each sentence of S_q counts by", ENTITY_WEIGHTINGS,
                             index=ENTITY_WEIGHTINGS.index(shown.weighting), key="admin_pool_weighting")
    return EntityRanking(str(ranker), int(k), str(score), str(weighting))


def table_topics(table: pd.DataFrame) -> list[TopicLine]:
    """The topics of the table's rows (1-based row numbers); empty rows skipped, repeats dropped."""
    found: dict[tuple[str, str | None], TopicLine] = {}
    rows = table.reindex(columns=list(COLUMNS)).itertuples(index=False)
    for number, (query, entity, narrative) in enumerate(rows, start=1):
        query, entity = _cell(query), _cell(entity)
        if not query and not entity:
            continue
        if not query:
            raise SentretError(f"topics table row {number}: the query is empty (entity {entity!r})")
        told = check_narrative(narrative, f"topics table row {number}: the narrative") if _cell(narrative) else ""
        found.setdefault((query, entity or None), TopicLine(query, entity or None, number, told))
    return list(found.values())


def file_topics(text: str) -> list[TopicLine]:
    """The topics of a TSV file's text (:func:`~sentret_core.annotation.topics.parse_topics`), after
    an optional ``query<TAB>entity`` header line."""
    lines = text.splitlines()
    if lines and [c.strip().casefold() for c in lines[0].split("\t")] in (["query"], ["query", "entity"],
                                                                          ["query", "entity", "narrative"]):
        lines[0] = ""  # the header: a blank line keeps the line numbers of the rest
    return parse_topics("\n".join(lines))


def all_topics(table: pd.DataFrame, upload: Any, explore: str) -> list[TopicLine]:
    """The table's topics, the file's and the Explore page's query, in that order, each once."""
    topics = table_topics(table)
    if upload is not None:
        topics += file_topics(uploaded_text(upload))
    if explore.strip():
        topics.append(TopicLine(" ".join(explore.split()), None, 0))
    if not topics:
        raise SentretError("no topics: fill in the table, upload a topics file or add the Explore page's query")
    return _unique(topics)


def _unique(topics: Iterable[TopicLine]) -> list[TopicLine]:
    first: dict[tuple[str, str | None], TopicLine] = {}
    for topic in topics:
        first.setdefault((topic.query, topic.entity), topic)
    return list(first.values())


def _cell(value: object) -> str:
    """A table cell's text, whitespace collapsed (an empty cell of a new row is None or NA)."""
    return " ".join(value.split()) if isinstance(value, str) else ""


def _preview(store: JudgmentStore, *, name: str, table: pd.DataFrame, upload: Any, explore: str,
             models: list[str], ranking: EntityRanking, depth: int, top: int, seed: int, graders: int,
             overlap: int, shuffle: bool) -> None:
    """Pool the form's topics (nothing stored) and keep the plan for :func:`_show_preview`."""
    st.session_state.pop(PREVIEW, None)  # a failed preview leaves no older one to create by mistake
    checked = guarded("check the session name", check_session_name, store, name)
    if checked is None:
        return
    order = guarded("check who grades what", ItemOrder, overlap, graders, shuffle, seed)
    if order is None:
        return
    topics = guarded("read the topics", all_topics, table, upload, explore)
    if topics is None:
        return
    index = current_index()
    if index is None:
        return
    plan = guarded("pool the topics", build_pool, index, topics, models=models, depth=depth, seed=seed,
                   top_entities=top, ranking=ranking)
    if plan is not None:
        st.session_state[PREVIEW] = (checked, plan, order)


def _show_preview(store: JudgmentStore, name: str, plan: PoolPlan, order: ItemOrder) -> None:
    """The pooled pairs of the previewed session, and the button that creates exactly them."""
    st.markdown(f"**Preview of session {md(repr(name))}**: {len(plan.items)} items over {len(plan.pairs)} "
                f"(query, entity) pairs; {md(order.describe())}")
    ranking = plan.settings.ranking
    same = "the Explore page's" if ranking == explore_ranking() else "not the Explore page's now"
    st.caption(f"A query without an entity: its {md(ranking.describe())} ({same}).")
    counts = {t.topic_id: len(t.pooled) for t in plan.topics}
    st.dataframe(pd.DataFrame({"pair": [topic_label(tid) for tid in counts], "items": list(counts.values())}),
                 hide_index=True, width="stretch", key="admin_preview_pairs")
    if plan.set_aside:
        left_out = "; ".join(md(topic_label(topic_id(q, e))) for q, e in plan.set_aside)
        st.caption("Left out, as on the Explore page, because they only restate the query (name one in the "
                   f"topics to pool it): {left_out}")
    for note in plan.notes:
        if "only restates the query" not in note:
            st.caption(f"Left out: {md(note)}")
    if st.button(f"Create session {md(repr(name))}", type="primary", key="admin_create"):
        _create(store, name, plan, order)


def _create(store: JudgmentStore, name: str, plan: PoolPlan, order: ItemOrder) -> None:
    index = current_index()
    if index is None:
        return
    guidelines = str(st.session_state.get(field_key(GUIDELINES)) or "")
    created = guarded("create the session", create_session, store, name, index, (), plan=plan, guidelines=guidelines,
                      order=order)
    if created is None:
        return
    info, plan = created
    done = f"Created session {md(repr(info.name))}: {info.n_items} items over {len(plan.topics)} (query, entity) pairs."
    st.session_state[CREATED] = [("success", done)]
    st.session_state.pop(PREVIEW, None)
    st.session_state[GENERATION] = int(st.session_state.get(GENERATION, 0)) + 1  # a cleared form
    st.session_state[JUST_CREATED] = info.name  # selected below, so every action acts on it
    st.rerun()  # list and select the new session


def guidelines_editor(store: JudgmentStore, admin: Admin, session: str) -> None:
    """Edit the guidelines of ``session`` after its creation (annotators see the change at their next
    run); the form names the session it acts on."""
    with (
        st.expander(f"Guidelines of session {md(repr(session))}", expanded=False),
        st.form(f"admin_guidelines_form_{session}", enter_to_submit=False, border=False),
    ):
        text = st.text_area("Guidelines (shown to the annotators as written)", value=store.guidelines(session),
                            max_chars=MAX_GUIDELINES, height=150, key=f"admin_guidelines_{session}")
        saved = st.form_submit_button(f"Save the guidelines of {md(repr(session))}") and guarded(
            "save the guidelines", set_guidelines, admin, session, text
        ) is not None
        if saved:
            st.success(f"Saved the guidelines of session {md(repr(session))}.")
