"""Trigger tables and the trained trigger LM ``lm-trigger.v1`` (Momtazi & Klakow, IP&M 2015, §5-6)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.index.reader import verify
from sentret_core.models import distribution, explain, score
from sentret_core.models.training.triggers import TABLES, fit_triggers, load_triggers, read_qa_pairs, train_triggers
from tests.conftest import build_from_texts

# --- hand counts on a three-sentence corpus ----------------------------------------------------------

# s0 = [birds sing birds fly], s1 = [birds need trees] (same document), s2 = [trees need water]
# (another document: s1 → s2 is not "the next sentence").
THREE = [
    {"id": "d1", "title": "Birds", "text": "Birds sing and birds fly. Birds need trees."},
    {"id": "d2", "title": "Water", "text": "Trees need water."},
]

# inside: every ordered pair of two *different positions* of one sentence
INSIDE = {
    ("birds", "birds"): 2,  # s0: positions 0→2 and 2→0
    ("birds", "sing"): 2, ("birds", "fly"): 2, ("sing", "birds"): 2, ("fly", "birds"): 2,
    ("sing", "fly"): 1, ("fly", "sing"): 1,
    ("birds", "need"): 1, ("birds", "trees"): 1, ("need", "birds"): 1, ("trees", "birds"): 1,
    ("need", "trees"): 2, ("trees", "need"): 2,  # s1 and s2
    ("need", "water"): 1, ("water", "need"): 1, ("trees", "water"): 1, ("water", "trees"): 1,
}
# across: every term of s0 triggers every term of s1 (s1 → s2 crosses a document boundary)
ACROSS = {
    ("birds", "birds"): 2, ("birds", "need"): 2, ("birds", "trees"): 2,
    ("sing", "birds"): 1, ("sing", "need"): 1, ("sing", "trees"): 1,
    ("fly", "birds"): 1, ("fly", "need"): 1, ("fly", "trees"): 1,
}


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(Path(tmp_path_factory.mktemp("three")), THREE)


def as_pairs(index: Index, matrix: object) -> dict[tuple[str, str], int]:
    coo = matrix.tocoo()  # type: ignore[attr-defined]
    vocab = index.vocab
    return {(vocab[i], vocab[j]): int(v) for i, j, v in zip(coo.row, coo.col, coo.data) if v}


def test_trigger_counts_equal_a_hand_count(three: Index) -> None:
    sentences = (["birds", "sing", "birds", "fly"], ["birds", "need", "trees"], ["trees", "need", "water"])
    assert [three.sequence(s).tolist() for s in range(3)] == [three.term_ids(w).tolist() for w in sentences]
    tables = train_triggers(three, min_count=1)
    assert as_pairs(three, tables.tables["inside"]) == INSIDE
    assert as_pairs(three, tables.tables["across"]) == ACROSS
    assert tables.tables["qa"].nnz == 0 and tables.tables["ne"].nnz == 0
    pruned = fit_triggers(three, min_count=2)
    assert as_pairs(three, pruned.tables["inside"]) == {k: v for k, v in INSIDE.items() if v >= 2}


def test_trigger_probabilities_by_hand(three: Index) -> None:
    train_triggers(three, min_count=1)
    # p_in(birds|s2) for s2 = [trees need water]: Σ_j f(birds, s_j)/Σ_w f(w, s_j), over |s2| = 3
    # f(·,trees) = birds 1 + need 2 + water 1 = 4; f(·,need) = birds 1 + trees 2 + water 1 = 4;
    # f(·,water) = need 1 + trees 1 = 2 (birds 0)
    p_in = (1 / 4 + 1 / 4 + 0 / 2) / 3
    lam, mu = 0.4, 10.0
    p_birds = three.cf[three.term_index["birds"]] / three.total_terms
    dirichlet = (0 + mu * p_birds) / (3 + mu)
    expected = math.log(lam * p_in + (1 - lam) * dirichlet)
    got = score(three, "birds", "lm-trigger.v1", lam_inside=lam, mu=mu).score_of(2)
    assert got is not None and math.isclose(got, expected, rel_tol=1e-12)


# --- QA-pair and named-entity triggering ------------------------------------------------------------

QA_TSV = (
    "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
    "Q1\tHow high is Everest?\tD1\tEverest\tD1-0\tEverest rises 8848 metres above sea level.\t1\n"
    "Q1\tHow high is Everest?\tD1\tEverest\tD1-1\tEverest has two main climbing routes.\t0\n"
    "Q2\tWhen was Einstein born?\tD2\tEinstein\tD2-0\tAlbert Einstein was born on 14 March 1879.\t1\n"
    "Q3\tWhere was Mozart born?\tD3\tMozart\tD3-0\tMozart was born in Salzburg in 1756.\t1\n"
)
CORPUS = [
    {
        "id": "peaks",
        "title": "Peaks",
        "text": "K2 reaches 8611 metres. K2 is very cold. The high pass is closed in winter.",
    },
    {
        "id": "prizes",
        "title": "Prizes",
        "text": "Curie was born in Warsaw. The ceremony took place in 1903. The ceremony was held indoors.",
    },
]


@pytest.fixture(scope="module")
def qa(tmp_path_factory: pytest.TempPathFactory) -> Index:
    folder = Path(tmp_path_factory.mktemp("qa"))
    (folder / "pairs.tsv").write_text(QA_TSV)
    index = build_from_texts(folder, CORPUS)
    train_triggers(index, qa_pairs=folder / "pairs.tsv", min_count=1)
    return index


def test_qa_pairs_are_the_correct_rows(tmp_path: Path) -> None:
    (tmp_path / "pairs.tsv").write_text(QA_TSV)
    pairs = read_qa_pairs(tmp_path / "pairs.tsv")
    questions = ["How high is Everest?", "When was Einstein born?", "Where was Mozart born?"]
    assert [q for q, _ in pairs] == questions
    (tmp_path / "plain.tsv").write_text("how high\tfeet above\n")
    assert read_qa_pairs(tmp_path / "plain.tsv") == [("how high", "feet above")]
    (tmp_path / "none.tsv").write_text(QA_TSV.splitlines()[0] + "\nQ\tq\tD\tT\tD-0\ta\t0\n")
    with pytest.raises(SentretError, match="Label 1"):
        read_qa_pairs(tmp_path / "none.tsv")


def test_qa_and_ne_tables(qa: Index) -> None:
    tables = load_triggers(qa)
    pairs = as_pairs(qa, tables.tables["qa"])
    # question terms (stop words out): high, everest / einstein, born / mozart, born; only the
    # index's own terms are kept: high, born (everest, einstein, mozart are not in the corpus)
    assert pairs == {("high", "metres"): 1, ("born", "born"): 2}
    assert "climbing" not in qa.term_index  # the Label 0 row is not a pair
    # spaCy (en_core_web_sm) tags the answers: "8848"/DATE; "Albert Einstein"/PERSON,
    # "14 March 1879"/DATE; "Mozart"/PERSON, "Salzburg"/GPE, "1756"/DATE. Counted per answer term
    # inside an entity, times c(w,Q): born→DATE = 3 + 1, born→PERSON = 2 + 1, born→GPE = 1.
    ne = tables.tables["ne"].tocoo()
    found = {(qa.vocab[i], tables.labels[j]): int(v) for i, j, v in zip(ne.row, ne.col, ne.data)}
    assert found == {("high", "DATE"): 1, ("born", "DATE"): 4, ("born", "PERSON"): 3, ("born", "GPE"): 1}


def test_a_trigger_target_scores_without_the_query_word(qa: Index) -> None:
    metres = qa.texts.index("K2 reaches 8611 metres.")
    cold = qa.texts.index("K2 is very cold.")
    found = score(qa, "high", "lm-trigger.v1", lam_inside=0.0, lam_qa=0.3)
    assert metres in found.ids.tolist() and cold not in found.ids.tolist()
    neither = explain(qa, "high", cold, "lm-trigger.v1", lam_inside=0.0, lam_qa=0.3).total
    assert found.score_of(metres) > neither  # type: ignore[operator]
    e = explain(qa, "high", metres, "lm-trigger.v1", lam_inside=0.0, lam_qa=0.3)
    assert e.rows[0]["c(t,s)"] == 0 and "high→metres (QA" in e.rows[0]["top trigger pairs"]
    # capped at one: the sentence with the query word stays, the trigger-only one goes
    capped = score(qa, "high", "lm-trigger.v1", lam_inside=0.0, lam_qa=0.3, max_candidates=1)
    assert capped.ids.tolist() == [qa.texts.index("The high pass is closed in winter.")]
    # without the QA table's weight it is no candidate
    assert metres not in score(qa, "high", "lm-trigger.v1", lam_inside=0.0).ids.tolist()


def test_a_named_entity_target_scores_without_the_query_word(qa: Index) -> None:
    date = qa.texts.index("The ceremony took place in 1903.")
    indoors = qa.texts.index("The ceremony was held indoors.")
    params = {"lam_inside": 0.0, "lam_ne": 0.3}
    found = score(qa, "born", "lm-trigger.v1", **params)
    assert date in found.ids.tolist() and indoors not in found.ids.tolist()
    assert found.score_of(date) > explain(qa, "born", indoors, "lm-trigger.v1", **params).total  # type: ignore[operator]
    why = explain(qa, "born", date, "lm-trigger.v1", **params).rows[0]["top trigger pairs"]
    assert "born→DATE (NE" in why


PARAMS = [
    {},
    {"lam_self": 1.0, "lam_inside": 0.0},
    {"lam_self": 0.2, "lam_inside": 0.2, "lam_across": 0.2, "lam_qa": 0.2, "lam_ne": 0.2},
    {"lam_inside": 0.0, "lam_across": 0.5, "mu": 1e-6},  # the smallest prior allowed: 0 gives -inf
    {"lam_inside": 0.3, "lam_ne": 0.3, "mu": 2500.0},
    {"lam_inside": 0.0, "lam_qa": 0.7, "max_candidates": 1},
]


@pytest.mark.parametrize("params", PARAMS)
def test_trigger_probabilities_sum_to_one(qa: Index, params: dict[str, object]) -> None:
    for sentence in range(qa.N):
        p = distribution(qa, sentence, "lm-trigger.v1", **params)
        assert (p >= 0).all() and math.isclose(float(p.sum()), 1.0, abs_tol=1e-12)


@pytest.mark.parametrize("params", PARAMS)
def test_explain_totals_equal_scores(qa: Index, params: dict[str, object]) -> None:
    for query in ("high", "born born metres", "ceremony winter", "curie warsaw k2"):
        found = score(qa, query, "lm-trigger.v1", **params)
        for sentence, value in zip(found.ids.tolist(), found.scores.tolist()):
            e = explain(qa, query, sentence, "lm-trigger.v1", **params)
            assert e.candidate and math.isclose(e.total, value, rel_tol=1e-9, abs_tol=1e-9)
            p = distribution(qa, sentence, "lm-trigger.v1", **params)
            for row in e.rows:
                assert math.isclose(p[qa.term_index[row["term"]]], row["p(t|θ)"], rel_tol=1e-9)


def test_self_triggering_with_dirichlet_is_the_jm_shape(qa: Index) -> None:
    # λ_self·c(q,s)/|s| + (1-λ_self)·DIR: with μ → 0 this is the ML model, like JM without smoothing
    a = score(qa, "ceremony", "lm-trigger.v1", lam_self=1.0, lam_inside=0.0)
    t = qa.term_index["ceremony"]  # unsmoothed JM (λ = 0, refused as a parameter): log c(t,s)/|s|
    ml = np.log(qa.X[a.ids, t].toarray().ravel() / qa.sent_len[a.ids])
    assert a.ids.tolist() == np.flatnonzero(qa.X[:, t].toarray().ravel()).tolist() and np.allclose(a.scores, ml)


def test_weights_must_leave_a_distribution() -> None:
    with pytest.raises(SentretError, match="exceed 1"):
        score_params = {"lam_inside": 0.6, "lam_qa": 0.6}
        from sentret_core.models import get_model

        get_model("lm-trigger.v1").resolve(score_params)


def test_tables_are_a_named_artefact_beside_the_index(qa: Index) -> None:
    tables = load_triggers(qa)
    record = json.loads((Path(qa.path) / "artefacts" / "triggers" / "artefact.json").read_text())
    assert record["kind"] == "triggers" and record["sha256"] == tables.key
    assert record["qa_pairs"].endswith("pairs.tsv") and record["params"] == {"min_count": 1, "qa_min_count": 1}
    fresh = load_triggers(Index.load(qa.path))
    assert fresh.key == tables.key and fresh.labels == tables.labels
    for name in TABLES:
        assert (fresh.tables[name] != tables.tables[name]).nnz == 0
    assert verify(qa.path) == []


def test_the_model_never_trains_missing_tables(tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, THREE)
    with pytest.raises(SentretError, match=r"no triggers artefact named 'triggers'.*sentret train triggers"):
        score(index, "birds", "lm-trigger.v1")
    assert not (tmp_path / "idx" / "artefacts").exists()
    # self-triggering alone reads no table, so it needs none
    assert len(score(index, "birds", "lm-trigger.v1", lam_inside=0.0, lam_self=0.5)) > 0
    train_triggers(index)  # the default: corpus tables, min_count 2
    found = score(index, "birds", "lm-trigger.v1")
    assert 2 not in found.ids.tolist()  # "trees need water": pruned (min_count 2) pairs only
    tables = load_triggers(index)
    assert tables.meta["qa_pairs"] is None and tables.meta["params"]["min_count"] == 2
    named = train_triggers(index, name="all-pairs", min_count=1)
    assert 2 in score(index, "birds", "lm-trigger.v1", tables="all-pairs").ids.tolist()
    assert named.key != tables.key and load_triggers(index).key == tables.key
