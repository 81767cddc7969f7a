"""Both themes at two widths, in a real browser: Explore and How it works at 800 and 1400 px,
Chromium emulating ``prefers-color-scheme`` light and dark, on a small index built here.

At 800 px the sidebar is folded away, the page never scrolls sideways, the entity table's rank,
entity and chosen-score columns are inside the window (the rest scroll in the table's own box),
formulas fit their box, and How it works stays a readable height. In both themes every entity
highlight's computed colours reach WCAG AA (4.5:1) and the chosen entity's outline shows on the
page (3:1). Screenshots (small-<page>-<scheme>-<width>.png) go to browser_util's folder
($SENTRET_SCREENSHOTS; scratch by default); benchmarks/screenshots.py makes docs/screenshots/'s from the demo.
Skipped when /usr/bin/chromium is absent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser_util import Server
from tests.layout_views import KEY_COLUMNS, SCHEMES, SIDEBAR_FOLDS_AT, WIDTHS, measure, open_view, shoot
from tests.ui.test_contrast import contrast

sync_api = pytest.importorskip("playwright.sync_api", reason="the Playwright package is not installed")

QUERY = "Spanish Civil War"
PREFIX = "small-"  # docs/screenshots/ holds the demo's (benchmarks/screenshots.py): never overwrite them
PROJECTOR = (1093, 614)  # CSS px of a 1366 × 768 screen at 125 % zoom
MAX_HOWTO_HEIGHT = 4000  # px at 800 px wide: it was 4,900 with the sidebar open and columns squeezed


def hex_of(css: str) -> str:
    """``rgb(r, g, b)`` (a computed colour) as ``#rrggbb``."""
    r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def check_common(seen: dict[str, Any], scheme: str, width: int) -> None:
    assert seen["sidebarCollapsed"] == (width <= SIDEBAR_FOLDS_AT), seen["sidebarCollapsed"]
    assert seen["pageScrollWidth"] <= seen["width"], "the page scrolls sideways"
    assert seen["mainScrollWidth"] <= seen["mainClientWidth"] + 1, "the main area runs off to the right"
    background = hex_of(seen["appBackground"])
    assert (contrast(background, "#000000") > contrast(background, "#ffffff")) == (scheme == "light"), background
    assert seen["highlights"], "no entity highlight on the page"
    for chip in seen["highlights"]:
        ratio = contrast(hex_of(chip["background"]), hex_of(chip["color"]))
        assert ratio >= 4.5, (scheme, chip)
        if chip["focus"]:  # the outline's colour is the first colour of its box-shadow
            assert contrast(hex_of(chip["shadow"]), background) >= 3.0, (scheme, chip)
    for formula in seen["formulas"]:
        assert formula["right"] <= min(formula["parentRight"], seen["width"]) + 1, formula


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("width", WIDTHS)
def test_explore_keeps_its_key_columns_in_view(small_server: Server, browser: Any, scheme: str, width: int) -> None:
    context, tab = open_view(browser, small_server.url, "explore", QUERY, scheme, width)
    try:
        seen = measure(tab)
        check_common(seen, scheme, width)
        headers = seen["headers"]
        assert [h["text"] for h in headers[:KEY_COLUMNS]] == ["rank", "entity", "KLD ↓"]
        names = [h["text"] for h in headers]
        assert len(names) == len(set(names)), f"two columns share a name: {names}"
        assert all(h["title"] for h in headers), "a header without a tooltip"
        table = seen["tableBox"]
        for header in headers[:KEY_COLUMNS]:
            assert table["left"] - 1 <= header["left"] and header["right"] <= min(table["right"], seen["width"]) + 1
        assert any(c["focus"] for c in seen["highlights"]), "the chosen entity is not outlined"
        assert Path(shoot(tab, "explore", scheme, width, PREFIX)).stat().st_size > 10_000
    finally:
        context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("width", WIDTHS)
def test_how_it_works_stays_readable(small_server: Server, browser: Any, scheme: str, width: int) -> None:
    context, tab = open_view(browser, small_server.url, "how-it-works", QUERY, scheme, width)
    try:
        seen = measure(tab)
        check_common(seen, scheme, width)
        assert seen["formulas"], "no formula drawn"
        assert seen["mainHeight"] <= MAX_HOWTO_HEIGHT, seen["mainHeight"]
        assert Path(shoot(tab, "how-it-works", scheme, width, PREFIX)).stat().st_size > 10_000
    finally:
        context.close()



def test_how_it_works_shows_its_controls_on_a_projectors_first_screen(small_server: Server, browser: Any) -> None:
    """A 1366 × 768 projector at 125 % zoom is 1093 × 614 CSS px: the model's formula, its first parameter
    and the ranking's first rows are all on the first screen, without scrolling."""
    width, height = PROJECTOR
    context, tab = open_view(browser, small_server.url, "how-it-works", QUERY, "light", width, height, zoom=1.25)
    try:
        slider = tab.locator('[data-testid="stSlider"]').first.bounding_box()
        formula = tab.locator(".katex").first.bounding_box()
        first_row = tab.locator("table.sentret-ranking tbody tr").first.bounding_box()
        shoot(tab, "how-it-works", "light", width, PREFIX + "projector-")
        for what, box in (("the first parameter", slider), ("the formula", formula),
                          ("the first ranked row", first_row)):
            assert box is not None and box["y"] + box["height"] <= height, (what, box)
    finally:
        context.close()
