"""Roles (annotation/roles.py): a reviewer adjudicates and cannot grade; a session's admin administers
that one session with a personal secret; neither reaches another session, and only annotators share
the session's items and appear in its progress."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentret_core.annotation.annotator import AnnotatorHandle, SignedOut
from sentret_core.annotation.item_order import ItemOrder
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.roles import REVIEWER, SESSION_ADMIN
from sentret_core.annotation.schema import _ROLES
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from tests.annotation.downgrade import downgrade
from tests.annotation.test_store import SETTINGS, TOKEN, make_items

SECRET = "a-personal-passphrase"


def person(store: JudgmentStore, name: str, role: str = "annotator", session: str = "s") -> AnnotatorHandle:
    store.admin(TOKEN).add_annotator(session, name, SECRET, role=role)
    return store.sign_in(session, name, SECRET)


def disagree(store: JudgmentStore) -> int:
    """ann grades the first item 4 and bob 1; returns its id."""
    ann, bob = person(store, "ann"), person(store, "bob")
    item = ann.next_item()
    assert item is not None
    ann.grade(item.item_id, 4)
    bob.grade(item.item_id, 1)
    return item.item_id


def test_a_reviewer_cannot_grade_note_flag_skip_or_undo(store: JudgmentStore) -> None:
    item = disagree(store)
    rita = person(store, "rita", REVIEWER)
    assert rita.role == REVIEWER
    for act in (lambda: rita.grade(item, 3), lambda: rita.note(item, "hm"), lambda: rita.flag(item),
                lambda: rita.skip(item), lambda: rita.show(item)):
        with pytest.raises(SentretError, match="as its reviewer: a reviewer adjudicates and does not grade"):
            act()
    assert rita.next_item() is None and rita.progress().total == 0  # no item is hers to grade
    assert rita.undo() is None
    assert {j.annotator for j in store.admin(TOKEN).all_judgments("s")} == {"ann", "bob"}


def test_a_reviewer_adjudicates_and_the_log_says_who(store: JudgmentStore) -> None:
    item = disagree(store)
    rita = store.reviewer(person(store, "rita", REVIEWER))
    [found] = rita.disagreements()
    assert (found.item_id, found.grades, found.adjudicated) == (item, (("ann", 4), ("bob", 1)), None)
    assert rita.adjudicate(item, 3) is True
    [found] = rita.disagreements()
    assert (found.adjudicated, found.adjudicated_by) == (3, "rita")
    admin = store.admin(TOKEN)
    lines = admin.export_qrels("s", scale="1-4", ids="internal").splitlines()
    assert [line.split()[3] for line in lines] == ["3"]  # the adjudicated grade, over the tie of 4 and 1
    from sentret_core.annotation.adjudication import adjudicate

    adjudicate(admin, "s", item, 2)
    assert store.reviewer(store.sign_in("s", "rita", SECRET)).disagreements()[0].adjudicated_by == "admin"


def test_annotators_neither_adjudicate_nor_administer(store: JudgmentStore) -> None:
    ann = person(store, "ann")
    with pytest.raises(SentretError, match="only its reviewers and admins adjudicate"):
        store.reviewer(ann)
    with pytest.raises(SentretError, match="is not an admin of session 's'"):
        store.session_admin(ann)


def test_reviewers_and_admins_take_no_share_of_the_items_and_no_place_in_progress(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    with JudgmentStore(tmp_path / "j.db") as store:
        store.create_session("s", "/i", make_items(), SETTINGS, ItemOrder(overlap=0, seed=3))
        ann, bob = person(store, "ann"), person(store, "bob")
        before = (ann.progress().total, bob.progress().total)
        assert sum(before) == len(make_items())  # no overlap: each item is one annotator's
        person(store, "rita", REVIEWER)
        person(store, "sam", SESSION_ADMIN)
        assert (ann.progress().total, bob.progress().total) == before
        admin = store.admin(TOKEN)
        assert set(admin.progress_by_annotator("s")) == {"ann", "bob"}
        assert {p.name: p.role for p in admin.annotators("s")} == {
            "ann": "annotator", "bob": "annotator", "rita": REVIEWER, "sam": SESSION_ADMIN}


def test_a_change_of_role_signs_the_person_out_and_is_logged(store: JudgmentStore) -> None:
    ann = person(store, "ann")
    admin = store.admin(TOKEN)
    admin.set_role("s", "ann", REVIEWER)
    with pytest.raises(SignedOut):
        ann.progress()
    again = store.sign_in("s", "ann", SECRET)
    assert again.role == REVIEWER
    admin.set_role("s", "ann", REVIEWER)  # no change: not logged again
    assert [(a, what, detail) for a, what, detail, _ in admin.annotator_log("s")] == [
        ("ann", "add", "ann"), ("ann", "secret", None), ("ann", "role", REVIEWER)]
    with pytest.raises(SentretError, match="a role is one of annotator, reviewer, admin; got 'boss'"):
        admin.set_role("s", "ann", "boss")


def test_a_session_admin_administers_their_session_only(store: JudgmentStore) -> None:
    store.create_session("other", "/i", make_items(), SETTINGS)
    item = disagree(store)
    sam = store.session_admin(person(store, "sam", SESSION_ADMIN))
    assert sam.acting_as == "sam"
    secret = sam.add_annotator("s", "carl")
    assert store.sign_in("s", "carl", secret.passphrase).role == "annotator"
    sam.add_annotator("s", "rita", role=REVIEWER)
    assert {j.annotator for j in sam.all_judgments("s")} == {"ann", "bob"}
    assert "4" in sam.export_csv("s")
    from sentret_core.annotation.adjudication import adjudicate, disagreements

    adjudicate(sam, "s", item, 4)
    assert disagreements(sam, "s")[0].adjudicated_by == "sam"
    for act in (lambda: sam.all_judgments("other"), lambda: sam.close_session("other"),
                lambda: sam.add_annotator("other", "dan"), lambda: disagreements(sam, "other")):
        with pytest.raises(SentretError, match="signed in to session 's' only, not to 'other'"):
            act()
    with pytest.raises(SentretError, match="only the holder of the admin token makes someone a session's admin"):
        sam.add_annotator("s", "eve", role=SESSION_ADMIN)
    with pytest.raises(SentretError, match="only the holder of the admin token makes someone a session's admin"):
        sam.set_role("s", "carl", SESSION_ADMIN)
    store.admin(TOKEN).add_annotator("s", "tom", SECRET, role=SESSION_ADMIN)
    for act in (lambda: sam.disable_annotator("s", "tom"), lambda: sam.set_role("s", "tom", "annotator"),
                lambda: sam.remove_annotator("s", "sam")):
        with pytest.raises(SentretError, match="is an admin of this session: only the holder of the admin token"):
            act()
    sam.close_session("s")
    assert not store.session("s").is_open


def test_a_disabled_session_admin_or_reviewer_loses_access_at_once(store: JudgmentStore) -> None:
    disagree(store)
    sam = store.session_admin(person(store, "sam", SESSION_ADMIN))
    rita = store.reviewer(person(store, "rita", REVIEWER))
    admin = store.admin(TOKEN)
    admin.disable_annotator("s", "sam")
    admin.disable_annotator("s", "rita")
    with pytest.raises(SignedOut):
        sam.all_judgments("s")
    with pytest.raises(SignedOut):
        rita.disagreements()


def test_a_handle_acts_in_its_own_store_only(store: JudgmentStore, tmp_path: Path) -> None:
    rita = person(store, "rita", REVIEWER)
    with JudgmentStore(tmp_path / "elsewhere.db") as other:
        with pytest.raises(SentretError, match="belongs to another judgments database"):
            other.reviewer(rita)
        with pytest.raises(SentretError, match="belongs to another judgments database"):
            other.session_admin(rita)


def test_a_database_from_before_roles_reads_everyone_as_an_annotator(store: JudgmentStore) -> None:
    person(store, "ann")
    path = store.db.path
    store.close()
    downgrade(path, _ROLES)
    with JudgmentStore(path, read_only=True) as old:
        admin = old.admin(TOKEN)
        assert [(p.name, p.role) for p in admin.annotators("s")] == [("ann", "annotator")]
        assert set(admin.progress_by_annotator("s")) == {"ann"}
    with JudgmentStore(path) as migrated:  # a writer takes it up to roles
        assert migrated.sign_in("s", "ann", SECRET).role == "annotator"
