"""The galloping searchsorted (models/arrays/_sorted.c) against numpy's: the same insertion points for ascending
targets of either dtype, and a refusal (then numpy's answer) for anything else."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core.models.arrays import vectors

pytestmark = pytest.mark.skipif(vectors._sorted is None, reason="the extension is not built (no C compiler)")

IDS = st.lists(st.integers(-5, 300), max_size=200)
DTYPES = st.sampled_from([np.int32, np.int64])


@settings(derandomize=True, max_examples=500, deadline=None)
@given(rows=IDS, targets=IDS, row_type=DTYPES, target_type=DTYPES)
def test_insertion_points_are_numpys(rows: list[int], targets: list[int], row_type: type, target_type: type) -> None:
    r = np.sort(np.array(rows, dtype=row_type))
    t = np.sort(np.array(targets, dtype=target_type))
    out = np.empty(len(t), dtype=np.int64)
    assert vectors._sorted is not None and vectors._sorted.insertion(r, t, out)
    assert out.tolist() == np.searchsorted(r, t).tolist()


@settings(derandomize=True, max_examples=300, deadline=None)
@given(rows=IDS, targets=st.lists(st.integers(0, 300), min_size=2, max_size=200))
def test_unsorted_targets_are_refused_and_find_sorted_still_right(rows: list[int], targets: list[int]) -> None:
    r = np.sort(np.array(rows, dtype=np.int32))
    t = np.array(targets, dtype=np.int32)
    out = np.empty(len(t), dtype=np.int64)
    assert vectors._sorted is not None
    assert vectors._sorted.insertion(r, t, out) == bool(np.all(np.diff(t) >= 0))
    for share in (0, vectors.GALLOP_SHARE):  # galloped where it may be, and numpy's
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(vectors, "GALLOP_FROM", 0)
            patch.setattr(vectors, "GALLOP_SHARE", share or 10**9)
            assert vectors.find_sorted(r, t).tolist() == np.searchsorted(r, t).tolist()
            hit, pos = vectors.locate(np.unique(r), t)
            assert t[hit].tolist() == np.unique(r)[pos].tolist()
            assert not np.isin(t[~hit], r).any()


def test_arrays_it_does_not_take_are_refused() -> None:
    assert vectors._sorted is not None
    rows, out = np.arange(10, dtype=np.int32), np.empty(3, dtype=np.int64)
    for targets, into in ((np.array([1.0, 2.0, 3.0]), out), (np.arange(6, dtype=np.int32)[::2], out),
                          (np.arange(3, dtype=np.int32), np.empty(3, dtype=np.int32)),
                          (np.arange(3, dtype=np.int32), np.empty(4, dtype=np.int64)),
                          (np.arange(3, dtype=np.int32), np.empty(3, dtype=np.int64)[::-1]),
                          ([0, 1, 2], out)):
        assert vectors._sorted.insertion(rows, targets, into) is False
    frozen = np.empty(3, dtype=np.int64)
    frozen.flags.writeable = False
    assert vectors._sorted.insertion(rows, np.arange(3, dtype=np.int32), frozen) is False
