"""The Evaluate page in Streamlit's AppTest: a session's grades (admin token) or uploaded qrels.

Regressions guarded here: the page kept a result after its inputs changed, and said "no judgments
yet" for a whole session when one annotator simply had none. Models are shown by their display names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.judged_eval import evaluate_judgments, evaluate_session, session_qrels
from sentret_core.annotation.scales import relevance_rule
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.ui.qrels_scale import SCALE_KEY
from tests.conftest import judgments_env
from tests.sign_in_util import enrol, sign_in_handle

# its tests score ltr.v1 under its default ranker name, or count on the app offering it
pytestmark = pytest.mark.usefixtures("default_ranker")

SCRIPT = "from sentret_core.ui.pages import evaluate as evaluate_page\nevaluate_page.render()\n"
TOKEN = "evaluate-page-test-token"
BM25F, LM_2SI, TFISF = "BM25F (sentence, context, title)", "LM, two-stage inverted (2S-I)", "TF-ISF"


@pytest.fixture
def store(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as opened:
        topics = "picasso peace\nlennon religion"
        create_session(opened, "s", small_index, topics, top_entities=3, depth=2)
        handle = sign_in_handle(opened, TOKEN, "s", "ann")
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


def signed_in() -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.text_input(key="evaluate_token").input(TOKEN)
    return app.button[0].click().run()


def test_evaluate_a_session(store: JudgmentStore, small_index: Index) -> None:
    app = signed_in()
    app.button(key="evaluate_run").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    table = app.dataframe[0].value
    # the registry's display names (bm25f.v1, lm-2si.v1, tfisf.v1)
    assert list(table.index) == [BM25F, LM_2SI, TFISF]
    assert list(table.columns) == ["map", "mrr", "p@1", "p@10", "r-prec", "ndcg@10", "ndcg"]
    # the page shows what sessions.evaluate_judgments computes on the majority qrels
    expected = evaluate_judgments(small_index, session_qrels(store.admin(TOKEN), "s")).means()
    mrr = expected["mrr"].to_dict()["tfisf.v1"]
    assert str(table.loc[TFISF, "mrr"]).rstrip("*") == f"{mrr:.4f}"
    assert app.get("arrow_vega_lite_chart") or app.get("vega_lite_chart")  # bar and line charts
    assert any("Coverage" in h.value for h in app.subheader)
    # the chart metric can change without evaluating again
    app.selectbox(key="evaluate_chart_metric").set_value("p@1").run()
    assert any("(p@1)" in h.value for h in app.subheader)


def test_evaluate_uploaded_qrels_and_bad_uploads(store: JudgmentStore) -> None:
    qrels = store.admin(TOKEN).export_qrels("s")
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.radio(key="evaluate_source").set_value("Uploaded qrels").run()
    app.pills(key="evaluate_models").set_value(["bm25f.v1", "tfisf.v1"]).run()
    app.selectbox(key="evaluate_baseline").set_value("tfisf.v1").run()
    app.file_uploader(key="evaluate_qrels").set_value(("s.qrels", qrels.encode(), "text/plain"))
    app.run()
    app.button(key="evaluate_run").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert list(app.dataframe[0].value.index) == [BM25F, TFISF]
    assert any("baseline" in c.value and "TF-ISF" in c.value for c in app.caption)
    app.file_uploader(key="evaluate_qrels").set_value(("bad.qrels", b"only three fields\n", "text/plain"))
    app.run()
    app.button(key="evaluate_run").click().run()
    assert [e.value for e in app.error] == ["bad.qrels:1: a qrels line has 4 fields 'topic 0 docid grade', found 3"]
    assert not app.dataframe  # the earlier result is not shown under the error


def test_the_result_follows_its_inputs(store: JudgmentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from sentret_core.ui.pages import evaluate as evaluate_page

    runs: list[tuple[str, ...]] = []
    real = evaluate_page.evaluate_session

    def counted(*args: Any, **kwargs: Any) -> Any:
        runs.append(tuple(kwargs["models"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluate_page, "evaluate_session", counted)
    app = signed_in()
    app.button(key="evaluate_run").click().run()
    assert list(app.dataframe[0].value.index) == [BM25F, LM_2SI, TFISF] and len(runs) == 1
    # another model choice: evaluated again at once, no stale table
    app.pills(key="evaluate_models").set_value(["tfisf.v1", "bm25.v1"]).run()
    assert not app.error, [e.value for e in app.error]
    assert list(app.dataframe[0].value.index) == [TFISF, "BM25"] and runs[-1] == ("tfisf.v1", "bm25.v1")
    app.multiselect(key="evaluate_metrics").set_value(["map"]).run()
    assert list(app.dataframe[0].value.columns) == ["map"] and len(runs) == 3
    # the chart's metric is not an input: nothing is evaluated again
    app.selectbox(key="evaluate_chart_metric").set_value("map").run()
    app.run()
    assert len(runs) == 3
    # new grades are an input too: the second item's grade goes from 1 to 4, so that its topic (one
    # candidate sentence, graded 1 so far) now has a relevant sentence and is evaluated
    assert any(c.value.startswith("3 topics with a relevant sentence") for c in app.caption)
    handle = sign_in_handle(store, TOKEN, "s", "ann")
    second = handle.item(2)  # session 's' is the database's first: its items' ids start at 1
    assert second.position == 1 and handle.my_judgments()[1].grade == 1
    handle.grade(second.item_id, 4)
    app.run()
    assert len(runs) == 4
    assert any(c.value.startswith("4 topics with a relevant sentence") for c in app.caption)
    # no model: an error and no table left from before
    app.pills(key="evaluate_models").set_value([]).run()
    assert [e.value for e in app.error] == ["Choose at least one model."] and not app.dataframe


def test_an_annotator_without_grades_is_named(store: JudgmentStore, small_index: Index) -> None:
    enrol(store, TOKEN, "s", "bob")  # added, has graded nothing
    create_session(store, "empty", small_index, "lennon religion", top_entities=1, depth=1)
    app = signed_in()
    app.selectbox(key="evaluate_session").set_value("s").run()
    app.selectbox(key="evaluate_rule").set_value("annotator").run()
    app.selectbox(key="evaluate_annotator").set_value("ann").run()
    app.button(key="evaluate_run").click().run()
    assert not app.error and app.dataframe, [e.value for e in app.error]
    n = len(store.admin(TOKEN).all_judgments("s"))
    app.selectbox(key="evaluate_annotator").set_value("bob").run()
    assert [i.value for i in app.info] == [
        f"bob has not graded any item of session 's' yet (the others have {n} grades): "
        "choose another annotator or rule."
    ]
    assert not app.error and not app.dataframe  # ann's result is not shown as bob's
    assert app.button(key="evaluate_run").disabled
    # a session nobody has graded
    app.selectbox(key="evaluate_session").set_value("empty").run()
    app.selectbox(key="evaluate_rule").set_value("majority").run()
    assert [i.value for i in app.info] == ["Session 'empty' has no grades yet: nothing to evaluate."]
    assert not app.error and not app.dataframe


def test_an_uploads_scale_is_sniffed_said_and_changeable(store: JudgmentStore, small_index: Index) -> None:
    """A regression: Evaluate read every upload as 1-4, so the session's own trec export gave other numbers."""
    admin = store.admin(TOKEN)
    session = evaluate_session(admin, "s", small_index, models=["bm25f.v1", "tfisf.v1"]).means()
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    assert relevance_rule() in app.caption[0].value  # the one rule, under the title
    app.radio(key="evaluate_source").set_value("Uploaded qrels").run()
    app.pills(key="evaluate_models").set_value(["bm25f.v1", "tfisf.v1"]).run()
    for scale, found in (("trec", "0, 3"), ("1-4", "1, 4")):  # grades 4 and 1, written on each scale
        qrels = admin.export_qrels("s", scale=scale)
        app.file_uploader(key="evaluate_qrels").set_value((f"s.{scale}.qrels", qrels.encode(), "text/plain"))
        app.run()
        assert app.radio(key=SCALE_KEY).value == scale
        level = 2 if scale == "trec" else 3
        assert any(c.value == f"values {found} found: read as {scale} scale, relevant ≥ {level}." for c in app.caption)
        app.button(key="evaluate_run").click().run()
        assert not app.exception and not app.error, [e.value for e in app.error]
        table = app.dataframe[0].value
        for model, title in (("bm25f.v1", BM25F), ("tfisf.v1", TFISF)):
            for metric in table.columns:
                assert str(table.loc[title, metric]).rstrip("*") == f"{session.loc[model, metric]:.4f}"
    # only 1-3 (the 4s written as 3s): read as trec, said to fit 1-4 too, and the reading can change
    ambiguous = admin.export_qrels("s", scale="1-4").replace(" 4\n", " 3\n")
    app.file_uploader(key="evaluate_qrels").set_value(("amb.qrels", ambiguous.encode(), "text/plain"))
    app.run()
    assert app.radio(key=SCALE_KEY).value == "trec"
    assert any("values 1, 3 found: read as trec scale, relevant ≥ 2 (they also fit the 1-4 scale" in c.value
               for c in app.caption)
    app.radio(key=SCALE_KEY).set_value("1-4").run()
    assert any(c.value.startswith("values 1, 3 found: read as the chosen 1-4 scale, relevant ≥ 3")
               for c in app.caption)
    app.button(key="evaluate_run").click().run()
    table = app.dataframe[0].value
    assert str(table.loc[BM25F, "map"]).rstrip("*") == f"{session.loc['bm25f.v1', 'map']:.4f}"  # 3 = relevant
    # a chosen scale the values are not on: a warning, and Evaluate names the line
    app.radio(key=SCALE_KEY).set_value("binary").run()
    assert any("is not on the binary scale" in w.value for w in app.warning)


