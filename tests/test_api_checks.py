"""The validation layer of the public API: each bad argument is refused up front with a
documented error naming the argument, the value and what is allowed; good values of every allowed
type (numpy integers, term lists, ``window=0``) pass; query text is cleaned, never refused."""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sentret_core import Index, explain, score, support, top_k
from sentret_core.checks import ONLY_CONTROL, check_int, check_params, check_query, clean_text
from sentret_core.errors import ArgumentError, ArgumentTypeError, ArgumentValueError, SentretError
from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.driver import check_settings, evaluate_benchmark
from sentret_core.models import distribution
from sentret_core.models.core.registry import get_model
from tests.evaluation.test_benchmarks import write_wikiqa

Q = "Picasso peace"


@pytest.fixture(scope="module")
def wikiqa(tmp_path_factory: pytest.TempPathFactory) -> Benchmark:
    root = tmp_path_factory.mktemp("checks-wikiqa")
    return load_benchmark("wikiqa", write_wikiqa(root / "tiny.tsv"), cache=root / "cache")


# --- the exceptions ------------------------------------------------------------------------------


def test_argument_errors_are_user_errors_and_the_python_kinds() -> None:
    assert issubclass(ArgumentTypeError, TypeError) and issubclass(ArgumentTypeError, SentretError)
    assert issubclass(ArgumentValueError, ValueError) and issubclass(ArgumentValueError, SentretError)
    assert not issubclass(ArgumentValueError, TypeError)
    assert issubclass(ArgumentTypeError, ArgumentError) and issubclass(ArgumentValueError, ArgumentError)


def test_the_app_shows_an_argument_error_as_its_own_message() -> None:
    from sentret_core.ui.state import error_message

    err = ArgumentTypeError("k must be an integer ≥ 0 (got 1.5, a float)")
    assert error_message("rank the sentences", err) == str(err)


# --- integers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [1.5, 10.0, "10", None, True, False, np.bool_(True), math.nan, [3], b"3"])
def test_an_integer_refuses_every_other_type(value: Any) -> None:
    with pytest.raises(ArgumentTypeError, match=r"^k must be an integer with 1 ≤ k ≤ 5 \(got "):
        check_int("k", value, 1, 5)


@pytest.mark.parametrize("value", [3, np.int8(3), np.int64(3), np.uint16(3)])
def test_an_integer_accepts_python_and_numpy_integers(value: Any) -> None:
    got = check_int("k", value, 1, 5)
    assert got == 3 and type(got) is int


@pytest.mark.parametrize(("value", "shown"), [(0, "0"), (6, "6"), (2**63, "9,223,372,036,854,775,808")])
def test_an_integer_out_of_range_names_value_and_range(value: int, shown: str) -> None:
    with pytest.raises(ArgumentValueError) as info:
        check_int("k", value, 1, 5)
    assert str(info.value) == f"k must be an integer with 1 ≤ k ≤ 5 (got {shown})"


# --- query text ----------------------------------------------------------------------------------


def test_clean_text_replaces_lone_surrogates_and_controls_by_spaces() -> None:
    assert clean_text("Picasso peace") == ("Picasso peace", 0)
    assert clean_text("Pica\udcffsso\x00peace\x7f") == ("Pica sso peace ", 3)
    assert clean_text("a\tb\nc\r\x85d") == ("a b c  d", 4)  # tab, newline, CR and NEL are Cc too
    assert clean_text("\ud800").emptied and not clean_text("").emptied and not clean_text("x\x00").emptied


def test_clean_text_joins_a_surrogate_pair_and_leaves_everything_else() -> None:
    assert clean_text("smile \ud83d\ude00") == ("smile \U0001f600", 0)
    # no normalisation: NFD stays NFD (the index keeps its documents' spelling), format characters stay
    nfd = unicodedata.normalize("NFD", "Picassó")
    assert clean_text(nfd).text == nfd and clean_text("\u202epeace\u200d").text == "\u202epeace\u200d"


def test_clean_text_output_is_encodable_and_idempotent() -> None:
    text = "a\ud800b\udc00c\ud83d\ude00\x00"
    once = clean_text(text).text
    once.encode("utf-8")
    assert clean_text(once).text == once


