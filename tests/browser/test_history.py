"""Back and Forward in a real Chromium: one history entry per query, entity or page a user
asks for, none for a setting or for opening the app, and each step back or forward shows that view again.

Before, every change of the URL was an entry of its own (about 11 when ``/`` opened, 2 per query) and
Back never restored a query: the page read its URL once per session. Skipped when /usr/bin/chromium is absent.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser_util import Server, chromium, wait_until_idle

sync_api = pytest.importorskip("playwright.sync_api", reason="the Playwright package is not installed")

TIMEOUT = 30_000  # ms, for any one wait
ENTITY_BOX = "Entity to explain"


def view(page: Any) -> dict[str, str]:
    """What the page shows: the query box, the entity chooser, and the URL's q, entity and per."""
    params = {k: v[-1] for k, v in parse_qs(urlsplit(page.url).query).items()}
    chooser = page.get_by_role("combobox", name=ENTITY_BOX)
    return {
        "path": urlsplit(page.url).path,
        "query box": page.get_by_label("Query", exact=True).input_value(),
        "entity shown": chooser.input_value().split(". ", 1)[-1] if chooser.count() else "",
        "q": params.get("q", ""),
        "entity": params.get("entity", ""),
        "per": params.get("per", ""),
    }


def history_length(page: Any) -> int:
    return int(page.evaluate("() => window.history.length"))


def ask(page: Any, query: str) -> None:
    box = page.get_by_label("Query", exact=True)
    box.fill(query)
    box.press("Enter")
    wait_until_idle(page)
    page.get_by_role("combobox", name=ENTITY_BOX).wait_for()
    wait_until_idle(page)


def step(page: Any, back: bool) -> None:
    """Press Back (or Forward) and wait for the page's run it starts."""
    (page.go_back if back else page.go_forward)(wait_until="commit")
    wait_until_idle(page, start_ms=1_000)


def test_back_and_forward_walk_through_queries_and_entities(small_server: Server) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.set_default_timeout(TIMEOUT)
        page.goto(f"{small_server.url}/", wait_until="domcontentloaded")
        page.get_by_label("Query", exact=True).wait_for()
        wait_until_idle(page)
        opened = history_length(page)
        assert opened == 2, "about:blank, then the app: opening / made entries of its own"
        page.wait_for_function("() => window.sentretHistory !== undefined")

        # a setting replaces the URL: no new entry, but the URL says it
        page.get_by_text("Ranking settings").click()
        slider = page.get_by_role("slider").first
        slider.focus()
        slider.press("ArrowRight")  # support sentences per model: 3 -> 4
        wait_until_idle(page)
        expect(page).to_have_url(re.compile(r"[?&]per=4(&|$)"))
        assert history_length(page) == opened

        views = [view(page)]
        for number, query in enumerate(["Spanish Civil War", "peace", "Picasso"], start=1):
            ask(page, query)
            views.append(view(page))
            assert views[-1]["query box"] == views[-1]["q"] == query
            assert views[-1]["entity"] and views[-1]["entity shown"].startswith(views[-1]["entity"].split("|")[0])
            assert history_length(page) == opened + number, f"{query!r} made more than one entry"

        chooser = page.get_by_role("combobox", name=ENTITY_BOX)  # another entity: one more entry
        chooser.click()
        chooser.fill("Guernica")
        page.locator('[role="option"]').filter(has_text="Guernica").first.wait_for(state="attached")
        chooser.press("Enter")
        wait_until_idle(page)
        expect(page).to_have_url(re.compile(r"[?&]entity=Guernica"))
        views.append(view(page))
        assert views[-1]["entity shown"].startswith("Guernica") and views[-1]["q"] == "Picasso"
        assert views[-1]["entity"] != views[-2]["entity"]
        assert history_length(page) == opened + 4
        assert all(v["per"] == "4" for v in views)  # the setting holds in every view

        for expected in reversed(views[:-1]):  # Back through the entity change and the three queries
            step(page, back=True)
            assert view(page) == expected
        for expected in views[1:]:  # and Forward again to the entity change
            step(page, back=False)
            assert view(page) == expected
        assert history_length(page) == opened + 4  # Back and Forward themselves make no entries

        # another page is one entry; Back brings the Explore view back as it was
        page.locator('[data-testid="stSidebarNav"] a').filter(has_text="How it works").first.click()
        wait_until_idle(page)
        page.get_by_role("heading", name="How it works").first.wait_for()
        wait_until_idle(page)
        assert urlsplit(page.url).path == "/how-it-works"
        assert history_length(page) == opened + 5
        step(page, back=True)
        page.get_by_role("combobox", name=ENTITY_BOX).wait_for()
        wait_until_idle(page)
        assert view(page) == views[-1]
