"""The random baseline as exported: one seeded permutation per topic, with distinct scores."""

from __future__ import annotations

from sentret_core.evaluation.report import permuted


def test_a_permutation_is_seeded_distinct_and_holds_every_document() -> None:
    run = {"t1": {f"d{i}": 0.0 for i in range(50)}, "t2": {"a": 0.0, "b": 0.0}}
    once, again, other = permuted(run, 0), permuted(run, 0), permuted(run, 1)
    assert once == again and once != other  # the same for the same seed, on any machine
    for topic, ranked in once.items():
        assert set(ranked) == set(run[topic])
        assert sorted(ranked.values()) == [float(v) for v in range(1, len(ranked) + 1)]  # n … 1: no ties
    order = sorted(once["t1"], key=lambda d: -once["t1"][d])
    assert order != sorted(run["t1"])  # not document order (50! orders: this one is not the identity)