def test_check_query_takes_text_or_a_list_of_terms() -> None:
    assert check_query("a\x00b") == "a b"
    assert check_query(["picasso", "peace"]) == ("picasso", "peace")
    for bad in (None, 5, b"picasso", {"picasso": 1}, ["picasso", None]):
        with pytest.raises(ArgumentTypeError, match=r"^query must be a string"):
            check_query(bad)


def test_params_must_be_a_mapping_of_mappings() -> None:
    assert check_params(None) == {} and check_params({"bm25.v1": {"k1": 1}}) == {"bm25.v1": {"k1": 1}}
    for bad, named in [([1], "params must"), ({"bm25.v1": None}, "params['bm25.v1']"),
                       ({5: {}}, "params keys"), ({"bm25.v1": {3: 1}}, "params['bm25.v1'] keys")]:
        with pytest.raises(ArgumentTypeError) as info:
            check_params(bad)
        assert str(info.value).startswith(named)


# --- score / top_k / explain / distribution ------------------------------------------------------


@pytest.mark.parametrize("text", ["\ud800", "Picasso \udfff peace", "Picasso\udcff", "\x00Picasso\x1b"])
def test_score_cleans_query_text(small_index: Index, text: str) -> None:
    cleaned = clean_text(text).text
    got, expected = score(small_index, text, "bm25.v1"), score(small_index, cleaned, "bm25.v1")
    assert got.terms == expected.terms and np.array_equal(got.ids, expected.ids)


def test_a_query_of_only_controls_says_so(small_index: Index) -> None:
    got = score(small_index, "\x00\x01\ud800", "bm25.v1")
    assert len(got) == 0 and got.reason == ONLY_CONTROL
    assert "stop words" in (score(small_index, "", "bm25.v1").reason or "")  # an empty query is not "cleaned"
    result = support(small_index, "\x00\ud800", models=("tfisf.v1",))
    assert result.entities == () and result.reason == ONLY_CONTROL


def test_score_refuses_bad_index_query_and_model(small_index: Index) -> None:
    cases: list[tuple[Any, Any, Any, str]] = [
        ("data/indexes/demo", Q, "bm25.v1", "index must be a loaded Index"),
        (small_index, None, "bm25.v1", "query must be a string"),
        (small_index, b"Picasso", "bm25.v1", "query must be a string"),
        (small_index, ["picasso", 3], "bm25.v1", "query must be a string or a list of strings; it holds 3"),
        (small_index, Q, None, "model must be a model name"),
        (small_index, Q, ["bm25.v1"], "model must be a model name"),
    ]
    for index, query, model, message in cases:
        with pytest.raises(ArgumentTypeError, match=message):
            score(index, query, model)


@pytest.mark.parametrize(("k", "error"), [(1.5, ArgumentTypeError), ("10", ArgumentTypeError),
                                          (None, ArgumentTypeError), (True, ArgumentTypeError),
                                          (math.nan, ArgumentTypeError), (-1, ArgumentValueError)])
def test_top_k_refuses_a_k_that_is_not_a_count(small_index: Index, k: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"^k must be an integer ≥ 0 \(got "):
        top_k(score(small_index, Q, "bm25.v1"), k)


def test_top_k_takes_numpy_counts_and_any_size(small_index: Index) -> None:
    scores = score(small_index, Q, "bm25.v1")
    assert np.array_equal(top_k(scores, np.int64(2)).ids, top_k(scores, 2).ids)
    assert len(top_k(scores, 0)) == 0 and len(top_k(scores, 2**70)) == len(scores)
    with pytest.raises(ArgumentTypeError, match=r"^scores must be Scores"):
        top_k(list(scores.ids), 2)  # type: ignore[arg-type]


@pytest.mark.parametrize("sentence", [math.nan, None, 1.5, "3", True, math.inf, np.float64(2.0)])
def test_explain_and_distribution_refuse_a_sentence_id_of_another_type(small_index: Index, sentence: Any) -> None:
    message = rf"^sentence_id must be an integer with 0 ≤ sentence_id < {small_index.N} \(got "
    with pytest.raises(ArgumentTypeError, match=message):
        explain(small_index, Q, sentence, "bm25.v1")
    with pytest.raises(ArgumentTypeError, match=message):
        distribution(small_index, sentence, "lm-dir.v1")


