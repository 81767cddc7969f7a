"""Sign-in that survives in a real Chromium: an annotator signs in with her link, grades
with the keyboard, the server is stopped and a new one started on the same database; reloading
her page (and opening a new tab) finds her signed in, and her next key is applied. Then the
organiser closes the session, and her page says so without waiting for a key.

The new server listens on another port; cookies are per host, not per port, so the browser sends
the cookie it was given, as it does to a restarted server at the same address.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.ui.annotate.extras import WATCH_S
from sentret_core.ui.browser_session import ANNOTATOR_COOKIE
from tests.browser_util import chromium, streamlit_server, wait_until_idle

TOKEN = "browser-survive-token"
STEP_TIMEOUT_MS = 20_000



def test_a_server_restart_keeps_the_annotator_signed_in(
    small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_TIMEOUT_MS)  # a new server's first run takes more than 5 s on a loaded machine
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    db = tmp_path / "judgments.sqlite"
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, "picasso peace", top_entities=5, depth=2)
        secret = store.admin(TOKEN).add_annotator("s", "alice")
    env = {"SENTRET_JUDGMENTS_DB": str(db), ADMIN_TOKEN_ENV: TOKEN}
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(STEP_TIMEOUT_MS)
        with streamlit_server(small_index.path, small_index.path.parent, tmp_path / "first.log",
                              extra_env=env) as server:
            page.goto(f"{server.url}/annotate?session=s&token={secret.token}", wait_until="domcontentloaded")
            expect(page.get_by_text("Signed in as alice")).to_be_visible()
            page.wait_for_function("() => typeof window.__sentretAnnotateKeys === 'function'")
            page.locator("h1").first.click()
            page.keyboard.press("3")
            expect(page.get_by_text("1 of 5 graded")).to_be_visible()
            wait_until_idle(page)
            cookies = {c["name"]: c for c in context.cookies()}
            assert ANNOTATOR_COOKIE in cookies and cookies[ANNOTATOR_COOKIE]["sameSite"] == "Strict"
            assert secret.token.split(".")[1] not in cookies[ANNOTATOR_COOKIE]["value"]  # an id, not the secret
        with streamlit_server(small_index.path, small_index.path.parent, tmp_path / "second.log",
                              extra_env=env) as server:
            page.goto(f"{server.url}/annotate?session=s", wait_until="domcontentloaded")
            expect(page.get_by_text("Signed in as alice")).to_be_visible()
            expect(page.get_by_text("1 of 5 graded")).to_be_visible()
            assert page.get_by_label("Your passphrase").count() == 0
            page.wait_for_function("() => typeof window.__sentretAnnotateKeys === 'function'")
            page.locator("h1").first.click()
            page.keyboard.press("4")
            expect(page.get_by_text("2 of 5 graded")).to_be_visible()
            other = context.new_page()  # a new tab, on the bare address
            other.set_default_timeout(STEP_TIMEOUT_MS)
            other.goto(f"{server.url}/annotate", wait_until="domcontentloaded")
            expect(other.get_by_text(re.compile("^Signed in as alice"))).to_be_visible()
            # the organiser closes the session: the open page says so within the watch's period, no key needed
            with JudgmentStore(db) as store:
                store.admin(TOKEN).close_session("s")
            expect(page.get_by_text(re.compile("is closed: grades are not taken"))).to_be_visible(
                timeout=int((WATCH_S + 10) * 1000)
            )
    with JudgmentStore(db) as store:
        assert [j.grade for j in store.admin(TOKEN).all_judgments("s")] == [3, 4]
