"""Corpus: what the loaded index holds, a picker of indexes, and a document browser."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from sentret_core.index.overview import document_sentences, entity_table, overview
from sentret_core.index.reader import Index
from sentret_core.ui.render import sentence_html
from sentret_core.ui.state import available_indexes, credit, current_index, current_index_path, page_setup
from sentret_core.ui.text import md, show_html

MAX_TITLES = 300


def render() -> None:
    page_setup("Corpus")
    choose_index()
    index = current_index()
    if index is None:
        upload_section()
        return
    info = overview(index, top=10)
    counts = info["counts"]
    cols = st.columns(5)
    for col, key in zip(cols, ("documents", "sentences", "words", "terms", "entities")):
        col.metric(key.capitalize(), f"{counts[key]:,}")
    st.caption(
        f"Index {md(info['path'])} · spaCy pipeline {md(info['model'])} · built {md(info['created'])} · "
        f"mean sentence length {info['avsl']:.1f} terms"
    )
    credit(index)

    labels = pd.DataFrame(
        [
            {"label": k, "entities": v["entities"], "mentions": v["mentions"]}
            for k, v in info["labels"].items()
        ]
    )
    left, right = st.columns(2)
    with left:
        st.subheader("Entities per label")
        st.bar_chart(labels, x="label", y="entities", horizontal=True)
    with right:
        st.subheader("Most frequent entities")
        label = st.selectbox("Label", ["all", *labels["label"]], key="corpus_label")
        table = entity_table(index)
        if label != "all":
            table = table[table["label"] == label]
        st.dataframe(table.head(50).rename(columns={"sf": "sentences"}), hide_index=True, width="stretch")

    st.subheader("Documents")
    browse_documents(index)
    upload_section()


def choose_index() -> None:
    options = available_indexes()
    current = current_index_path()
    if not options:
        return
    labels = [str(p) for p in options]
    position = labels.index(str(current)) if str(current) in labels else 0
    chosen = st.selectbox("Index", labels, index=position, help="Indexes found under data/indexes/")
    if chosen != str(current):
        st.session_state["index_path"] = chosen
        st.rerun()


def browse_documents(index: Index) -> None:
    query = st.text_input("Find a document by title", key="corpus_find")
    titles = index.titles
    matches = (
        [i for i, t in enumerate(titles) if query.lower() in t.lower()] if query else list(range(len(titles)))
    )
    if not matches:
        st.warning(f"No document title contains {md(repr(query))}.")
        return
    shown = matches[:MAX_TITLES]
    doc = st.selectbox(
        f"Document ({len(matches):,} match{'es' if len(matches) != 1 else ''}"
        f"{', first ' + str(MAX_TITLES) + ' listed' if len(matches) > MAX_TITLES else ''})",
        shown,
        format_func=lambda i: titles[i],
        key="corpus_doc",
    )
    sentences = document_sentences(index, shown[0] if doc is None else doc)
    html_rows = [
        f'<p class="sentence"><small>[{position}]</small> {sentence_html(index, sentence)}</p>'
        for sentence, position in zip(sentences["sentence"], sentences["position"])
    ]
    show_html("".join(html_rows))


def upload_section() -> None:
    """Upload documents and build a new index from them (sentret_core.ui.upload)."""
    from sentret_core.ui.upload import render_upload

    st.divider()
    render_upload()
