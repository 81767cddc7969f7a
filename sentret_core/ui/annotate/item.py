"""The Annotate page's item: its query, entity and sentence highlighted, and the sentence's context."""

from __future__ import annotations

import re

import streamlit as st

from sentret_core.annotation.records import GRADE_LABELS, ItemView
from sentret_core.annotation.topics import split_entity_key
from sentret_core.defaults import DEFAULT_WINDOW
from sentret_core.errors import SentretError
from sentret_core.index.reader import Index
from sentret_core.ui.annotate.keys import CONTEXT
from sentret_core.ui.highlight import Span, highlight
from sentret_core.ui.judgments import session_index
from sentret_core.ui.render import sentence_html
from sentret_core.ui.text import html_text, show_html


def show_item(index_path: str, item: ItemView, current: int | None, revisiting: bool, narrative: str = ""
              ) -> Index | None:
    """The item's query, entity, the topic's narrative (what it asks, when the admin wrote one) and sentence
    (highlighted); the session's index if it is available."""
    text, label = split_entity_key(item.entity)
    index = session_index(index_path)
    if index is not None and not _same_sentence(index, item):
        index = None  # not the index the session was pooled from: use the snapshot
    where = f"Item {item.position + 1}" + (" · revisiting" if revisiting else "")
    if current is not None:
        where += f" · your grade: **{current}** ({GRADE_LABELS[current]})"
    st.caption(where)
    shown = f"{html_text(text)} <small>({html_text(label)})</small>" if label else html_text(text)
    show_html(
        f'<div class="annotate-topic"><p><b>Query</b> &nbsp; {html_text(item.query)}</p>'
        f"<p><b>Entity</b> &nbsp; {shown}</p>"
        + (f'<p class="annotate-narrative"><b>What it asks</b> &nbsp; {html_text(narrative)}</p>' if narrative else "")
        + "</div>"
    )
    body = _sentence(index, item) if index is not None else _snapshot_html(item)
    title = f"<small><i>{html_text(item.title)}</i></small>" if item.title else ""
    show_html(
        f'<div class="annotate-sentence" style="font-size:1.25em;line-height:1.7;padding:0.6em 0.9em;'
        f'border-left:4px solid #999;background:rgba(128,128,128,0.06)">{title}<p>{body}</p></div>'
    )
    return index


def show_context(index: Index | None, item: ItemView) -> None:
    """The sentences around the item's, behind a toggle (key t)."""
    if st.toggle("Show context (t)", key=CONTEXT):
        if index is None:
            st.info("The index this session was pooled from is not available: no context to show.")
        else:
            show_html(_context_html(index, item))


def _same_sentence(index: Index, item: ItemView) -> bool:
    return 0 <= item.sentence_id < index.N and index.texts[item.sentence_id] == item.text


def _sentence(index: Index, item: ItemView) -> str:
    from sentret_core.models.core.query import normalise

    text, label = split_entity_key(item.entity)
    entity = index.entity_index.get((text, label)) if label else None
    try:
        terms = list(normalise(index, item.query))
    except SentretError:
        terms = []
    return sentence_html(index, item.sentence_id, terms, entity)


def _snapshot_html(item: ItemView) -> str:
    """Without the index: the snapshot text, the entity's text and the query's words marked."""
    text, label = split_entity_key(item.entity)
    sentence = item.text
    spans = []
    focus = None
    for match in re.finditer(re.escape(text), sentence, flags=re.IGNORECASE) if text else ():
        span = Span(match.start(), match.end(), label or "ENTITY")
        focus = focus or span
        if span != focus:
            spans.append(span)
    words = {w.casefold() for w in re.findall(r"\w{3,}", item.query)}
    for match in re.finditer(r"\w+", sentence):
        if match.group().casefold() in words:
            spans.append(Span(match.start(), match.end()))
    return highlight(sentence, spans, focus)


def _context_html(index: Index, item: ItemView) -> str:
    around = index.neighbours(item.sentence_id, DEFAULT_WINDOW)
    parts = []
    for n in around.tolist():
        if n == item.sentence_id:
            parts.append(f"<p><b>{html_text(index.texts[n])}</b></p>")
        else:
            parts.append(f"<p style='color:#6b7280'>{html_text(index.texts[n])}</p>")
    return "".join(parts)
