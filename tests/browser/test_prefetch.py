"""The first query of a session finds the browser code its results need already loaded: the page fetched it
while idle after the first screen (sentret_core.ui.prefetch), so the query itself fetches no code."""

from __future__ import annotations

import time
from typing import Any

from tests.browser_util import Server, wait_until_idle

LAZY_NAMES = ("rehype-raw.", "hastscript.", "web-namespaces.", "DownloadButton.", "createDownloadLinkElement.")


def test_the_first_query_fetches_no_code(browser: Any, small_server: Server) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url.rsplit("/", 1)[-1]))
    page.goto(f"{small_server.url}/", wait_until="domcontentloaded")
    wait_until_idle(page, 120_000)
    deadline = time.monotonic() + 20  # the page fetches them once it is idle (at most 4 s after the load)
    while time.monotonic() < deadline and not all(any(f.startswith(n) for f in fetched) for n in LAZY_NAMES):
        time.sleep(0.2)
    assert all(any(f.startswith(name) for f in fetched) for name in LAZY_NAMES), fetched
    fetched.clear()
    box = page.get_by_label("Query", exact=True)
    box.fill("Spanish Civil War")
    box.press("Enter")
    wait_until_idle(page, 60_000)
    page.wait_for_selector("table.sentret-entities tr[data-entity]", timeout=60_000)
    time.sleep(1)
    assert [f for f in fetched if f.endswith((".js", ".woff2"))] == []
    page.close()
