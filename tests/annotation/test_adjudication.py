"""Disagreements and adjudication: the items annotators graded differently, and the admin's
adjudicated grade, kept apart from theirs, winning over majority and mean in qrels and evaluation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.annotation.adjudication import Disagreement, adjudicate, adjudicated_grades, disagreements
from sentret_core.annotation.admin import Admin
from sentret_core.annotation.judged_eval import session_qrels
from sentret_core.annotation.records import ItemView
from sentret_core.annotation.schema import _ADJUDICATIONS
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from tests.annotation.downgrade import downgrade
from tests.conftest import judgments_env
from tests.sign_in_util import sign_in_handle

TOKEN = "adjudication-test-token"
# grades by item (in the session's order): ann grades all five, bob the first four, carl two
ANN = {0: 4, 1: 3, 2: 1, 3: 2, 4: 1}
BOB = {0: 4, 1: 1, 2: 1, 3: 3}
CARL = {1: 3, 4: 1}


def session_items(store: JudgmentStore) -> list[ItemView]:
    """The session's items in its order (positions ascending), as ann is shown them."""
    handle = sign_in_handle(store, TOKEN, "s", "ann")
    found: dict[int, ItemView] = {}
    while (item := handle.next_item()) is not None and item.item_id not in found:  # skipped ones come again
        found[item.item_id] = item
        handle.skip(item.item_id)
    return sorted(found.values(), key=lambda i: i.position)


@pytest.fixture
def graded(
    small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[JudgmentStore, list[ItemView]]]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, "picasso peace", top_entities=5, depth=1)
        items = session_items(store)
        assert len(items) == 5
        for name, grades in (("ann", ANN), ("bob", BOB), ("carl", CARL)):
            handle = sign_in_handle(store, TOKEN, "s", name)
            for position, grade in grades.items():
                handle.grade(items[position].item_id, grade)
        yield store, items


def qrels_of(admin: Admin, **options: str) -> dict[tuple[str, int], int]:
    lines = admin.export_qrels("s", scale="1-4", ids="internal", **options).splitlines()
    return {(t, int(s)): int(g) for t, _, s, g in (line.split() for line in lines)}


def test_disagreements_are_listed_exactly(graded: tuple[JudgmentStore, list[ItemView]]) -> None:
    store, items = graded
    # item 0: 4, 4 · item 1: 3, 1, 3 · item 2: 1, 1 · item 3: 2, 3 · item 4: 1, 1 → items 1 and 3 differ
    found = disagreements(store.admin(TOKEN), "s")
    one, three = items[1], items[3]
    assert found == [
        Disagreement(one.item_id, one.position, one.query, one.entity, one.sentence_id, one.title, one.text,
                     (("ann", 3), ("bob", 1), ("carl", 3)), None),
        Disagreement(three.item_id, three.position, three.query, three.entity, three.sentence_id, three.title,
                     three.text, (("ann", 2), ("bob", 3)), None),
    ]


def test_an_adjudicated_grade_wins_in_qrels_and_leaves_the_annotators_grades(
    graded: tuple[JudgmentStore, list[ItemView]],
) -> None:
    store, items = graded
    admin = store.admin(TOKEN)
    before = admin.all_judgments("s")
    three = items[3]
    key = (disagreements(admin, "s")[1].topic_id, three.sentence_id)
    # majority of item 3's [2, 3]: a tie, to the lower grade 2; mean (2 + 3) / 2 = 2.5, rounded half up: 3
    assert qrels_of(admin)[key] == 2 and qrels_of(admin, rule="mean")[key] == 3
    assert adjudicate(admin, "s", three.item_id, 4) is True
    assert adjudicate(admin, "s", three.item_id, 4) is False  # already so: nothing changes
    assert adjudicated_grades(admin, "s") == {key: 4}
    assert disagreements(admin, "s")[1].adjudicated == 4
    majority, mean = qrels_of(admin), qrels_of(admin, rule="mean")
    assert majority[key] == mean[key] == 4
    assert qrels_of(admin, rule="annotator", annotator="bob")[key] == 3  # bob's own grade
    # every other item as before: item 1's majority of [3, 1, 3] is 3
    one = disagreements(admin, "s")[0]
    assert majority[(one.topic_id, one.sentence_id)] == 3
    assert session_qrels(admin, "s")[key[0]][str(three.sentence_id)] == 4  # what Evaluate reads
    trec = admin.export_qrels("s", ids="internal")  # the default trec scale writes grade - 1
    assert f"{key[0]} 0 {three.sentence_id} 3\n" in trec
    assert admin.all_judgments("s") == before  # no annotator's grade changed
    # cleared: the majority decides again
    assert adjudicate(admin, "s", three.item_id, None) is True
    assert qrels_of(admin)[key] == 2 and adjudicated_grades(admin, "s") == {}
    log = store._conn.execute("SELECT old_grade, new_grade FROM adjudication_log ORDER BY id").fetchall()
    assert log == [(None, 4), (4, None)]


