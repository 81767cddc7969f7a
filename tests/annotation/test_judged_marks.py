"""The team's grades shown in Explore (sentret_core.annotation.judged_marks and the Explore page): per sentence
of a topic over every session of the same index, majority (or adjudicated) relevance, precision over the judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.annotation.adjudication import adjudicate as adjudicate_item
from sentret_core.annotation.judged_marks import Judged, judged_sentences, precision_over_judged
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.support.engine import support
from tests.annotation.test_sessions import DOCS
from tests.conftest import build_from_texts, judgments_env
from tests.ui.test_app_explore import explore, support_cards

QUERY, FRANCO = "picasso peace", "Picasso|PERSON"  # Picasso (PERSON): in seven sentences of DOCS
TOKEN = "judged-marks-token"


@pytest.fixture(scope="module")
def docs_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("judged"), DOCS)


def graded_store(index: Index, db: Path, grades: dict[str, list[int]]) -> list[int]:
    """Session 's' on (QUERY, FRANCO), each annotator grading the first items with ``grades``; the pooled
    sentence ids in the pool's order."""
    with JudgmentStore(db) as store:
        _, plan = create_session(store, "s", index, f"{QUERY}\t{FRANCO}", depth=3)
        admin = store.admin(TOKEN)
        for who, given in grades.items():
            handle = store.sign_in("s", who, admin.add_annotator("s", who).passphrase)
            for grade in given:
                item = handle.next_item()
                assert item is not None
                handle.grade(item.item_id, grade)
        return [item.sentence_id for item in plan.items]


def test_grades_by_sentence_over_the_sessions_of_one_index(
    docs_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = judgments_env(monkeypatch, tmp_path, docs_index, TOKEN)
    pooled = graded_store(docs_index, db, {"ann": [4, 1, 3], "bob": [3, 2]})
    query = support(docs_index, QUERY, per_entity=1).query  # the session's query, as pooled and as Explore asks
    with JudgmentStore(db) as store:
        judged = judged_sentences(store, docs_index.path, query, FRANCO)
        assert judged == {pooled[0]: Judged((3, 4), 3), pooled[1]: Judged((1, 2), 1), pooled[2]: Judged((3,), 3)}
        assert precision_over_judged(judged, [pooled[0], pooled[1], 10**6]) == (1, 2)
        assert judged_sentences(store, tmp_path / "another-index", query, FRANCO) == {}
        assert judged_sentences(store, docs_index.path, query, "Madrid|GPE") == {}
        admin = store.admin(TOKEN)
        assert adjudicate_item(admin, "s", _item_id(store, pooled[1]), 4)  # the adjudicated grade decides
        assert judged_sentences(store, docs_index.path, query, FRANCO)[pooled[1]] == Judged((1, 2), 4)
        admin.remove_annotator("s", "bob")  # a removed annotator's grades count nowhere
        assert judged_sentences(store, docs_index.path, query, FRANCO)[pooled[0]] == Judged((4,), 4)


def _item_id(store: JudgmentStore, sentence: int) -> int:
    with store.db.read() as conn:
        return int(conn.execute("SELECT id FROM pool_items WHERE sentence_id = ?", (sentence,)).fetchone()[0])


def test_explore_marks_each_support_sentence_judged_or_not(
    docs_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = judgments_env(monkeypatch, tmp_path, docs_index, TOKEN)
    plain = explore(docs_index, monkeypatch, {"q": QUERY, "entity": FRANCO})
    assert not [c for c in support_cards(plain) if "judged" in c]  # no database: no marks
    pooled = graded_store(docs_index, db, {"ann": [4, 1]})
    app = explore(docs_index, monkeypatch, {"q": QUERY, "entity": FRANCO})
    assert not app.exception and not app.error
    cards = support_cards(app)
    assert any("judged 4 → relevant" in c for c in cards) and any("judged 1 → not relevant" in c for c in cards)
    assert all(("judged" in c) for c in cards)  # every card says judged or unjudged
    assert len(pooled) > 2 and any("unjudged" in c for c in cards)  # shown but not graded yet
    headers = [m.value for m in app.markdown if "candidate sentences" in m.value]
    assert any("precision over the judged" in h for h in headers)


def test_a_new_grade_shows_at_the_next_run(docs_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = judgments_env(monkeypatch, tmp_path, docs_index, TOKEN)
    graded_store(docs_index, db, {"ann": [4]})
    app = explore(docs_index, monkeypatch, {"q": QUERY, "entity": FRANCO})

    def judged_cards() -> int:
        return sum("judged " in c and "unjudged" not in c for c in support_cards(app))

    before = judged_cards()
    with JudgmentStore(db) as store:
        handle = store.sign_in("s", "bea", store.admin(TOKEN).add_annotator("s", "bea").passphrase)
        first, second = handle.next_item(), None
        assert first is not None
        handle.grade(first.item_id, 2)  # the same first item: its grades change, not the count
        second = handle.next_item()
        assert second is not None
        handle.grade(second.item_id, 3)
    app.run()
    assert judged_cards() > before and any("judged 2 · 4" in c for c in support_cards(app))
