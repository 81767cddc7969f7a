"""A toy model added the way docs/extending.md's "Add a sentence-scoring model" says, in-process.

The first toy is that section's code block, run as written; the second registers the optional
``top_k=`` (search's fast path) and ``parts=`` (How it works' stacked bars). Both are unregistered after.

The index: s0 "The old bridge crosses the river." → old, bridge, crosses, river; s1 "A bridge, a
bridge and a tower." → bridge, bridge, tower; s2 "The tower stands by the river." → tower, stands,
river; s3 "Nothing here matches." → matches. The query ``bridge river bridge`` has c(bridge,q) = 2,
c(river,q) = 1.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sentret_core import Index
from sentret_core.errors import SentretError
from sentret_core.models import explain, get_model, list_models, score, search
from sentret_core.models.arrays.layout import sentence_counts
from sentret_core.models.arrays.postings import postings
from sentret_core.models.arrays.vectors import union_sum
from sentret_core.models.core.families import FAMILIES, undeclare_family
from sentret_core.models.core.params import Params
from sentret_core.models.core.registry import register, unregister
from sentret_core.models.core.spec import Explained, ExplanationParts, zero_without_a_match
from sentret_core.support.teaching import contribution_parts
from tests.conftest import build_from_texts

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
DOCS = [
    {"id": "d1", "title": "Bridges", "text": "The old bridge crosses the river. A bridge, a bridge and a tower."},
    {"id": "d2", "title": "Towers", "text": "The tower stands by the river. Nothing here matches."},
]
QUERY = ["bridge", "river", "bridge"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("extending"), DOCS)


def recipe_code() -> str:
    """The Python block of step 1 of "Add a sentence-scoring model"."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Add a sentence-scoring model", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1, "the model section should hold one Python block: the model's module"
    return blocks[0]


@pytest.fixture
def coord() -> Iterator[types.ModuleType]:
    """docs/extending.md's coord.v1, registered by running its module; unregistered afterwards."""
    module = types.ModuleType("sentret_toy_coord")  # a real module: dataclasses resolve annotations through it
    sys.modules[module.__name__] = module
    try:
        exec(compile(recipe_code(), str(DOC), "exec"), module.__dict__)
        yield module
    finally:
        sys.modules.pop(module.__name__, None)
        if "coord.v1" in {spec.name for spec in list_models()}:
            unregister("coord.v1")
        if "coord" in FAMILIES:
            undeclare_family("coord")


def test_the_recipe_model_is_listed_scores_searches_and_explains(index: Index, coord: types.ModuleType) -> None:
    assert "coord.v1" in [spec.name for spec in list_models()]
    assert get_model("coord").name == "coord.v1"
    # a = 1: score(s) = Σ_{t∈q∩s} c(t,q)·c(t,s)
    # s0: 2·1 (bridge) + 1·1 (river) = 3;  s1: 2·2 (bridge) = 4;  s2: 1·1 (river) = 1;  s3 matches nothing
    scores = score(index, QUERY, "coord.v1", a=1.0)
    assert scores.ids.tolist() == [0, 1, 2] and scores.scores.tolist() == [3.0, 4.0, 1.0]
    # a = 0 (the default): a held term counts c(t,q) once: s0 2 + 1 = 3, s1 2, s2 1
    assert score(index, QUERY, "coord.v1").scores.tolist() == [3.0, 2.0, 1.0]
    best = search(index, QUERY, "coord.v1", 2, a=1.0)
    assert best.ids.tolist() == [1, 0] and best.scores.tolist() == [4.0, 3.0]
    for sentence, expected in zip(scores.ids.tolist(), scores.scores.tolist()):
        explained = explain(index, QUERY, sentence, "coord.v1", a=1.0)
        assert explained.total == expected
        parts = contribution_parts(explained)  # no declared parts: one bar per term
        assert parts.split == "term" and float(parts.frame["value"].sum()) == expected


