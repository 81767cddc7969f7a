"""The right secret from a known browser is never refused for strangers' failures, on the Annotate and Admin
pages under AppTest.

Under AppTest every browser has the same client, "local", as everyone behind one tunnel or proxy has. The
cookie a browser sends is what ``browser_session._sent_cookies`` returns (AppTest cannot seed
``st.context.cookies``), so the tests put there the known-browser id the first sign-in wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.throttle import SignInThrottle
from sentret_core.errors import SentretError
from sentret_core.ui import browser_session
from sentret_core.ui.browser_session import KNOWN_COOKIE
from sentret_core.ui.judgments import cached_store
from tests.conftest import judgments_env

TOKEN = "known-browser-page-token"
SCRIPT = "from sentret_core.ui.pages import annotate\nannotate.render()\n"
ADMIN_SCRIPT = "from sentret_core.ui.pages import admin\nadmin.render()\n"


class FixedClock:
    def __call__(self) -> float:
        return 1000.0  # no real time passes: a wait never ends by itself here


@pytest.fixture
def store(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as opened:
        create_session(opened, "s", small_index, "picasso peace", top_entities=5, depth=2)
        opened.admin(TOKEN).add_annotator("s", "carol", "carol-passphrase")
        opened.throttle = SignInThrottle(clock=FixedClock())
        cached_store.clear()
        cached_store(str(opened.path)).throttle = SignInThrottle(clock=FixedClock())  # the app's store
        yield opened
    cached_store.clear()


def written(app: AppTest, cookie: str) -> str:
    return str(app.session_state["browser_session_written"][cookie][0])


def browser_sends(monkeypatch: pytest.MonkeyPatch, cookies: dict[str, str]) -> None:
    monkeypatch.setattr(browser_session, "_sent_cookies", lambda: dict(cookies))


def sign_in(passphrase: str = "carol-passphrase") -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.text_input(key="annotate_session").input("s")
    app.text_input(key="annotate_name").input("carol")
    app.text_input(key="annotate_passphrase").input(passphrase)
    return app.button[0].click().run()


def signed_in(app: AppTest) -> bool:
    return any(m.value.startswith("Signed in as **carol**") for m in app.markdown)


def strangers_fail(store: JudgmentStore, attempt: object) -> None:
    """12 wrong tries from "local" and 20 from rotating clients (past the name's ceiling)."""
    for client in ["local"] * 12 + [f"203.0.113.{n}" for n in range(20)]:
        with pytest.raises(SentretError):
            attempt(client)  # type: ignore[operator]


def test_carols_own_browser_signs_her_in_after_strangers_failed(
    store: JudgmentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = sign_in()
    assert signed_in(first)
    browser = written(first, KNOWN_COOKIE)
    first.button(key="annotate_sign_out").click().run()  # signing out keeps the browser known
    assert not signed_in(first)
    strangers_fail(store, lambda client: store.sign_in("s", "carol", "a guess", client=client))
    assert any("too many failed sign-ins" in e.value for e in sign_in().error)  # a new browser waits
    browser_sends(monkeypatch, {KNOWN_COOKIE: browser})  # today: refused all the same
    again = sign_in()
    assert not again.error and signed_in(again)


def test_the_admins_browser_stays_in_and_signs_in_again_after_strangers_failed(
    store: JudgmentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()
    app.text_input(key="admin_token").input(TOKEN)
    app.button[0].click().run()
    browser = written(app, KNOWN_COOKIE)
    strangers_fail(store, lambda client: store.admin("wrong", client=client))
    # the open page re-checks the token at every run: not held up (today: the token form comes back)
    assert not [t for t in app.run().text_input if t.key == "admin_token"]
    stranger = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()
    stranger.text_input(key="admin_token").input(TOKEN)
    assert any("too many failed sign-ins" in e.value for e in stranger.button[0].click().run().error)
    browser_sends(monkeypatch, {KNOWN_COOKIE: browser})  # another tab of the admin's browser, no admin cookie
    tab = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()
    tab.text_input(key="admin_token").input(TOKEN)
    tab.button[0].click().run()
    assert not tab.error and any(b.label == "Sign out as admin" for b in tab.button)
    assert not [t for t in tab.run().text_input if t.key == "admin_token"]
