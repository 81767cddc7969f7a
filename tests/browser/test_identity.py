"""The annotator-identity workflow end to end in a real Chromium: the admin adds two annotators on the Admin page, each
opens their own sign-in link in their own browser, both grade the same item with the keyboard only
(grade, undo, context, grade again), neither can sign in as the other or touch the other's grade,
and the admin's qrels use the trec scale.

Runs ``streamlit run app.py`` on a free port against the small fixture index and a fresh judgments
database; skipped when Debian's Chromium or Playwright is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ir_measures
import pytest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from tests.browser.test_annotate import CONTEXT
from tests.browser_util import chromium, streamlit_server, wait_until_idle

TOKEN = "browser-identity-token"
STEP_TIMEOUT_MS = 20_000



@pytest.fixture
def app(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    db = tmp_path / "judgments.sqlite"
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, "picasso peace", top_entities=5, depth=2)
    env = {"SENTRET_JUDGMENTS_DB": str(db), ADMIN_TOKEN_ENV: TOKEN}
    log = tmp_path / "streamlit.log"
    with streamlit_server(small_index.path, small_index.path.parent, log, extra_env=env) as server:
        yield server.url, db


def new_page(browser: Any) -> Any:
    """A page in a browser context of its own: its own cookies and its own Streamlit session."""
    page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    page.set_default_timeout(STEP_TIMEOUT_MS)
    return page


def add_annotator(page: Any, name: str) -> tuple[str, str]:
    """On the Admin page: add ``name``; the sign-in link and passphrase it shows once."""
    from playwright.sync_api import expect

    page.get_by_role("textbox", name="Name of a new annotator").fill(name)
    page.get_by_role("button", name="Add person").click()
    expect(page.locator('[data-testid="stCode"]').filter(has_text="token=")).to_be_visible(timeout=STEP_TIMEOUT_MS)
    expect(page.locator('[data-testid="stAlertContainer"]').filter(has_text=f"Secret for {name}")).to_be_visible()
    wait_until_idle(page)
    codes = page.locator('[data-testid="stCode"]').all_inner_texts()
    link = next(c for c in codes if "token=" in c).strip()
    passphrase = next(c for c in codes if c.startswith("passphrase: ")).removeprefix("passphrase: ").strip()
    return link, passphrase


def grade_first_item(page: Any, link: str, name: str, key: str) -> None:
    from playwright.sync_api import expect

    page.goto(link, wait_until="domcontentloaded")
    expect(page.get_by_text(f"Signed in as {name}")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Item 1"))).to_be_visible()
    assert "token=" not in page.url  # the token left the address bar at once
    page.wait_for_function("() => typeof window.__sentretAnnotateKeys === 'function'")
    page.locator("h1").first.click()
    page.keyboard.press(key)
    expect(page.get_by_text("1 of 5 graded")).to_be_visible()


def press(page: Any, key: str, progress: str) -> None:
    from playwright.sync_api import expect

    page.keyboard.press(key)
    expect(page.get_by_text(progress)).to_be_visible()
    wait_until_idle(page)


def test_two_annotators_with_their_own_links_cannot_touch_each_others_grades(app: tuple[str, Path]) -> None:
    from playwright.sync_api import expect

    pytest.importorskip("playwright.sync_api", reason="no Playwright (pip install playwright)")
    url, db = app
    with chromium() as browser:
        admin = new_page(browser)
        admin.goto(f"{url}/admin", wait_until="domcontentloaded")
        admin.get_by_label("Admin token", exact=True).fill(TOKEN)
        admin.get_by_role("button", name="Sign in as admin").click()
        expect(admin.get_by_role("textbox", name="Name of a new annotator")).to_be_visible()
        alice_link, _ = add_annotator(admin, "alice")
        bob_link, bob_passphrase = add_annotator(admin, "bob")
        assert alice_link.startswith(f"{url}/annotate?session=s&token=") and alice_link != bob_link

        alice, bob = new_page(browser), new_page(browser)
        grade_first_item(alice, alice_link, "alice", "4")
        grade_first_item(bob, bob_link, "bob", "1")

        # bob, in a third browser, tries alice's name with his own passphrase
        mallory = new_page(browser)
        mallory.goto(f"{url}/annotate?session=s", wait_until="domcontentloaded")
        mallory.get_by_label("Your name").fill("alice")
        mallory.get_by_label("Your passphrase").fill(bob_passphrase)
        mallory.get_by_role("button", name="Sign in").click()
        expect(mallory.get_by_text("wrong name or passphrase for session 's'")).to_be_visible()
        expect(mallory.get_by_text("Signed in as")).to_have_count(0)

        # each regrades their item with the keyboard only (undo, context, a grade): the other's stays
        for page, grade in ((bob, "2"), (alice, "4")):
            press(page, "u", "0 of 5 graded")
            press(page, "t", "0 of 5 graded")
            expect(page.locator(CONTEXT).first).to_be_visible()
            press(page, grade, "1 of 5 graded")
        wait_until_idle(alice)
        wait_until_idle(bob)

        # the admin's qrels preview after a reload, which keeps the admin signed in: the
        # trec scale, and which trec_eval level matches the app
        admin.reload(wait_until="domcontentloaded")
        wait_until_idle(admin)  # the page's first run after a reload (a CI run under load timed out before it)
        expect(admin.get_by_text(re.compile(r"trec_eval -l 2")).first).to_be_visible()
        expect(admin.get_by_label("Admin token", exact=True)).to_have_count(0)

    with JudgmentStore(db) as store:
        admin_api = store.admin(TOKEN)
        by = {j.annotator: (j.position, j.grade) for j in admin_api.all_judgments("s")}
        assert by == {"alice": (0, 4), "bob": (0, 2)}
        assert [h.annotator for h in admin_api.history("s")] == ["alice", "bob", "bob", "bob", "alice", "alice"]
        qrels = list(ir_measures.read_trec_qrels(admin_api.export_qrels("s", rule="mean")))
    # mean of 4 and 2 is 3 (relevant), written 2 on the trec scale: relevant at trec_eval -l 2
    assert [q.relevance for q in qrels] == [2]