def test_an_unregistered_model_is_gone(index: Index, coord: types.ModuleType) -> None:
    unregister("coord.v1")
    assert "coord.v1" not in [spec.name for spec in list_models()]
    for name in ("coord.v1", "coord"):
        with pytest.raises(SentretError, match="unknown model"):
            score(index, QUERY, name)
    with pytest.raises(SentretError, match="not registered"):
        unregister("coord.v1")


# --- the optional fields: a fast top-k path and declared explanation parts -----------------------


@dataclass(frozen=True)
class NoParams(Params):
    """Parameter-free."""


def score_sum(index: Index, q: Any, p: NoParams) -> tuple[np.ndarray, np.ndarray]:
    """Σ_{t∈q∩s} (c(t,q) + c(t,s))."""
    post = postings(index)
    rows, vals = [], []
    for t, qf in zip(q.ids, q.qtf):
        r, c = post(t)
        if len(r):
            rows.append(r)
            vals.append(qf + c.astype(np.float64))
    return union_sum(rows, vals)


def explain_sum(index: Index, q: Any, sentence: int, p: NoParams) -> Explained:
    counts = sentence_counts(index, sentence, q.ids)
    rows = [{"term": term, "c(t,q)": float(qf), "c(t,s)": float(c), "held": float(qf + c) if c > 0 else 0.0,
             "contribution": float(qf + c) if c > 0 else 0.0}
            for term, qf, c in zip(q.unique, q.qtf, counts)]
    return Explained(("term", "c(t,q)", "c(t,s)", "held", "contribution"), rows, {}, {})


@pytest.fixture
def counted() -> Iterator[list[int]]:
    """``countsum.v1`` with a top-k path that records each k it is asked for; unregistered afterwards."""
    calls: list[int] = []

    def top_k_sum(index: Index, q: Any, p: NoParams, k: int) -> tuple[np.ndarray, np.ndarray, bool]:
        calls.append(k)
        ids, values = score_sum(index, q, p)
        keep = np.sort(np.lexsort((ids, -values))[:k])
        return ids[keep], values[keep], len(ids) > 0

    register(
        "countsum.v1",
        display_name="Counts summed",
        family="bm25",
        params=NoParams,
        explainer=explain_sum,
        closed=zero_without_a_match,
        top_k=top_k_sum,
        parts=ExplanationParts(split="count", whole="held", columns=(("c(t,q)", "query"), ("c(t,s)", "sentence")),
                               note="c(t,q) and c(t,s) as they add up"),
        formula=r"\sum_{t\in q\cap s} c(t,q)+c(t,s)",
        paper="a toy for tests",
        description="query and sentence counts of the shared terms, added",
    )(score_sum)
    try:
        yield calls
    finally:
        unregister("countsum.v1")


def test_search_takes_the_registered_top_k_path(index: Index, counted: list[int]) -> None:
    # s0: (2+1) bridge + (1+1) river = 5;  s1: (2+2) bridge = 4;  s2: (1+1) river = 2
    assert score(index, QUERY, "countsum.v1").scores.tolist() == [5.0, 4.0, 2.0]
    assert counted == []  # score() scores every candidate
    best = search(index, QUERY, "countsum.v1", 2)
    assert counted == [2]
    assert best.ids.tolist() == [0, 1] and best.scores.tolist() == [5.0, 4.0]


def test_how_it_works_stacks_the_declared_parts(index: Index, counted: list[int]) -> None:
    explained = explain(index, QUERY, 0, "countsum.v1")
    parts = contribution_parts(explained)
    assert (parts.split, parts.note) == ("count", "c(t,q) and c(t,s) as they add up")
    # each part's share of "held" times the contribution: bridge 2/3·3 = 2 and 1/3·3 = 1; river 1/2·2 = 1 twice
    got = {(row.term, row.part): row.value for row in parts.frame.itertuples()}
    assert got == pytest.approx({("bridge", "query"): 2.0, ("bridge", "sentence"): 1.0,
                                 ("river", "query"): 1.0, ("river", "sentence"): 1.0})
    assert float(parts.frame["value"].sum()) == pytest.approx(explained.total) and explained.total == 5.0
