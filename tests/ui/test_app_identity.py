"""Impersonation refused through the Annotate page (AppTest): personal passphrases,
sign-in links whose token leaves the address at once, normalised names, and an annotator signed out
when the admin disables them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.records import AnnotatorSecret
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.throttle import SignInThrottle
from sentret_core.ui.judgments import cached_store
from tests.conftest import judgments_env

TOKEN = "identity-page-token"


class FixedClock:
    """Time for the sign-in throttle that stands still: no real time passes between attempts."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


SCRIPT = "from sentret_core.ui.pages import annotate\nannotate.render()\n"


@pytest.fixture
def people(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[
    tuple[JudgmentStore, dict[str, AnnotatorSecret]]
]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, "picasso peace", top_entities=5, depth=2)
        admin = store.admin(TOKEN)
        secrets = {name: admin.add_annotator("s", name) for name in ("alice", "bob")}
        cached_store.clear()
        cached_store(str(store.path)).throttle = SignInThrottle(clock=FixedClock(1000.0))  # the app's store
        yield store, secrets
    cached_store.clear()


def form(session: str, name: str, passphrase: str) -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.text_input(key="annotate_session").input(session)
    app.text_input(key="annotate_name").input(name)
    app.text_input(key="annotate_passphrase").input(passphrase)
    return app.button[0].click().run()


def link(session: str, token: str) -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=60)
    app.query_params["session"] = session
    app.query_params["token"] = token
    return app.run()


def signed_in_as(app: AppTest) -> str | None:
    found = [m.value for m in app.markdown if m.value.startswith("Signed in as")]
    return found[0] if found else None


def test_bob_cannot_sign_in_as_alice_on_the_page(people: tuple[JudgmentStore, dict[str, AnnotatorSecret]]) -> None:
    store, secrets = people
    app = form("s", "alice", secrets["bob"].passphrase)
    assert not app.exception
    assert [e.value for e in app.error] == ["wrong name or passphrase for session 's'"]
    assert signed_in_as(app) is None and not app.get("progress")
    app = form("s", "alice", "")
    assert [e.value for e in app.error] == ["wrong name or passphrase for session 's'"]
    assert store.admin(TOKEN).all_judgments("s") == []
    # alice's own passphrase, her name typed differently: alice
    app = form("s", "  ALICE ", secrets["alice"].passphrase)
    assert signed_in_as(app) == "Signed in as **alice** · session **s**"
    next(b for b in app.button if (b.key or "").startswith("grade4_")).click().run()
    assert [(j.annotator, j.grade) for j in store.admin(TOKEN).all_judgments("s")] == [("alice", 4)]


def test_a_sign_in_link_signs_in_and_leaves_the_address(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]],
) -> None:
    _, secrets = people
    app = link("s", secrets["bob"].token)
    assert not app.exception and not app.error
    assert signed_in_as(app) == "Signed in as **bob** · session **s**"
    assert "token" not in app.query_params and app.query_params["session"] == "s"
    # a forged link (bob's id, a made-up secret) and a link of another session
    forged = f"{secrets['alice'].token.split('.')[0]}.{'x' * 43}"
    for session, token in (("s", forged), ("other", secrets["alice"].token), ("s", "garbage")):
        app = link(session, token)
        assert not app.exception and signed_in_as(app) is None
        assert len(app.error) == 1 and ("not valid" in app.error[0].value or "no session" in app.error[0].value)
        assert "token" not in app.query_params
        assert app.text_input(key="annotate_passphrase") is not None  # the form is there instead


def test_a_disabled_annotator_is_signed_out_by_the_page(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]],
) -> None:
    store, secrets = people
    app = link("s", secrets["alice"].token)
    assert signed_in_as(app) is not None
    store.admin(TOKEN).disable_annotator("s", "alice")
    app.run()
    assert signed_in_as(app) is None
    assert any("signed out of session" in e.value for e in app.error)
    app = form("s", "alice", secrets["alice"].passphrase)
    assert [e.value for e in app.error] == ["your access to session 's' is disabled; ask the organiser"]


def test_repeated_failures_on_the_page_are_slowed_down(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]],
) -> None:
    store, secrets = people
    clock = FixedClock(1000.0)  # no real time passes between the attempts
    cached_store.clear()
    cached_store(str(store.path)).throttle = SignInThrottle(clock=clock)  # the app's own store
    for _ in range(3):
        assert form("s", "alice", "guess").error[0].value == "wrong name or passphrase for session 's'"
    cached_store.clear()  # a restart: the counts are in the database, not in the store object
    cached_store(str(store.path)).throttle = SignInThrottle(clock=clock)
    app = form("s", "alice", secrets["alice"].passphrase)  # even the right one must wait now
    assert app.error[0].value.startswith("too many failed sign-ins for 'alice': try again in")
    assert signed_in_as(app) is None


def test_wrong_admin_tokens_on_the_page_are_slowed_down(
    people: tuple[JudgmentStore, dict[str, AnnotatorSecret]],
) -> None:
    store, _ = people
    cached_store.clear()
    cached_store(str(store.path)).throttle = SignInThrottle(clock=FixedClock(1000.0))
    script = "from sentret_core.ui.pages import admin as admin_page\nadmin_page.render()\n"

    def token(given: str) -> list[str]:
        app = AppTest.from_string(script, default_timeout=60).run()
        app.text_input(key="admin_token").input(given)
        return [e.value for e in app.button[0].click().run().error]

    assert [token(f"guess {n}") for n in range(3)] == [["wrong admin token"]] * 3  # three free failures
    # the 4th, even the right token, waits 1 s (1·2^(3−3)): today every one was answered at once
    assert token(TOKEN) == ["too many failed sign-ins with the admin token: try again in 1 s"]
