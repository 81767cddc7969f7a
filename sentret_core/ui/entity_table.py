"""Explore's entity table: one HTML table whose rows pick the entity to explain, with header tooltips.

Rank, entity and the chosen score (its number and a bar) come first, so on a narrow window they
stay in view while the other columns scroll inside the table's own box.
"""

from __future__ import annotations

from sentret_core.support.records import EntitySupport
from sentret_core.ui.glossary import COLUMN_HELP, COLUMN_TITLES, HIGHER_IS_BETTER
from sentret_core.ui.text import html_text
from sentret_core.ui.theme import label_pair

SCORES = ("frequency", "rarity", "combination", "kld")


def _score_value(e: EntitySupport, score: str) -> float:
    return float(getattr(e.entity, score))


def _format(score: str, value: float) -> str:
    return f"{int(value)}" if score == "frequency" else f"{value:.5f}" if score == "kld" else f"{value:.4f}"


def columns(score: str) -> list[tuple[str, str]]:
    """(header, tooltip) of each column, in order; the chosen score's header says it sorts the table."""
    chosen = COLUMN_TITLES[score]
    others = [s for s in ("rarity", "combination", "kld") if s != score]
    heads = [("rank", COLUMN_HELP["rank"]), ("entity", COLUMN_HELP["entity"]),
             (f"{chosen} ↓", f"{COLUMN_HELP[chosen]} {HIGHER_IS_BETTER}"), ("label", COLUMN_HELP["label"]),
             ("|S_qe|", COLUMN_HELP["|S_qe|"]), ("|Ŝ_qe|", COLUMN_HELP["|Ŝ_qe|"])]
    return heads + [(COLUMN_TITLES[s], COLUMN_HELP[COLUMN_TITLES[s]]) for s in others]


def entity_table_html(entities: list[EntitySupport], score: str) -> str:
    """The entities as one HTML table: rank, entity, the chosen score with its bar, label, |S_qe|, |Ŝ_qe|
    and the other scores; each header's meaning on hover.

    Each row carries the entity's key (``text|label``) and the exact score as data attributes; a
    click on a row picks that entity (:data:`ROW_PICK_JS`).
    """
    values = [max(_score_value(e, score), 0.0) for e in entities]
    top = max(values, default=0.0) or 1.0
    others = [s for s in ("rarity", "combination", "kld") if s != score]
    head = "".join(f'<th title="{html_text(tip)}">{html_text(name)}</th>' for name, tip in columns(score))
    rows = []
    for n, (e, value) in enumerate(zip(entities, values)):
        r = e.entity
        key = html_text(f"{r.text}|{r.label}")
        pair = label_pair(r.label)
        chip = (f'<span class="chip entity" data-label="{html_text(r.label)}" '
                f'style="background:{pair.background};color:{pair.text}">{html_text(r.label)}</span>')
        rest = "".join(f'<td class="num">{_format(s, _score_value(e, s))}</td>' for s in others)
        cells = (
            f'<td class="num">{r.rank}</td><td class="name" title="{html_text(r.text)}">{html_text(r.text)}</td>'
            f'<td class="score"><span class="value">{_format(score, _score_value(e, score))}</span>'
            f'<span class="track"><span class="sentret-bar" style="width:{100 * value / top:.1f}%"></span></span></td>'
            f'<td>{chip}</td><td class="num">{r.frequency}</td><td class="num">{r.context_frequency}</td>{rest}'
        )
        # one tab stop for the whole table (a roving tabindex: the arrow keys move between rows)
        rows.append(f'<tr data-entity="{key}" data-score="{float(r.score)!r}" tabindex="{0 if n == 0 else -1}" '
                    f'title="Click to explain {html_text(r.text)}">{cells}</tr>')
    return (f'<a class="sentret-skip" href="#{SUPPORT_ANCHOR}">Skip the entity table: to the support sentences</a>'
            f'<div class="sentret-scroll"><table class="sentret-entities"><tr>{head}</tr>'
            f'{"".join(rows)}</table></div>')


SUPPORT_ANCHOR = "sentret-support"  # the id of the support sentences' heading, where the skip link goes
ROW_PICK_KEY = "explore_row_pick"  # the hidden text box a row click fills (its container: .st-key-sentret-row-pick)
# A click on a row types its entity key into the hidden box and presses Enter: Streamlit's own widget
# protocol carries the pick to the server, which selects that entity (no custom component to build).
ROW_PICK_JS = """<div class="sentret-script"></div><script>
(() => {
  if (window.sentretRowPick) return;
  window.sentretRowPick = true;
  const pick = (event) => {
    const row = event.target.closest && event.target.closest("table.sentret-entities tr[data-entity]");
    const input = document.querySelector(".st-key-sentret-row-pick input");
    if (!row || !input) return;
    if (event.type === "keydown" && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      const next = event.key === "ArrowDown" ? row.nextElementSibling : row.previousElementSibling;
      if (next && next.dataset && next.dataset.entity) {
        event.preventDefault();
        row.tabIndex = -1; next.tabIndex = 0; next.focus();
      }
      return;
    }
    if (event.type === "keydown" && event.key !== "Enter" && event.key !== " ") return;
    event.preventDefault();
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
    setter.call(input, row.dataset.entity);
    input.dispatchEvent(new Event("input", {bubbles: true}));
    input.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter", keyCode: 13, bubbles: true}));
  };
  document.addEventListener("click", pick);
  document.addEventListener("keydown", pick);  // Enter or Space on the focused row picks it too
})();
</script>"""


GLOSSARY_INTRO = (
    "S_q is the top k sentences for the query under the ranker; Ŝ_q adds the 2 sentences before and after "
    "each (Blanco & Zaragoza, SIGIR 2010, §3). Click a row to explain that entity."
)


def glossary_markdown(score: str) -> str:
    """The table's columns in words, one line each (plain text from :mod:`glossary`, no user text)."""
    lines = [f"- **{name}**: {tip}" for name, tip in columns(score)]
    return GLOSSARY_INTRO + "\n\n" + "\n".join(lines)
