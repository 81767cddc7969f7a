"""Colours that hold contrast in light and dark, and the page CSS for both themes and narrow screens.

Every highlight carries both its background and its text colour (never one without the other), so
it stays readable on any page background; the light pair is inline, the dark pair comes from
:func:`stylesheet`, chosen by ``prefers-color-scheme`` (Streamlit follows the OS by default) or by
the theme Streamlit reports. The test computes WCAG 2.x contrast (≥ 4.5:1) for every pair below.
"""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st


class Pair(NamedTuple):
    """A highlight's colours: its background and the text on it."""

    background: str
    text: str


DARK_TEXT = "#111827"
LIGHT_TEXT = "#f9fafb"
# Streamlit's own page backgrounds (its default light and dark themes), for the outline's contrast
PAGE = {"light": "#ffffff", "dark": "#0e1117"}
# spaCy's displaCy palette (spacy/displacy/render.py) in light, so labels look as they do in spaCy's views;
# in dark, deep shades of the same hues under light text.
LIGHT_BACKGROUNDS = {
    "ORG": "#7aecec", "PRODUCT": "#bfeeb7", "GPE": "#feca74", "LOC": "#ff9561", "PERSON": "#aa9cfc",
    "NORP": "#c887fb", "FAC": "#9cc9cc", "EVENT": "#ffeb80", "LAW": "#ff8197", "LANGUAGE": "#ff8197",
    "WORK_OF_ART": "#f0d0ff", "DATE": "#bfe1d9", "TIME": "#bfe1d9", "MONEY": "#e4e7d2", "QUANTITY": "#e4e7d2",
    "ORDINAL": "#e4e7d2", "CARDINAL": "#e4e7d2", "PERCENT": "#e4e7d2",
}
DARK_BACKGROUNDS = {
    "ORG": "#115e59", "PRODUCT": "#3f6212", "GPE": "#854d0e", "LOC": "#9a3412", "PERSON": "#5b21b6",
    "NORP": "#7e22ce", "FAC": "#155e75", "EVENT": "#713f12", "LAW": "#9f1239", "LANGUAGE": "#9f1239",
    "WORK_OF_ART": "#86198f", "DATE": "#065f46", "TIME": "#065f46", "MONEY": "#3f3f46", "QUANTITY": "#3f3f46",
    "ORDINAL": "#3f3f46", "CARDINAL": "#3f3f46", "PERCENT": "#3f3f46",
}
DEFAULT = {"light": Pair("#dddddd", DARK_TEXT), "dark": Pair("#374151", LIGHT_TEXT)}
TERM = {"light": Pair("#fde047", DARK_TEXT), "dark": Pair("#facc15", DARK_TEXT)}  # a query term's <mark>
FOCUS = {"light": DARK_TEXT, "dark": LIGHT_TEXT}  # the chosen entity's outline
BAR = {"light": "#2563eb", "dark": "#60a5fa"}  # the entity table's score bars
THEMES = ("light", "dark")


def label_pair(label: str, theme: str = "light") -> Pair:
    """The colours of an entity label's highlight in ``theme`` ("light" or "dark")."""
    backgrounds = DARK_BACKGROUNDS if theme == "dark" else LIGHT_BACKGROUNDS
    text = LIGHT_TEXT if theme == "dark" else DARK_TEXT
    return Pair(backgrounds[label], text) if label in backgrounds else DEFAULT[theme]


def _css_string(text: str) -> str:
    return '"' + "".join(ch if ch.isalnum() or ch in "_-" else f"\\{ord(ch):x} " for ch in text) + '"'


def _theme_rules(theme: str) -> str:
    """The rules giving highlights, marks, outlines and bars the colours of ``theme`` (over the inline light ones)."""
    default, term = DEFAULT[theme], TERM[theme]
    rules = [
        f"span.entity{{background:{default.background}!important;color:{default.text}!important}}",
        *(f"span.entity[data-label={_css_string(label)}]{{background:{label_pair(label, theme).background}"
          f"!important;color:{label_pair(label, theme).text}!important}}" for label in LIGHT_BACKGROUNDS),
        f"span.entity.focus{{box-shadow:0 0 0 2px {FOCUS[theme]}!important}}",
        f"table.sentret-entities tr[data-entity]:focus-visible{{outline:3px solid {FOCUS[theme]};outline-offset:-3px}}",
        f".sentret-skip:focus{{outline:3px solid {FOCUS[theme]}}}",
        f"mark.term{{background:{term.background};color:{term.text}}}",
        f".sentret-bar{{background:{BAR[theme]}!important}}",
    ]
    return "".join(rules)


# Narrow screens: wide things scroll inside their own box instead of running off the page.
LAYOUT_CSS = (
    # a query term inside an entity: bold and underlined, no second box inside the highlight
    "span.entity mark.term{background:transparent!important;color:inherit!important;font-weight:700;"
    "text-decoration:underline 2px;text-underline-offset:2px}"
    "span.entity sub.label{color:inherit}"
    ".katex-display{overflow-x:auto;overflow-y:hidden;padding:2px 0}"
    "@media (max-width:1100px){.katex-display{font-size:0.85em}}"
    "@media (max-width:900px){.katex-display{font-size:0.72em}}"
    ".sentret-scroll{overflow-x:auto;max-width:100%}"
    # How it works: at most two columns side by side when the window is narrow
    "@media (max-width:1100px){.st-key-sentret-narrow-wrap [data-testid='stHorizontalBlock']{flex-wrap:wrap}"
    ".st-key-sentret-narrow-wrap [data-testid='stColumn']{min-width:min(100%,340px)}}"
    "[data-testid='stElementContainer']:has(.sentret-script){display:none}"
    ".st-key-sentret-row-pick{display:none}"  # the box a click on an entity's row types into
)

