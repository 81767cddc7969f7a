"""Explore and How it works in a given colour scheme and window width: open, measure, screenshot.

Shared by tests/browser/test_layout.py (a small index of its own) and benchmarks/screenshots.py
(the demo index, writing docs/screenshots/). Chromium emulates ``prefers-color-scheme``; the
measurements are element boxes read in the page with JavaScript.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote_plus

from tests.browser_util import screenshot, wait_until_idle

PAGES = {"explore": "explore", "how-it-works": "how-it-works"}
WIDTHS = (800, 1400)
SCHEMES = ("light", "dark")
KEY_COLUMNS = 3  # rank, entity and the chosen score stay in view on a narrow window
SIDEBAR_FOLDS_AT = 1100  # px: at this width and below the sidebar starts folded

SETTLED_JS = """(want) => {
  const bar = document.querySelector('[data-testid="stSidebar"]');
  const folded = bar ? bar.getAttribute("data-collapsed") === "true" : true;
  return folded === want.folded && document.fonts.status === "loaded"
    && document.querySelector("span.entity") !== null
    && (!want.formulas || document.querySelector(".katex-display") !== null);
}"""

MEASURE_JS = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
                                                                      width: r.width, height: r.height}; };
  const main = document.querySelector('[data-testid="stMain"]');
  const bar = document.querySelector('[data-testid="stSidebar"]');
  const out = {
    width: window.innerWidth,
    sidebarCollapsed: bar ? bar.getAttribute("data-collapsed") === "true" : true,
    pageScrollWidth: document.documentElement.scrollWidth,
    mainScrollWidth: main.scrollWidth, mainClientWidth: main.clientWidth, mainHeight: main.scrollHeight,
    appBackground: getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor,
  };
  const table = document.querySelector("table.sentret-entities");
  if (table) {
    out.tableBox = box(table.parentElement);
    out.headers = [...table.querySelectorAll("th")].map((th) => ({text: th.textContent, title: th.title, ...box(th)}));
  }
  out.formulas = [...document.querySelectorAll(".katex-display")].map((k) => ({
    ...box(k), parentRight: k.parentElement.getBoundingClientRect().right}));
  out.highlights = [...document.querySelectorAll("span.entity")].map((s) => {
    const style = getComputedStyle(s);
    return {label: s.dataset.label, background: style.backgroundColor, color: style.color,
            focus: s.classList.contains("focus"), shadow: style.boxShadow};
  });
  return out;
}"""


def view_url(base: str, page: str, query: str) -> str:
    return f"{base}/{PAGES[page]}?q={quote_plus(query)}"


def open_view(browser: Any, base: str, page: str, query: str, scheme: str, width: int, height: int = 900,
              zoom: float = 1.0) -> tuple[Any, Any]:
    """A new browser context in ``scheme`` at ``width`` × ``height`` CSS px (``zoom``: device pixels per CSS
    px, as a browser zoomed to 125 % has 1.25) showing ``page`` for ``query``, idle; (context, page)."""
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme,
                                  device_scale_factor=zoom)
    tab = context.new_page()
    tab.set_default_timeout(60_000)
    tab.goto(view_url(base, page, query), wait_until="domcontentloaded")
    marker = "table.sentret-entities" if page == "explore" else "table.sentret-ranking"
    tab.wait_for_selector(marker, timeout=120_000)
    wait_until_idle(tab, 120_000)
    # settled: the sidebar folded as the width asks (Streamlit folds it below 1100 px), fonts loaded, the
    # entities highlighted and, on How it works, the formulas drawn — waited for, however slow the machine
    tab.wait_for_function(SETTLED_JS, arg={"folded": width <= SIDEBAR_FOLDS_AT, "formulas": page == "how-it-works"},
                          timeout=120_000)
    wait_until_idle(tab, 120_000)
    return context, tab


def measure(tab: Any) -> dict[str, Any]:
    return dict(tab.evaluate(MEASURE_JS))


def shoot(tab: Any, page: str, scheme: str, width: int, prefix: str = "") -> str:
    """The whole page as ``<prefix><page>-<scheme>-<width>.png`` in browser_util's screenshot folder."""
    return str(screenshot(tab, f"{prefix}{page}-{scheme}-{width}.png"))