def test_explain_and_distribution_refuse_a_sentence_id_out_of_range(small_index: Index) -> None:
    n = small_index.N
    for sentence in (n, n + 10, 2**63, -1):
        expected = f"sentence_id {sentence:,} is out of range: it must be an integer with 0 ≤ sentence_id < {n}"
        for call in (lambda s=sentence: explain(small_index, Q, s, "bm25.v1"),
                     lambda s=sentence: distribution(small_index, s, "lm-dir.v1")):
            with pytest.raises(ArgumentValueError) as info:
                call()
            assert str(info.value).startswith(expected)


def test_explain_and_distribution_take_numpy_ids(small_index: Index) -> None:
    last = small_index.N - 1
    assert explain(small_index, Q, np.int32(last), "bm25.v1").sentence == last
    assert np.array_equal(
        distribution(small_index, np.int64(0), "lm-dir.v1"), distribution(small_index, 0, "lm-dir.v1")
    )


def test_distribution_of_a_model_that_is_not_a_language_model(small_index: Index) -> None:
    with pytest.raises(SentretError, match=r"model bm25.v1 is not a language model"):
        distribution(small_index, 0, "bm25.v1")


# --- support -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "value", "error", "message"),
    [
        ("k", 1.5, ArgumentTypeError, r"^k must be an integer with 1 ≤ k ≤ 1,000,000 \(got 1.5, a float\)$"),
        ("k", "10", ArgumentTypeError, r"^k must be an integer with 1 ≤ k ≤ 1,000,000 \(got '10', a str\)$"),
        ("k", None, ArgumentTypeError, r"^k must be an integer with 1 ≤ k ≤ 1,000,000 \(got None\)$"),
        ("k", 0, ArgumentValueError, r"^k must be an integer with 1 ≤ k ≤ 1,000,000 \(got 0\)$"),
        ("window", 1.5, ArgumentTypeError, r"^window must be an integer with 0 ≤ window ≤ 10 \(got 1.5"),
        ("window", 11, ArgumentValueError, r"^window must be an integer with 0 ≤ window ≤ 10 \(got 11\)$"),
        ("per_entity", 1.5, ArgumentTypeError, r"^per_entity must be an integer with 1 ≤ per_entity ≤ 100"),
        ("top_entities", "5", ArgumentTypeError, r"^top_entities must be an integer with 1 ≤ top_entities ≤ 1,000"),
        ("entity_labels", [None], ArgumentTypeError, r"^entity_labels must be a list of strings; it holds None$"),
        ("entity_labels", "PERSON", ArgumentTypeError, r"^entity_labels must be a list of strings \(got 'PERSON'"),
        ("entity_labels", ["PLANET"], SentretError, r"^unknown entity label\(s\) PLANET"),
        ("params", {"bm25f.v1": None}, ArgumentTypeError, r"^params\['bm25f.v1'\] must be a mapping"),
        ("params", [1, 2], ArgumentTypeError, r"^params must be a mapping"),
        ("models", "bm25f.v1", ArgumentTypeError, r"^models must be a list of strings \(got 'bm25f.v1', a str\)$"),
        ("models", [], ArgumentValueError, r"^models is empty: choose at least one support model$"),
        ("ranker", None, ArgumentTypeError, r"^ranker must be a model name"),
        ("entity_score", None, ArgumentTypeError, r"^entity_score must be a string \(got None\)$"),
        ("entity_score", "fame", SentretError, r"^unknown entity score 'fame'"),
        ("entities", [1.5], ArgumentTypeError, r"^entities\[0\] must be an integer with 0 ≤ entities\[0\] < "),
        ("entities", [-1], ArgumentValueError, r"^entities\[0\] must be an integer with 0 ≤ entities\[0\] < "),
        ("entities", "12", ArgumentTypeError, r"^entities must be a list of entity ids \(got '12', a str\)$"),
    ],
)
def test_support_refuses_each_bad_argument_by_name(
    small_index: Index, argument: str, value: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        support(small_index, Q, **{argument: value})


def test_support_window_zero_is_no_context(small_index: Index) -> None:
    """window=0 is the "no context" of Blanco & Zaragoza, SIGIR 2010, Fig. 2: Ŝ_q = S_q (documented, not refused)."""
    result = support(small_index, Q, ranker="bm25.v1", k=2, window=0, models=("sum-kld",))
    assert result.n_context == result.n_top == 2
    assert support(small_index, Q, ranker="bm25.v1", k=2, window=2, models=("sum-kld",)).n_context > 2


def test_support_takes_numpy_integers(small_index: Index) -> None:
    plain = support(small_index, Q, k=5, top_entities=2, per_entity=1, models=("tfisf.v1",))
    numpy = support(small_index, Q, k=np.int64(5), top_entities=np.int32(2), per_entity=np.int8(1),
                    window=np.int64(2), models=("tfisf.v1",))
    assert plain.to_json() != "" and [e.entity.entity for e in plain.entities] == [
        e.entity.entity for e in numpy.entities
    ]
    one = support(small_index, Q, entities=[np.int64(plain.entities[0].entity.entity)], models=("tfisf.v1",))
    assert one.entities[0].entity.entity == plain.entities[0].entity.entity


# --- the eval entry point ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "value", "error", "message"),
    [
        ("k", "10", ArgumentTypeError, r"^k must be an integer"),
        ("window", -1, ArgumentValueError, r"^window must be an integer with 0 ≤ window ≤ 10 \(got -1\)$"),
        ("folds", 1, ArgumentValueError, r"^folds must be an integer with 2 ≤ folds ≤ 2 \(got 1\)$"),
        ("folds", "2", ArgumentTypeError, r"^folds must be an integer"),
        ("seed", -1, ArgumentValueError, r"^seed must be an integer ≥ 0 \(got -1\)$"),
        ("seed", None, ArgumentTypeError, r"^seed must be an integer ≥ 0 \(got None\)$"),
        ("max_rounds", 0, ArgumentValueError, r"^max_rounds must be an integer ≥ 1 \(got 0\)$"),
        ("models", "tfisf.v1", ArgumentTypeError, r"^models must be a list of strings"),
        ("metrics", "map", ArgumentTypeError, r"^metrics must be a list of strings"),
        ("params", {"tfisf.v1": None}, ArgumentTypeError, r"^params\['tfisf.v1'\] must be a mapping"),
        ("baseline", 5, ArgumentTypeError, r"^baseline must be a model name"),
        ("tune_metric", None, ArgumentTypeError, r"^tune_metric must be a string"),
        ("progress", 5, ArgumentTypeError, r"^progress must be a function or None"),
        ("tune_on", "x.tsv", ArgumentTypeError, r"^tune_on must be a Benchmark"),
    ],
)
def test_evaluate_benchmark_refuses_each_bad_argument_by_name(
    wikiqa: Benchmark, argument: str, value: Any, error: type[Exception], message: str
) -> None:
    kwargs: dict[str, Any] = {"models": ["tfisf.v1"], "metrics": ["map"], argument: value}
    with pytest.raises(error, match=message):
        evaluate_benchmark(wikiqa, **kwargs)


