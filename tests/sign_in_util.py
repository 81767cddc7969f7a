"""Annotator sign-in for the tests, in one place: a handle from the library, the Annotate page
under AppTest, and the Annotate page in a browser.

Today the admin adds each annotator to a session with a personal passphrase, and the annotator
signs in with the session, their name and that passphrase; when sign-in changes, only the
functions here change.
"""

from __future__ import annotations

import re
from typing import Any

from streamlit.testing.v1 import AppTest

from sentret_core.annotation.annotator import AnnotatorHandle
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError

ANNOTATE_SCRIPT = "from sentret_core.ui.pages import annotate as annotate_page\nannotate_page.render()\n"


def secret_of(name: str) -> str:
    """The personal passphrase the tests give annotator ``name``."""
    return f"{name}-secret-passphrase"


def enrol(store: JudgmentStore, token: str, session: str, *names: str) -> None:
    """The admin (``token``) adds ``names`` to ``session``, each with :func:`secret_of` (once)."""
    admin = store.admin(token)
    for name in names:
        try:
            admin.add_annotator(session, name, secret_of(name))
        except SentretError as err:
            if "already has an annotator" not in str(err):
                raise


def sign_in_handle(store: JudgmentStore, token: str, session: str, name: str) -> AnnotatorHandle:
    """The library's sign-in (after enrolling ``name``): the handle that grades as ``name``."""
    enrol(store, token, session, name)
    return store.sign_in(session, name, secret_of(name))


def sign_in_app(session: str, name: str, secret: str | None = None, script: str = ANNOTATE_SCRIPT) -> AppTest:
    """A fresh AppTest (a new browser session) of the Annotate page, after submitting its sign-in form."""
    app = AppTest.from_string(script, default_timeout=60).run()
    app.text_input(key="annotate_session").input(session)
    app.text_input(key="annotate_name").input(name)
    app.text_input(key="annotate_passphrase").input(secret_of(name) if secret is None else secret)
    return app.button[0].click().run()


def sign_in_page(page: Any, base_url: str, session: str, name: str, secret: str | None = None) -> None:
    """Open the Annotate page in ``page`` (Playwright), sign in and wait for the first item."""
    from playwright.sync_api import expect

    page.goto(f"{base_url}/annotate?session={session}", wait_until="domcontentloaded")
    page.get_by_label("Your name").fill(name)
    page.get_by_label(re.compile("passphrase", re.IGNORECASE)).fill(secret_of(name) if secret is None else secret)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(re.compile(r"^Item \d"))).to_be_visible()