def test_bad_adjudications_are_refused(graded: tuple[JudgmentStore, list[ItemView]]) -> None:
    store, items = graded
    admin = store.admin(TOKEN)
    with pytest.raises(SentretError, match="one of 1, 2, 3, 4; got 5"):
        adjudicate(admin, "s", items[1].item_id, 5)
    with pytest.raises(SentretError, match="one of 1, 2, 3, 4; got True"):
        adjudicate(admin, "s", items[1].item_id, True)
    with pytest.raises(SentretError, match="item 99999 is not in the pool of session 's'"):
        adjudicate(admin, "s", 99999, 3)
    with pytest.raises(SentretError, match="no session named 'nope'"):
        adjudicate(admin, "nope", items[1].item_id, 3)
    assert adjudicated_grades(admin, "s") == {}


def test_a_database_from_before_adjudication_still_opens(graded: tuple[JudgmentStore, list[ItemView]]) -> None:
    store, _ = graded
    path = store.path
    expected = store.admin(TOKEN).export_qrels("s")
    store.close()
    downgrade(path, _ADJUDICATIONS)  # the schema just before adjudications
    with JudgmentStore(path, read_only=True) as old:  # read as it is: no adjudications
        admin = old.admin(TOKEN)
        assert admin.export_qrels("s") == expected and len(disagreements(admin, "s")) == 2
    with JudgmentStore(path) as upgraded:  # opened for writing: migrated, nothing lost
        admin = upgraded.admin(TOKEN)
        assert admin.export_qrels("s") == expected
        assert adjudicate(admin, "s", disagreements(admin, "s")[0].item_id, 2)


ADMIN_SCRIPT = "from sentret_core.ui.pages import admin as admin_page\nadmin_page.render()\n"


def test_the_admin_page_shows_disagreements_and_adjudicates(graded: tuple[JudgmentStore, list[ItemView]]) -> None:
    from streamlit.testing.v1 import AppTest

    store, items = graded
    app = AppTest.from_string(ADMIN_SCRIPT, default_timeout=60).run()
    app.text_input(key="admin_token").input(TOKEN)
    app = app.button[0].click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any(h.value == "Disagreements" for h in app.subheader)
    table = next(d.value for d in app.dataframe if "adjudicated" in d.value.columns)
    # items 2 and 4 of the session (positions 1 and 3), each annotator's grade side by side
    assert table[["item", "ann", "bob", "carl", "adjudicated"]].values.tolist() == [
        [str(items[1].position + 1), "3", "1", "3", "—"], [str(items[3].position + 1), "2", "3", "—", "—"]
    ]
    assert table["sentence"].tolist()[0] == items[1].text[:120] or table["sentence"].tolist()[0].endswith("…")
    picker = app.selectbox(key="admin_adjudicate_item")
    assert picker.options[1] == f"#{items[3].position + 1} · {items[3].entity} · ann 2, bob 3"
    picker.set_value(items[3].item_id).run()
    assert app.button(key="admin_adjudicate").disabled  # no grade chosen yet
    app.radio(key=f"admin_adjudicate_grade_{items[3].item_id}").set_value(4).run()
    app.button(key="admin_adjudicate").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert [s.value.replace("\\", "") for s in app.success] == [  # shown as text: Markdown escaped
        f"Session s: item #{items[3].position + 1} ({items[3].entity}) adjudicated as 4 · very relevant."
    ]
    table = next(d.value for d in app.dataframe if "adjudicated" in d.value.columns)
    assert table["adjudicated"].tolist() == ["—", "4"]
    admin = store.admin(TOKEN)
    key = (disagreements(admin, "s")[1].topic_id, items[3].sentence_id)
    assert adjudicated_grades(admin, "s") == {key: 4}
    assert qrels_of(admin)[key] == 4  # what the export on the same page now writes
    assert {(j.annotator, j.grade) for j in admin.all_judgments("s") if j.sentence_id == items[3].sentence_id
            and j.topic_id == key[0]} == {("ann", 2), ("bob", 3)}
    app.button(key="admin_adjudicate_clear").click().run()
    assert adjudicated_grades(admin, "s") == {}
