"""Bounded work per request: a query's length is capped before any model sees it, and the
query path's caches and spaCy's string store stay bounded however many unseen words are asked for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.cli.main import main
from sentret_core.defaults import MAX_QUERY_CHARS, MAX_QUERY_TERMS
from sentret_core.errors import QueryError
from sentret_core.ingest.nlp import QUERY_TERM_CACHE, QueryTokenizer, TermRules, query_terms
from sentret_core.models import score
from sentret_core.models.core import query as query_module
from sentret_core.models.core.query import normalise, pipeline, prepare, query_tokenizer

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def words(n: int) -> str:
    """``n`` distinct words that are no stop words: w0 w1 … (the tokenizer keeps each as one term)."""
    return " ".join(f"w{i}" for i in range(n))


# --- the query's length ----------------------------------------------------------------------------


def test_a_query_of_10000_terms_is_refused_at_once_for_every_costly_model(small_index: Index) -> None:
    query = words(10_000)  # 10 × 2 + 90 × 3 + 900 × 4 + 9,000 × 5 characters + 9,999 spaces = 58,889
    for model in ("bm25f.v1", "lm-class.v1", "lm-trigger.v1"):
        # refused before tokenising (it took 31-40 s with lm-class): the next test proves the order
        with pytest.raises(QueryError, match=f"at most {MAX_QUERY_CHARS:,} are allowed"):
            score(small_index, query, model)


def test_the_character_cap_is_checked_before_the_tokenizer(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query_module, "query_tokenizer", lambda *a: pytest.fail("the tokenizer ran"))
    with pytest.raises(QueryError, match="the query has 1,001 characters; at most 1,000"):
        normalise(small_index, "a" * 1001)


def test_the_term_cap_counts_terms_not_question_markers(small_index: Index) -> None:
    assert MAX_QUERY_TERMS == 100
    # "w0 … w99" is 10 × 2 + 90 × 3 characters + 99 spaces = 389, under the character cap
    assert len(normalise(small_index, words(100))) == 100
    assert normalise(small_index, "who " + words(100))[-1] == "?who"  # 100 terms and a marker
    with pytest.raises(QueryError, match="the query has 101 terms; at most 100"):
        normalise(small_index, words(101))
    assert len(prepare(small_index, [*words(100).split(), "?who"]).terms) == 100  # a list of terms as well
    with pytest.raises(QueryError, match="the query has 101 terms"):
        prepare(small_index, words(101).split())


def test_the_index_own_texts_are_not_capped(small_index: Index) -> None:
    """An entity's name is the index's, not a visitor's: restating tokenises it whatever its length."""
    from sentret_core.models.core.query import text_terms

    assert text_terms(small_index, "peace " * 500) == ["peace"] * 500


def test_the_cli_names_the_cap(small_index: Index, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(small_index.path), words(10_000)]) == 2
    err = capsys.readouterr().err
    assert "at most 1,000 are allowed" in err and "Traceback" not in err


def test_the_explore_page_names_the_cap(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(small_index.path.parent))
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["q"] = words(300)
    app.run()
    assert not app.exception
    assert any("at most 1,000 are allowed" in e.value for e in app.error)


# --- caches and spaCy's vocabulary -----------------------------------------------------------------

TRICKY = [
    "Hello, world! U.S. don't e-mail me at a@b.com http://x.y/z 3.5% — “quoted” (brackets) can't",
    "Spanish Civil War 1936–1939 Franco's", "naïve café ☃ 😀 x²", ":) :-( etc. Mr. Smith's 10km 5pm",
    "\n\n  tabs\tand  spaces", "C++ and C# and .NET; O'Neill's rock'n'roll", "ÄÖÜ straße İstanbul ΣΊΣΥΦΟΣ",
]


def test_the_query_tokenizer_finds_the_pipelines_terms(nlp: Any, small_index: Index) -> None:
    tokenizer = QueryTokenizer(nlp)
    for text in [*TRICKY, *small_index.texts, *small_index.titles]:
        assert tokenizer.terms(text) == query_terms(text, nlp), text
        assert tokenizer.terms(text) == query_terms(text, nlp), text  # again, its strings forgotten in between


def test_the_term_rules_keep_the_last_forms_only(nlp: Any) -> None:
    rules = TermRules(nlp, cache_size=3)
    assert [rules(w) for w in ("a", "b1", "c2", "d3", "the")] == [None, "b1", "c2", "d3", None]
    assert rules.cache_len() == 3


def rss_mb() -> float:
    """This process's resident memory (Linux: /proc/self/statm's second field, in pages)."""
    import os

    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_500_queries_of_unseen_words_leave_the_vocabulary_and_caches_bounded(small_index: Index) -> None:
    model = str(small_index.manifest.get("model"))
    tokenizer, nlp = query_tokenizer(model), pipeline(model)[0]

    def unseen(round: int, n: int = 500) -> None:
        for i in range(n):  # 40 never-seen words each: 20,000 in all, twice the term cache
            normalise(small_index, " ".join(f"zq{round}x{i}y{j}" for j in range(40)))

    unseen(0, 50)  # warm: allocator pools and the term cache's first entries
    strings, pipeline_strings, lexemes, before = len(tokenizer.vocab.strings), len(nlp.vocab.strings), \
        len(nlp.vocab), rss_mb()
    unseen(1)
    assert len(tokenizer.vocab.strings) == strings  # each query's strings are forgotten at its end
    assert (len(nlp.vocab.strings), len(nlp.vocab)) == (pipeline_strings, lexemes)  # the pipeline is untouched
    assert tokenizer.rules.cache_len() == QUERY_TERM_CACHE == 10_000
    assert rss_mb() - before < 20  # it grew by 123 MB per 500 such queries before the cap
