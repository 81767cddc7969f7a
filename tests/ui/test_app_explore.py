"""The Explore page in Streamlit's AppTest, on the small index and on one with hostile text."""

from __future__ import annotations

import gc
import html
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from tests.conftest import build_from_texts

# its tests score ltr.v1 under its default ranker name, or count on the app offering it
pytestmark = pytest.mark.usefixtures("default_ranker")

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def explore(index: Index, monkeypatch: pytest.MonkeyPatch, url: dict[str, str] | None = None) -> AppTest:
    monkeypatch.setenv("SENTRET_INDEX", str(index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(index.path.parent))
    app = AppTest.from_file(APP, default_timeout=60)
    for key, value in (url or {}).items():
        app.query_params[key] = value
    return app.run()


def entity_tables(app: AppTest) -> list[list[str]]:
    """Every entity table on the page (the main one, then the restating group's): the rows' entity keys."""
    return [
        [html.unescape(k) for k in re.findall(r'<tr data-entity="([^"]*)"', m.value)]
        for m in app.markdown
        if 'class="sentret-entities"' in m.value
    ]


def support_cards(app: AppTest) -> list[str]:
    """Every support sentence card: each column is one HTML block holding its cards."""
    columns = [m.value for m in app.markdown if m.value.startswith('<div class="support-column">')]
    return [card for column in columns for card in re.findall(r'<div class="support">.*?</p>', column)]


def test_the_transformer_column_waits_for_the_sentence_vectors(
    small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index whose sentences are not encoded yet shows the three default columns, and minilm.v1 in the
    chooser as not trained yet; once `sentret train minilm` has run, a new visit shows its column too."""
    import shutil

    from sentret_core.index import artefacts

    copy = tmp_path / "small"
    shutil.copytree(small_index.path, copy)
    artefacts.remove(copy, "minilm")
    app = explore(Index.load(copy), monkeypatch)
    app.text_input(key="explore_query").input("Spanish Civil War").run()
    assert not app.exception and not app.error
    assert len([m for m in app.markdown if "candidate sentences" in m.value]) == 3
    chooser = app.multiselect(key="explore_models")
    assert "minilm.v1" not in chooser.value
    shutil.copytree(artefacts.folder_of(small_index.path, "minilm"), artefacts.folder_of(copy, "minilm"))
    app = explore(Index.load(copy), monkeypatch)
    app.text_input(key="explore_query").input("Spanish Civil War").run()
    assert "minilm.v1" in app.multiselect(key="explore_models").value
    assert len([m for m in app.markdown if "candidate sentences" in m.value]) == 4


def test_query_entities_and_side_by_side_columns(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = explore(small_index, monkeypatch)
    assert not app.exception and not app.error
    app.text_input(key="explore_query").input("Spanish Civil War").run()
    options = app.selectbox(key="explore_entity").options
    assert any("Francisco Franco (PERSON)" in o for o in options)
    headers = [m.value for m in app.markdown if "candidate sentences" in m.value]
    assert len(headers) == 4  # BM25F | LM 2S-I | TF-ISF | MiniLM: the index has its sentence vectors
    assert app.query_params["q"] == "Spanish Civil War"
    app.selectbox(key="explore_entity").select("Francisco Franco|PERSON").run()
    cards = support_cards(app)
    assert cards and all("Francisco Franco" in card for card in cards)
    assert "box-shadow" in cards[0]  # the entity is outlined
    assert app.query_params["entity"] == "Francisco Franco|PERSON"


def test_widgets_change_the_results(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = explore(small_index, monkeypatch, {"q": "peace"})
    before = app.selectbox(key="explore_entity").options
    app.multiselect(key="explore_labels").set_value(["PERSON"]).run()
    after = app.selectbox(key="explore_entity").options
    assert after != before and all("(PERSON)" in o for o in after)
    app.multiselect(key="explore_models").set_value(["tfisf.v1"]).run()
    assert len([m for m in app.markdown if "candidate sentences" in m.value]) == 1


def test_a_link_reproduces_the_view(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    url = {"q": "peace", "entity": "John Lennon|PERSON", "models": "tfisf.v1,position", "score": "frequency"}
    app = explore(small_index, monkeypatch, url)
    assert app.text_input(key="explore_query").value == "peace"
    assert app.selectbox(key="explore_entity").value == "John Lennon|PERSON"
    assert app.radio(key="explore_score").value == "frequency"
    assert len([m for m in app.markdown if "candidate sentences" in m.value]) == 2


def test_bad_queries_give_messages_not_tracebacks(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = explore(small_index, monkeypatch, {"q": "the of and"})
    assert not app.exception
    assert any("stop words" in w.value for w in app.warning)
    app.text_input(key="explore_query").input("zzzz qqqq").run()
    assert any("no sentence contains" in w.value for w in app.warning)
    app.text_input(key="explore_query").input("peace").run()
    app.multiselect(key="explore_models").set_value([]).run()
    assert any("at least one support model" in e.value for e in app.error)


def test_hostile_corpus_text_is_inert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [
        {"id": "x", "title": "<b>Bold</b> title", "text": "Paris is <script>alert(1)</script> lovely. "
         'Paris has an <img src=x onerror="alert(2)"> image.'},
    ]
    index = build_from_texts(tmp_path, docs)
    app = explore(index, monkeypatch, {"q": "Paris", "labels": "GPE"})
    html = "\n".join(m.value for m in app.markdown)
    assert "<script>" not in html and "<img" not in html and "<b>Bold" not in html
    assert "&lt;script&gt;" in html


def two_pages() -> None:
    import streamlit as st

    from sentret_core.ui.pages import corpus as corpus_page
    from sentret_core.ui.pages import explore as explore_page

    corpus_page.render() if st.session_state.get("page") == "corpus" else explore_page.render()


def test_settings_survive_a_visit_to_another_page(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(small_index.path.parent))
    app = AppTest.from_function(two_pages, default_timeout=60).run()
    app.text_input(key="explore_query").input("peace").run()
    app.multiselect(key="explore_models").set_value(["tfisf.v1"]).run()
    app.session_state["page"] = "corpus"
    app.run()  # Explore's widgets are not drawn: Streamlit forgets their state
    app.session_state["page"] = "explore"
    app.run()
    assert app.text_input(key="explore_query").value == "peace"
    assert app.multiselect(key="explore_models").value == ["tfisf.v1"]


# --- links: every widget in the URL, a fresh session from it, bad values named ----------------------

EXPLORE_WIDGETS = {
    "text_input": ["explore_query"],
    "selectbox": ["explore_ranker", "explore_entity"],
    "number_input": ["explore_k"],
    "radio": ["explore_score"],
    "multiselect": ["explore_labels", "explore_models"],
    "slider": ["explore_per_entity"],
    "toggle": ["explore_restating", "explore_graph"],
}


def widget_state(app: AppTest) -> dict[str, object]:
    return {key: getattr(app, kind)(key=key).value for kind, keys in EXPLORE_WIDGETS.items() for key in keys}


def test_every_widget_round_trips_through_the_url(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = explore(small_index, monkeypatch)
    app.text_input(key="explore_query").input("peace war").run()
    app.selectbox(key="explore_ranker").set_value("tfisf.v1").run()
    app.number_input(key="explore_k").set_value(7).run()
    app.radio(key="explore_score").set_value("frequency").run()
    app.multiselect(key="explore_labels").set_value(["PERSON", "GPE", "NORP"]).run()
    app.multiselect(key="explore_models").set_value(["tfisf.v1", "position", "bm25.v1"]).run()
    app.slider(key="explore_per_entity").set_value(2).run()
    app.toggle(key="explore_restating").set_value(False).run()
    app.toggle(key="explore_graph").set_value(True).run()
    options = app.selectbox(key="explore_entity").options
    assert len(options) > 1
    second = app.selectbox(key="explore_entity").options[1].split(". ", 1)[1].rsplit(" (", 1)
    app.selectbox(key="explore_entity").set_value(f"{second[0]}|{second[1][:-1]}").run()
    assert not app.exception and not app.error
    before = widget_state(app)
    assert before["explore_entity"] == f"{second[0]}|{second[1][:-1]}" and app.get("graphviz_chart")
    link = {key: app.query_params[key] for key in app.query_params}
    assert link["index"] == small_index.path.name and link["per"] == "2" and link["graph"] == "1"

    fresh = explore(small_index, monkeypatch, link)  # a new session, as a new tab or a colleague
    assert not fresh.exception and not fresh.error and not fresh.warning
    assert widget_state(fresh) == before
    assert support_cards(fresh) == support_cards(app)
    assert {key: fresh.query_params[key] for key in fresh.query_params} == link


def test_bad_url_values_are_named_in_warnings(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    url = {"q": "peace", "ranker": "nope.v9", "k": "lots", "score": "loudness", "labels": "PERSON,ALIEN",
           "models": "tfisf.v1,bogus", "per": "99", "restating": "maybe", "index": "../etc",
           "entity": "Nobody|PERSON"}
    app = explore(small_index, monkeypatch, url)
    assert not app.exception
    shown = "\n".join(w.value for w in app.warning)
    for fragment in ("ranker='nope.v9'", "k='lots'", "score='loudness'", "'ALIEN'", "'bogus'", "per='99'",
                     "restating='maybe'", "index='../etc'", "entity='Nobody"):
        assert fragment in shown, fragment
    assert "using 'bm25f.v1' instead" in shown and "using 100 instead" in shown and "using 'PERSON' instead" in shown
    # what was used instead is what the page shows, and the URL now says so
    assert app.selectbox(key="explore_ranker").value == "bm25f.v1" and app.number_input(key="explore_k").value == 100
    assert app.multiselect(key="explore_labels").value == ["PERSON"]
    assert app.multiselect(key="explore_models").value == ["tfisf.v1"]
    assert app.query_params["ranker"] == "bm25f.v1" and app.query_params["labels"] == "PERSON"
    assert app.query_params["index"] == small_index.path.name


def test_clearing_the_query_clears_q(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = explore(small_index, monkeypatch, {"q": "peace"})
    assert app.query_params["q"] == "peace" and "entity" in app.query_params
    app.text_input(key="explore_query").input("").run()
    assert "q" not in app.query_params and "entity" not in app.query_params
    assert any("Type a query" in i.value for i in app.info)


def test_a_link_names_the_index_by_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paris = {"id": "p", "title": "Paris", "text": "Paris hosted the peace talks."}
    first = build_from_texts(tmp_path, [paris], "first")
    build_from_texts(tmp_path, [{"id": "o", "title": "Otto", "text": "Otto Hahn lived in Berlin."}], "second")
    app = explore(first, monkeypatch, {"q": "Berlin", "index": "second"})  # the server's default is "first"
    assert not app.exception and not app.warning
    assert app.query_params["index"] == "second"
    assert any("Berlin (GPE)" in o for o in app.selectbox(key="explore_entity").options)


def test_a_long_query_is_shortened_with_the_full_text_on_hover(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = "peace " + " ".join(["war and the long aftermath of the conflict"] * 6)
    app = explore(small_index, monkeypatch, {"q": long})
    [heading] = [m.value for m in app.markdown if "<h3 " in m.value and ">Why " in m.value]
    assert f'title="{long}"' in heading and long not in heading.replace(f'title="{long}"', "")
    assert "…" in heading


def test_an_untrained_model_is_marked_and_never_trained_by_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.index import artefacts
    from tests.conftest import SMALL_DOCS

    index = build_from_texts(tmp_path, SMALL_DOCS)  # no trained artefacts
    app = explore(index, monkeypatch, {"q": "peace war"})
    options = app.multiselect(key="explore_models").options
    assert any(o.endswith("— not trained yet (classes)") for o in options)
    assert not any("TF-ISF" in o and "not trained" in o for o in options)
    app.multiselect(key="explore_models").set_value(["tfisf.v1", "lm-class.v1"]).run()
    assert not app.exception
    assert any("sentret train classes" in e.value for e in app.error)  # says how, and does not do it
    assert artefacts.available(index.path) == []


def store_ranker(name: str, sign: float) -> None:
    """A linear ranker named ``name`` over bm25.v1's features (``sign`` flips its order)."""
    import numpy as np

    from sentret_core.learning.features import feature_names
    from sentret_core.learning.learners import Ranker
    from sentret_core.learning.store import save

    names = feature_names(("bm25.v1",))
    arrays = {"mean": np.zeros(len(names)), "scale": np.ones(len(names)),
              "coef": sign * np.linspace(1.0, 2.0, len(names)), "intercept": np.zeros(1)}
    save(name, Ranker("linear", names, arrays), first_stage="bm25.v1", depth=100, scorers=("bm25.v1",), meta={})


def learned_column(app: AppTest) -> str:
    columns = [m.value for m in app.markdown if m.value.startswith('<div class="support-column">')]
    return next(c for c in columns if "Learned ranker" in c)


def test_the_chosen_learned_ranker_is_named_shown_and_linked(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.support.engine import support

    store_ranker("team-linear", -1.0)  # beside conftest's "ltr"
    url = {"q": "Spanish Civil War", "entity": "George Orwell|PERSON", "models": "ltr.v1,tfisf.v1"}
    app = explore(small_index, monkeypatch, url)
    assert not app.exception and not app.error
    picker = app.selectbox(key="explore_ltr_model")
    assert picker.options == ["ltr", "team-linear"] and picker.value == "ltr"  # the default name first
    assert "<b>Learned ranker (ltr)</b>" in learned_column(app)
    assert app.query_params["p.ltr.model"] == "ltr"
    # the models picker's label holds "ltr": typing it finds the learned ranker
    labels = app.multiselect(key="explore_models").options
    assert [o for o in labels if "ltr" in o] == ["Learned ranker · ltr.v1"]

    picker.set_value("team-linear").run()
    assert not app.exception and not app.error
    column = learned_column(app)
    assert "<b>Learned ranker (team-linear)</b>" in column
    assert app.query_params["p.ltr.model"] == "team-linear"
    # the column's scores are team-linear's, not ltr's (its coefficients have the other sign)
    orwell = small_index.entity_index[("George Orwell", "PERSON")]
    found = {name: support(small_index, "Spanish Civil War", models=("ltr.v1",), entities=[orwell],
                           params={"ltr.v1": {"model": name}}).entities[0].sentences["ltr.v1"]
             for name in ("ltr", "team-linear")}
    assert [s.score for s in found["ltr"]] != [s.score for s in found["team-linear"]]
    assert re.findall(r"score (-?[0-9.]+)", column) == [f"{s.score:.3f}" for s in found["team-linear"]]

    link = {key: app.query_params[key] for key in app.query_params}
    fresh = explore(small_index, monkeypatch, link)
    assert not fresh.warning and fresh.selectbox(key="explore_ltr_model").value == "team-linear"
    assert learned_column(fresh) == column
    # a ranker the store does not hold is named, and the default is used
    bad = explore(small_index, monkeypatch, {**url, "p.ltr.model": "gone"})
    assert any("p.ltr.model='gone'" in w.value for w in bad.warning)
    assert "<b>Learned ranker (ltr)</b>" in learned_column(bad)
    # without ltr.v1 among the models, the link does not carry the ranker
    app.multiselect(key="explore_models").set_value(["tfisf.v1"]).run()
    assert "p.ltr.model" not in app.query_params


# --- the table explains itself, a row click picks, the results download ---------------------------


def main_table(app: AppTest) -> str:
    return next(m.value for m in app.markdown if 'class="sentret-entities"' in m.value)


def test_the_table_headers_are_distinct_and_explained(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = explore(small_index, monkeypatch, {"q": "Spanish Civil War"})
    heads = [(html.unescape(title), html.unescape(name))
             for title, name in re.findall(r'<th title="([^"]*)">([^<]*)</th>', main_table(app))]
    names = [name for _, name in heads]
    # rank, entity and the chosen score first (they stay in view on a narrow window); no two called "KLD"
    assert names == ["rank", "entity", "KLD ↓", "label", "|S_qe|", "|Ŝ_qe|", "rarity", "combination"]
    tips = dict((name, title) for title, name in heads)
    assert "|S_qe|" in tips["|S_qe|"] and "S_q plus the 2 sentences" in tips["|Ŝ_qe|"]
    assert "E_comb = |S_qe| · E_rarity" in tips["combination"] and "Higher is better" in tips["KLD ↓"]
    glossary = next(m.value for m in app.markdown if m.value.startswith("S_q is the top k"))
    assert "**|Ŝ_qe|**" in glossary and "Blanco & Zaragoza, SIGIR 2010" in glossary
    app.radio(key="explore_score").set_value("combination").run()
    names = re.findall(r"<th title=\"[^\"]*\">([^<]*)</th>", main_table(app))
    assert names[2] == "combination ↓" and "combination" not in names[3:] and "KLD" in names


def test_a_row_pick_explains_that_entity(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a click on a row does in the browser (tests/browser/test_explore_polish.py): the row's key
    typed into the hidden box picks the entity, and the box is emptied for the next click."""
    app = explore(small_index, monkeypatch, {"q": "Spanish Civil War"})
    assert app.selectbox(key="explore_entity").value != "George Orwell|PERSON"
    app.text_input(key="explore_row_pick").input("George Orwell|PERSON").run()
    assert app.selectbox(key="explore_entity").value == "George Orwell|PERSON"
    assert app.query_params["entity"] == "George Orwell|PERSON"
    assert app.text_input(key="explore_row_pick").value == ""
    assert support_cards(app) and all("George Orwell" in card for card in support_cards(app))


def test_scores_of_different_models_are_said_to_be_incomparable(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = explore(small_index, monkeypatch, {"q": "Spanish Civil War"})
    assert any("unrelated scales" in c.value for c in app.caption)
    app = explore(small_index, monkeypatch, {"q": "Spanish Civil War", "models": "tfisf.v1"})
    assert not any("unrelated scales" in c.value for c in app.caption)  # one model: nothing to compare


def test_a_corpus_where_every_kld_is_zero_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every sentence mentions "Paris", so S_q is the whole corpus: P(e|q) = |S_qe|/|S_q| equals
    # P(e|S) = (sentences mentioning e)/|S| for every e, and KLD = P·log(P/P) = 0. The three
    # one-sentence documents have the same shape, so a weighting of S_q by score weighs them equally.
    people = ("Victor Hugo", "Emile Zola", "Claude Monet")
    docs = [{"id": f"d{i}", "title": f"Letter {i}", "text": f"Paris met {name}."} for i, name in enumerate(people)]
    index = build_from_texts(tmp_path, docs, "tiny")
    app = explore(index, monkeypatch, {"q": "Paris"})
    assert any("Every KLD here is 0" in i.value for i in app.info)
    app.radio(key="explore_score").set_value("frequency").run()
    assert not any("Every KLD here is 0" in i.value for i in app.info)


def test_the_sentences_of_s_q_count_by_their_score_unless_the_link_says_otherwise(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.support import support

    def order(weighting: str) -> list[str]:
        found = support(small_index, "Spanish Civil War", k=100, entity_weighting=weighting, models=["tfisf.v1"])
        return [f"{e.entity.text}|{e.entity.label}" for e in found.entities]

    app = explore(small_index, monkeypatch, {"q": "Spanish Civil War"})
    assert app.radio(key="explore_weighting").value == "score" and app.query_params["weighting"] == "score"
    unweighted = explore(small_index, monkeypatch, {"q": "Spanish Civil War", "weighting": "none"})
    assert unweighted.radio(key="explore_weighting").value == "none"
    for page, weighting in ((app, "score"), (unweighted, "none")):
        shown = entity_tables(page)[0]
        assert shown == [key for key in order(weighting) if key in shown]
    assert entity_tables(app)[0] != entity_tables(unweighted)[0]  # the weighting changes the order here


def test_k_is_suggested_from_the_corpus_size(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    from sentret_core.ui.glossary import suggested_k

    assert [suggested_k(n) for n in (0, 500, 5_000, 36_307, 10**7)] == [10, 10, 50, 100, 100]  # 1%, in [10, 100]
    app = explore(small_index, monkeypatch, {"q": "peace"})
    assert f"This corpus has {small_index.N:,} sentences: k ≈ 10 keeps S_q near the query" in \
        app.number_input(key="explore_k").help


def test_a_cached_result_says_so_beside_the_time_it_was_computed_in(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.ui.glossary import took_text

    def timing(page: AppTest) -> str:
        [line] = [m.value for m in page.markdown if 'class="sentret-terms"' in m.value]
        return line.rsplit(" · ", 1)[1]

    app = explore(small_index, monkeypatch, {"q": "Guernica bombing"})
    first = timing(app)
    assert first.endswith(" ms</small></p>") and "cache" not in first
    app.toggle(key="explore_graph").set_value(True).run()  # any rerun: the same request, from the cache
    again = timing(app)
    computed = first.split(" ms")[0]
    assert again.startswith(tuple("0123456789")) and f"ms from the cache (computed in {computed} ms)" in again
    assert took_text(12.0, 11.0) == "12.0 ms" and took_text(12.0, 0.25) == "0.2 ms from the cache (computed in 12.0 ms)"


@pytest.fixture
def demo(small_index: Index, tmp_path: Path) -> Path:
    """The small index as the built-in demo (its manifest's source, as `sentret index demo` writes it)."""
    import json
    import shutil

    from sentret_core.index.validate import canonical_checksum

    demo = tmp_path / "demo"
    shutil.copytree(small_index.path, demo)
    manifest = {**json.loads((demo / "manifest.json").read_text()), "source": "demo"}
    manifest.pop("checksum")
    (demo / "manifest.json").write_text(json.dumps({**manifest, "checksum": canonical_checksum(manifest)}))
    return demo


def test_a_plain_visit_to_the_demo_opens_with_its_first_example_explained(
    demo: Path, small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first screen says what an entity support sentence is and shows the first example at once (on the
    built-in demo: its examples are its own); a link's query, or another corpus, opens as asked."""
    from sentret_core.ui.explore_seed import example_queries
    from sentret_core.ui.glossary import WHAT_IT_IS

    app = explore(Index.load(demo), monkeypatch)
    assert not app.exception and not app.error
    first = example_queries()[0]
    assert app.text_input(key="explore_query").value == first and app.query_params["q"] == first
    assert entity_tables(app) and any(c.value.startswith(WHAT_IT_IS) for c in app.caption)
    linked = explore(Index.load(demo), monkeypatch, {"q": "peace"})
    assert linked.text_input(key="explore_query").value == "peace"
    assert not any(c.value.startswith(WHAT_IT_IS) for c in linked.caption)
    other = explore(small_index, monkeypatch)  # not the demo: an empty box, and what the page is for
    assert other.text_input(key="explore_query").value == ""
    assert any(i.value.startswith(WHAT_IT_IS) for i in other.info)


def test_the_servers_warm_up_computes_the_first_example_a_plain_visit_shows(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first page of the demo finds its support request done: the warm-up (started with the server) asked
    for it with the settings the page starts with, so the page reads it from the cache."""
    from sentret_core.ui import state
    from sentret_core.ui.pages import explore as page

    asked: list[str] = []
    real = page.support
    monkeypatch.setattr(page, "support", lambda index, query, **kw: (asked.append(query), real(index, query, **kw))[1])
    state._warm(str(demo))
    gc.unfreeze()  # the warm-up froze the test process's heap
    assert len(asked) == 1
    app = explore(Index.load(demo), monkeypatch)
    assert not app.exception and not app.error and entity_tables(app)
    assert len(asked) == 1  # the page asked for nothing more: the warm-up's result was the page's
    assert app.text_input(key="explore_query").value == asked[0]


def test_the_entity_table_is_one_tab_stop_with_a_skip_link(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty rows were twenty tab stops: now the first row is the table's one stop (the arrow keys move along
    the rows, ROW_PICK_JS), and a skip link before it leads to the support sentences' heading."""
    from sentret_core.ui.entity_table import ROW_PICK_JS, SUPPORT_ANCHOR

    app = explore(small_index, monkeypatch, {"q": "peace"})
    [table] = [m.value for m in app.markdown if 'class="sentret-entities"' in m.value][:1]
    stops = re.findall(r'<tr data-entity="[^"]*" data-score="[^"]*" tabindex="(-?\d)"', table)
    assert len(stops) > 1 and stops[0] == "0" and set(stops[1:]) == {"-1"}
    assert f'<a class="sentret-skip" href="#{SUPPORT_ANCHOR}">' in table.split("<table", 1)[0]
    assert any(f'<h3 id="{SUPPORT_ANCHOR}" tabindex="-1">Why ' in m.value for m in app.markdown)
    assert '"ArrowDown"' in ROW_PICK_JS and "next.focus()" in ROW_PICK_JS
