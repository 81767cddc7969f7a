"""The first query of a session, and the first visit to How it works, find the browser code they need already
loaded: the page imported it while idle after the first screen (sentret_core.ui.prefetch)."""

from __future__ import annotations

import time
from typing import Any

from sentret_core.ui.prefetch import lazy_files
from tests.browser_util import Server, wait_until_idle

LAZY_NAMES = [file.split("/")[-1] for file in lazy_files()]


def fetched_lazy(fetched: list[str]) -> list[str]:
    return [name for name in fetched if name in LAZY_NAMES]


def test_the_first_query_and_the_first_visit_to_how_it_works_fetch_no_lazy_code(
    browser: Any, small_server: Server
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url.rsplit("/", 1)[-1]))
    page.goto(f"{small_server.url}/", wait_until="domcontentloaded")
    # the page imports them once its first run has drawn the sidebar and the browser is idle, and marks
    # the end with window.sentretPrefetched (on a loaded machine the first run alone can take half a minute)
    page.wait_for_function("window.sentretPrefetched !== undefined", timeout=180_000)
    assert sorted(set(fetched_lazy(fetched))) == sorted(LAZY_NAMES)
    wait_until_idle(page, 120_000)
    fetched.clear()  # (the modules these import in turn may still be arriving: the browser fetches each once)
    box = page.get_by_label("Query", exact=True)
    box.fill("Spanish Civil War")
    box.press("Enter")
    wait_until_idle(page, 60_000)
    page.wait_for_selector("table.sentret-entities tr[data-entity]", timeout=60_000)
    time.sleep(1)
    assert fetched_lazy(fetched) == []
    page.get_by_role("link", name="How it works").first.click()
    wait_until_idle(page, 60_000)
    page.wait_for_selector(".katex", timeout=60_000)
    time.sleep(1)
    assert fetched_lazy(fetched) == []
    page.close()
