"""The Admin page's "Create a session" form (sentret_core.ui.session_form) in Streamlit's AppTest.

A regression guarded here: typing the session name and pressing Tab/Enter reran the page, collapsed the
expander and cleared a field, so Create failed; topics needed a literal TAB. Now every field sits
in one ``st.form`` (nothing runs until Create; Enter does not submit), the topics are a table and
a TSV upload. AppTest cannot press Tab or Enter; the browser test of the form does
(tests/browser/test_session_form.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.session_setup import topic_label
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import topic_id
from sentret_core.ui.session_form import FILE, FORM, TABLE, field_key, file_topics, table_topics
from sentret_core.ui.text import md
from tests.conftest import judgments_env
from tests.ui.test_app_explore import entity_tables, explore

SCRIPT = "from sentret_core.ui.pages import admin as admin_page\nadmin_page.render()\n"
TOKEN = "session-form-test-token"
FORM_KEYS = {"admin_new_name", TABLE, FILE, "admin_from_explore", "admin_depth", "admin_top_entities",
             "admin_seed", "admin_models", "admin_preview", "admin_pool_ranker", "admin_pool_k", "admin_pool_score",
             "admin_pool_weighting"}


@pytest.fixture
def store(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    db = judgments_env(monkeypatch, tmp_path, small_index, TOKEN)
    with JudgmentStore(db) as opened:
        yield opened


def admin_app() -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=60).run()
    app.text_input(key="admin_token").input(TOKEN)
    app = app.button[0].click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    return app


def rows(*pairs: tuple[str, str | None]) -> dict[str, Any]:
    """The topics table's edit state with ``pairs`` added as rows (how AppTest fills a data editor)."""
    added = [{"query": q} if e is None else {"query": q, "entity": e} for q, e in pairs]
    return {"edited_rows": {}, "added_rows": added, "deleted_rows": []}


def keys_in(node: Any) -> set[str]:
    found = {getattr(node, "key", None)} - {None}
    for child in getattr(node, "children", {}).values():
        found |= keys_in(child)
    return found


def pairs_of(store: JudgmentStore, name: str) -> list[tuple[str, str]]:
    return sorted(set(store.session(name).entities))


