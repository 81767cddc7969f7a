"""``lm-trigger.v2``: question words (``?when`` …) trigger answer labels and terms (Momtazi & Klakow 2015, §6.5)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.index import artefacts
from sentret_core.models import explain, get_model, score
from sentret_core.models.lm_trigger.explain import ask_distribution
from sentret_core.models.training.triggers import (
    ASK_TABLES,
    ASKS,
    KIND,
    TABLES,
    load_triggers,
    sentence_labels,
    train_triggers,
)
from tests.conftest import build_from_texts

# The QA pairs of models/test_lm_trigger.py: Q1 asks no marked question word ("how high"), Q2 asks
# ?when, Q3 ?where. spaCy (en_core_web_sm) tags the answers: "Albert Einstein"/PERSON (2 terms),
# "14 March 1879"/DATE (3 terms); "Mozart"/PERSON, "Salzburg"/GPE, "1756"/DATE (1 term each).
QA_TSV = (
    "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
    "Q1\tHow high is Everest?\tD1\tEverest\tD1-0\tEverest rises 8848 metres above sea level.\t1\n"
    "Q2\tWhen was Einstein born?\tD2\tEinstein\tD2-0\tAlbert Einstein was born on 14 March 1879.\t1\n"
    "Q3\tWhere was Mozart born?\tD3\tMozart\tD3-0\tMozart was born in Salzburg in 1756.\t1\n"
)
CORPUS = [
    {"id": "peaks", "title": "Peaks",
     "text": "K2 reaches 8611 metres. K2 is very cold. The high pass is closed in winter."},
    {"id": "prizes", "title": "Prizes",
     "text": "Curie was born in Warsaw. The ceremony took place in 1903. The ceremony was held indoors."},
]
# every weight named: v1 and v2 differ in their defaults, so a comparison fixes all of them
ZERO = {"lam_self": 0.0, "lam_inside": 0.0, "lam_across": 0.0, "lam_qa": 0.0, "lam_ne": 0.0, "mu": 100.0}


def full(**params: float) -> dict[str, float]:
    return {**ZERO, **params}


NE_ONLY = full(lam_ne=0.5, mu=10.0)


@pytest.fixture(scope="module")
def qa(tmp_path_factory: pytest.TempPathFactory) -> Index:
    folder = Path(tmp_path_factory.mktemp("qa2"))
    (folder / "pairs.tsv").write_text(QA_TSV)
    index = build_from_texts(folder, CORPUS)
    train_triggers(index, qa_pairs=folder / "pairs.tsv", min_count=1)
    return index


def sid(index: Index, text: str) -> int:
    return index.texts.index(text)


def test_question_words_are_counted_as_triggers(qa: Index) -> None:
    tables = load_triggers(qa)
    assert tables.meta["algorithm"] == "triggers.v2" and tables.meta["asks"] == list(ASKS)
    assert dict(zip(ASKS, tables.asked.tolist())) == {"?who": 0, "?when": 1, "?where": 1, "?how-many": 0,
                                                      "?how-long": 0, "?how-old": 0}
    ne = tables.tables["ne_ask"].tocoo()
    found = {(ASKS[i], tables.labels[j]): int(v) for i, j, v in zip(ne.row, ne.col, ne.data)}
    # ?when: the DATE "14 March 1879" (3 terms) and the PERSON "Albert Einstein" (2); ?where: 1 each
    assert found == {("?when", "DATE"): 3, ("?when", "PERSON"): 2,
                     ("?where", "DATE"): 1, ("?where", "GPE"): 1, ("?where", "PERSON"): 1}
    qa_rows = tables.tables["qa_ask"].tocoo()
    # of the answers' terms only "born" is a term of the index
    assert {(ASKS[i], qa.vocab[j]): int(v) for i, j, v in zip(qa_rows.row, qa_rows.col, qa_rows.data)} == {
        ("?when", "born"): 1, ("?where", "born"): 1}
    # the markers never enter the term tables: they stay as v1 counted them
    assert all(not w.startswith("?") for w in qa.vocab)
    assert tables.tables["ne"].shape == (qa.V, len(tables.labels))


def test_the_marker_factor_by_hand(qa: Index) -> None:
    # the sentences' labels (spaCy): "1903" is a DATE; "indoors" has none
    labels = load_triggers(qa).labels
    Y = sentence_labels(qa, labels).toarray()
    date, indoors = sid(qa, "The ceremony took place in 1903."), sid(qa, "The ceremony was held indoors.")
    assert [qa.vocab[t] for t in qa.sequence(date)] == ["ceremony", "took", "place", "1903"]
    assert Y[date, labels.index("DATE")] == 1 and Y[date].sum() == 1 and Y[indoors].sum() == 0
    # p_ne(?when|DATE) = 3/(3+1); p(?when) = n(?when)/Σn = 1/2; |s| = 4 with one DATE term:
    # p_ne(?when|s) = (3/4 + 3·1/2)/4; p(?when|θ_s) = λ_ne·p_ne + (1-λ_ne)·p(?when)
    p_when_date = 0.5 * (0.75 + 3 * 0.5) / 4 + 0.5 * 0.5
    v1 = score(qa, "When was the ceremony?", "lm-trigger.v1", **NE_ONLY)
    v2 = score(qa, "When was the ceremony?", "lm-trigger.v2", **NE_ONLY)
    assert v2.ids.tolist() == v1.ids.tolist() == [date, indoors]  # markers add no candidate
    assert math.isclose(v2.score_of(date) - v1.score_of(date), math.log(p_when_date), rel_tol=1e-12)  # type: ignore[operator]
    # an unlabelled sentence backs off to the prior for every term: p = p(?when)
    assert math.isclose(v2.score_of(indoors) - v1.score_of(indoors), math.log(0.5), rel_tol=1e-12)  # type: ignore[operator]
    # ?where: p_ne(?where|DATE) = 1/4, so the DATE sentence loses against the prior instead
    p_where_date = 0.5 * (0.25 + 3 * 0.5) / 4 + 0.5 * 0.5
    w1 = score(qa, "Where was the ceremony?", "lm-trigger.v1", **NE_ONLY)
    w2 = score(qa, "Where was the ceremony?", "lm-trigger.v2", **NE_ONLY)
    assert math.isclose(w2.score_of(date) - w1.score_of(date), math.log(p_where_date), rel_tol=1e-12)  # type: ignore[operator]
    gap = {q: score(qa, q, "lm-trigger.v2", **NE_ONLY) for q in ("When was the ceremony?", "Where was the ceremony?")}
    assert (gap["When was the ceremony?"].score_of(date) - gap["When was the ceremony?"].score_of(indoors)  # type: ignore[operator]
            > gap["Where was the ceremony?"].score_of(date) - gap["Where was the ceremony?"].score_of(indoors))  # type: ignore[operator]


def test_qa_and_ne_question_word_rows_together_by_hand(qa: Index) -> None:
    s = sid(qa, "Curie was born in Warsaw.")  # curie born warsaw; warsaw is a GPE
    params = full(lam_qa=0.2, lam_ne=0.3)
    # qa: born ← ?when 1, ?where 1: p_qa(?where|born) = 1/2; curie, warsaw: no mass → p(?where) = 1/2
    p_qa = (0.5 + 2 * 0.5) / 3
    # ne: GPE ← ?where 1 only: p_ne(?where|GPE) = 1; the two unlabelled terms back off
    p_ne = (1.0 + 2 * 0.5) / 3
    expected = 0.2 * p_qa + 0.3 * p_ne + 0.5 * 0.5
    got = score(qa, "Where was Curie born?", "lm-trigger.v2", **params).score_of(s)
    base = score(qa, "Where was Curie born?", "lm-trigger.v1", **params).score_of(s)
    assert got is not None and base is not None and math.isclose(got - base, math.log(expected), rel_tol=1e-12)
    dist = ask_distribution(qa, s, get_model("lm-trigger.v2").resolve(params))  # type: ignore[arg-type]
    # ?when: p_qa = (1/2 + 2·1/2)/3, p_ne = (0 + 2·1/2)/3; ?who and the ?how-… were never asked
    when = 0.2 * 0.5 + 0.3 * (1 / 3) + 0.5 * 0.5
    assert np.allclose(dist, [0.0, when, expected, 0.0, 0.0, 0.0], rtol=1e-12)
    assert math.isclose(float(dist.sum()), 1.0, rel_tol=1e-12)


def test_without_question_words_v2_is_v1(qa: Index) -> None:
    params = full(lam_inside=0.2, lam_qa=0.3, lam_ne=0.2)
    for query in ("ceremony winter", "born born metres", "high", "What was the ceremony?"):
        a = score(qa, query, "lm-trigger.v1", **params)
        b = score(qa, query, "lm-trigger.v2", **params)
        assert a.ids.tolist() == b.ids.tolist() and np.array_equal(a.scores, b.scores)
    # a question word no training question asked (?how-many, ?who) is skipped, like an unseen term
    for query in ("How many metres does K2 reach?", "Who held the ceremony?"):
        a = score(qa, query, "lm-trigger.v1", **params)
        assert np.array_equal(a.scores, score(qa, query, "lm-trigger.v2", **params).scores)
    # and so is every marker when no question-word table is weighted (λ_qa = λ_ne = 0)
    off = full(lam_inside=0.3)
    q = "When was the ceremony?"
    assert np.array_equal(score(qa, q, "lm-trigger.v1", **off).scores, score(qa, q, "lm-trigger.v2", **off).scores)


PARAMS = [
    {},  # v2's defaults
    NE_ONLY,
    full(lam_self=0.2, lam_inside=0.2, lam_across=0.2, lam_qa=0.2, lam_ne=0.2),
    full(lam_qa=0.7, mu=1e-6),  # the smallest prior allowed: 0 gives -inf
    full(lam_ne=1.0),
    {**full(lam_inside=0.3, lam_ne=0.3), "max_candidates": 1},
]


@pytest.mark.parametrize("params", PARAMS)
def test_explain_rows_sum_to_the_score(qa: Index, params: dict[str, object]) -> None:
    spec = get_model("lm-trigger.v2")
    for query in ("When was the ceremony?", "Where was Curie born?", "when where born k2", "high"):
        found = score(qa, query, "lm-trigger.v2", **params)
        for sentence, value in zip(found.ids.tolist(), found.scores.tolist()):
            e = explain(qa, query, sentence, "lm-trigger.v2", **params)
            assert e.candidate and math.isclose(e.total, value, rel_tol=1e-9, abs_tol=1e-9)
            dist = ask_distribution(qa, sentence, spec.resolve(params))  # type: ignore[arg-type]
            for row in e.rows:
                if row["term"].startswith("?"):
                    assert math.isclose(dist[ASKS.index(row["term"])], row["p(t|θ)"], rel_tol=1e-9)
                    parts = [v for k, v in row.items() if k.startswith(("λ_", "(1-Σλ)"))]
                    assert math.isclose(math.fsum(parts), row["p(t|θ)"], rel_tol=1e-12)


@pytest.mark.parametrize("params", PARAMS)
def test_question_word_probabilities_sum_to_one(qa: Index, params: dict[str, object]) -> None:
    resolved = get_model("lm-trigger.v2").resolve(params)
    for sentence in range(qa.N):
        dist = ask_distribution(qa, sentence, resolved)  # type: ignore[arg-type]
        assert (dist >= 0).all() and math.isclose(float(dist.sum()), 1.0, abs_tol=1e-12)


def test_explain_names_the_question_word_pairs(qa: Index) -> None:
    date = sid(qa, "The ceremony took place in 1903.")
    e = explain(qa, "When was the ceremony?", date, "lm-trigger.v2", **NE_ONLY)
    assert [r["term"] for r in e.rows] == ["ceremony", "?when"]
    row = e.rows[1]
    assert row["p(t)"] == 0.5 and row["c(t,s)"] == 0 and "?when→DATE (NE" in row["top trigger pairs"]
    assert e.notes["question-word ne pairs"] == 5 and e.notes["training questions with a question word"] == 2


def test_tables_of_triggers_v1_load_without_question_word_rows(qa: Index, tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, CORPUS)
    (tmp_path / "pairs.tsv").write_text(QA_TSV)
    new = train_triggers(index, qa_pairs=tmp_path / "pairs.tsv", min_count=1, name="new")
    arrays = {f"{n}.{part}": getattr(new.tables[n], part) for n in TABLES for part in ("indptr", "indices", "data")}
    meta = {k: v for k, v in new.meta.items() if k != "asks"}
    meta["algorithm"] = "triggers.v1"
    meta["shapes"] = {n: meta["shapes"][n] for n in TABLES}
    artefacts.write(index, KIND, "old", arrays, meta)
    old = load_triggers(index, "old")
    assert old.asked.sum() == 0 and all(old.tables[rows].nnz == 0 for rows in ASK_TABLES.values())
    for name in TABLES:
        assert (old.tables[name] != new.tables[name]).nnz == 0
    q = "When was the ceremony?"
    params = {**NE_ONLY, "tables": "old"}
    assert np.array_equal(score(index, q, "lm-trigger.v2", **params).scores,
                          score(index, q, "lm-trigger.v1", **params).scores)
    assert not np.array_equal(score(index, q, "lm-trigger.v2", **{**NE_ONLY, "tables": "new"}).scores,
                              score(index, q, "lm-trigger.v1", **{**NE_ONLY, "tables": "new"}).scores)


def test_v2_declares_zero_on_every_weight_grid() -> None:
    specs = {s.name: s for s in get_model("lm-trigger.v2").param_specs()}
    for name in ("lam_self", "lam_inside", "lam_across", "lam_qa", "lam_ne"):
        assert specs[name].grid is not None and specs[name].grid[0] == 0.0
    v1 = {s.name: s for s in get_model("lm-trigger.v1").param_specs()}
    assert 0.0 not in (v1["lam_qa"].grid or ())  # v1 is frozen as it was
    # v2's defaults (tuned on WikiQA train) weight the question-word tables: NE triggering is on
    defaults = get_model("lm-trigger.v2").defaults()
    assert defaults.lam_ne > 0 and defaults.lam_qa > 0 and defaults.rest() > 0  # type: ignore[attr-defined]
    assert get_model("lm-trigger.v1").defaults().lam_ne == 0  # type: ignore[attr-defined]
