"""A second learner on the same (index, topics, feature set) reads the features back from the cache: the same
rows bit for bit, and no topic scored again; another depth, other topics or a retrained artefact miss it."""

from __future__ import annotations

import numpy as np
import pytest

from sentret_core.index.reader import Index
from sentret_core.learning import feature_cache
from sentret_core.learning.feature_cache import cached_examples
from sentret_core.learning.learn import Data, learn
from tests.learning.conftest import town_topic

SCORERS = ("bm25f.v1", "tfisf.v1")


def test_a_second_learner_reads_the_features_back(towns: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    topics = [town_topic(towns, d) for d in range(8)]
    first, cached = cached_examples(towns, topics, SCORERS, "bm25f.v1", 30)
    assert not cached
    again, cached = cached_examples(towns, topics, SCORERS, "bm25f.v1", 30)
    assert cached and again.features == first.features and again.topics == first.topics
    for name in ("X", "y", "groups", "relevant", "outside", "outside_relevant", "taught_only"):
        assert np.array_equal(getattr(again, name), getattr(first, name)), name
    assert not cached_examples(towns, topics, SCORERS, "bm25f.v1", 20)[1]  # another depth
    assert not cached_examples(towns, topics[:7], SCORERS, "bm25f.v1", 30)[1]  # other topics
    said: list[str] = []
    built = []
    monkeypatch.setattr(feature_cache, "build_examples", lambda *a, **k: built.append(a) or first)
    for learner in ("linear", "lambdamart"):  # the second learner (and the first: cached above) never scores
        learn(f"cached-{learner}", Data(towns, topics), folds=2, learner=learner, scorers=SCORERS,
              first_stage="bm25f.v1", depth=30, semantic_stage=None, progress=lambda text, _: said.append(text))
    assert built == [] and any("from the cache (SENTRET_FEATURE_CACHE)" in s for s in said)


def test_off_turns_the_cache_off_and_a_damaged_file_is_computed_again(towns: Index,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    topics = [town_topic(towns, d) for d in range(4)]
    cached_examples(towns, topics, SCORERS, "bm25f.v1", 30)
    root = feature_cache.cache_root()
    assert root is not None
    for stored in root.glob("*.npz"):
        stored.write_bytes(b"not an npz")
    assert not cached_examples(towns, topics, SCORERS, "bm25f.v1", 30)[1]  # damaged: computed again
    assert cached_examples(towns, topics, SCORERS, "bm25f.v1", 30)[1]  # and stored again whole
    monkeypatch.setenv("SENTRET_FEATURE_CACHE", "off")
    assert feature_cache.cache_root() is None and not cached_examples(towns, topics, SCORERS, "bm25f.v1", 30)[1]
