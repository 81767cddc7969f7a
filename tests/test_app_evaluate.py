"""The Evaluate page in Streamlit's AppTest: a session's grades (admin token) or uploaded qrels."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import judgments_env
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.judged_eval import evaluate_judgments, session_qrels
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore

SCRIPT = "from sentret_core.ui.pages import evaluate as evaluate_page\nevaluate_page.render()\n"
TOKEN = "evaluate-page-test-token"


@pytest.fixture
def store(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as opened:
        topics = "picasso peace\nlennon religion"
        create_session(opened, "s", small_index, topics, "pw", top_entities=3, depth=2)
        handle = opened.sign_in("s", "ann", "pw")
        grade = 4
        while (item := handle.next_item()) is not None:
            handle.grade(item.item_id, grade)
            grade = 5 - grade  # 4, 1, 4, 1, …
        yield opened


def test_a_session_needs_the_admin_token(store: JudgmentStore) -> None:
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    assert not app.exception
    assert [i.value for i in app.info] == ["This page needs the admin token."]
    app.text_input(key="evaluate_token").input("wrong")
    app.button[0].click().run()
    assert [e.value for e in app.error] == ["wrong admin token"]
    assert not app.dataframe


def test_evaluate_a_session(store: JudgmentStore, small_index: Index) -> None:
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.text_input(key="evaluate_token").input(TOKEN)
    app.button[0].click().run()
    app.button(key="evaluate_run").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    table = app.dataframe[0].value
    assert list(table.index) == ["bm25f.v1", "lm-2si.v1", "tfisf.v1"]
    assert list(table.columns) == ["map", "mrr", "p@1", "p@10", "r-prec", "ndcg@10", "ndcg"]
    # the page shows what sessions.evaluate_judgments computes on the majority qrels
    expected = evaluate_judgments(small_index, session_qrels(store.admin(TOKEN), "s")).means()
    mrr = expected["mrr"].to_dict()["tfisf.v1"]
    assert str(table.loc["tfisf.v1", "mrr"]).rstrip("*") == f"{mrr:.4f}"
    assert app.get("arrow_vega_lite_chart") or app.get("vega_lite_chart")  # bar and line charts
    assert any("Coverage" in h.value for h in app.subheader)
    # the chart metric can change without evaluating again
    app.selectbox(key="evaluate_chart_metric").set_value("p@1").run()
    assert any("(p@1)" in h.value for h in app.subheader)


def test_evaluate_uploaded_qrels_and_bad_uploads(store: JudgmentStore) -> None:
    qrels = store.admin(TOKEN).export_qrels("s")
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.radio(key="evaluate_source").set_value("Uploaded qrels").run()
    app.multiselect(key="evaluate_models").set_value(["bm25f.v1", "tfisf.v1"]).run()
    app.selectbox(key="evaluate_baseline").set_value("tfisf.v1").run()
    app.file_uploader(key="evaluate_qrels").set_value(("s.qrels", qrels.encode(), "text/plain"))
    app.run()
    app.button(key="evaluate_run").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert list(app.dataframe[0].value.index) == ["bm25f.v1", "tfisf.v1"]
    assert any("baseline" in c.value and "TF-ISF" in c.value for c in app.caption)
    app.file_uploader(key="evaluate_qrels").set_value(("bad.qrels", b"only three fields\n", "text/plain"))
    app.run()
    app.button(key="evaluate_run").click().run()
    assert [e.value for e in app.error] == [
        "bad.qrels:1: a qrels line has 4 fields 'topic 0 docid grade', found 3"
    ]
    assert not app.dataframe  # the earlier result is not shown under the error
