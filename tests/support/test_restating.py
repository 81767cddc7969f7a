"""Entities that only restate the query (sentret_core.support.restating), on a hand-built index."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentret_core import Index, support
from sentret_core.support.restating import entity_terms, restates, split_restating
from tests.conftest import SMALL_DOCS, build_from_texts

SPAIN = {
    "id": "spain",
    "title": "Spain",
    "text": "Spain is in Europe. The Spanish Civil War divided Spain. The Civil War of Spain ended in 1939. "
    "Franco ruled Spain after the war.",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("restating"), [*SMALL_DOCS, SPAIN])


def entity(index: Index, text: str, label: str) -> int:
    return int(index.entity_index[(text, label)])


def test_an_entity_restates_when_every_term_of_its_name_is_a_query_term(index: Index) -> None:
    query = ("spanish", "civil", "war")  # the terms of "Spanish Civil War" by the index's rules
    assert entity_terms(index, entity(index, "Spanish Civil War", "EVENT")) == query
    assert restates(index, query, entity(index, "Spanish Civil War", "EVENT"))
    assert restates(index, query, entity(index, "Spanish", "NORP"))  # {spanish} ⊆ the query
    assert restates(index, query, entity(index, "Civil War", "EVENT"))
    assert not restates(index, query, entity(index, "Spain", "GPE"))  # terms, not meanings
    assert not restates(index, query, entity(index, "Francisco Franco", "PERSON"))
    assert not restates(index, ("civil", "war"), entity(index, "Spanish Civil War", "EVENT"))  # "spanish" is new
    assert not restates(index, (), entity(index, "Spanish", "NORP"))


def test_split_keeps_the_order_and_sets_aside_only_the_restating(index: Index) -> None:
    result = support(index, "Spanish Civil War", top_entities=30)
    kept, restating = split_restating(index, result.terms, result.entities)
    assert {(e.entity.text, e.entity.label) for e in restating} == {
        ("Spanish Civil War", "EVENT"), ("Spanish", "NORP"), ("Civil War", "EVENT")
    }
    assert len(kept) + len(restating) == len(result.entities)
    ranks = [e.entity.rank for e in kept]
    assert ranks == sorted(ranks) and ("Francisco Franco", "PERSON") in {(e.entity.text, e.entity.label) for e in kept}
    # another query: nothing restates it
    other = support(index, "Picasso peace", top_entities=30)
    assert all(e.entity.text != "Spanish" for e in split_restating(index, other.terms, other.entities)[1])


def test_the_app_sets_them_aside_in_a_collapsed_group(index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    from sentret_core.ui.glossary import ranks_text
    from tests.ui.test_app_explore import entity_tables, explore

    app = explore(index, monkeypatch, {"q": "Spanish Civil War"})
    assert not app.exception and not app.error
    table, group_table = entity_tables(app)
    assert "Spanish|NORP" not in table and "Francisco Franco|PERSON" in table
    [group] = [e for e in app.expander if e.label.startswith("Restating the query")]
    assert "3 entities" in group.label
    assert set(group_table) == {"Spanish Civil War|EVENT", "Spanish|NORP", "Civil War|EVENT"}
    # the table's ranks count every entity, so its gaps are named: the set-aside ranks among the shown ones
    result = support(index, "Spanish Civil War", k=100, entity_weighting="score", top_entities=30)
    kept, restating = split_restating(index, result.terms, result.entities)
    gaps = [e.entity.rank for e in restating if e.entity.rank < kept[:20][-1].entity.rank]
    assert gaps and any(c.value == f"Ranks count every entity: {ranks_text(gaps)} only restate"
                        f"{'s' if len(gaps) == 1 else ''} the query, set aside below." for c in app.caption)
    # they can still be explained: they follow the others in the chooser
    options = app.selectbox(key="explore_entity").options
    assert options[-3:] and all("restates the query" in o for o in options[-3:])
    # switched off (and in the URL): they are back in the table
    app.toggle(key="explore_restating").set_value(False).run()
    [table] = entity_tables(app)
    assert {"Spanish|NORP", "Spanish Civil War|EVENT"} <= set(table)
    assert not [e for e in app.expander if e.label.startswith("Restating the query")]
    assert app.query_params["restating"] == "0"


def test_restating_is_decided_on_terms_so_a_fresh_query_needs_no_training(tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, [SPAIN])
    result = support(index, "Spain", top_entities=30)
    kept, restating = split_restating(index, result.terms, result.entities)
    assert [e.entity.text for e in restating] == ["Spain"]
    assert "Spanish Civil War" in [e.entity.text for e in kept]