def test_evaluate_benchmark_refuses_a_bench_that_is_not_one(tmp_path: Path) -> None:
    with pytest.raises(ArgumentTypeError, match=r"^bench must be a Benchmark"):
        evaluate_benchmark(str(tmp_path), ["tfisf.v1"])  # type: ignore[arg-type]


def test_evaluate_benchmark_takes_numpy_integers(wikiqa: Benchmark) -> None:
    report = evaluate_benchmark(wikiqa, ["bm25.v1"], metrics=["map"], folds=np.int64(2), seed=np.int64(1),
                                max_rounds=np.int64(1))
    assert report.tuning is not None and report.tuning["folds"] == 2


def test_check_settings_names_command_line_options() -> None:
    with pytest.raises(ArgumentValueError, match=r"^--max-rounds must be an integer ≥ 1 \(got 0\)$"):
        check_settings(max_rounds=0, option=True)
    assert check_settings(k=np.int64(5), window=0, folds=None, seed=0, max_rounds=1) == (5, 0, None, 0, 1)


# --- values where a formula is undefined, huge numbers, scores that cannot be ranked ---------------


def test_top_k_refuses_scores_whose_arrays_differ_in_length(small_index: Index) -> None:
    scores = score(small_index, Q, "bm25.v1")
    assert len(scores) >= 2
    cut = dataclasses.replace(scores, scores=scores.scores[:-1])  # was ValueError: kth out of bounds
    with pytest.raises(ArgumentValueError, match=rf"scores has {len(scores)} ids but {len(scores) - 1} scores"):
        top_k(cut, 1)
    with pytest.raises(ArgumentTypeError, match="one-dimensional numpy arrays"):
        top_k(dataclasses.replace(scores, ids=list(scores.ids)), 1)


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_top_k_refuses_non_finite_scores(small_index: Index, bad: float) -> None:
    scores = score(small_index, Q, "bm25.v1")
    values = scores.scores.copy()
    values[0] = bad  # was ranked first (inf) or anywhere (NaN), silently
    with pytest.raises(ArgumentValueError, match=r"scores holds 1 infinite or NaN score\(s\)"):
        top_k(dataclasses.replace(scores, scores=values), 3)