# Explore's entity table (ui/entity_table.py) and How it works' ranking (ui/howto/ranking.py); in the page's
# one stylesheet, not in each table's HTML, where every new result would add and remove a <style> and make
# the browser restyle the whole page
ENTITY_TABLE_CSS = (
    "table.sentret-entities{border-collapse:collapse;font-size:0.85rem;width:100%}"
    "table.sentret-entities th{text-align:left;font-weight:600;opacity:0.8;border-bottom:1px solid "
    "rgba(128,128,128,0.4);padding:2px 6px;white-space:nowrap;cursor:help}"
    "table.sentret-entities td{border-bottom:1px solid rgba(128,128,128,0.2);padding:2px 6px;white-space:nowrap}"
    "table.sentret-entities td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "table.sentret-entities td.name{max-width:16em;overflow:hidden;text-overflow:ellipsis}"
    "table.sentret-entities td.score{min-width:9em}"
    "table.sentret-entities td.score span.value{display:inline-block;min-width:4.5em;text-align:right;"
    "font-variant-numeric:tabular-nums;margin-right:6px}"
    "table.sentret-entities td.score span.track{display:inline-block;width:5em;vertical-align:middle}"
    f"table.sentret-entities .sentret-bar{{display:block;height:0.8em;border-radius:2px;background:{BAR['light']}}}"
    "table.sentret-entities tr[data-entity]{cursor:pointer}"
    "table.sentret-entities tr[data-entity]:hover td,table.sentret-entities tr[data-entity]:focus td"
    "{background:rgba(128,128,128,0.15)}"
    "table.sentret-entities span.chip{border-radius:0.3em;padding:0 0.3em;font-size:0.8em}"
    # the skip link shows only when the keyboard reaches it
    ".sentret-skip{position:absolute;left:-10000px}.sentret-skip:focus{position:static;display:inline-block;"
    "margin:2px 0;padding:2px 6px}"
)
RANKING_TABLE_CSS = (
    "table.sentret-ranking{width:100%;border-collapse:collapse;font-size:0.9rem}"
    "table.sentret-ranking th{text-align:left;font-weight:600;opacity:0.8;"
    "border-bottom:1px solid rgba(128,128,128,0.4);padding:2px 6px;white-space:nowrap}"
    "table.sentret-ranking td{vertical-align:top;border-bottom:1px solid rgba(128,128,128,0.2);padding:4px 6px}"
    "table.sentret-ranking td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
    "table.sentret-ranking td.change{white-space:nowrap;text-align:center}"
    "table.sentret-ranking small{opacity:0.75}"  # the page's own text colour, light or dark
)

# Streamlit collapses its sidebar only up to 768 px; a projector or a split screen at 800-1100 px needs the room.
# Once per browser tab, on a narrow window, fold it away; the user can open it again and it stays open.
NARROW_SIDEBAR_JS = """<div class="sentret-script"></div><script>
(() => {
  if (window.innerWidth > 1100 || sessionStorage.getItem("sentret-sidebar-folded")) return;
  const fold = (tries) => {
    const bar = document.querySelector('[data-testid="stSidebar"][data-collapsed="false"]');
    const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button')
      || document.querySelector('[data-testid="stSidebarHeader"] button');
    if (bar && button) { button.click(); sessionStorage.setItem("sentret-sidebar-folded", "1"); }
    else if (tries > 0) setTimeout(() => fold(tries - 1), 100);
  };
  fold(30);
})();
</script>"""


def stylesheet(reported: str | None = None) -> str:
    """The page CSS: the dark colours under ``prefers-color-scheme: dark``, or always when Streamlit
    reports (``reported``) a dark theme the OS does not ask for; the narrow-screen rules."""
    dark = f"@media (prefers-color-scheme: dark){{{_theme_rules('dark')}}}"
    chosen = _theme_rules(reported) if reported in THEMES else ""
    light = "@media (prefers-color-scheme: light){" + _theme_rules("light") + "}"
    return f"<style>{light}{dark}{chosen}{LAYOUT_CSS}{ENTITY_TABLE_CSS}{RANKING_TABLE_CSS}</style>"


def apply_theme() -> None:
    """Put the stylesheet (and the narrow-window sidebar fold) on the page; every page calls it once per run."""
    reported = st.context.theme.type if hasattr(st, "context") else None
    st.html(stylesheet(reported if isinstance(reported, str) else None))
    run_script(NARROW_SIDEBAR_JS)


def run_script(markup: str) -> None:
    """Our own fixed script (never user text), in the sidebar: the main area holds no ``<script>`` at all,
    which is how the browser tests tell that hostile corpus text stayed inert."""
    st.sidebar.html(markup, unsafe_allow_javascript=True)