def test_the_chosen_learned_ranker_is_scored_and_named(store: JudgmentStore, small_index: Index) -> None:
    from tests.ui.test_app_explore import store_ranker

    store_ranker("team-linear", -1.0)  # beside conftest's "ltr"
    app = signed_in()
    assert app.selectbox(key="evaluate_ltr_model").options == ["ltr", "team-linear"]
    app.pills(key="evaluate_models").set_value(["bm25f.v1", "ltr.v1"]).run()
    app.selectbox(key="evaluate_ltr_model").set_value("team-linear").run()
    assert app.query_params["p.ltr.model"] == "team-linear"
    app.button(key="evaluate_run").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    table = app.dataframe[0].value
    assert list(table.index) == [BM25F, "Learned ranker (team-linear)"]
    qrels = session_qrels(store.admin(TOKEN), "s")
    expected = {name: evaluate_judgments(small_index, qrels, models=["bm25f.v1", "ltr.v1"],
                                         params={"ltr.v1": {"model": name}})
                for name in ("ltr", "team-linear")}
    shown = [str(table.loc["Learned ranker (team-linear)", m]).rstrip("*") for m in ("map", "mrr", "ndcg")]
    assert shown == [f"{expected['team-linear'].means().loc['ltr.v1', m]:.4f}" for m in ("map", "mrr", "ndcg")]
    # the page scored team-linear (its sentence scores), not ltr
    scored = app.session_state["evaluate_result"][1]
    assert expected["team-linear"].runs["ltr.v1"] != expected["ltr"].runs["ltr.v1"]
    assert scored.runs["ltr.v1"] == expected["team-linear"].runs["ltr.v1"]
    # choosing the other ranker evaluates again, under its own name
    app.selectbox(key="evaluate_ltr_model").set_value("ltr").run()
    app.button(key="evaluate_run").click().run()
    assert "Learned ranker (ltr)" in list(app.dataframe[0].value.index)
    # a link names the ranker; without a learned model chosen it leaves the URL
    linked = AppTest.from_string(SCRIPT, default_timeout=60)
    linked.query_params["p.ltr.model"] = "team-linear"
    linked.run()
    assert linked.selectbox(key="evaluate_ltr_model").value == "team-linear"
    assert "p.ltr.model" not in linked.query_params  # the default models hold no learned ranker
    # a ranker the store does not hold is named once, and the default one is used
    bad = AppTest.from_string(SCRIPT, default_timeout=60)
    bad.query_params["p.ltr.model"] = "gone"
    bad.run()
    assert any("p.ltr.model='gone'" in w.value for w in bad.warning)
    assert bad.selectbox(key="evaluate_ltr_model").value == "ltr"
