"""Explore's polish in a real browser: a click on an entity's row explains that entity, the
results download as CSV and JSON, and How it works' sliders have names in words (not raw LaTeX).

On a small index built here. Skipped when /usr/bin/chromium is absent.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_util import Server, chromium, wait_until_idle

sync_api = pytest.importorskip("playwright.sync_api", reason="the Playwright package is not installed")

QUERY = "Spanish Civil War"
WHY = "(name) => [...document.querySelectorAll('h3')].some((h) => h.textContent.startsWith('Why ' + name + ' '))"


@pytest.fixture(params=[1400])
def tab(request: pytest.FixtureRequest) -> Iterator[Any]:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": request.param, "height": 1000}, accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(60_000)
        try:
            yield page
        finally:
            context.close()


def open_explore(page: Any, small_server: Server) -> None:
    page.goto(f"{small_server.url}/explore?q=Spanish+Civil+War", wait_until="domcontentloaded")
    page.wait_for_selector("table.sentret-entities tr[data-entity]", timeout=120_000)
    wait_until_idle(page, 120_000)


def explained(page: Any) -> str:
    return str(page.locator("h3").filter(has_text="matters to").first.inner_text())


@pytest.mark.parametrize("tab", [1400, 800], indirect=True)  # at 800 px the sidebar (which holds the script) is folded
def test_clicking_a_row_explains_that_entity(small_server: Server, tab: Any) -> None:
    open_explore(tab, small_server)
    rows = tab.locator("table.sentret-entities tr[data-entity]")
    first, third = rows.nth(0).get_attribute("data-entity"), rows.nth(2).get_attribute("data-entity")
    assert explained(tab).startswith(f"Why {first.split('|')[0]} ")  # the first entity, before any click
    rows.nth(2).locator("td").nth(1).click()  # the entity's name cell, as a user would
    wait_until_idle(tab, 60_000)
    tab.wait_for_function(WHY, arg=third.split("|")[0])
    chooser = tab.locator('[data-testid="stSelectbox"]').filter(has_text="Entity to explain")
    assert third.split("|")[0] in chooser.locator("input").first.input_value()
    assert "entity=" in tab.url and third.split("|")[0].replace(" ", "+") in tab.url
    rows.nth(0).click()  # and back: a second click on another row picks again
    wait_until_idle(tab, 60_000)
    tab.wait_for_function(WHY, arg=first.split("|")[0])
    # another entity score reruns the table's fragment (it redraws the rows and the click script): rows still pick
    tab.get_by_text("Ranking settings").click()
    tab.locator('[data-testid="stRadio"]').get_by_text("frequency", exact=True).click()
    wait_until_idle(tab, 60_000)
    tab.wait_for_selector("table.sentret-entities th:text-is('frequency ↓')")
    assert tab.locator('[data-testid="stException"]').count() == 0
    second = rows.nth(1).get_attribute("data-entity")
    rows.nth(1).focus()  # from the keyboard: a row takes the focus, Enter picks it
    tab.keyboard.press("Enter")
    wait_until_idle(tab, 60_000)
    tab.wait_for_function(WHY, arg=second.split("|")[0])
    # the table is one tab stop: the arrow keys walk its rows, Enter picks the one reached
    third = rows.nth(2).get_attribute("data-entity")
    rows.nth(0).focus()
    tab.keyboard.press("ArrowDown")
    tab.keyboard.press("ArrowDown")
    assert rows.nth(2).evaluate("(row) => row === document.activeElement && row.tabIndex === 0")
    tab.keyboard.press("Enter")
    wait_until_idle(tab, 60_000)
    tab.wait_for_function(WHY, arg=third.split("|")[0])


def test_the_results_download_as_csv_and_json(small_server: Server, tab: Any) -> None:
    open_explore(tab, small_server)
    tables = tab.locator("table.sentret-entities")  # the main table, then the restating group's (collapsed)
    tables.nth(1).locator("tr[data-entity]").first.wait_for(state="attached")  # drawn, if folded away
    keys, restating = (tables.nth(i).locator("tr[data-entity]").evaluate_all("(r) => r.map((e) => e.dataset.entity)")
                       for i in (0, 1))
    assert "Spanish Civil War|EVENT" in restating
    with tab.expect_download() as csv_download:
        tab.get_by_role("button", name="Download CSV").click()
    assert csv_download.value.suggested_filename == "sentret-spanish-civil-war.csv"
    rows = list(csv.DictReader(io.StringIO(Path(csv_download.value.path()).read_text(encoding="utf-8"))))
    entities = list(dict.fromkeys(f"{r['entity']}|{r['label']}" for r in rows if r["restates_query"] == "False"))
    assert entities == keys  # the table's entities, in its order
    franco = [r for r in rows if r["entity"] == "Francisco Franco"]
    # one row per support model (three by default): the one sentence mentioning Franco, or empty cells
    # where that model has no candidate sentence for him
    assert sorted(r["model"] for r in franco) == ["bm25f.v1", "lm-2si.v1", "tfisf.v1"]
    assert {r["text"] for r in franco} - {""} == {"Francisco Franco led the Nationalists against the Republic."}
    assert all((r["text"] == "") == (r["sentence_rank"] == "") for r in franco)
    assert all(r["query"] == QUERY and r["S_qe"] == "1" for r in franco)
    with tab.expect_download() as json_download:
        tab.get_by_role("button", name="Download JSON").click()
    data = json.loads(Path(json_download.value.path()).read_text(encoding="utf-8"))
    assert data["query"] == QUERY
    assert [f"{e['entity']['text']}|{e['entity']['label']}" for e in data["entities"]] == keys
    assert [f"{e['entity']['text']}|{e['entity']['label']}" for e in data["restating"]] == restating


def test_sliders_are_named_in_words(small_server: Server, tab: Any) -> None:
    tab.goto(f"{small_server.url}/how-it-works?q=Spanish+Civil+War&model=bm25f.v1", wait_until="domcontentloaded")
    tab.wait_for_selector("table.sentret-ranking", timeout=120_000)
    wait_until_idle(tab, 120_000)
    k1 = tab.get_by_role("slider", name="Term-frequency saturation of the combined pseudo-frequency (k_1)")
    k1.wait_for(timeout=120_000)  # the parameters' sliders are drawn after the ranking: read them once they are
    names = tab.get_by_role("slider").evaluate_all("(s) => s.map((e) => e.getAttribute('aria-label') || '')")
    assert names and all("$" not in n and "\\" not in n and "`" not in n for n in names), names
    # the k1 slider runs 0-2 (the papers' grid 1.0-2.0), not 0-10: the default 0.26 is not jammed at the left
    assert (k1.get_attribute("min"), k1.get_attribute("max"), k1.input_value()) == ("0", "2", "0.26")
