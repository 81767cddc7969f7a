"""Eq. 8 (support/entity_position.py) against a loop over each sentence's term occurrences and mentions."""

from __future__ import annotations

import numpy as np

from sentret_core import Index
from sentret_core.support.entity_position import position_scores


def by_loop(index: Index, sentence: int, terms: list[str], entity: int) -> float:
    """|s| - max(pos_q, pos_e): pos_q the 1-based place of the last query-term occurrence, pos_e the terms up
    to the end of the entity's last mention (Blanco & Zaragoza, SIGIR 2010, eq. 8)."""
    lo, hi = int(index.seq_indptr[sentence]), int(index.seq_indptr[sentence + 1])
    ids = set(index.term_ids(terms).tolist())
    pos_q = max((i - lo + 1 for i in range(lo, hi) if int(index.seq_terms[i]) in ids), default=0)
    tokens = [int(index.seq_tokens[i]) for i in range(lo, hi)]
    ends = [int(m.token_end) for m in index.sentence_mentions(sentence).itertuples() if int(m.entity) == entity]
    pos_e = max((sum(1 for t in tokens if t < end) for end in ends), default=0)
    return float((hi - lo) - max(pos_q, pos_e))


def test_positions_equal_the_loop(small_index: Index) -> None:
    rng = np.random.default_rng(3)
    mentions = small_index.mentions
    checked = entity_decides = 0
    for terms in (["war"], ["picasso", "paint"], ["spain", "civil", "war"], ["nowhere"]):
        for entity in rng.choice(mentions["entity"].unique(), 8, replace=False).tolist():
            own = np.unique(mentions.loc[mentions["entity"] == entity, "sentence"].to_numpy())
            sentences = np.concatenate([own, rng.integers(0, small_index.N, 5)])  # others, and repeats
            got = position_scores(small_index, sentences, terms, entity)
            assert got.tolist() == [by_loop(small_index, int(s), terms, entity) for s in sentences]
            checked += len(sentences)
            entity_decides += sum(by_loop(small_index, int(s), terms, entity) != by_loop(small_index, int(s), terms, -1)
                                  for s in own)
    assert checked > 100 and entity_decides > 10
