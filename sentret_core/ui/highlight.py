"""Sentences as safe HTML: entities in their label's colours, query terms marked.

Every character of corpus text is escaped here (:func:`~sentret_core.ui.text.html_text`), so a
sentence holding ``<script>``, ``<img onerror=…>`` or a Markdown image shows as text wherever the
pages draw this with :func:`~sentret_core.ui.text.show_html`. Each highlight states its background
and its text colour (light theme inline; :mod:`sentret_core.ui.theme` swaps both for dark).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import NamedTuple

from sentret_core.ui.text import html_text
from sentret_core.ui.theme import FOCUS, LIGHT_BACKGROUNDS, label_pair

LABEL_COLORS = LIGHT_BACKGROUNDS
LABEL_STYLE = "font-size:0.65em;font-weight:bold;margin-left:0.2em"


class Span(NamedTuple):
    """A character span of a sentence: an entity (with its label) or a query term (label "")."""

    start: int
    end: int
    label: str = ""

    @property
    def is_entity(self) -> bool:
        return bool(self.label)


def label_color(label: str) -> str:
    """The label's highlight background in the light theme."""
    return label_pair(label).background


def entity_open(label: str, focused: bool = False) -> str:
    """The opening tag of an entity's highlight: its label's background and text colour, outlined when ``focused``."""
    pair = label_pair(label)
    outline = f"box-shadow:0 0 0 2px {FOCUS['light']};" if focused else ""
    style = f"background:{pair.background};color:{pair.text};border-radius:0.3em;padding:0 0.15em;{outline}"
    css_class = "entity focus" if focused else "entity"
    return f'<span class="{css_class}" data-label="{html_text(label)}" style="{style}">'


def highlight(text: str, spans: Iterable[Span], focus: Span | None = None) -> str:
    """``text`` as HTML with entity spans coloured and term spans in ``<mark>``.

    Spans may overlap (a query term inside an entity); the text is cut at every span boundary,
    each piece marked when a term covers it, and the pieces of one entity drawn inside one
    highlight (so the space between two marked words is not a box of its own). ``focus`` (an
    entity span) gets an outline, for the entity a support sentence is about.
    """
    spans = [s for s in spans if 0 <= s.start < s.end <= len(text)]
    if focus is not None:
        spans.append(focus)
    cuts = sorted({0, len(text), *(s.start for s in spans), *(s.end for s in spans)})
    pieces: list[tuple[Span | None, str]] = []
    for lo, hi in itertools.pairwise(cuts):
        piece = html_text(text[lo:hi])
        covering = [s for s in spans if s.start <= lo and hi <= s.end]
        if any(not s.is_entity for s in covering):
            piece = f'<mark class="term">{piece}</mark>'
        pieces.append((next((s for s in covering if s.is_entity), None), piece))
    out: list[str] = []
    for entity, group in itertools.groupby(pieces, key=lambda p: p[0]):
        inner = "".join(piece for _, piece in group)
        if entity is None:
            out.append(inner)
            continue
        focused = focus is not None and entity == focus
        label = f'<sub class="label" style="{LABEL_STYLE}">{html_text(entity.label)}</sub>'
        out.append(f"{entity_open(entity.label, focused)}{inner}{label}</span>")
    return "".join(out)
