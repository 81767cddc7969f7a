"""The "How it works" page (AppTest on the small index) and its pure helpers (sentret_core.teaching)."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.models import explain, get_model, list_models, score, top_k
from sentret_core.support.entity_stats import entity_sentences
from sentret_core.support.sets import entry_ranks, first_hits
from sentret_core.support.teaching import (
    contribution_parts,
    control_kind,
    entity_growth,
    log_ks,
    overlap,
    rank_changes,
    set_sizes,
    slider_options,
)
from tests.conftest import build_from_texts, examples, judgments_env

# The page alone: AppTest cannot switch to a callable st.navigation page, so the script renders it directly.
SCRIPT = """
import streamlit as st
from sentret_core.ui.pages import howto as howto_page
st.set_page_config(layout="wide")
howto_page.render()
"""


def howto(index: Index, monkeypatch: pytest.MonkeyPatch, **state: object) -> AppTest:
    monkeypatch.setenv("SENTRET_INDEX", str(index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(index.path.parent))
    app = AppTest.from_string(SCRIPT, default_timeout=60)
    for key, value in state.items():
        app.session_state[key] = value
    return app.run()


def table_with(app: AppTest, column: str, nth: int = 0) -> pd.DataFrame:
    """The ``nth`` dataframe on the page that has ``column``."""
    frames = [d.value for d in app.dataframe if column in d.value.columns]
    return frames[nth]


ROW = re.compile(r'<tr data-sentence="(\d+)" data-score="([^"]+)">.*?<td class="change">([^<]*)</td>')


def rankings(app: AppTest) -> list[tuple[list[int], list[float], list[str]]]:
    """Every ranking table on the page (the top 10, then the two compared): ids, scores, change labels."""
    found = []
    for m in app.markdown:
        if 'class="sentret-ranking"' in m.value:
            rows = ROW.findall(m.value)
            found.append(
                ([int(r[0]) for r in rows], [float(r[1]) for r in rows], [html.unescape(r[2]) for r in rows])
            )
    return found


def ranking(app: AppTest) -> tuple[list[int], list[float], list[str]]:
    return rankings(app)[0]


def metrics(app: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in app.metric}


# --- pure helpers ---------------------------------------------------------------------------------


def test_rank_changes_by_hand() -> None:
    # before: 6 8 7 10; after: 8 7 6 4 → 8 was 2nd, now 1st (↑1); 7 3rd → 2nd (↑1); 6 1st → 3rd (↓2); 4 new
    changes = rank_changes([6, 8, 7, 10], [8, 7, 6, 4])
    assert [c.label for c in changes] == ["↑1", "↑1", "↓2", "new"]
    assert [c.delta for c in changes] == [1, 1, -2, None]
    assert [c.label for c in rank_changes([1, 2], [1, 2])] == ["=", "="]


def test_overlap_by_hand() -> None:
    # {1,2,3,4} and {3,4,5}: share 2, union 5 → Jaccard 0.4
    shared = overlap([1, 2, 3, 4], [5, 3, 4])
    assert (shared.shared, shared.union, shared.only_a, shared.only_b) == (2, 5, (1, 2), (5,))
    assert shared.jaccard == pytest.approx(0.4)
    assert overlap([], []).jaccard == 1.0


@given(
    st.lists(st.integers(0, 30), max_size=12, unique=True),
    st.lists(st.integers(0, 30), max_size=12, unique=True),
)
def test_overlap_and_rank_changes_agree_with_sets(a: list[int], b: list[int]) -> None:
    o = overlap(a, b)
    assert o.shared == len(set(a) & set(b)) and o.union == len(set(a) | set(b))
    assert o.jaccard == overlap(b, a).jaccard
    new = [c.sentence for c in rank_changes(a, b) if c.previous is None]
    assert new == list(o.only_b)


def test_set_sizes_by_hand(small_index: Index) -> None:
    # "war" under BM25 matches sentences 0, 4, 3, 6 (in that order; 0-4 are the civil-war document,
    # 5-8 Picasso's). With k = 2, S_q = {0, 4}; Ŝ_q adds the ±2 neighbours inside the document:
    # {0, 1, 2} ∪ {2, 3, 4} = {0, 1, 2, 3, 4}, 5 sentences. Francisco Franco is mentioned in sentence 1
    # only: in Ŝ_q but not in S_q.
    ranked = top_k(score(small_index, "war", "bm25.v1"), 1000)
    assert ranked.ids.tolist() == [0, 4, 3, 6]
    franco = small_index.entity_index[("Francisco Franco", "PERSON")]
    sizes = set_sizes(small_index, ranked.ids, franco, k=2)
    assert (sizes.top, sizes.context) == (2, 5)
    assert (sizes.entity, sizes.top_entity, sizes.context_entity) == (1, 0, 1)
    assert sizes.sentences == small_index.N == 12


@settings(max_examples=examples(25), deadline=None)
@given(k=st.integers(1, 12), window=st.integers(0, 3), entity_pick=st.integers(0, 1000))
def test_growth_matches_set_sizes_at_every_k(
    small_index: Index, k: int, window: int, entity_pick: int
) -> None:
    """entity_growth (min rank over a neighbourhood) against set_sizes (np.isin over Ŝ_q built directly)."""
    ranked = top_k(score(small_index, "peace war picasso", "tfisf.v1"), 1000).ids
    entity = entity_pick % small_index.E
    growth = entity_growth(small_index, ranked, entity, [k], window)
    sizes = set_sizes(small_index, ranked, entity, k, window)
    assert int(growth["|S_qe|"].iloc[0]) == sizes.top_entity
    assert int(growth["|Ŝ_qe|"].iloc[0]) == sizes.context_entity


def test_entry_ranks_and_first_hits(small_index: Index) -> None:
    ranking = [6, 0, 4]  # sentence 6 is first, 0 second, 4 third
    plain, reach = entry_ranks(small_index, ranking, [0, 1, 5, 11], window=2)
    # 0: rank 2; 1: not ranked, but 0 (rank 2) is its neighbour; 5: neighbour of 6 (rank 1); 11: none near
    assert plain.tolist() == [2, math.inf, math.inf, math.inf]
    assert reach.tolist() == [2, 2, 1, math.inf]
    assert first_hits(small_index, ranking, [1, 5]) == (None, 1.0)
    assert first_hits(small_index, ranking, []) == (None, None)
    assert log_ks(1).tolist() == [1] and log_ks(10_000)[-1] == 10_000


def test_every_models_explanation_splits_into_parts_that_sum_to_its_total(small_index: Index) -> None:
    for spec in list_models():
        if spec.family == "ltr":  # its parts are features, not terms (tests/learning/test_learners.py)
            continue
        ranked = top_k(score(small_index, "peace war", spec.name), 3)
        for sentence in ranked.ids:
            parts = contribution_parts(explain(small_index, "peace war", int(sentence), spec.name))
            total = explain(small_index, "peace war", int(sentence), spec.name).total
            assert parts.frame["value"].sum() == pytest.approx(total, rel=1e-9, abs=1e-9), spec.name
    assert contribution_parts(explain(small_index, "peace war", 8, "bm25f.v1")).split == "field"
    assert contribution_parts(explain(small_index, "peace war", 8, "lm-2si.v1")).split == "mixture component"
    assert contribution_parts(explain(small_index, "peace war", 8, "tfisf-con.v1")).split == "neighbour"


def test_parameter_controls_follow_the_declared_ranges() -> None:
    specs = {p.name: p for p in get_model("lm-dir.v1").param_specs()}
    assert control_kind(specs["mu"]) == "grid"  # 0..10⁶ in steps of 1 cannot be a slider
    assert slider_options(specs["mu"])[:3] == [1.0, 5.0, 10.0] and 100.0 in slider_options(specs["mu"])
    assert control_kind(specs["importance"]) == "toggle"
    bm25 = {p.name: p for p in get_model("bm25.v1").param_specs()}
    assert control_kind(bm25["k1"]) == "slider" and control_kind(bm25["idf"]) == "select"


# --- the page --------------------------------------------------------------------------------------


def test_the_query_comes_from_explore_and_a_slider_reranks(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = howto(small_index, monkeypatch, explore_query="peace war")
    assert not app.exception and not app.error
    assert app.text_input(key="howto_query").value == "peace war"
    assert app.selectbox(key="howto_model").value == "bm25f.v1"
    assert app.latex and "BM25F" not in app.latex[0].value  # a formula, not a name
    ids, scores, changes = ranking(app)
    expected = top_k(score(small_index, "peace war", "bm25f.v1"), 10)
    assert ids == expected.ids.tolist() and scores == pytest.approx(expected.scores.tolist())
    assert set(changes) == {"="}

    app.slider(key="howto_p_bm25f.v1_k1").set_value(2.0).run()
    assert not app.exception and not app.error
    ids2, scores2, changes2 = ranking(app)
    moved = top_k(score(small_index, "peace war", "bm25f.v1", k1=2.0), 10)
    assert ids2 == moved.ids.tolist() and scores2 == pytest.approx(moved.scores.tolist())
    assert ids2 != ids  # k1 = 2 puts sentence 8 first (see the rank-change test above)
    assert changes2 == [c.label for c in rank_changes(ids, ids2)] and changes2[:3] == ["↑1", "↑1", "↓2"]
    timing = app.session_state["howto_timing"]  # reported on the page; speed lives in benchmarks/, not here
    assert timing["rank_ms"] >= 0

    app.button(key="howto_reset_bm25f.v1").click().run()
    assert ranking(app)[0] == ids


def test_the_explanation_total_equals_the_score_for_every_model(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.learning.store import save
    from tests.learning.test_learners import one_feature_ranker

    save("ltr", one_feature_ranker("bm25.v1:score"), first_stage="bm25.v1", depth=100, scorers=("bm25.v1",),
         meta={})  # a stored ranker, so that the page offers ltr.v1 too
    app = howto(small_index, monkeypatch, howto_query="peace war")
    for spec in list_models():
        app.selectbox(key="howto_model").set_value(spec.name).run()
        assert not app.exception and not app.error, spec.name
        ids, scores, _ = ranking(app)
        app.selectbox(key="howto_sentence").set_value(ids[1]).run()
        shown = metrics(app)
        assert shown["Check"] == "equal ✓", spec.name
        assert shown["Score in the ranking"] == shown["Sum of the contributions"] == f"{scores[1]:.6f}"
        assert len(table_with(app, "contribution")) >= 1  # the explanation's rows


def test_grid_and_toggle_controls_change_the_scores(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = howto(small_index, monkeypatch, howto_query="peace war", howto_model="lm-dir.v1")
    _, before, _ = ranking(app)
    app.select_slider(key="howto_p_lm-dir.v1_mu").set_value(1000.0).run()
    _, after, _ = ranking(app)
    expected = top_k(score(small_index, "peace war", "lm-dir.v1", mu=1000.0), 10)
    assert after == pytest.approx(expected.scores.tolist()) and after != pytest.approx(before)
    app.toggle(key="howto_p_lm-dir.v1_importance").set_value(True).run()
    assert not app.exception and not app.error
    assert any("log p(d|s)" in c.value for c in app.caption)  # the query-independent addend is named


def test_fig1_sets_and_the_two_model_comparison(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = howto(small_index, monkeypatch, howto_query="peace war", howto_model="bm25.v1")
    app.number_input(key="howto_k").set_value(3).run()
    assert any(o.startswith("Lennon (PERSON)") for o in app.selectbox(key="howto_entity").options)
    app.selectbox(key="howto_entity").set_value("Lennon|PERSON").run()
    ranked = top_k(score(small_index, "peace war", "bm25.v1"), 10_000).ids
    sizes = set_sizes(small_index, ranked, small_index.entity_index[("Lennon", "PERSON")], 3)
    shown = metrics(app)
    assert shown["|S_q|"] == "3" and shown["|Ŝ_q|"] == str(sizes.context)
    assert shown["|S_qe|"] == str(sizes.top_entity) and shown["|Ŝ_qe|"] == str(sizes.context_entity)
    assert sizes.top_entity <= sizes.context_entity <= sizes.entity

    app.selectbox(key="howto_compare").set_value("bm25f.v1").run()
    a = top_k(score(small_index, "peace war", "bm25.v1"), 10).ids.tolist()
    b = top_k(score(small_index, "peace war", "bm25f.v1"), 10).ids.tolist()
    expected = overlap(a, b)
    shown = metrics(app)
    assert shown["Shared sentences in the two top 10s"] == f"{expected.shared} of {max(len(a), len(b))}"
    assert shown["Jaccard overlap"] == f"{expected.jaccard:.2f}"
    left, right = rankings(app)[1:3]
    assert left[0] == a and right[0] == b
    assert right[2] == [c.label for c in rank_changes(a, b)] and left[2] == [
        c.label for c in rank_changes(b, a)
    ]
    assert "new" in right[2]  # BM25F's context and title bring in sentences BM25 cannot see


def test_bad_input_shows_messages_not_tracebacks(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = howto(small_index, monkeypatch, howto_query="the of and")
    assert not app.exception
    assert any("stop words" in w.value for w in app.warning)
    app.text_input(key="howto_query").input("zzzz qqqq").run()
    assert not app.exception and any("no sentence contains" in w.value for w in app.warning)
    app.text_input(key="howto_query").input("").run()
    assert not app.exception and app.info
    app.text_input(key="howto_query").input("peace war").run()
    app.selectbox(key="howto_model").set_value("lm-3mm.v1").run()
    app.slider(key="howto_p_lm-3mm.v1_lam").set_value(0.9).run()
    app.slider(key="howto_p_lm-3mm.v1_gamma").set_value(0.5).run()  # λ + γ > 1: not a mixture
    assert not app.exception and any("exceed 1" in e.value for e in app.error)


def test_hostile_corpus_text_is_inert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [
        {"id": "x", "title": "<b>Bold</b> title", "text": "Paris is <script>alert(1)</script> lovely. "
         'Paris has an <img src=x onerror="alert(2)"> image.'},
    ]
    index = build_from_texts(tmp_path, docs)
    app = howto(index, monkeypatch, howto_query="Paris lovely image")
    assert not app.exception and not app.error
    for sentence in app.selectbox(key="howto_sentence").options:
        app.selectbox(key="howto_sentence").set_value(sentence).run()
        html = "\n".join(m.value for m in app.markdown)
        assert "<script>" not in html and "<img" not in html and "<b>Bold" not in html
    assert "&lt;img src=x onerror=" in html or "&lt;script&gt;" in html
    assert entity_sentences(index, 0).size  # the page had entities to show


def test_an_untrained_model_says_so_and_the_page_trains_a_named_artefact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.index import artefacts
    from tests.conftest import SMALL_DOCS

    index = build_from_texts(tmp_path, SMALL_DOCS)
    judgments_env(monkeypatch, tmp_path, index, "howto-admin-token")  # training is for the admin
    app = howto(index, monkeypatch, howto_query="peace war", howto_model="lm-class.v1",
                admin_verified_token="howto-admin-token")
    assert not app.exception
    assert any("no trained classes yet" in w.value for w in app.warning)
    assert any("sentret train classes" in e.value for e in app.error)  # the ranking cannot be computed
    assert artefacts.available(index.path) == []  # nothing was trained behind the user's back
    options = app.selectbox(key="howto_model").options
    assert any(o.endswith("(lm-class.v1) — not trained yet (classes)") for o in options)
    assert any(o.endswith("(lm-trigger.v1) — not trained yet (triggers)") for o in options)
    assert any(o.endswith("(bm25f.v1)") for o in options)  # a model that reads no artefact is not marked
    app.text_input(key="howto_p_lm-class.v1_classes_new_name").input("k8")
    app.number_input(key="howto_p_lm-class.v1_classes_K").set_value(8)
    app.number_input(key="howto_p_lm-class.v1_classes_min_count").set_value(1)
    next(b for b in app.button if b.label == "Train classes").click().run()
    assert not app.exception and not app.error
    assert [r["name"] for r in artefacts.available(index.path, "classes")] == ["k8"]
    assert app.selectbox(key="howto_p_lm-class.v1_classes").value == "k8"
    ids, scores, _ = ranking(app)
    expected = top_k(score(Index.load(index.path), "peace war", "lm-class.v1", classes="k8"), 10)
    assert ids == expected.ids.tolist() and scores == pytest.approx(expected.scores.tolist())
    # a name in use is refused: the page never replaces an artefact others may be reading
    app.text_input(key="howto_p_lm-class.v1_classes_new_name").input("k8")
    next(b for b in app.button if b.label == "Train classes").click().run()
    assert any("exists already" in e.value for e in app.error)


# --- links and Reset -------------------------------------------------------------------------------


def test_the_view_round_trips_through_the_url(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = howto(small_index, monkeypatch, howto_query="peace war", howto_model="bm25f.v1")
    app.slider(key="howto_p_bm25f.v1_k1").set_value(2.0).run()
    ids = ranking(app)[0]
    app.selectbox(key="howto_sentence").set_value(ids[2]).run()
    app.selectbox(key="howto_compare").set_value("tfisf.v1").run()
    app.number_input(key="howto_k").set_value(5).run()
    entity = app.selectbox(key="howto_entity").options[1]  # "text (label) · in n of S_q"
    name, label = entity.split(" · ")[0].rsplit(" (", 1)
    app.selectbox(key="howto_entity").set_value(f"{name}|{label[:-1]}").run()
    assert not app.exception and not app.error
    link = {key: app.query_params[key] for key in app.query_params}
    assert link["model"] == "bm25f.v1" and link["p.k1"] == "2.0" and link["sentence"] == str(ids[2])
    assert link["q"] == "peace war" and link["compare"] == "tfisf.v1" and link["k"] == "5"

    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    fresh = AppTest.from_string(SCRIPT, default_timeout=60)
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    assert not fresh.exception and not fresh.error and not fresh.warning
    assert fresh.text_input(key="howto_query").value == "peace war"
    assert fresh.slider(key="howto_p_bm25f.v1_k1").value == 2.0
    assert fresh.selectbox(key="howto_sentence").value == ids[2]
    assert fresh.selectbox(key="howto_compare").value == "tfisf.v1"
    assert fresh.number_input(key="howto_k").value == 5
    assert fresh.selectbox(key="howto_entity").value == f"{name}|{label[:-1]}" == link["entity"]
    assert rankings(fresh) == rankings(app) and metrics(fresh) == metrics(app)


def test_bad_url_values_warn_and_name_what_was_used(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    app = AppTest.from_string(SCRIPT, default_timeout=60)
    for key, value in {"q": "peace war", "model": "bm25f.v1", "p.k1": "99", "p.zeta": "1", "sentence": "x"}.items():
        app.query_params[key] = value
    app.run()
    assert not app.exception
    shown = "\n".join(w.value for w in app.warning)
    assert "p.k1='99'" in shown and "using 0.26 instead" in shown
    assert "p.zeta='1'" in shown and "sentence='x'" in shown
    assert app.slider(key="howto_p_bm25f.v1_k1").value == 0.26
    app2 = AppTest.from_string(SCRIPT, default_timeout=60)
    app2.query_params.update({"q": "peace war", "model": "no-such.v1"})
    app2.run()
    assert any("model='no-such.v1'" in w.value for w in app2.warning)
    assert app2.selectbox(key="howto_model").value == "bm25f.v1"


def test_reset_to_defaults_resets_the_sliders_themselves(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = howto(small_index, monkeypatch, howto_query="peace war", howto_model="bm25f.v1")
    defaults = {p.name: p.default for p in get_model("bm25f.v1").param_specs()}
    ids = ranking(app)[0]
    app.slider(key="howto_p_bm25f.v1_k1").set_value(2.0).run()
    app.slider(key="howto_p_bm25f.v1_b").set_value(0.1).run()
    assert ranking(app)[0] != ids and app.query_params["p.k1"] == "2.0"
    app.button(key="howto_reset_bm25f.v1").click().run()
    assert app.slider(key="howto_p_bm25f.v1_k1").value == defaults["k1"]
    assert app.slider(key="howto_p_bm25f.v1_b").value == defaults["b"]
    assert ranking(app)[0] == ids and "p.k1" not in app.query_params


# --- controls named in words, ranges around the papers' values, bars that say which way is better


def test_sliders_are_named_in_words_and_ranged_around_the_papers_values(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = howto(small_index, monkeypatch, howto_query="peace war", howto_model="bm25f.v1")
    k1 = app.slider(key="howto_p_bm25f.v1_k1")
    assert k1.label == "Term-frequency saturation of the combined pseudo-frequency (k_1)"
    # the papers' grid for k1 is 1.0-2.0 and the default 0.26: the slider runs 0-2 (the grid's top, a
    # "nice" number ≥ max(2.0, 2·0.26)), not the declared 0-10 where 0.26 sat at 2.6 % of the track
    assert (k1.min, k1.max, k1.value) == (0.0, 2.0, 0.26)
    labels = [s.label for s in app.slider]
    assert all("$" not in label and "`" not in label and "\\" not in label for label in labels), labels
    assert "Weight of the context field (w_context)" in labels
    assert "$k_1$" in k1.help  # the symbol itself is in the tooltip, where LaTeX renders
    app.selectbox(key="howto_model").set_value("bm25.v1").run()
    k1 = app.slider(key="howto_p_bm25.v1_k1")
    assert (k1.min, k1.max, k1.value) == (0.0, 2.5, 1.2)  # 2.5 = the nice number ≥ max(2.0, 2·1.2 = 2.4)


def test_a_link_beyond_the_teaching_range_widens_the_slider(
    small_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    app = AppTest.from_string(SCRIPT, default_timeout=60)
    app.query_params.update({"q": "peace war", "model": "bm25f.v1", "p.k1": "5.5"})
    app.run()
    k1 = app.slider(key="howto_p_bm25f.v1_k1")
    assert not app.exception and (k1.value, k1.max) == (5.5, 5.5)


def test_contribution_bars_say_which_way_is_better(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    app = howto(small_index, monkeypatch, howto_query="peace war", howto_model="bm25f.v1")
    captions = [c.value for c in app.caption]
    assert any(c.startswith("Higher is better") for c in captions)
    app.selectbox(key="howto_model").set_value("lm-dir.v1").run()
    captions = [c.value for c in app.caption]
    assert any("a taller bar (further below 0) is worse" in c for c in captions)


def test_learned_ranker_features_are_named_in_words(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    from sentret_core.learning.store import save
    from tests.learning.test_learners import one_feature_ranker

    save("ltr", one_feature_ranker("inv_position"), first_stage="bm25.v1", depth=100, scorers=("bm25.v1",),
         meta={})
    app = howto(small_index, monkeypatch, howto_query="peace war")
    app.selectbox(key="howto_model").set_value("ltr.v1").run()
    frame = table_with(app, "meaning")
    by_code = dict(zip(frame["feature"], frame["meaning"]))
    assert by_code["inv_position"] == "closeness to the document's start, 1/(1+position)"
    assert by_code["e:kld"] == "the chosen entity's KLD"
    assert by_code["bm25.v1:rank"] == f"{get_model('bm25.v1').display_name}: rank, 1/(1+rank)"
