"""Sign-in that survives on the Annotate page and the admin pages, under AppTest.

A "restart" is a new AppTest (a new browser connection) after the app's cached store is dropped (a
new process keeps nothing in memory), whose browser sends the cookie the first one was given. The
cookie a browser sends is what ``browser_session._sent_cookies`` returns: AppTest cannot seed
``st.context.cookies``, so the tests put it there.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.records import AnnotatorSecret
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.web_sessions import ADMIN_LIFETIME_S, SessionEnded, WebSessions
from sentret_core.ui import browser_session
from sentret_core.ui.annotate.keys import WEB_ID
from sentret_core.ui.browser_session import ADMIN_COOKIE, ANNOTATOR_COOKIE
from sentret_core.ui.judgments import app_store, cached_store
from tests.conftest import judgments_env

TOKEN = "survive-admin-token"
SCRIPT = "from sentret_core.ui.pages import annotate\nannotate.render()\n"
ADMIN_SCRIPT = "from sentret_core.ui.pages import admin\nadmin.render()\n"


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def people(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[
    tuple[JudgmentStore, dict[str, AnnotatorSecret]]
]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, "picasso peace", top_entities=5, depth=2)
        yield store, {"alice": store.admin(TOKEN).add_annotator("s", "alice", "alice-passphrase")}
    cached_store.clear()


def browser_sends(monkeypatch: pytest.MonkeyPatch, cookies: dict[str, str]) -> None:
    monkeypatch.setattr(browser_session, "_sent_cookies", lambda: dict(cookies))


def signed_in_as(app: AppTest) -> str | None:
    found = [m.value for m in app.markdown if m.value.startswith("Signed in as")]
    return found[0] if found else None


def grade_button(app: AppTest, grade: int) -> object:
    return next(b for b in app.button if (b.key or "").startswith(f"grade{grade}_"))


def sign_in(name: str = "alice") -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.text_input(key="annotate_session").input("s")
    app.text_input(key="annotate_name").input(name)
    app.text_input(key="annotate_passphrase").input(f"{name}-passphrase")
    return app.button[0].click().run()


def restart(monkeypatch: pytest.MonkeyPatch, cookies: dict[str, str]) -> AppTest:
    cached_store.clear()  # a new process: no store, no session state, only the database and the cookie
    browser_sends(monkeypatch, cookies)
    return AppTest.from_string(SCRIPT, default_timeout=60).run()


def test_a_restart_keeps_the_annotator_signed_in_and_no_key_is_lost(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = people
    app = sign_in()
    assert signed_in_as(app) == "Signed in as **alice** · session **s**"
    web_id = app.session_state[WEB_ID]
    grade_button(app, 3).click().run()
    app = restart(monkeypatch, {ANNOTATOR_COOKIE: web_id})
    assert not app.exception and not app.error
    assert signed_in_as(app) == "Signed in as **alice** · session **s**"  # no sign-in form
    assert not [t for t in app.text_input if t.key == "annotate_passphrase"]
    grade_button(app, 4).click().run()  # the next key after the restart is applied
    assert [j.grade for j in store.admin(TOKEN).all_judgments("s")] == [3, 4]
    # a new tab (another connection, same cookie) is signed in too
    cached_store.clear()
    assert signed_in_as(AppTest.from_string(SCRIPT, default_timeout=60).run()) is not None


def test_a_revoked_or_expired_sign_in_says_so_and_a_key_meanwhile_is_refused_aloud(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = people
    app = sign_in()
    web_id = app.session_state[WEB_ID]
    # the admin re-keys alice while her page shows an item: her next key is refused with the reason
    store.admin(TOKEN).new_secret("s", "alice")
    grade_button(app, 2).click().run()
    errors = [e.value for e in app.error]
    assert any(e.startswith("You are signed out: you are signed out of session") for e in errors)
    assert any(e.startswith("Not saved: your grade was not applied, because") for e in errors)
    assert signed_in_as(app) is None and store.admin(TOKEN).all_judgments("s") == []
    # her old cookie after a restart: the form says why, once
    app = restart(monkeypatch, {ANNOTATOR_COOKIE: web_id})
    assert any("changed or disabled your access" in e.value for e in app.error)
    assert signed_in_as(app) is None


def test_expiry_is_shown_before_the_next_key(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = people
    clock = Clock(1000.0)
    app_store().web_sessions = WebSessions(annotator_lifetime=60.0, clock=clock)
    app = sign_in()
    assert signed_in_as(app) is not None
    clock.now = 1059.0  # signed in at 1000 for 60 s: still signed in
    assert signed_in_as(app.run()) is not None
    clock.now = 1060.0  # exactly at the expiry: the page (the watch's rerun) says so, no key needed
    app.run()
    assert signed_in_as(app) is None
    assert any("expired after" in e.value for e in app.error)
    assert store.admin(TOKEN).all_judgments("s") == []


def test_a_closed_session_is_shown_closed_on_the_next_run(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]],
) -> None:
    store, _ = people
    app = sign_in()
    store.admin(TOKEN).close_session("s")
    app.run()  # what the watch fragment's rerun does every WATCH_S seconds
    assert any("is closed" in e.value for e in app.error)


def test_the_admin_stays_signed_in_across_a_restart_until_the_token_changes(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()
    app.text_input(key="admin_token").input(TOKEN)
    app.button[0].click().run()
    web_id = app.session_state["admin_web_id"]
    assert not [t for t in app.run().text_input if t.key == "admin_token"]
    cached_store.clear()
    browser_sends(monkeypatch, {ADMIN_COOKIE: web_id})
    app = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()
    assert not app.exception
    assert not [t for t in app.text_input if t.key == "admin_token"]  # no token asked again
    monkeypatch.setenv("SENTRET_ADMIN_TOKEN", "a-new-token")
    cached_store.clear()
    app = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()
    assert [t for t in app.text_input if t.key == "admin_token"]
    assert any("admin token has changed" in w.value for w in app.warning)


def test_the_admin_signs_out_everywhere(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = people
    app = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()
    app.text_input(key="admin_token").input(TOKEN)
    app.button[0].click().run()
    web_id = app.session_state["admin_web_id"]
    browser_sends(monkeypatch, {ADMIN_COOKIE: web_id})
    other_tab = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()  # resumed from the cookie
    assert not [t for t in other_tab.text_input if t.key == "admin_token"]
    app.button(key="admin_sign_out").click().run()
    assert [t for t in app.text_input if t.key == "admin_token"]  # the token is asked again
    assert [s.value for s in app.success] == ["You signed out as admin."]
    with pytest.raises(SessionEnded):  # the server-side session is gone
        store.web_sessions.resume_admin(store, web_id, TOKEN)
    other_tab.run()  # the other tab, at its next run: signed out too, saying why
    assert [t for t in other_tab.text_input if t.key == "admin_token"]
    assert any("admin sign-in has ended" in w.value for w in other_tab.warning)
    reloaded = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()  # a reload sending the old cookie
    assert [t for t in reloaded.text_input if t.key == "admin_token"]


def cookie_scripts(app: AppTest) -> list[str]:
    """The srcdoc of every cookie-writing component the run drew."""
    return [e.proto.srcdoc for e in app.main if getattr(e, "type", None) == "iframe" and "doc.cookie" in e.proto.srcdoc]


def test_the_sign_in_cookie_is_written_in_every_run_the_same_until_signed_out(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]],
) -> None:
    """The component that writes the cookie is drawn again at every run of the connection, unchanged: one drawn only
    in the sign-in run was gone at the next (a click soon after signing in), sometimes before the browser ran it,
    and a reload then found no cookie (a CI run of tests/browser/test_identity.py under load)."""
    app = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()
    assert cookie_scripts(app) == []
    app.text_input(key="admin_token").input(TOKEN)
    app.button[0].click().run()
    web_id = app.session_state["admin_web_id"]
    signed_in = cookie_scripts(app)
    assert len(signed_in) == 1 and f'[["{ADMIN_COOKIE}", "{web_id}", ' in signed_in[0]
    expires = int(signed_in[0].split(f'"{web_id}", ', 1)[1].split("]", 1)[0])
    assert abs(expires / 1000 - (time.time() + ADMIN_LIFETIME_S)) < 60  # a date: the same every run
    for _ in range(2):
        app.run()
        assert cookie_scripts(app) == signed_in
    app.button(key="admin_sign_out").click().run()
    assert cookie_scripts(app) == [signed_in[0].replace(f'"{web_id}", {expires}', '"", 0')]  # expired in 1970
