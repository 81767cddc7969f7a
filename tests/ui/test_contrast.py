"""Highlights hold contrast in light and dark: WCAG 2.x contrast of every colour pair.

WCAG 2.x relative luminance: each sRGB channel c (0-1) is linearised as c/12.92 when c ≤ 0.04045,
else ((c + 0.055)/1.055)^2.4; L = 0.2126 R + 0.7152 G + 0.0722 B; the contrast of two colours is
(L_lighter + 0.05) / (L_darker + 0.05). AA asks 4.5:1 for text, 3:1 for a non-text outline (1.4.11).
"""

from __future__ import annotations

import re

import pytest

from sentret_core.ui.highlight import Span, highlight
from sentret_core.ui.theme import (
    BAR,
    DARK_BACKGROUNDS,
    FOCUS,
    LIGHT_BACKGROUNDS,
    PAGE,
    TERM,
    THEMES,
    label_pair,
    stylesheet,
)

# every label spaCy's English models give, and one it does not (the default colours)
LABELS = sorted({*LIGHT_BACKGROUNDS, *DARK_BACKGROUNDS, "SOMETHING_ELSE"})


def luminance(colour: str) -> float:
    hex_digits = colour.lstrip("#")
    if len(hex_digits) == 3:
        hex_digits = "".join(ch * 2 for ch in hex_digits)
    channels = [int(hex_digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_formula_on_known_pairs() -> None:
    # black on white: (1 + 0.05) / (0 + 0.05) = 21; a colour on itself: 1
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#777777") == pytest.approx(1.0)
    # #777777: c = 0x77/255 = 0.4667 → ((0.4667 + 0.055)/1.055)^2.4 = 0.1845; (1.05)/(0.2345) = 4.48, just under AA
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("label", LABELS)
def test_every_label_reads_at_aa_in_both_themes(label: str, theme: str) -> None:
    pair = label_pair(label, theme)
    assert contrast(pair.background, pair.text) >= 4.5, (label, theme, pair)


@pytest.mark.parametrize("theme", THEMES)
def test_query_terms_and_the_outline_hold_contrast(theme: str) -> None:
    assert contrast(TERM[theme].background, TERM[theme].text) >= 4.5
    assert contrast(FOCUS[theme], PAGE[theme]) >= 3.0  # the outline shows on the page around it
    assert contrast(BAR[theme], PAGE[theme]) >= 3.0  # the entity table's score bars
    for label in LABELS:  # ... and against the highlight it surrounds
        assert contrast(FOCUS[theme], label_pair(label, theme).background) >= 3.0, (label, theme)


def test_the_old_dark_mode_failure_is_caught() -> None:
    # the bug: a pastel displaCy background kept while dark mode turns the text white (#fafafa)
    assert contrast(LIGHT_BACKGROUNDS["PERSON"], "#fafafa") < 4.5


def test_every_highlight_states_its_text_colour_too() -> None:
    html = highlight("Franco led Spain.", [Span(0, 6, "PERSON"), Span(11, 16, "GPE")], focus=Span(0, 6, "PERSON"))
    styles = re.findall(r'<span class="entity[^"]*" data-label="[A-Z]+" style="([^"]*)"', html)
    assert len(styles) == 2
    for style in styles:
        background = re.search(r"background:(#[0-9a-f]{6})", style)
        text = re.search(r"(?<![-a-z])color:(#[0-9a-f]{6})", style)
        assert background and text, style
        assert contrast(background.group(1), text.group(1)) >= 4.5


def test_the_stylesheet_gives_each_label_its_dark_pair_under_prefers_dark() -> None:
    css = stylesheet()
    dark = css[css.index("@media (prefers-color-scheme: dark)") :]
    for label in LIGHT_BACKGROUNDS:
        pair = label_pair(label, "dark")
        assert f'span.entity[data-label="{label}"]{{background:{pair.background}!important;color:{pair.text}' in dark
    # Streamlit reporting dark (the user chose it in its settings) gives the dark pairs whatever the OS says
    reported = stylesheet("dark")
    assert reported.rindex(f"background:{label_pair('PERSON', 'dark').background}") > reported.rindex(
        f"background:{label_pair('PERSON', 'light').background}"
    )
