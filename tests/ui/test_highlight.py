"""Highlighting: corpus text is always escaped; entity and term spans nest correctly."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sentret_core.ui.highlight import Span, highlight, label_color


def test_entities_coloured_terms_marked_and_nested() -> None:
    text = "Franco led the Nationalists."
    html = highlight(text, [Span(0, 6, "PERSON"), Span(0, 6), Span(11, 14)])
    assert html.startswith(f'<span class="entity" data-label="PERSON" style="background:{label_color("PERSON")};')
    assert '<mark class="term">Franco</mark><sub class="label"' in html and html.count("</sub></span>") == 1
    assert 'led <mark class="term">the</mark> Nationalists.' in html


def test_markup_in_corpus_text_stays_text() -> None:
    text = 'Evil <script>alert(1)</script> and <img src=x onerror="alert(2)"> here.'
    html = highlight(text, [Span(0, 4, "ORG"), Span(5, 13)])
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in html


def test_focus_entity_is_outlined() -> None:
    html = highlight("Picasso and peace", [Span(0, 7, "PERSON")], focus=Span(0, 7, "PERSON"))
    assert "box-shadow" in html


def test_terms_inside_one_entity_share_one_highlight() -> None:
    # "Spanish Civil War" with each word a query term: one entity span around three marks and the two
    # spaces between them, not a separate (empty-looking) padded box for each space
    text = "The Spanish Civil War began."
    terms = [Span(4, 11), Span(12, 17), Span(18, 21)]
    html = highlight(text, [Span(4, 21, "EVENT"), *terms])
    assert html.count('<span class="entity"') == 1
    inner = html.split('style="', 2)[1].split('">', 1)[1].split("<sub")[0]
    assert inner == '<mark class="term">Spanish</mark> <mark class="term">Civil</mark> <mark class="term">War</mark>'


@given(
    st.text(max_size=40),
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.booleans()), max_size=5),
)
def test_text_survives_any_spans(text: str, raw: list[tuple[int, int, bool]]) -> None:
    import html as html_lib
    import re

    spans = [Span(a, b, "GPE" if ent else "") for a, b, ent in raw]
    rendered = highlight(text, spans)
    no_labels = re.sub(r"<sub[^>]*>.*?</sub>", "", rendered)
    assert html_lib.unescape(re.sub(r"<[^>]+>", "", no_labels)) == text
