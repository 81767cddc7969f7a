"""The Admin page's "Create a session" form: a name, the topics (an editable table, a TSV file, the
Explore page's query) and the pooling settings.

Everything sits in one ``st.form``: typing, Tab and Enter run nothing (Enter does not submit
either), so no rerun can collapse the expander or clear a field while the admin is still filling
it in; only "Create session" sends the form. Topics are (query, entity) rows; a row without an
entity stands for the query's top entities. A TSV file holds one ``query<TAB>entity`` per line
(the entity optional; a ``query<TAB>entity`` header, blank and ``#`` lines are skipped).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.topics import DEFAULT_DEPTH, DEFAULT_TOP_ENTITIES, TopicLine, parse_topics
from sentret_core.defaults import DEFAULT_SUPPORT_MODELS
from sentret_core.errors import SentretError
from sentret_core.ui.pages.explore import model_title, support_models
from sentret_core.ui.state import EXPLORE_QUERY, current_index, current_index_path, guarded, uploaded_text
from sentret_core.ui.text import md

FORM = "admin_create_form"
TABLE = "admin_topics_table"
FILE = "admin_topics_file"
CREATED = "admin_form_created"  # messages about the session just created, shown after the rerun
COLUMNS = ("query", "entity")


def create_session_form(store: JudgmentStore) -> None:
    """The messages about the session just created, then the form in an expander (open while
    there is no session)."""
    for kind, message in st.session_state.pop(CREATED, []):
        (st.success if kind == "success" else st.warning)(message)
    with st.expander("Create a session", expanded=not store.sessions(), key="admin_create_open"):
        values = _form()
        if values is not None:
            _create(store, **values)


def _form() -> dict[str, Any] | None:
    """The form's widgets; their values once "Create session" is pressed, else None."""
    explore = str(st.session_state.get(EXPLORE_QUERY, "") or "")
    with st.form(FORM, enter_to_submit=False, border=False):
        name = st.text_input("Session name", key="admin_new_name")
        st.markdown("**Topics** — one (query, entity) per row; leave the entity empty for the query's top "
                    "entities. An entity is `text|LABEL` (e.g. `Picasso|PERSON`) or its text.")  # fmt: skip
        table = st.data_editor(
            pd.DataFrame({c: pd.Series(dtype="string") for c in COLUMNS}),
            key=TABLE,
            num_rows="dynamic",
            hide_index=True,
            width="stretch",
            column_config={
                "query": st.column_config.TextColumn("query", width="large"),
                "entity": st.column_config.TextColumn("entity (optional)", width="medium"),
            },
        )
        upload = st.file_uploader("…and/or a topics file (TSV): a query, a tab and an entity per line; "
                                  "the tab and entity are optional", type=["tsv", "txt"], key=FILE)  # fmt: skip
        add_explore = st.checkbox(
            f"Add the Explore page's query ({md(explore)})"
            if explore
            else "Add the Explore page's query (none yet: run one there first)",
            key="admin_from_explore",
            disabled=not explore,
        )
        c1, c2, c3 = st.columns(3)
        depth = c1.number_input("Pool depth (top-n per model)", 1, 1000, DEFAULT_DEPTH, key="admin_depth")
        top = c2.number_input("Top entities per query without an entity", 1, 100, DEFAULT_TOP_ENTITIES,
                              key="admin_top_entities")  # fmt: skip
        seed = c3.number_input("Shuffle seed", 0, 2**31 - 1, 0, key="admin_seed")
        models = st.multiselect("Pooling models", support_models(), default=list(DEFAULT_SUPPORT_MODELS),
                                key="admin_models", format_func=model_title)  # fmt: skip
        st.caption(f"Index: {md(str(current_index_path()))} (choose another on the Corpus page)")
        if not st.form_submit_button("Create session", type="primary", key="admin_create"):
            return None
    return {"name": name, "table": table, "upload": upload, "explore": explore if add_explore else "",
            "models": models, "depth": int(depth), "top": int(top), "seed": int(seed)}  # fmt: skip


def table_topics(table: pd.DataFrame) -> list[TopicLine]:
    """The topics of the table's rows (1-based row numbers); empty rows skipped, repeats dropped."""
    found: dict[tuple[str, str | None], TopicLine] = {}
    rows = table.reindex(columns=list(COLUMNS)).itertuples(index=False)
    for number, (query, entity) in enumerate(rows, start=1):
        query, entity = _cell(query), _cell(entity)
        if not query and not entity:
            continue
        if not query:
            raise SentretError(f"topics table row {number}: the query is empty (entity {entity!r})")
        found.setdefault((query, entity or None), TopicLine(query, entity or None, number))
    return list(found.values())


def file_topics(text: str) -> list[TopicLine]:
    """The topics of a TSV file's text (:func:`~sentret_core.annotation.topics.parse_topics`), after
    an optional ``query<TAB>entity`` header line."""
    lines = text.splitlines()
    if lines and [c.strip().casefold() for c in lines[0].split("\t")] in (["query"], ["query", "entity"]):
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


def _create(store: JudgmentStore, *, name: str, table: pd.DataFrame, upload: Any, explore: str,
            models: list[str], depth: int, top: int, seed: int) -> None:  # fmt: skip
    topics = guarded("read the topics", all_topics, table, upload, explore)
    if topics is None:
        return
    index = current_index()
    if index is None:
        return
    created = guarded("create the session", create_session, store, name, index, topics,
                      models=models, depth=depth, seed=seed, top_entities=top)  # fmt: skip
    if created is None:
        return
    info, plan = created
    done = f"Created session {md(repr(info.name))}: {info.n_items} items over {len(plan.topics)} (query, entity) pairs."
    st.session_state[CREATED] = [("success", done)] + [("warning", f"Left out: {md(n)}") for n in plan.notes]
    st.rerun()  # list the new session
