"""The compiled passes (models/arrays/_sorted.c) against numpy and loops: the galloping searchsorted gives numpy's
insertion points for ascending targets of either dtype, and a refusal (then numpy's answer) for anything else;
BM25F's fields, a term's counts around targets and the context lengths equal loops written out here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core.models.arrays import vectors
from tests.conftest import examples

pytestmark = pytest.mark.skipif(vectors._sorted is None, reason="the extension is not built (no C compiler)")

IDS = st.lists(st.integers(-5, 300), max_size=200)
DTYPES = st.sampled_from([np.int32, np.int64])


@settings(derandomize=True, max_examples=examples(500), deadline=None)
@given(rows=IDS, targets=IDS, row_type=DTYPES, target_type=DTYPES)
def test_insertion_points_are_numpys(rows: list[int], targets: list[int], row_type: type, target_type: type) -> None:
    r = np.sort(np.array(rows, dtype=row_type))
    t = np.sort(np.array(targets, dtype=target_type))
    out = np.empty(len(t), dtype=np.int64)
    assert vectors._sorted is not None and vectors._sorted.insertion(r, t, out)
    assert out.tolist() == np.searchsorted(r, t).tolist()


@settings(derandomize=True, max_examples=examples(300), deadline=None)
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


@st.composite
def postings_and_titles(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    """A term's postings in documents of 0-6 sentences (some empty), counts 1-3, and title documents."""
    sizes = np.array(draw(st.lists(st.integers(0, 6), min_size=1, max_size=25)), dtype=np.int64)
    first_of = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    n = int(sizes.sum())
    held = np.array(sorted(draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))), dtype=np.int64)[: n]
    doc = np.searchsorted(np.cumsum(sizes), held, side="right")
    counts = np.array([draw(st.integers(1, 3)) for _ in held], dtype=np.float64)
    titled = np.array(sorted(draw(st.sets(st.integers(0, len(sizes) - 1), max_size=len(sizes)))), dtype=np.int64)
    title_counts = np.array([draw(st.integers(1, 2)) for _ in titled], dtype=np.float64)
    return (held, counts, first_of[doc], first_of[doc] + sizes[doc], first_of[titled], sizes[titled], title_counts)


def fields_by_hand(window: int, held: np.ndarray, counts: np.ndarray, first: np.ndarray, end: np.ndarray,
                   tlo: np.ndarray, tn: np.ndarray, tc: np.ndarray) -> dict[int, list[float]]:
    """Each sentence's counts in the sentence, ±window context (its document only) and title, by a loop."""
    out: dict[int, list[float]] = {}
    for r, c, lo, hi in zip(held.tolist(), counts.tolist(), first.tolist(), end.tolist()):
        for s in range(max(lo, r - window), min(hi, r + window + 1)):
            out.setdefault(s, [0.0, 0.0, 0.0])[0 if s == r else 1] += c
    for lo, n, c in zip(tlo.tolist(), tn.tolist(), tc.tolist()):
        for s in range(lo, lo + n):
            out.setdefault(s, [0.0, 0.0, 0.0])[2] += c
    return out


@settings(derandomize=True, max_examples=examples(500), deadline=None)
@given(found=postings_and_titles(), window=st.integers(0, 4))
def test_the_fields_pass_equals_a_loop(found: tuple[np.ndarray, ...], window: int) -> None:
    """fields() (BM25F's fields of one term in one pass) against a loop over the postings and title documents."""
    held, counts, first, end, tlo, tn, tc = found
    cap = len(held) * (2 * window + 1) + int(tn.sum())
    rows, out = np.empty(cap, dtype=np.int64), np.empty(3 * cap)
    assert vectors._sorted is not None
    got = vectors._sorted.fields(held, counts, first, end, window, tlo, tn, tc, rows, out)
    want = fields_by_hand(window, held, counts, first, end, tlo, tn, tc)
    assert rows[:got].tolist() == sorted(want)
    assert out[: 3 * got].reshape(got, 3).tolist() == [want[s] for s in sorted(want)]
    if cap:  # outputs too short, or arrays it does not take: refused, nothing else
        assert vectors._sorted.fields(held, counts, first, end, window, tlo, tn, tc, rows[: got - 1],
                                      out[: 3 * (got - 1)]) == (-1 if got else 0)
    assert vectors._sorted.fields(held.astype(np.int32), counts, first, end, window, tlo, tn, tc, rows, out) == -1
    assert vectors._sorted.fields(held, counts, first, end, -1, tlo, tn, tc, rows, out) == -1