def create(app: AppTest) -> AppTest:
    """Preview the pairs, then create the session previewed (pairs are shown first)."""
    app.button(key="admin_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    return app.button(key="admin_create").click().run()


def test_every_field_is_in_one_form_that_enter_does_not_submit(store: JudgmentStore) -> None:
    app = admin_app()
    form = next(f for f in app.get("form") if f.proto.form.form_id == FORM)
    assert keys_in(form) >= FORM_KEYS  # typing in any of them reruns nothing
    assert form.proto.form.enter_to_submit is False
    assert app.data_editor[0].key == TABLE and app.data_editor[0].editing_mode == "dynamic"
    assert list(app.data_editor[0].value.columns) == ["query", "entity", "narrative"]


def test_the_form_keeps_its_input_and_creates(
    store: JudgmentStore, small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = admin_app()
    app.text_input(key="admin_new_name").input("first")
    app.session_state[TABLE] = rows(("picasso peace", "Picasso|PERSON"), ("", "Guernica"))
    app.number_input(key="admin_top_entities").set_value(3)
    app.number_input(key="admin_depth").set_value(3)
    app.button(key="admin_preview").click().run()
    # the second row has no query: refused, with every field as it was
    assert [e.value for e in app.error] == [md("topics table row 2: the query is empty (entity 'Guernica')")]
    assert store.sessions() == []
    assert app.text_input(key="admin_new_name").value == "first"
    assert app.number_input(key="admin_top_entities").value == 3 and app.number_input(key="admin_depth").value == 3
    assert app.session_state[TABLE]["added_rows"][0] == {"query": "picasso peace", "entity": "Picasso|PERSON"}
    app.run()  # a rerun for anything else: nothing of the form is lost
    assert app.text_input(key="admin_new_name").value == "first"
    # mend the row (the table's query cell) and create
    app.session_state[TABLE] = rows(("picasso peace", "Picasso|PERSON"), ("lennon religion", None))
    app.button(key="admin_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert store.sessions() == []  # a preview stores nothing
    preview = next(d.value for d in app.dataframe if "pair" in d.value.columns)
    # the named Picasso, then the three top entities of "lennon religion" that the Explore page shows (its
    # "Lennon" only restates the query, so it is left out there and here)
    shown = entity_tables(explore(small_index, monkeypatch, {"q": "lennon religion"}))[0][:3]
    assert preview["pair"].tolist() == ["picasso peace · Picasso (PERSON)",
                                        *(topic_label(topic_id("lennon religion", key)) for key in shown)]
    assert any("entities by kld over the top 100 sentences of bm25f.v1, sentences weighted by score "
               "(the Explore page's)" in c.value for c in app.caption)
    assert any("only restate the query" in c.value and "lennon religion · Lennon" in c.value
               for c in app.caption)
    app.button(key="admin_create").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any("Created session 'first'" in s.value for s in app.success)
    assert app.dataframe[0].value["session"].tolist() == ["first"]  # listed at once
    info = store.session("first")
    assert info.settings.depth == 3 and info.settings.models == ("bm25f.v1", "lm-2si.v1", "tfisf.v1")
    entities = [e for _, e in info.entities]
    assert entities[0] == "Picasso|PERSON" and len(entities) == 4  # + the three top entities of "lennon religion"
    assert {q for q, _ in info.entities} == {"picasso peace", "lennon religion"}
    # the form is cleared and the Create button gone: a second click cannot create it again
    assert not any(b.key == "admin_create" for b in app.button)
    name = field_key("admin_new_name", 1)
    assert name == "admin_new_name~1" and app.text_input(key=name).value == ""
    assert app.session_state[field_key(TABLE, 1)] == rows()  # an empty table
    assert app.selectbox(key="admin_session").value == "first"  # selected: its actions act on it
    # the same name again is refused with one message
    app.text_input(key=name).input("first")
    app.button(key="admin_preview").click().run()
    assert [e.value for e in app.error] == ["a session named 'first' already exists"]
    assert not any(b.key == "admin_create" for b in app.button)


def test_topics_from_a_tsv_upload(store: JudgmentStore) -> None:
    app = admin_app()
    app.text_input(key="admin_new_name").input("from-file")
    tsv = "query\tentity\n# a comment\npicasso peace\tPicasso|PERSON\n\nspanish civil war\tFrancisco Franco\n"
    app.file_uploader(key=FILE).set_value(("topics.tsv", tsv.encode(), "text/tab-separated-values"))
    app = create(app)
    assert not app.exception and not app.error, [e.value for e in app.error]
    info = store.session("from-file")
    assert sorted(set(info.entities)) == [("picasso peace", "Picasso|PERSON"),
                                          ("spanish civil war", "Francisco Franco|PERSON")]


def test_table_and_file_together_and_bad_files(store: JudgmentStore) -> None:
    app = admin_app()
    app.text_input(key="admin_new_name").input("both")
    app.file_uploader(key=FILE).set_value(("bad.tsv", b"picasso peace\tPicasso\tPERSON\n", "text/plain"))
    app.button(key="admin_preview").click().run()
    assert [e.value for e in app.error] == [
        md("topics line 1: the third column is the topic's narrative, not a label ('PERSON'): write the entity "
           "as text|LABEL, e.g. 'Picasso|PERSON'")
    ]
    app.file_uploader(key=FILE).set_value(("latin1.tsv", "café\tPicasso".encode("latin-1"), "text/plain"))
    app.button(key="admin_preview").click().run()
    assert [e.value for e in app.error] == ["latin1.tsv is not UTF-8 text"]
    assert store.sessions() == []
    app.session_state[TABLE] = rows(("picasso peace", "Picasso|PERSON"))
    app.file_uploader(key=FILE).set_value(("t.tsv", b"picasso peace\tPicasso|PERSON\nlennon religion\tJohn Lennon\n",
                                           "text/plain"))
    app = create(app)
    assert not app.error, [e.value for e in app.error]
    # the pair in both is pooled once
    assert pairs_of(store, "both") == [("lennon religion", "John Lennon|PERSON"), ("picasso peace", "Picasso|PERSON")]


def test_no_topics_and_the_explore_query(store: JudgmentStore) -> None:
    app = admin_app()
    app.text_input(key="admin_new_name").input("x")
    assert app.checkbox(key="admin_from_explore").disabled  # no Explore query yet
    app.button(key="admin_preview").click().run()
    assert [e.value for e in app.error] == [
        "no topics: fill in the table, upload a topics file or add the Explore page's query"
    ]
    # the Explore page's query widget state; the page keeps a copy past Streamlit's widget clean-up
    app.session_state["explore_query"] = "lennon religion"
    app.run()
    del app.session_state["explore_query"]
    app.run()
    box = app.checkbox(key="admin_from_explore")
    assert not box.disabled and "lennon religion" in box.label
    box.check()
    app.number_input(key="admin_top_entities").set_value(1)
    app = create(app)
    assert not app.error, [e.value for e in app.error]
    assert [q for q, _ in store.session("x").entities] == ["lennon religion"]


def test_table_topics_and_file_topics() -> None:
    table = pd.DataFrame({"query": ["  picasso   peace ", None, "", "picasso peace", "lennon"],
                          "entity": ["Picasso|PERSON", None, "  ", "Picasso|PERSON", pd.NA]})
    found = table_topics(table)
    assert [(t.query, t.entity, t.line) for t in found] == [("picasso peace", "Picasso|PERSON", 1),
                                                           ("lennon", None, 5)]
    with pytest.raises(SentretError, match="row 2: the query is empty"):
        table_topics(pd.DataFrame({"query": ["a", None], "entity": [None, "x"]}))
    assert [(t.query, t.entity, t.line) for t in file_topics("Query\tEntity\nq\te\n")] == [("q", "e", 2)]
    assert [(t.query, t.entity) for t in file_topics("query\nq\n")] == [("q", None)]


def test_the_admin_chooses_who_grades_what(store: JudgmentStore) -> None:
    from sentret_core.annotation.item_order import ItemOrder

    app = admin_app()
    app.text_input(key="admin_new_name").input("split")
    app.session_state[TABLE] = rows(("picasso peace", "Picasso|PERSON"))
    app.number_input(key="admin_seed").set_value(5)
    app.number_input(key="admin_graders").set_value(2)
    app.number_input(key="admin_overlap").set_value(40)
    app.button(key="admin_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any("40% of the items graded by 2 annotators, the rest by one annotator each" in m.value
               for m in app.markdown)
    app.button(key="admin_create").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert store.session("split").item_order == ItemOrder(overlap=40, graders=2, shuffle=True, seed=5)
    assert "40% of the items graded by 2 annotators" in " ".join(m.value for m in app.markdown)


def test_the_entity_ranking_defaults_to_this_browser_sessions_explore_settings(store: JudgmentStore) -> None:
    """The form starts from the Explore page's k, score and weighting as this admin left them; the preview says
    whether the pool still ranks as Explore does, and the session records the ranking it was pooled with."""
    app = AppTest.from_string(SCRIPT, default_timeout=60)
    app.session_state["explore_k"] = 20
    app.session_state["explore_weighting"] = "none"
    app.run()
    app.text_input(key="admin_token").input(TOKEN)
    app = app.button[0].click().run()
    assert app.number_input(key="admin_pool_k").value == 20
    assert app.selectbox(key="admin_pool_weighting").value == "none"
    assert app.selectbox(key="admin_pool_score").value == "kld"
    app.text_input(key="admin_new_name").input("ranked")
    app.session_state[TABLE] = rows(("lennon religion", None))
    app.button(key="admin_preview").click().run()
    assert any("over the top 20 sentences of bm25f.v1, each sentence once (the Explore page's)" in c.value
               for c in app.caption)
    app.number_input(key="admin_pool_k").set_value(50)
    app.button(key="admin_preview").click().run()
    assert any("over the top 50 sentences" in c.value and "(not the Explore page's now)" in c.value
               for c in app.caption)
    app.button(key="admin_create").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    ranking = store.session("ranked").settings.ranking
    assert (ranking.k, ranking.weighting, ranking.score, ranking.ranker) == (50, "none", "kld", "bm25f.v1")


def test_a_narrative_typed_in_the_table_is_stored_with_its_topic(store: JudgmentStore) -> None:
    app = admin_app()
    app.text_input(key="admin_new_name").input("told")
    app.session_state[TABLE] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"query": "picasso peace", "entity": "Picasso|PERSON", "narrative": "  His part in the peace movement. "}]}
    app = create(app)
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert store.narratives("told") == {("picasso peace", "Picasso|PERSON"): "His part in the peace movement."}
    assert table_topics(pd.DataFrame({"query": ["q"], "entity": [None], "narrative": ["why"]}))[0].narrative == "why"
