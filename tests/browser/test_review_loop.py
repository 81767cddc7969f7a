"""The whole annotation loop in a real Chromium: an annotator grades with a model's
suggestion on screen, notes an item and undoes its grade (the note stays), loses the server between two keys
(the key is refused aloud, none is lost) and grades again once it is back; a second annotator disagrees; a
reviewer signs in and adjudicates. Every step is checked in the SQLite database."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from sentret_core import Index
from sentret_core.annotation.adjudication import disagreements
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.suggestions import add_suggestions, model_suggestions
from tests.browser.test_annotate import CONNECTION, CURRENT, STEP_TIMEOUT_MS, TOKEN, App, reconnected, signed_in
from tests.browser_util import chromium, free_port, streamlit_server, wait_until_idle
from tests.sign_in_util import enrol, secret_of


def state(db: Path, name: str) -> dict[int, tuple[int | None, str | None]]:
    """Position → (grade, note) of ``name``'s items that have either, read as the admin."""
    with JudgmentStore(db) as store:
        handle = store.sign_in("s", name, secret_of(name))
        items = [handle.item_at(p) for p in range(handle.progress().total)]
        found = {i.position: handle.state_of(i.item_id) for i in items}
    return {p: (s.grade, s.note) for p, s in found.items() if s.grade is not None or s.note}


def test_suggestions_undo_of_a_noted_item_a_restart_and_a_reviewer_adjudicating(
    small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("playwright.sync_api", reason="no Playwright (pip install playwright)")
    from playwright.sync_api import expect

    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    db = tmp_path / "judgments.sqlite"
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, "picasso peace", top_entities=5, depth=2, order=None)
        admin = store.admin(TOKEN)
        assert add_suggestions(admin, "s", "bm25f.v1", model_suggestions(admin, "s", small_index, "bm25f.v1")) > 0
        enrol(store, TOKEN, "s", "ann", "bob")
        admin.add_annotator("s", "rita", secret_of("rita"), role="reviewer")
    env = {"SENTRET_JUDGMENTS_DB": str(db), ADMIN_TOKEN_ENV: TOKEN}
    port = free_port()
    with chromium() as browser:
        page: Any = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        page.set_default_timeout(STEP_TIMEOUT_MS)
        with streamlit_server(small_index.path, small_index.path.parent, tmp_path / "first.log", extra_env=env,
                              port=port) as server:
            app = App(server.url, db)
            caption = signed_in(page, app, "ann")
            expect(caption).to_have_text("Item 1")
            expect(page.locator(CURRENT).get_by_text(re.compile(r"^Suggested: \d"))).to_contain_text("bm25f.v1")
            page.keyboard.press("4")
            expect(caption).to_have_text("Item 2")
            page.get_by_label("Note (optional, saved with your grade)").fill("names the wrong Picasso?")
            page.get_by_role("button", name="Save note").click()
            expect(page.get_by_text("Note saved.")).to_be_visible()
            wait_until_idle(page)
            assert state(db, "ann") == {0: (4, None), 1: (None, "names the wrong Picasso?")}
            page.locator("h1").first.click()
            page.keyboard.press("2")
            expect(caption).to_have_text("Item 3")
            assert state(db, "ann") == {0: (4, None), 1: (2, "names the wrong Picasso?")}
            page.keyboard.press("u")  # undo item 2's grade: its note stays
            expect(caption).to_have_text("Item 2")
            note_box = page.get_by_label("Note (optional, saved with your grade)")
            expect(note_box).to_have_value("names the wrong Picasso?")
            assert state(db, "ann") == {0: (4, None), 1: (None, "names the wrong Picasso?")}
            wait_until_idle(page)
        page.wait_for_function(f"() => ({CONNECTION})() !== 'CONNECTED'", timeout=30_000)
        page.keyboard.press("3")
        expect(page.locator("#sentret-key-refused")).to_contain_text("your key \u201c3\u201d was not sent")
        assert state(db, "ann")[1] == (None, "names the wrong Picasso?")
        with streamlit_server(small_index.path, small_index.path.parent, tmp_path / "second.log", extra_env=env,
                              port=port) as server:
            reconnected(page, "ann")
            expect(caption).to_have_text("Item 2")
            page.keyboard.press("3")
            expect(caption).to_have_text("Item 3")
            assert state(db, "ann") == {0: (4, None), 1: (3, "names the wrong Picasso?")}
            with JudgmentStore(db) as store:  # bob disagrees on item 1
                bob = store.sign_in("s", "bob", secret_of("bob"))
                bob.grade(bob.item_at(0).item_id, 1)
            reviewer: Any = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
            reviewer.set_default_timeout(STEP_TIMEOUT_MS)
            reviewer.goto(f"{server.url}/annotate?session=s", wait_until="domcontentloaded")
            reviewer.get_by_label("Your name").fill("rita")
            reviewer.get_by_label(re.compile("passphrase", re.IGNORECASE)).fill(secret_of("rita"))
            reviewer.get_by_role("button", name="Sign in").click()
            expect(reviewer.get_by_text("Signed in as rita (reviewer)")).to_be_visible()
            expect(reviewer.get_by_role("heading", name="Disagreements")).to_be_visible()
            expect(reviewer.get_by_text(re.compile(r"^Item \d"))).to_have_count(0)  # nothing to grade
            reviewer.locator("label").filter(has_text=re.compile(r"^3 · relevant$")).click()
            wait_until_idle(reviewer)
            reviewer.get_by_role("button", name="Adjudicate", exact=True).click()
            expect(reviewer.get_by_text(re.compile("adjudicated as 3 · relevant"))).to_be_visible()
    with JudgmentStore(db) as store:
        admin = store.admin(TOKEN)
        [found] = disagreements(admin, "s")
        assert (found.position, found.grades, found.adjudicated, found.adjudicated_by) == (
            0, (("ann", 4), ("bob", 1)), 3, "rita")
        assert {j.annotator for j in admin.all_judgments("s")} == {"ann", "bob"}  # a suggestion is no annotator
