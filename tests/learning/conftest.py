"""Twelve towns, one three-sentence document each: the learning tests' small closed-set benchmark."""

from __future__ import annotations

import numpy as np
import pytest

from sentret_core.index.reader import Index
from sentret_core.learning.examples import LearningTopic
from sentret_core.models.core.query import normalise
from tests.conftest import build_from_texts

TOWNS = 12


@pytest.fixture(scope="module")
def towns(tmp_path_factory: pytest.TempPathFactory) -> Index:
    docs = [{"id": f"d{i}", "title": f"Town {i}",
             "text": f"Town {i} lies on the river. Town {i} was founded in {1800 + i}. It has a market."}
            for i in range(TOWNS)]
    return build_from_texts(tmp_path_factory.mktemp("towns"), docs, "towns")


def town_topic(index: Index, d: int, grades: dict[int, int] | None = None) -> LearningTopic:
    """"When was Town d founded?": its document's three sentences, the second relevant (unless ``grades``)."""
    first = int(index.doc_first[d])
    terms = tuple(normalise(index, f"When was Town {d} founded?"))
    chosen = {first + 1: 1} if grades is None else {first + k: g for k, g in grades.items()}
    return LearningTopic(f"q{d}", terms, chosen, np.arange(first, first + 3), outside_ties=True)
