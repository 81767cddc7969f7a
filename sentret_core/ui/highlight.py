"""Sentences as safe HTML: entities in displaCy's label colours, query terms marked.

Every character of corpus text is escaped here (:func:`~sentret_core.ui.text.html_text`), so a
sentence holding ``<script>``, ``<img onerror=…>`` or a Markdown image shows as text wherever the
pages draw this with :func:`~sentret_core.ui.text.show_html`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import NamedTuple

from sentret_core.ui.text import html_text

# spaCy's displaCy palette (spacy/displacy/render.py), so labels look as they do in spaCy's own views.
LABEL_COLORS = {
    "ORG": "#7aecec",
    "PRODUCT": "#bfeeb7",
    "GPE": "#feca74",
    "LOC": "#ff9561",
    "PERSON": "#aa9cfc",
    "NORP": "#c887fb",
    "FAC": "#9cc9cc",
    "EVENT": "#ffeb80",
    "LAW": "#ff8197",
    "LANGUAGE": "#ff8197",
    "WORK_OF_ART": "#f0d0ff",
    "DATE": "#bfe1d9",
    "TIME": "#bfe1d9",
    "MONEY": "#e4e7d2",
    "QUANTITY": "#e4e7d2",
    "ORDINAL": "#e4e7d2",
    "CARDINAL": "#e4e7d2",
    "PERCENT": "#e4e7d2",
}
DEFAULT_COLOR = "#ddd"
LABEL_STYLE = "font-size:0.65em;font-weight:bold"


class Span(NamedTuple):
    """A character span of a sentence: an entity (with its label) or a query term (label "")."""

    start: int
    end: int
    label: str = ""

    @property
    def is_entity(self) -> bool:
        return bool(self.label)


def label_color(label: str) -> str:
    return LABEL_COLORS.get(label, DEFAULT_COLOR)


def highlight(text: str, spans: Iterable[Span], focus: Span | None = None) -> str:
    """``text`` as HTML with entity spans coloured and term spans in ``<mark>``.

    Spans may overlap (a query term inside an entity); the text is cut at every span
    boundary and each piece styled by what covers it. ``focus`` (an entity span) gets a
    stronger outline, for the entity a support sentence is about.
    """
    spans = [s for s in spans if 0 <= s.start < s.end <= len(text)]
    if focus is not None:
        spans.append(focus)
    cuts = sorted({0, len(text), *(s.start for s in spans), *(s.end for s in spans)})
    out: list[str] = []
    for lo, hi in itertools.pairwise(cuts):
        piece = html_text(text[lo:hi])
        covering = [s for s in spans if s.start <= lo and hi <= s.end]
        entity = next((s for s in covering if s.is_entity), None)
        if any(not s.is_entity for s in covering):
            piece = f'<mark class="term">{piece}</mark>'
        if entity is not None:
            outline = "box-shadow:0 0 0 2px #333;" if focus is not None and entity == focus else ""
            style = f"background:{label_color(entity.label)};border-radius:0.3em;padding:0 0.15em;{outline}"
            piece = f'<span class="entity" style="{style}">{piece}</span>'
            if hi == entity.end:
                piece += f'<sub class="label" style="{LABEL_STYLE}">{html_text(entity.label)}</sub>'
        out.append(piece)
    return "".join(out)