@pytest.mark.parametrize(
    ("model", "params", "says"),
    [
        ("bm25.v1", {"k1": 10**39}, "it must be a number with 0 ≤ k1 ≤ 10"),
        ("bm25.v1", {"k1": 10**400}, "it must be a number with 0 ≤ k1 ≤ 10"),  # was OverflowError
        ("bm25.v1", {"b": -(10**400)}, "it must be a number with 0 ≤ b ≤ 1"),
        ("lm-dir.v1", {"mu": 0}, "it must be a number with 1e-06 ≤ mu ≤ 1e+06"),  # was -inf scores
        ("lm-dir.v1", {"mu": math.inf}, "it must be a number with 1e-06 ≤ mu ≤ 1e+06"),
        ("lm-jm.v1", {"lam": 0.0}, "it must be a number with 1e-06 ≤ lam ≤ 1"),
        ("lm-2s.v1", {"lam": 0.0}, "it must be a number with 1e-06 ≤ lam ≤ 1"),
        ("lm-2si.v1", {"mu": 0.0}, "it must be a number with 1e-06 ≤ mu ≤ 1e+06"),
        ("lm-jm.v1", {"lam": math.nan}, "it must be a number with 1e-06 ≤ lam ≤ 1"),
        ("lm-3mm.v1", {"lam": 0.0, "gamma": 1.0}, "leave the collection model no weight"),  # was -inf
        ("lm-3mmpds.v1", {"lam": 0.7, "gamma": 0.3}, "leave the collection model no weight"),
    ],
)
def test_params_where_the_formula_is_undefined_or_huge_are_refused(
    small_index: Index, model: str, params: dict[str, Any], says: str
) -> None:
    with pytest.raises(SentretError, match=re.escape(says)):
        score(small_index, Q, model, **params)


def test_every_language_model_scores_finitely_at_the_edges_of_its_ranges(small_index: Index) -> None:
    # lm-jm λ = 0, lm-dir μ = 0, lm-2s λ = 0 and lm-2si μ = 0 once gave -inf (log 0) for a candidate
    # lacking a query term; those edges are refused, and every allowed edge scores finitely
    for name in ("lm-jm.v1", "lm-dir.v1", "lm-2s.v1", "lm-2si.v1", "lm-3mm.v1", "lm-3mmpds.v1"):
        for spec in get_model(name).param_specs():
            if spec.type is not float:
                continue
            for edge in {spec.min, spec.max, spec.min_positive} - {None}:
                if (spec.above_min and edge == spec.min) or (name.startswith("lm-3mm") and edge == 1.0):
                    continue  # refused (above)
                params = {spec.name: edge}
                if name.startswith("lm-3mm") and spec.name in ("lam", "gamma"):  # λ + γ < 1
                    params["gamma" if spec.name == "lam" else "lam"] = max(0.0, 0.9 - edge)
                got = score(small_index, "Picasso peace war Lennon", name, **params)
                assert np.isfinite(got.scores).all(), (name, params)
                top_k(got, 5)