@settings(derandomize=True, max_examples=examples(500), deadline=None)
@given(found=postings_and_titles(), window=st.integers(0, 4), picks=st.lists(st.integers(0, 10**6), max_size=40),
       row_type=DTYPES, value_type=st.sampled_from([np.int32, np.int64, np.float32, np.float64]))
def test_the_around_pass_equals_a_loop(found: tuple[np.ndarray, ...], window: int, picks: list[int],
                                       row_type: type, value_type: type) -> None:
    """around() (a term's count in each target and in its ±window context) against a loop over its postings."""
    held, counts, first, end = found[:4]
    n = int(end.max(initial=0))
    if n == 0:
        return
    sizes = np.diff(np.unique(np.concatenate([first, end, [0, n]])))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    targets = np.sort(np.array([p % n for p in picks], dtype=np.int64))  # repeats allowed
    doc = np.searchsorted(starts, targets, side="right") - 1
    t_first, t_end = starts[doc], starts[doc] + sizes[doc]
    out = np.empty(2 * len(targets))
    assert vectors._sorted is not None
    rows, values = held.astype(row_type), counts.astype(value_type)
    assert vectors._sorted.around(rows, values, targets, t_first, t_end, window, out)
    where = dict(zip(held.tolist(), counts.tolist()))
    want = []
    for s, lo, hi in zip(targets.tolist(), t_first.tolist(), t_end.tolist()):
        nearby = range(max(lo, s - window), min(hi, s + window + 1))
        want.append([where.get(s, 0.0), sum(where.get(o, 0.0) for o in nearby if o != s)])
    assert out.reshape(-1, 2).tolist() == want
    if len(targets) > 1 and targets[0] < targets[-1]:  # targets that do not ascend: refused
        assert not vectors._sorted.around(held, counts, targets[::-1].copy(), t_first[::-1].copy(),
                                          t_end[::-1].copy(), window, out)
    if len(targets):  # an output too short: refused
        assert not vectors._sorted.around(held, counts, targets, t_first, t_end, window, out[:-1])
    assert not vectors._sorted.around(held, counts.astype(np.int8), targets, t_first, t_end, window, out)


@settings(derandomize=True, max_examples=examples(500), deadline=None)
@given(sizes=st.lists(st.integers(0, 6), min_size=1, max_size=25), lengths=st.data(), window=st.integers(0, 4),
       seq_type=DTYPES, doc_type=DTYPES)
def test_the_contexts_pass_equals_a_loop(sizes: list[int], lengths: st.DataObject, window: int, seq_type: type,
                                         doc_type: type) -> None:
    """contexts() (|ctx_w(s)| of every sentence) against the definition: the terms of the ±window sentences of s's
    own document, s excluded. Documents of 0-6 sentences, some empty; sentences of 0-9 terms."""
    n = sum(sizes)
    sent_len = np.array(lengths.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)), dtype=np.int64)
    seq = np.concatenate([[0], np.cumsum(sent_len)]).astype(seq_type)
    nsent = np.array(sizes, dtype=doc_type)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(doc_type)
    out = np.full(n, -1, dtype=np.int32)
    assert vectors._sorted is not None and vectors._sorted.contexts(seq, first, nsent, window, out)
    want = [
        sum(int(sent_len[o]) for o in range(max(f, s - window), min(f + size, s + window + 1)) if o != s)
        for f, size in zip(first.tolist(), sizes) for s in range(f, f + size)
    ]
    assert out.tolist() == want


def test_the_contexts_pass_refuses_what_it_cannot_do() -> None:
    """Documents that do not cover the sentences one after another, or arrays it does not take: refused (the
    caller runs numpy)."""
    assert vectors._sorted is not None
    contexts = vectors._sorted.contexts
    seq, out = np.arange(7, dtype=np.int64), np.empty(6, dtype=np.int32)  # 6 sentences of one term each
    first, nsent = np.array([0, 2, 4]), np.array([2, 2, 2])
    assert contexts(seq, first, nsent, 1, out) and out.tolist() == [1, 1, 1, 1, 1, 1]
    assert contexts(seq, np.array([0, 4, 2]), nsent, 1, out) is False  # out of order
    assert contexts(seq, np.array([0, 3, 4]), np.array([2, 1, 2]), 1, out) is False  # a gap
    assert contexts(seq, first, np.array([2, 2, 1]), 1, out) is False  # short of N
    assert contexts(seq, first, np.array([2, 2, 3]), 1, out) is False  # past N
    assert contexts(seq, first, nsent, -1, out) is False
    assert contexts(seq, first, nsent, 1, np.empty(6, dtype=np.int64)) is False
    assert contexts(seq[:-1], first, nsent, 1, out) is False
    assert contexts(seq.astype(np.float64), first, nsent, 1, out) is False
