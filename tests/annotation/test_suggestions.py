"""Model suggestions (sentret_core.annotation.suggestions): grades from a model's ranking by quarter, from a
file, shown to annotators, never counted as a grade, and compared with each annotator's grades."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.agreement_summary import agreement_summary
from sentret_core.annotation.io import parse_qrels_lines
from sentret_core.annotation.records import IMPORT_SCALES
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.suggestions import (
    SuggestionAgreement,
    add_suggestions,
    agreement_with_suggestions,
    file_suggestions,
    model_suggestions,
    rank_grades,
)
from sentret_core.annotation.topics import find_entity
from sentret_core.errors import SentretError
from sentret_core.support.context import QueryContext
from tests.annotation.test_sessions import DOCS
from tests.conftest import build_from_texts, judgments_env

QUERY, PICASSO, TOKEN = "picasso peace", "Picasso|PERSON", "suggestions-token"


@pytest.fixture(scope="module")
def docs_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("suggest"), DOCS)


def test_a_ranking_becomes_grades_by_quarter() -> None:
    assert rank_grades([7, 3, 9, 1], [5]) == {7: 4, 3: 3, 9: 2, 1: 1, 5: 1}
    assert rank_grades([2], []) == {2: 4}
    assert rank_grades([1, 2, 3], [4]) == {1: 4, 2: 3, 3: 2, 4: 1}  # places 0, 1/3, 2/3 of the way
    assert rank_grades([], [4, 5]) == {4: 1, 5: 1}


def test_suggestions_come_from_a_model_or_a_file_and_never_count(
    docs_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = judgments_env(monkeypatch, tmp_path, docs_index, TOKEN)
    with JudgmentStore(db) as store:
        _, plan = create_session(store, "s", docs_index, f"{QUERY}\t{PICASSO}", depth=4)
        admin = store.admin(TOKEN)
        items = {int(i.sentence_id): n + 1 for n, i in enumerate(plan.items)}  # sentence → item id (1, 2, …)
        # by hand: tfisf.v1's ranking of Picasso's pooled sentences, as Explore ranks them
        ctx = QueryContext.of(docs_index, plan.topics[0].query, k=100, entity_weighting="score")
        ranked = [items[int(s)] for s in ctx.ranked_candidates(find_entity(docs_index, PICASSO), "tfisf.v1")[0]
                  if int(s) in items]
        expected = rank_grades(ranked, [i for i in items.values() if i not in ranked])
        suggested = model_suggestions(admin, "s", docs_index, "tfisf.v1")
        assert suggested == expected and sorted(suggested) == sorted(items.values()) and 4 in suggested.values()
        before = (admin.export_jsonl("s"), admin.export_qrels("s"))
        assert add_suggestions(admin, "s", "tfisf.v1", suggested) == len(items)
        assert add_suggestions(admin, "s", "tfisf.v1", suggested) == len(items)  # replaced, not doubled
        ann = store.sign_in("s", "ann", admin.add_annotator("s", "ann").passphrase)
        first = ann.next_item()
        assert first is not None
        assert [(s.source, s.grade) for s in ann.suggestions(first.item_id)] == [("tfisf.v1", suggested[first.item_id])]
        # a file's grades too: qrels on the trec scale (2 → 3)
        [item] = [i for i in plan.items if items[int(i.sentence_id)] == first.item_id]
        qrels = parse_qrels_lines([f"{plan.topics[0].topic_id} 0 {item.sentence_id} 2"], "x", IMPORT_SCALES["trec"])
        assert add_suggestions(admin, "s", "pilot.qrels", file_suggestions(admin, "s", qrels)) == 1
        assert [s.source for s in ann.suggestions(first.item_id)] == ["pilot.qrels", "tfisf.v1"]
        # never a grade: no judgment, export or agreement changes
        assert (admin.export_jsonl("s"), admin.export_qrels("s")) == before and admin.all_judgments("s") == []
        ann.grade(first.item_id, suggested[first.item_id])
        second = ann.next_item()
        assert second is not None
        ann.grade(second.item_id, 1 if suggested[second.item_id] >= 3 else 4)
        assert agreement_summary(admin.all_judgments("s")).shared == 0  # one annotator: nothing shared
        given = suggested[first.item_id]  # ann took tfisf.v1's grade of the first item, and went against the second
        assert agreement_with_suggestions(admin, "s") == [
            SuggestionAgreement("ann", "pilot.qrels", 1, int(given == 3), int(given >= 3)),
            SuggestionAgreement("ann", "tfisf.v1", 2, 1, 1)]
        with pytest.raises(SentretError, match=r"item\(s\) \[999\] are not in session 's'"):
            add_suggestions(admin, "s", "bad", {999: 3})
        with pytest.raises(SentretError, match="grade"):
            add_suggestions(admin, "s", "bad", {first.item_id: 7})


def test_the_grading_page_shows_suggestions_unless_hidden(
    docs_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = judgments_env(monkeypatch, tmp_path, docs_index, TOKEN)
    with JudgmentStore(db) as store:
        create_session(store, "s", docs_index, f"{QUERY}\t{PICASSO}", depth=2)
        admin = store.admin(TOKEN)
        add_suggestions(admin, "s", "bm25f.v1", model_suggestions(admin, "s", docs_index, "bm25f.v1"))
        admin.add_annotator("s", "alice", "alice-passphrase")
    app = AppTest.from_string("from sentret_core.ui.pages import annotate\nannotate.render()\n", default_timeout=60)
    app = app.run()
    app.text_input(key="annotate_session").input("s")
    app.text_input(key="annotate_name").input("alice")
    app.text_input(key="annotate_passphrase").input("alice-passphrase")
    app = app.button[0].click().run()
    assert not app.exception and not app.error
    assert any(c.value.startswith("Suggested: **") and "(bm25f.v1)" in c.value for c in app.caption)
    app.toggle(key="annotate_hide_suggestions").set_value(True).run()
    assert not any(c.value.startswith("Suggested:") for c in app.caption)
