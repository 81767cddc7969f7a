"""The Annotate page in a real Chromium: grading from the keyboard, checked in the SQLite database.

Runs ``streamlit run app.py`` on a free port against the small fixture index and a fresh
judgments database. Skipped when ``/usr/bin/chromium`` or Playwright is missing. Set
``SENTRET_SCREENSHOTS`` to a folder (e.g. ``docs/screenshots``) to keep ``annotate.png``.
A regression guarded here: every key stopped working after ``u`` (undo) or ``t`` (context).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from tests.browser_util import SCREENSHOTS, chromium, streamlit_server, wait_until_idle
from tests.sign_in_util import enrol, sign_in_handle, sign_in_page

TOKEN = "browser-test-token"
STEP_TIMEOUT_MS = 20_000
# elements of the latest run only: while a run draws, Streamlit keeps the last run's elements
# (data-stale="true") until it ends, so that the caption of the item just left may still be there
CURRENT = '[data-testid="stElementContainer"][data-stale="false"]'
CONTEXT = f'{CURRENT} p[style*="107, 114, 128"]'  # a context sentence (color:#6b7280, ui/annotate/item.py)



class App(NamedTuple):
    url: str
    db: Path


def start(index: Index, tmp_path: Path, topics: str) -> Iterator[App]:
    db = tmp_path / "judgments.sqlite"
    with JudgmentStore(db) as store:
        create_session(store, "s", index, topics, top_entities=5, depth=2)
        enrol(store, TOKEN, "s", "keyboard", "keys")
    env = {"SENTRET_JUDGMENTS_DB": str(db), ADMIN_TOKEN_ENV: TOKEN}
    with streamlit_server(index.path, index.path.parent, tmp_path / "streamlit.log", extra_env=env) as server:
        yield App(server.url, db)


@pytest.fixture
def app(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)  # the test reads the database as the admin
    yield from start(small_index, tmp_path, "picasso peace")  # 5 items


@pytest.fixture
def app10(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    yield from start(small_index, tmp_path, "picasso peace\nspanish civil war")  # 10 items


@pytest.fixture
def page() -> Iterator[Any]:
    pytest.importorskip("playwright.sync_api", reason="no Playwright (pip install playwright)")
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(STEP_TIMEOUT_MS)
        yield page


def signed_in(page: Any, app: App, name: str) -> Any:
    """Sign in, wait for the keyboard handler, focus the page (not a text field); the item caption."""
    sign_in_page(page, app.url, "s", name)
    page.wait_for_function("() => typeof window.__sentretAnnotateKeys === 'function'")
    page.locator("h1").first.click()
    return page.locator(CURRENT).get_by_text(re.compile(r"^Item \d"))


# the most page headers (h1) seen at any moment from now on: more than one means a page drawn twice
COUNT_HEADERS = """() => { window.__sentretHeaders = document.querySelectorAll('h1').length;
  new MutationObserver(() => { window.__sentretHeaders = Math.max(window.__sentretHeaders,
    document.querySelectorAll('h1').length); }).observe(document.body, {childList: true, subtree: true}); }"""

CONNECTION = "() => document.querySelector('[data-testid=\"stApp\"]').getAttribute('data-test-connection-state')"


def reconnected(page: Any, name: str) -> None:
    """Wait until ``page`` is connected to a server again, still signed in as ``name``, its keys handled, focused."""
    from playwright.sync_api import expect

    page.wait_for_function(f"() => ({CONNECTION})() === 'CONNECTED'", timeout=60_000)
    expect(page.get_by_text(f"Signed in as {name}")).to_be_visible(timeout=60_000)
    page.wait_for_function("() => typeof window.__sentretAnnotateKeys === 'function'")
    wait_until_idle(page)
    page.locator("h1").first.click()


def stored(db: Path, name: str) -> tuple[dict[int, int], int]:
    """What the database holds for annotator ``name``: position → grade, and how many items are skipped."""
    with JudgmentStore(db) as store:
        admin = store.admin(TOKEN)
        grades = {j.position: j.grade for j in admin.all_judgments("s") if j.annotator == name}
        return grades, admin.progress_by_annotator("s")[name].skipped


def test_grade_three_items_with_the_keyboard(app: App, page: Any) -> None:
    from playwright.sync_api import expect

    caption = signed_in(page, app, "keyboard")
    expect(caption).to_have_text("Item 1")
    page.keyboard.press("3")
    expect(caption).to_have_text("Item 2")
    # two keys in quick succession: the second waits until the first one's rerun is done
    page.keyboard.press("1")
    page.keyboard.press("4")
    expect(caption).to_have_text("Item 4")
    expect(page.get_by_text("3 of 5 graded")).to_be_visible()
    page.keyboard.press("t")  # t: show the context
    expect(page.locator(CONTEXT).first).to_be_visible()
    wait_until_idle(page)
    expect(page.get_by_role("button", name="4 · very relevant")).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "annotate.png"), full_page=True)
    with JudgmentStore(app.db) as store:
        export = store.admin(TOKEN).export_jsonl("s")
    mine = [json.loads(line) for line in export.splitlines()]
    assert [(j["annotator"], j["position"], j["grade"]) for j in mine] == [
        ("keyboard", 0, 3),
        ("keyboard", 1, 1),
        ("keyboard", 2, 4),
    ]


def expected_states() -> list[tuple[str, str, dict[int, int], int, bool]]:
    """(key, caption, grades by position, items skipped, context shown) after each key of
    ``1 2 3 4 u s b n t`` pressed twice, from the first of ten items."""
    states = []
    grades: dict[int, int] = {}
    context = False
    # skipped: how many items are skipped once this round's s is pressed; round two starts at item 5
    for skipped, start in enumerate((0, 4), start=1):
        for grade in (1, 2, 3, 4):
            grades[start + grade - 1] = grade
            states.append((str(grade), f"Item {start + grade + 1}", dict(grades), skipped - 1, context))
        del grades[start + 3]  # u: the fourth grade is undone; its item is shown again
        states.append(("u", f"Item {start + 4}", dict(grades), skipped - 1, context))
        states.append(("s", f"Item {start + 5}", dict(grades), skipped, context))
        states.append(("b", f"Item {start + 4} · revisiting", dict(grades), skipped, context))
        states.append(("n", f"Item {start + 5}", dict(grades), skipped, context))
        context = not context
        states.append(("t", f"Item {start + 5}", dict(grades), skipped, context))
    return states


def test_every_key_in_sequence_twice(app10: App, page: Any) -> None:
    from playwright.sync_api import expect

    with JudgmentStore(app10.db) as store:  # the ten items of the session, to grade twice over
        assert store.session("s").n_items == 10
        other = sign_in_handle(store, TOKEN, "s", "other")
        first = other.next_item()
        assert first is not None
        other.grade(first.item_id, 2)
    caption = signed_in(page, app10, "keys")
    expect(caption).to_have_text("Item 1")
    pressed = []
    for key, shown, grades, skipped, context in expected_states():
        page.keyboard.press(key)
        pressed.append(key)
        where = f"after {' '.join(pressed)}"
        expect(caption, where).to_have_text(shown)
        expect(page.locator(CONTEXT).first, where).to_be_visible(visible=context)
        wait_until_idle(page)
        assert stored(app10.db, "keys") == (grades, skipped), where
    assert stored(app10.db, "other") == ({0: 2}, 0)  # another annotator's grade was never touched


def test_a_key_pressed_while_the_server_is_away_is_refused_aloud_and_none_is_lost(
    small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: Any
) -> None:
    """The server stops between two keys: the second is refused on the page at once (never kept silently and
    dropped later); once a server is back on the same address the page reconnects, the sign-in holds, the
    key pressed again the moment the page is back grades the item it was meant for, and no moment shows
    the page twice."""
    from playwright.sync_api import expect

    from tests.browser_util import free_port

    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    db = tmp_path / "judgments.sqlite"
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, "picasso peace", top_entities=5, depth=2)
        enrol(store, TOKEN, "s", "keyboard", "keys")
    env = {"SENTRET_JUDGMENTS_DB": str(db), ADMIN_TOKEN_ENV: TOKEN}
    port = free_port()
    with streamlit_server(small_index.path, small_index.path.parent, tmp_path / "first.log", extra_env=env,
                          port=port) as server:
        caption = signed_in(page, App(server.url, db), "keyboard")
        expect(caption).to_have_text("Item 1")
        page.keyboard.press("3")
        expect(caption).to_have_text("Item 2")
        wait_until_idle(page)
    page.evaluate(COUNT_HEADERS)
    page.wait_for_function(f"() => ({CONNECTION})() !== 'CONNECTED'", timeout=30_000)  # the page has lost its server
    page.keyboard.press("4")
    refused = page.locator("#sentret-key-refused")
    expect(refused).to_contain_text("your key \u201c4\u201d was not sent")
    expect(refused).to_contain_text("the server is not answering")
    assert stored(db, "keyboard") == ({0: 3}, 0)
    with streamlit_server(small_index.path, small_index.path.parent, tmp_path / "second.log", extra_env=env,
                          port=port):
        # pressed the moment the page is back, before Streamlit's own rerun of it (which once swallowed it)
        page.wait_for_function(f"() => ({CONNECTION})() === 'CONNECTED'", timeout=60_000, polling="raf")
        page.keyboard.press("4")
        expect(caption).to_have_text("Item 3")
        expect(refused).to_be_hidden()
        expect(page.get_by_text("Signed in as keyboard")).to_be_visible()
        wait_until_idle(page)
    assert stored(db, "keyboard") == ({0: 3, 1: 4}, 0)
    assert page.evaluate("window.__sentretHeaders") == 1  # the page was never drawn twice meanwhile
