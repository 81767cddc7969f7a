"""Drawing helpers shared by pages: sentences with their entities and query terms highlighted."""

from __future__ import annotations

import numpy as np

from sentret_core.index.reader import Index
from sentret_core.support.records import SupportSentence
from sentret_core.ui.highlight import Span, highlight


def entity_spans(index: Index, sentence: int) -> list[Span]:
    labels = index.entity_labels
    return [Span(a, b, labels[e]) for e, a, b in index.mention_spans(sentence)]


def term_spans(index: Index, sentence: int, terms: list[str]) -> list[Span]:
    ids = index.term_ids(terms)
    hit = np.isin(index.occurrences("seq_terms", sentence), ids[ids >= 0])
    starts, ends = index.occurrences("seq_char_start", sentence)[hit], index.occurrences("seq_char_end", sentence)[hit]
    return [Span(int(a), int(b)) for a, b in zip(starts, ends)]


def sentence_html(
    index: Index, sentence: int, terms: list[str] | None = None, entity: int | None = None
) -> str:
    """The sentence as safe HTML: entities coloured, ``terms`` marked, ``entity`` outlined."""
    spans = entity_spans(index, sentence)
    if terms:
        spans += term_spans(index, sentence, terms)
    focus = None
    if entity is not None:
        found = index.mention_spans(sentence, entity)
        if found:
            focus = Span(found[0][1], found[0][2], index.entity_labels[entity])
    return highlight(index.texts[sentence], spans, focus)


def support_html(index: Index, s: SupportSentence, entity: int) -> str:
    """A support sentence as safe HTML: its entities coloured, query terms marked, ``entity`` outlined."""
    labels = index.entity_labels
    spans = [Span(a, b, labels[e]) for e, a, b in index.mention_spans(s.sentence)]
    spans += [Span(a, b) for a, b in s.term_spans]
    focus = next((Span(a, b, labels[entity]) for a, b in s.entity_spans), None)
    return highlight(s.text, spans, focus)


def shorten(text: str, n: int = 90) -> str:
    """``text`` cut to ``n`` characters, an ellipsis marking the cut."""
    return text if len(text) <= n else text[: n - 1] + "…"
