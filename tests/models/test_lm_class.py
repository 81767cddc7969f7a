"""Word classes (exchange algorithm) and the class-based LM ``lm-class.v1`` (Momtazi & Klakow, IP&M 2015, §3)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.reader import verify
from sentret_core.models import distribution, explain, get_model, score
from sentret_core.models.training.classes import fit_classes, load_classes, train_classes
from sentret_core.models.training.exchange import bigrams, exchange, sequence_bigrams
from tests.conftest import build_from_texts

# Momtazi & Klakow, IP&M 2015, Fig. 1: "Saturday" and "Tuesday" are seen in the same contexts ("on … morning"), so a
# bigram clustering puts them in one class. Stop words are not terms, so the contexts here are
# "met … morning" and "closed … evening"; cities give a second family of contexts.
DAYS = ["Saturday", "Tuesday", "Friday"]
CITIES = ["Berlin", "Munich", "Vienna"]


def week_text() -> str:
    sentences = []
    for day in DAYS * 2:
        sentences += [f"We met on {day} morning.", f"The shop closed on {day} evening."]
    for city in CITIES * 2:
        sentences += [f"She flew to {city} airport.", f"He lives in central {city} today."]
    sentences.append("Saturday morning was sunny.")
    return " ".join(sentences)


WEEK = [
    {"id": "week", "title": "Week", "text": week_text()},
    {"id": "town", "title": "Town", "text": "The shop sells bread. Bakers work at night. Sunday was quiet."},
]


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Index:
    index = build_from_texts(Path(tmp_path_factory.mktemp("week")), WEEK)
    # the maps the scorer tests name (the training settings lm-class.v1 used to take as parameters)
    train_classes(index, name="k6", classes=6, min_count=1)  # days and cities apart (K = 4 merges them)
    train_classes(index, name="shared3", classes=6, min_count=3, rare="shared")
    train_classes(index, name="k2i0", classes=2, min_count=1, iterations=0)
    return index


def cls_of(index: Index, cmap: object, word: str) -> int:
    return int(cmap.classes[index.term_index[word]])  # type: ignore[attr-defined]


# --- bigram statistics ---------------------------------------------------------------------------------


def test_bigrams_stay_inside_sentences() -> None:
    # sentences [0 1 2] [] [3 4] [5]: pairs (0,1) (1,2) (3,4) only
    left, right = sequence_bigrams(np.array([0, 3, 3, 5, 6]), np.array([0, 1, 2, 3, 4, 5]))
    assert list(zip(left.tolist(), right.tolist())) == [(0, 1), (1, 2), (3, 4)]


def test_bigram_counts_by_hand(week: Index) -> None:
    stats = bigrams(week)
    ids = week.term_index
    B = stats.matrix
    # "We met on Saturday morning." ×2 (DAYS * 2) and "Saturday morning was sunny."
    assert B[ids["saturday"], ids["morning"]] == 3
    assert B[ids["met"], ids["saturday"]] == 2
    assert B[ids["morning"], ids["met"]] == 0  # never across a sentence boundary
    assert stats.counts[ids["saturday"]] == week.cf[ids["saturday"]] == 5


# --- the exchange algorithm ------------------------------------------------------------------------


@pytest.mark.parametrize("K", [3, 4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_saturday_and_tuesday_share_a_class(week: Index, K: int, seed: int) -> None:
    cmap = fit_classes(week, classes=K, min_count=1, iterations=10, seed=seed)
    assert cls_of(week, cmap, "saturday") == cls_of(week, cmap, "tuesday") == cls_of(week, cmap, "friday")
    assert cls_of(week, cmap, "berlin") == cls_of(week, cmap, "munich")
    assert cls_of(week, cmap, "saturday") != cls_of(week, cmap, "morning")


def test_training_is_deterministic_with_a_seed(week: Index) -> None:
    stats = bigrams(week)
    runs = [exchange(stats.matrix, stats.counts, 4, min_count=1, iterations=5, seed=7) for _ in range(2)]
    assert np.array_equal(runs[0].classes, runs[1].classes)
    assert runs[0].objective == runs[1].objective
    # trained again from scratch on a fresh load, the same map
    again = fit_classes(Index.load(week.path), classes=4, min_count=1, iterations=10, seed=7)
    first = fit_classes(week, classes=4, min_count=1, iterations=10, seed=7)
    assert np.array_equal(again.classes, first.classes) and again.key == first.key


def test_training_reports_its_progress_pass_by_pass(week: Index) -> None:
    told: list[tuple[float, str]] = []
    cmap = fit_classes(week, classes=4, min_count=1, iterations=10, seed=7, progress=lambda *a: told.append(a))
    shares = [share for share, _ in told]
    assert shares == sorted(shares) and shares[0] == 1 / 12 and shares[-1] == 1.0  # 10 passes + 2 steps
    passes = [what for _, what in told if what.startswith("pass ")]
    assert len(passes) == cmap.stats["passes"] < 10  # it converged early: its last pass moved nothing
    assert passes[-1].endswith(": 0 words moved")
    assert shares[1 : 1 + len(passes)] == [(n + 2) / 12 for n in range(len(passes))]


def test_exchange_never_lowers_the_likelihood(week: Index) -> None:
    stats = bigrams(week)
    start = exchange(stats.matrix, stats.counts, 4, min_count=1, iterations=0)
    trained = exchange(stats.matrix, stats.counts, 4, min_count=1, iterations=10)
    assert trained.objective >= start.objective - 1e-9


def test_rare_words_are_assigned_or_shared(week: Index) -> None:
    # min_count=5: Saturday (5) is trained; Tuesday, Friday and the cities (4 each) are rare
    assigned = fit_classes(week, classes=3, min_count=5, iterations=10, rare="assign")
    day = cls_of(week, assigned, "saturday")
    assert day < 3 and cls_of(week, assigned, "tuesday") == cls_of(week, assigned, "friday") == day
    shared = fit_classes(week, classes=3, min_count=5, iterations=10, rare="shared")
    assert shared.n_classes == 4
    for word in ("tuesday", "berlin", "bakers"):
        assert cls_of(week, shared, word) == 3
    assert cls_of(week, shared, "saturday") < 3
    # the title-only term has no bigram at all: the shared class either way
    assert cls_of(week, assigned, "week") == assigned.n_classes - 1 == 3


def test_a_trained_map_is_a_named_artefact_beside_the_index(week: Index) -> None:
    cmap = train_classes(week, name="k4", classes=4, min_count=1, seed=3)
    folder = Path(week.path) / "artefacts" / "k4"
    record = artefacts.available(week.path, "classes")
    meta = next(r for r in record if r["name"] == "k4")
    assert meta["params"] == {"classes": 4, "min_count": 1, "iterations": 20, "seed": 3, "rare": "assign"}
    assert meta["algorithm"] == "exchange.v1" and "seconds" in meta["stats"] and meta["sha256"] == cmap.key
    assert (folder / "arrays.npz").is_file()
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".") and p.name != ".lock"]
    fresh = Index.load(week.path)
    loaded = load_classes(fresh, "k4")
    assert np.array_equal(loaded.classes, cmap.classes) and loaded.stats == cmap.stats
    assert np.array_equal(loaded.classes, fit_classes(week, classes=4, min_count=1, seed=3).classes)
    assert verify(week.path) == []  # artefacts are checked, and sound
    assert artefacts.reference(fresh, "classes", "k4") == f"k4@{cmap.key[:12]}"


def test_the_scorer_never_trains_a_missing_map(week: Index) -> None:
    with pytest.raises(SentretError, match=r"no classes artefact named 'nope'.*sentret train classes"):
        score(week, "saturday", "lm-class.v1", classes="nope")
    with pytest.raises(SentretError, match="parameter 'classes' = 'Bad Name!' is not allowed"):
        score(week, "saturday", "lm-class.v1", classes="Bad Name!")
    assert not (Path(week.path) / "artefacts" / "nope").exists()


# --- the class-based LM -------------------------------------------------------------------------------

P = {"classes": "k6"}  # the map trained with K = 6 (the fixture)


def test_a_sentence_without_the_query_word_scores_through_its_class(week: Index) -> None:
    found = score(week, "saturday", "lm-class.v1", **P)
    ids = dict(zip(found.ids.tolist(), found.scores.tolist()))
    tuesday = week.texts.index("We met on Tuesday morning.")
    cmap = load_classes(week, "k6")
    day = cls_of(week, cmap, "saturday")
    # a sentence with no term of Saturday's class (e.g. "She flew to Berlin airport.")
    bread = next(s for s in range(week.N) if day not in cmap.classes[week.sequence(s)] and week.sent_len[s])
    assert tuesday in ids and bread not in ids  # no query word, but the class: a candidate
    assert ids[tuesday] > explain(week, "saturday", bread, "lm-class.v1", **P).total
    e = explain(week, "saturday", tuesday, "lm-class.v1", **P)
    (row,) = e.rows
    assert row["c(t,s)"] == 0 and row["c(C,s)"] == 1 and row["class terms in s"] == "tuesday×1"
    # the DIR word model alone cannot score it
    assert tuesday not in score(week, "saturday", "lm-dir.v1").ids.tolist()


def test_the_formula_by_hand(week: Index) -> None:
    cmap = load_classes(week, "k6")
    s = week.texts.index("We met on Tuesday morning.")  # terms: met tuesday morning
    c = cls_of(week, cmap, "saturday")
    members = np.flatnonzero(cmap.classes == c)
    cf_C = float(week.cf[members].sum())
    p_t_C = week.cf[week.term_index["saturday"]] / cf_C
    p_C = cf_C / week.total_terms
    mu = 10.0
    c_Cs = 1.0  # "tuesday"; "met" and "morning" are in other classes
    assert cls_of(week, cmap, "met") != c and cls_of(week, cmap, "morning") != c
    expected = math.log(p_t_C * (c_Cs + mu * p_C) / (3 + mu))
    got = score(week, "saturday", "lm-class.v1", mu=mu, **P).score_of(s)
    assert got is not None and math.isclose(got, expected, rel_tol=1e-12)
    # λ mixes in the word Dirichlet model
    lam, mu_w = 0.3, 5.0
    p_w = (0 + mu_w * week.cf[week.term_index["saturday"]] / week.total_terms) / (3 + mu_w)
    mixed = math.log(lam * p_w + (1 - lam) * p_t_C * (c_Cs + mu * p_C) / (3 + mu))
    got = score(week, "saturday", "lm-class.v1", mu=mu, lam=lam, mu_word=mu_w, **P).score_of(s)
    assert got is not None and math.isclose(got, mixed, rel_tol=1e-12)


PARAMS = [
    {},
    {"mu": 1e-6},  # the smallest prior allowed: 0 gives -inf scores
    {"mu": 2500.0, "lam": 0.5, "mu_word": 10.0},
    {"lam": 1.0},
    {"classes": "shared3"},
    {"classes": "k2i0"},
]


@pytest.mark.parametrize("params", PARAMS)
def test_class_probabilities_sum_to_one(week: Index, params: dict[str, object]) -> None:
    for sentence in range(week.N):
        p = distribution(week, sentence, "lm-class.v1", **{**P, **params})
        assert (p >= 0).all() and math.isclose(float(p.sum()), 1.0, abs_tol=1e-12)


@pytest.mark.parametrize("params", PARAMS)
def test_explain_totals_equal_scores(week: Index, params: dict[str, object]) -> None:
    for query in ("saturday", "berlin morning", "saturday saturday airport", "bread bakers night"):
        found = score(week, query, "lm-class.v1", **{**P, **params})
        for sentence, value in zip(found.ids.tolist(), found.scores.tolist()):
            e = explain(week, query, sentence, "lm-class.v1", **{**P, **params})
            assert e.candidate and math.isclose(e.total, value, rel_tol=1e-9, abs_tol=1e-9)
            p = distribution(week, sentence, "lm-class.v1", **{**P, **params})
            for row in e.rows:
                assert math.isclose(p[week.term_index[row["term"]]], row["p(t|θ)"], rel_tol=1e-9)


def test_at_most_max_candidates_but_every_word_match(week: Index) -> None:
    full = score(week, "saturday", "lm-class.v1", **P)
    capped = score(week, "saturday", "lm-class.v1", max_candidates=6, **P)
    with_word = [s for s in range(week.N) if "saturday" in week.texts[s].lower()]
    assert len(full) > 6
    assert len(with_word) == 5 and len(capped) == 6 and set(with_word) <= set(capped.ids.tolist())
    others = [s for s in full.ids.tolist() if s not in with_word]
    best = max(others, key=lambda s: (full.score_of(s), -s))
    assert best in capped.ids.tolist()


def test_trained_classes_from_other_corpora(week: Index, tmp_path: Path) -> None:
    # The index shows "Sunday" once, in no day's context; another corpus shows it as a day
    # ("met on Sunday morning"). Trained with that corpus as a source, Sunday joins the days.
    text = week_text().replace("Friday", "Sunday")
    other = build_from_texts(tmp_path, [{"id": "o", "title": "O", "text": text}])
    cmap = train_classes(week, name="with-other", sources=[other.path], classes=3, min_count=1)
    assert cls_of(week, cmap, "sunday") == cls_of(week, cmap, "saturday") == cls_of(week, cmap, "tuesday")
    assert cmap.sources[0]["path"] == str(Path(other.path).resolve())
    fresh = Index.load(week.path)
    assert load_classes(fresh, "with-other").key == cmap.key
    e = explain(fresh, "saturday", 0, "lm-class.v1", classes="with-other")
    assert e.notes["K"] == 3 and e.notes["training sources"] == 1
    # the other maps are untouched
    assert explain(fresh, "saturday", 0, "lm-class.v1", **P).notes["training sources"] == 0


def test_a_damaged_artefact_is_a_clear_error(week: Index, tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, WEEK)
    train_classes(index, classes=4, min_count=1)
    arrays = Path(index.path) / "artefacts" / "classes" / "arrays.npz"
    arrays.write_bytes(arrays.read_bytes()[:100])
    fresh = Index.load(index.path)
    with pytest.raises(SentretError, match=r"artefact 'classes' .* is damaged.*train it again"):
        score(fresh, "saturday", "lm-class.v1")
    assert any("artefacts/classes" in p and "damaged" in p for p in verify(index.path))


def test_training_again_under_a_name_replaces_it_for_a_loaded_index(week: Index) -> None:
    first = train_classes(week, name="again", classes=2, min_count=1)
    assert load_classes(week, "again").key == first.key
    second = train_classes(week, name="again", classes=5, min_count=1)
    assert second.key != first.key and load_classes(week, "again").key == second.key
    assert explain(week, "saturday", 0, "lm-class.v1", classes="again").notes["K"] == 5
    assert not [p for p in (Path(week.path) / "artefacts").iterdir() if p.name.startswith(".again")]


# --- lm-class.v2: the same formula, interpolated with the word model by default ----------------------


def test_v2_interpolates_by_default_and_is_v1_at_the_same_parameters(week: Index) -> None:
    v2 = get_model("lm-class.v2").defaults()
    assert 0 < v2.lam < 1  # type: ignore[attr-defined]
    assert get_model("lm-class.v1").defaults().lam == 0  # type: ignore[attr-defined]  # v1 is frozen
    same = {**v2.to_dict(), **P}
    for query in ("saturday", "berlin morning", "saturday saturday airport"):
        a, b = score(week, query, "lm-class.v1", **same), score(week, query, "lm-class.v2", **P)
        assert a.ids.tolist() == b.ids.tolist() and np.array_equal(a.scores, b.scores)


def test_v2_defaults_by_hand(week: Index) -> None:
    # the same sentence and class as test_the_formula_by_hand, at v2's default λ, μ, μ_w
    p = get_model("lm-class.v2").defaults()
    lam, mu, mu_w = p.lam, p.mu, p.mu_word  # type: ignore[attr-defined]
    cmap = load_classes(week, "k6")
    s = week.texts.index("We met on Tuesday morning.")
    members = np.flatnonzero(cmap.classes == cls_of(week, cmap, "saturday"))
    cf_C = float(week.cf[members].sum())
    cf_t = float(week.cf[week.term_index["saturday"]])
    p_class = cf_t / cf_C * (1 + mu * cf_C / week.total_terms) / (3 + mu)
    p_word = (0 + mu_w * cf_t / week.total_terms) / (3 + mu_w)
    got = score(week, "saturday", "lm-class.v2", **P).score_of(s)
    assert got is not None and math.isclose(got, math.log(lam * p_word + (1 - lam) * p_class), rel_tol=1e-12)
    e = explain(week, "saturday", s, "lm-class.v2", **P)
    assert math.isclose(e.total, got, rel_tol=1e-12)
    assert math.isclose(e.rows[0]["λ·p_w(t|s)"] + e.rows[0]["(1-λ)·p(t|C)·p(C|s)"], e.rows[0]["p(t|θ)"])


@pytest.mark.parametrize("params", PARAMS)
def test_v2_explain_totals_equal_scores_and_sum_to_one(week: Index, params: dict[str, object]) -> None:
    for sentence in range(week.N):
        p = distribution(week, sentence, "lm-class.v2", **{**P, **params})
        assert (p >= 0).all() and math.isclose(float(p.sum()), 1.0, abs_tol=1e-12)
    for query in ("saturday", "berlin morning"):
        found = score(week, query, "lm-class.v2", **{**P, **params})
        for sentence, value in zip(found.ids.tolist(), found.scores.tolist()):
            e = explain(week, query, sentence, "lm-class.v2", **{**P, **params})
            assert e.candidate and math.isclose(e.total, value, rel_tol=1e-9, abs_tol=1e-9)
