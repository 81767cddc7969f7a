"""Hypothesis fuzzing of every public entry point and of ``sentret search | support | eval``.

Arbitrary unicode (lone surrogates, NUL and other controls, RTL marks, combining marks, up to 100k
characters) and arbitrary-typed arguments (None, bools, huge ints, NaN, bytes, lists, dicts, numpy
scalars). The only exceptions allowed are the documented ones — :class:`SentretError` and its
argument errors — and their message must name the argument that was fuzzed. The CLI must exit 0 or 2
with one ``error:`` line and never print a traceback. Seeded (``derandomize`` in conftest's profile)
and bounded: these tests take about half a minute together.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentret_core import Index, explain, score, support, top_k
from sentret_core.checks import clean_text
from sentret_core.errors import QueryError, SentretError
from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.driver import evaluate_benchmark
from sentret_core.models import distribution
from tests.conftest import examples
from tests.evaluation.test_benchmarks import write_wikiqa

FAST = settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# every code point, surrogates (category Cs) and controls (Cc) included
ANY_CHAR = st.characters(exclude_categories=())
SPECIAL = st.sampled_from(
    ["\ud800", "\udfff", "\udcff", "\ud83d\ude00", "\x00", "\x1b", "\x7f", "\x85", "\u202e", "\u200f",
     "\u0301", "\u0308", "\ufeff", "\uffff", "\U0010ffff", " ", "\n", "Picasso", "peace", "?when"]
)
SHORT_TEXT = st.lists(st.one_of(ANY_CHAR, SPECIAL), max_size=30).map("".join)
LONG_TEXT = st.builds(lambda piece, n: (piece * n)[:100_000], SHORT_TEXT.filter(bool), st.integers(1, 100_000))
ANY_TEXT = st.one_of(SHORT_TEXT, SHORT_TEXT, LONG_TEXT)
ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**80), 2**80),
    st.floats(),
    SHORT_TEXT,
    st.binary(max_size=6),
    st.lists(st.one_of(st.integers(-3, 40), st.none(), SHORT_TEXT), max_size=3),
    st.dictionaries(SHORT_TEXT, st.one_of(st.integers(), st.none()), max_size=2),
    st.integers(-(2**63), 2**63 - 1).map(np.int64),
    st.integers(-128, 127).map(np.int8),
    st.floats().map(np.float64),
    st.just(np.bool_(True)),
    st.just(object()),
)


def documented(call: Callable[[], Any], *names: str) -> Any:
    """``call()``; if it raises, it must be a SentretError whose message names one of ``names``."""
    try:
        return call()
    except SentretError as err:
        message = str(err).lower()
        assert any(name.lower() in message for name in names), (names, str(err))
        return None


@pytest.fixture(scope="module")
def wikiqa(tmp_path_factory: pytest.TempPathFactory) -> Benchmark:
    root = tmp_path_factory.mktemp("fuzz-wikiqa")
    return load_benchmark("wikiqa", write_wikiqa(root / "tiny.tsv"), cache=root / "cache")


# --- the library ---------------------------------------------------------------------------------


@FAST
@given(text=ANY_TEXT)
def test_any_query_text_is_scored_explained_and_supported(small_index: Index, text: str) -> None:
    try:
        got = score(small_index, text, "bm25.v1")
    except QueryError as err:  # longer than the query length cap (bounded work per query)
        assert "are allowed" in str(err)
        return
    assert got.reason is not None or len(got) > 0
    for term in got.terms:  # what comes back can be printed and serialised
        term.encode("utf-8")
    assert explain(small_index, text, 0, "lm-2si.v1").sentence == 0
    if len(text) < 1000:  # the long texts are covered by score; support re-tokenises the same way
        result = support(small_index, text, k=5, top_entities=2, per_entity=1, models=("tfisf.v1",))
        result.to_json().encode("utf-8")
        assert result.query == clean_text(text).text


@FAST
@given(
    which=st.sampled_from(["index", "query", "model", "k1", "b", "name"]),
    value=ANYTHING,
)
def test_score_with_any_typed_argument(small_index: Index, which: str, value: Any) -> None:
    args: dict[str, Any] = {"index": small_index, "query": "Picasso peace", "model": "bm25.v1"}
    params: dict[str, Any] = {}
    if which in ("k1", "b"):
        params[which] = value
    elif which == "name":
        params[str(value)] = 1.0
    else:
        args[which] = value
    names = {"name": ("bm25.v1 has no parameter",)}.get(which, (which,))
    got = documented(lambda: score(args["index"], args["query"], args["model"], **params), *names)
    if got is not None:
        assert not np.isnan(got.scores).any()


@FAST
@given(k=st.one_of(ANYTHING, st.integers(-3, 30)))
def test_top_k_with_any_k(small_index: Index, k: Any) -> None:
    scores = score(small_index, "Picasso peace war", "bm25.v1")
    valid = isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) and k >= 0
    got = documented(lambda: top_k(scores, k), "k")
    assert (got is not None) == valid
    if got is not None:
        assert len(got) == min(int(k), len(scores))


@FAST
@given(
    values=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=12),
    extra=st.integers(-3, 3),
    k=st.integers(0, 15),
)
def test_top_k_over_any_scores_arrays(small_index: Index, values: list[float], extra: int, k: int) -> None:
    """Arrays of different lengths and non-finite scores are refused by name, never a
    numpy error; finite ones of one length are ranked by score, ties by id."""
    base = score(small_index, "Picasso peace war", "bm25.v1")
    n = max(0, len(values) + extra)
    crafted = dataclasses.replace(base, ids=np.arange(n, dtype=np.int64), scores=np.array(values, dtype=np.float64))
    got = documented(lambda: top_k(crafted, k), "scores")
    valid = n == len(values) and all(math.isfinite(v) for v in values)
    assert (got is not None) == valid
    if got is not None:
        expected = sorted(range(n), key=lambda i: (-values[i], i))[:k]
        assert got.ids.tolist() == expected


@FAST
@given(sentence=st.one_of(ANYTHING, st.integers(-2, 14)), model=st.sampled_from(["lm-dir.v1", "lm-2s.v1"]))
def test_explain_and_distribution_with_any_sentence_id(small_index: Index, sentence: Any, model: str) -> None:
    valid = (
        isinstance(sentence, (int, np.integer))
        and not isinstance(sentence, (bool, np.bool_))
        and 0 <= sentence < small_index.N
    )
    got = documented(lambda: explain(small_index, "Picasso peace", sentence, model), "sentence_id")
    assert (got is not None) == valid
    p = documented(lambda: distribution(small_index, sentence, model), "sentence_id")
    assert (p is not None) == valid
    if p is not None:
        assert math.isclose(float(p.sum()), 1.0, rel_tol=1e-9)


SUPPORT_NAMES = {
    "query": ("query",),
    "ranker": ("ranker", "model"),
    "k": ("k ",),
    "entity_score": ("entity score", "entity_score"),
    "entity_labels": ("entity_labels", "entity label"),
    "top_entities": ("top_entities",),
    "models": ("models", "model"),
    "per_entity": ("per_entity",),
    "params": ("params", "model", "parameter"),
    "window": ("window",),
    "entities": ("entities",),
}
PLAUSIBLE = {  # values of the right type, some valid, some not
    "k": st.integers(-2, 2_000_000),
    "window": st.integers(-2, 12),
    "top_entities": st.integers(-1, 1002),
    "per_entity": st.integers(-1, 102),
    "entities": st.lists(st.integers(-2, 30), max_size=3),
    "entity_labels": st.lists(st.sampled_from(["PERSON", "GPE", "DATE", "PLANET", ""]), max_size=3),
    "models": st.lists(st.sampled_from(["tfisf.v1", "bm25f.v1", "position", "sum-kld", "nosuch"]), max_size=3),
    "ranker": st.sampled_from(["bm25.v1", "tfisf", "nosuch.v1", ""]),
    "entity_score": st.sampled_from(["kld", "frequency", "fame", ""]),
    "params": st.dictionaries(
        st.sampled_from(["bm25f.v1", "tfisf.v1", "nosuch.v1"]),
        st.dictionaries(st.sampled_from(["k1", "b", "zz"]), ANYTHING, max_size=2),
        max_size=2,
    ),
    "query": ANY_TEXT,
}


@settings(FAST, max_examples=examples(80))
@given(data=st.data(), which=st.sampled_from(sorted(SUPPORT_NAMES)))
def test_support_with_any_argument(small_index: Index, data: st.DataObject, which: str) -> None:
    value = data.draw(st.one_of(ANYTHING, PLAUSIBLE.get(which, ANYTHING)), label=which)
    kwargs: dict[str, Any] = {"k": 20, "top_entities": 3, "per_entity": 2, "models": ("tfisf.v1", "sum-kld")}
    query = "Picasso peace"
    if which == "query":
        query = value
    else:
        kwargs[which] = value
    result = documented(lambda: support(small_index, query, **kwargs), *SUPPORT_NAMES[which])
    if result is not None:
        result.to_json().encode("utf-8")


EVAL_NAMES = {
    "models": ("model",),
    "params": ("params", "model", "parameter", "--param"),
    "baseline": ("baseline", "model"),
    "metrics": ("metric",),
    "k": ("k ",),
    "ranker": ("ranker", "model"),
    "window": ("window",),
    "folds": ("folds",),
    "seed": ("seed",),
    "tune_on": ("tune_on",),
    "tune_metric": ("tune_metric", "metric"),
    "max_rounds": ("max_rounds",),
    "progress": ("progress",),
}


@settings(FAST, max_examples=examples(60))
@given(data=st.data(), which=st.sampled_from(sorted(EVAL_NAMES)))
def test_evaluate_benchmark_with_any_argument(wikiqa: Benchmark, data: st.DataObject, which: str) -> None:
    plausible = {
        "models": st.lists(st.sampled_from(["tfisf.v1", "bm25.v1", "sum-kld", "nosuch", ""]), max_size=2),
        "metrics": st.lists(st.sampled_from(["map", "p@3", "ndcg@0", "nope"]), max_size=2),
        "folds": st.integers(-1, 4),
        "seed": st.integers(-2, 2**70),
        "max_rounds": st.integers(-1, 3),
        "window": st.integers(-1, 11),
        "k": st.integers(-1, 5),
    }
    value = data.draw(st.one_of(ANYTHING, plausible.get(which, ANYTHING)), label=which)
    kwargs: dict[str, Any] = {"models": ["tfisf.v1"], "metrics": ["map"], "max_rounds": 1, which: value}
    report = documented(lambda: evaluate_benchmark(wikiqa, **kwargs), *EVAL_NAMES[which])
    if report is not None:
        json.dumps(report.to_dict())


@FAST
@given(mu=st.one_of(st.floats(0, 1e6, allow_subnormal=True), st.sampled_from([2.2e-311, 5e-324, 1e-7, 1e-6])))
def test_lm_2s_never_returns_nan(small_index: Index, mu: float) -> None:
    """Hypothesis once found lm-2s.v1 returning NaN for μ = 2.2e-311: any μ either scores or is refused."""
    got = documented(lambda: score(small_index, "Picasso peace war", "lm-2s.v1", mu=mu), "mu")
    if got is not None:
        assert np.isfinite(got.scores).all()
        p = distribution(small_index, 0, "lm-2s.v1", mu=mu)
        assert np.isfinite(p).all() and math.isclose(float(p.sum()), 1.0, rel_tol=1e-9)


# --- the command line ----------------------------------------------------------------------------


def run_cli(argv: Sequence[str]) -> tuple[int, str, str]:
    """``sentret`` in-process, with a strict UTF-8 stdout and stderr as a terminal has."""
    from sentret_core.cli.main import main

    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="strict")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as stop:  # argparse's usage errors
            code = stop.code if isinstance(stop.code, int) else 2
        out.flush()
        err.flush()
    return code, out_bytes.getvalue().decode("utf-8"), err_bytes.getvalue().decode("utf-8")


def assert_clean_exit(code: int, out: str, err: str) -> None:
    assert "Traceback" not in err, err
    assert code in (0, 2), (code, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert lines and "error: " in lines[-1], err
        if lines[-1].startswith("sentret: error: "):
            assert len(lines) == 1, err  # one message (argparse's own errors print the usage first)


@pytest.fixture(scope="module")
def index_path(small_index: Index) -> str:
    return str(small_index.path)


@FAST
@given(text=ANY_TEXT, command=st.sampled_from(["search", "support"]), as_json=st.booleans())
def test_cli_search_and_support_any_query(index_path: str, text: str, command: str, as_json: bool) -> None:
    argv = [command, index_path, text, *(["--json"] if as_json else []), "--k", "5"]
    code, out, err = run_cli(argv)
    if text.startswith("-") or "are allowed" in err:  # argparse reads it as an option; or over the query cap
        assert_clean_exit(code, out, err)
        return
    assert code == 0, err
    assert "Traceback" not in err
    if as_json:
        assert json.loads(out)["query"] == clean_text(text).text


SEARCH_OPTIONS = ["--k", "--model", "--param"]
SUPPORT_OPTIONS = ["--k", "--ranker", "--entity-score", "--labels", "--models", "--top-entities", "--per-entity",
                   "--param"]
OPTION_VALUES = st.one_of(
    SHORT_TEXT,
    st.integers(-5, 2_000_000).map(str),
    st.sampled_from(["1.5", "nan", "inf", "-0", "1e9", "", ",", "k1=nan", "bm25f.v1.k1=-1", "PERSON,PLANET",
                     "tfisf.v1,position", "bm25.v1", "nosuch.v1", "k1", "=", "bm25f.v1.k1=0.5"]),
)


@settings(FAST, max_examples=examples(60))
@given(data=st.data(), command=st.sampled_from(["search", "support"]))
def test_cli_search_and_support_any_option_value(index_path: str, data: st.DataObject, command: str) -> None:
    options = SEARCH_OPTIONS if command == "search" else SUPPORT_OPTIONS
    chosen = data.draw(st.lists(st.sampled_from(options), min_size=1, max_size=3, unique=True), label="options")
    argv = [command, index_path, "Picasso peace"]
    for option in chosen:
        argv += [option, data.draw(OPTION_VALUES, label=option)]
    if command == "support" and "--k" not in chosen:
        argv += ["--k", "20"]
    assert_clean_exit(*run_cli(argv))


EVAL_OPTIONS = ["--k", "--window", "--folds", "--seed", "--max-rounds", "--metrics", "--models", "--param",
                "--baseline", "--tune-metric", "--ranker", "--min-candidates", "--n-process"]


@pytest.fixture(scope="module")
def eval_files(tmp_path_factory: pytest.TempPathFactory, wikiqa: Benchmark) -> tuple[str, str]:
    """The tiny WikiQA file and the cache its index is already built in (by the wikiqa fixture)."""
    return str(wikiqa.data), str(Path(wikiqa.index.path).parent)


@settings(FAST, max_examples=examples(40))
@given(data=st.data())
def test_cli_eval_any_option_value(eval_files: tuple[str, str], data: st.DataObject) -> None:
    path, cache = eval_files
    chosen = data.draw(st.lists(st.sampled_from(EVAL_OPTIONS), min_size=1, max_size=3, unique=True), label="options")
    argv = ["eval", "wikiqa", "--data", path, "--cache", cache, "--models", "tfisf.v1", "--metrics", "map"]
    for option in chosen:
        argv += [option, data.draw(OPTION_VALUES, label=option)]
    if "--max-rounds" not in chosen:
        argv += ["--max-rounds", "1"]
    assert_clean_exit(*run_cli(argv))
