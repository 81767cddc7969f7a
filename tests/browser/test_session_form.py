"""The Admin page's "Create a session" form in a real Chromium: Tab and Enter while filling it in.

A regression guarded here: typing the session name and pressing Tab or Enter reran the page, collapsed
the expander and cleared a field, so that Create failed. Now the form runs nothing until "Create
session" is clicked. Skipped when ``/usr/bin/chromium`` or Playwright is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from tests.browser_util import chromium, streamlit_server

TOKEN = "browser-form-test-token"
IDLE = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state') === 'notRunning'"



@pytest.fixture
def app(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    db = tmp_path / "judgments.sqlite"
    with JudgmentStore(db) as store:  # a session already: the form's expander starts closed
        create_session(store, "old", small_index, "lennon religion", top_entities=1, depth=1)
    env = {"SENTRET_JUDGMENTS_DB": str(db), ADMIN_TOKEN_ENV: TOKEN}
    with streamlit_server(small_index.path, small_index.path.parent, tmp_path / "streamlit.log",
                          extra_env=env) as server:
        yield server.url, db


@pytest.fixture
def page() -> Iterator[Any]:
    pytest.importorskip("playwright.sync_api", reason="no Playwright (pip install playwright)")
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        page.set_default_timeout(20_000)
        yield page


def runs_counted(page: Any) -> None:
    """Count the app's runs from now on (each start of a run) in ``window.__runs``."""
    page.evaluate(
        """() => {
          window.__runs = 0;
          const app = document.querySelector('[data-testid=stApp]');
          new MutationObserver(() => {
            if (app.getAttribute('data-test-script-state') === 'running') window.__runs += 1;
          }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
        }"""
    )


def test_tab_and_enter_keep_the_form_open_and_filled(app: tuple[str, Path], page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    url, db = app
    page.goto(f"{url}/admin", wait_until="domcontentloaded")
    page.get_by_label("Admin token", exact=True).fill(TOKEN)
    page.get_by_role("button", name="Sign in as admin").click()
    page.get_by_text("Create a session").click()  # open the expander
    name = page.get_by_label("Session name")
    expect(name).to_be_visible()
    page.wait_for_function(IDLE)
    runs_counted(page)
    name.click()
    page.keyboard.type("fresh")
    page.keyboard.press("Tab")
    name.click()
    page.keyboard.press("End")
    page.keyboard.type(" one")
    page.keyboard.press("Enter")  # neither submits the form nor reruns the page
    # a row typed into the topics table: a click on its last row adds a row, a double click edits a cell
    grid = page.locator(".st-key-admin_topics_table [data-testid=stDataFrameResizable]")
    box = grid.bounding_box()
    row = box["y"] + 35 + 17  # below the header
    page.mouse.click(box["x"] + 0.3 * box["width"], row)
    page.wait_for_function("(h) => document.querySelector('.st-key-admin_topics_table "
                           "[data-testid=stDataFrameResizable]').getBoundingClientRect().height > h",
                           arg=box["height"])
    editor = page.locator("textarea.gdg-input")  # the grid's cell editor
    page.mouse.dblclick(box["x"] + 0.05 * box["width"], row)  # the query cell, the first column
    editor.fill("picasso peace")
    editor.press("Tab")  # kept, and the cell to its right (the entity) selected
    expect(editor).to_have_count(0)
    page.keyboard.press("Enter")  # edit the entity cell
    editor.fill("Picasso|PERSON")
    editor.press("Enter")
    expect(editor).to_have_count(0)
    topics = tmp_path / "topics.tsv"
    topics.write_text("query\tentity\nlennon religion\tJohn Lennon\n")
    page.locator(".st-key-admin_topics_file input[type=file]").set_input_files(str(topics))
    expect(page.get_by_text("topics.tsv")).to_be_visible()
    page.wait_for_timeout(1_000)  # a rerun would have started by now
    assert page.evaluate("() => window.__runs") == 0
    expect(name).to_be_visible()  # the expander is still open
    expect(name).to_have_value("fresh one")
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)  # no "needs …" error
    with JudgmentStore(db) as store:
        assert [s.name for s in store.sessions()] == ["old"]
    page.get_by_role("button", name="Preview the pairs").click()  # the pairs first, then Create
    expect(page.get_by_text("Preview of session 'fresh one'")).to_be_visible()
    page.get_by_role("button", name="Create session 'fresh one'").click()
    expect(page.get_by_text("Created session 'fresh one'")).to_be_visible()
    page.wait_for_function(IDLE)
    with JudgmentStore(db) as store:
        assert sorted(tuple(e) for e in store.session("fresh one").entities) == [
            ("lennon religion", "John Lennon|PERSON"),
            ("picasso peace", "Picasso|PERSON"),
        ]
