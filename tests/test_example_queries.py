"""The example queries of data/queries/demo.txt: the Explore page offers them, and on the demo index
(when it is built) each one's entities and support sentences are about the query."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentret_core import Index, support
from sentret_core.models.query import prepare
from sentret_core.support.restating import split_restating
from sentret_core.ui.pages.explore import example_queries

DEMO = Path(__file__).resolve().parents[1] / "data" / "indexes" / "demo"


def test_the_page_reads_the_example_file() -> None:
    examples = example_queries()
    assert len(examples) >= 8 and "Spanish Civil War" in examples
    assert not any(q.startswith("#") for q in examples)


@pytest.mark.skipif(not (DEMO / "manifest.json").is_file(), reason="the demo index is not built (make index-demo)")
@pytest.mark.parametrize("query", example_queries())
def test_each_example_gives_a_good_result_on_the_demo_corpus(query: str) -> None:
    index = Index.load(DEMO)
    terms = prepare(index, query)
    postings = [set(index.XT.indices[index.XT.indptr[t] : index.XT.indptr[t + 1]].tolist()) for t in terms.ids]
    together = [s for s in set().union(*postings) if sum(s in p for p in postings) >= min(2, len(postings))]
    assert len(together) >= 2, "the corpus barely speaks of the query: fewer than 2 sentences hold 2 of its terms"
    result = support(index, query, k=100, top_entities=30, per_entity=1)
    assert result.reason is None
    kept, _ = split_restating(index, result.terms, result.entities)
    assert len(kept) >= 5
    # every default model has a support sentence for the best entity, and the models' top sentences
    # mark a query term (BM25F's may hold it only in its context sentences, the others' in themselves)
    tops = [sentences[0] for sentences in kept[0].sentences.values() if sentences]
    assert len(tops) == len(result.models), kept[0].entity.text
    assert sum(bool(s.term_spans) for s in tops) >= len(tops) - 1, kept[0].entity.text
