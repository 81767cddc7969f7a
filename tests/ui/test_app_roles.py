"""Roles on the Annotate page (AppTest): a reviewer who signs in sees the session's disagreements and
adjudicates one, with no grading view; a session's admin sees the Admin page's parts for that session
only; and the admin token's people form gives every role."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.ui.judgments import cached_store
from tests.conftest import judgments_env
from tests.sign_in_util import secret_of, sign_in_app

TOKEN = "roles-admin-token"


@pytest.fixture
def store(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    """Session "s" where ann graded the first item 4 and bob 1; rita reviews, sam administers."""
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as opened:
        create_session(opened, "s", small_index, "picasso peace", top_entities=5, depth=1)
        create_session(opened, "other", small_index, "picasso peace", top_entities=2, depth=1)
        admin = opened.admin(TOKEN)
        for name, role in (("ann", "annotator"), ("bob", "annotator"), ("rita", "reviewer"), ("sam", "admin")):
            admin.add_annotator("s", name, secret_of(name), role=role)
        ann, bob = (opened.sign_in("s", who, secret_of(who)) for who in ("ann", "bob"))
        item = ann.next_item()
        assert item is not None
        ann.grade(item.item_id, 4)
        bob.grade(item.item_id, 1)
        yield opened
    cached_store.clear()


def texts(app: AppTest) -> str:
    return "\n".join(str(m.value) for m in [*app.markdown, *app.caption, *app.info, *app.success, *app.subheader])


def test_a_reviewer_sees_the_disagreements_adjudicates_and_has_no_grading_view(store: JudgmentStore) -> None:
    app = sign_in_app("s", "rita")
    assert not app.exception and not app.error
    shown = texts(app)
    assert "Signed in as **rita** (reviewer)" in shown
    assert "adjudicates the items annotators graded differently" in shown
    assert [s.value for s in app.subheader] == ["Disagreements"]
    assert not [b for b in app.button if re.match(r"grade\d_", b.key or "")]  # no grade buttons
    choice = next(r.key for r in app.radio if (r.key or "").startswith("admin_adjudicate_grade"))
    app.radio(key=choice).set_value(3).run()
    app.button(key="admin_adjudicate").click().run()
    assert not app.exception and not app.error
    assert "adjudicated as 3 · relevant" in texts(app)
    [found] = store.reviewer(store.sign_in("s", "rita", secret_of("rita"))).disagreements()
    assert (found.adjudicated, found.adjudicated_by) == (3, "rita")
    assert found.adjudicated_by in app.dataframe[0].value["by"].tolist()


def test_a_session_admin_administers_that_session_only(store: JudgmentStore) -> None:
    app = sign_in_app("s", "sam")
    assert not app.exception and not app.error
    headings = [s.value for s in app.subheader]
    assert {"Annotators", "Disagreements"} <= set(headings) and "Sessions" not in headings
    assert "Session: **s**" in texts(app) and "other" not in texts(app)
    roles = app.radio(key="admin_annotator_role").options
    assert roles == ["annotator — grades the session's items",
                     "reviewer — adjudicates the items annotators graded differently; does not grade"]
    app.text_input(key="admin_annotator_new").input("carl")
    app.radio(key="admin_annotator_role").set_value("reviewer")  # a form: sent with its submit button
    app.button(key=next(b.key for b in app.button if "FormSubmitter:admin_add_annotator" in (b.key or ""))).click()
    app.run()
    assert not app.exception and not app.error
    people = {p.name: p.role for p in store.admin(TOKEN).annotators("s")}
    assert people["carl"] == "reviewer"
    assert "Secret for **carl**" in texts(app)
