"""Crafted stored rankers for ``benchmarks/hostile_index.py --resealed``: a small
LambdaMART model text edited in the ways an attacker could (a cyclic tree, indices out of range or
negative, 0 or huge ``num_leaves``, a NaN leaf, an infinite threshold, a garbage ``decision_type``,
huge categorical boundaries, 100k trees claimed, truncation), and a linear ranker with a NaN
coefficient, each stored by name and used through the public path (``ltr.v1`` by that name)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
from hostile_index import QUERY

# --- the model texts ------------------------------------------------------------------------------------------


def _lambdamart_text(n_features: int) -> str:
    import lightgbm

    rng = np.random.default_rng(29)
    X, y = rng.random((80, n_features)), rng.integers(0, 3, 80)
    data = lightgbm.Dataset(X, y, group=[10] * 8)
    params = {"objective": "lambdarank", "num_leaves": 4, "min_data_in_leaf": 2, "verbose": -1, "seed": 29}
    return str(lightgbm.train(params, data, num_boost_round=3).model_to_string())


def _first(text: str, key: str, change: Callable[[list[str]], list[str]]) -> str:
    """The first ``key=…`` line of the model text with its values changed."""
    match = re.search(rf"^{key}=(.*)$", text, re.M)
    assert match is not None, key
    values = change(match.group(1).split(" "))
    return text[: match.start(1)] + " ".join(values) + text[match.end(1) :]


def _resized(text: str) -> str:
    """``tree_sizes`` made to match the edited trees (each tree's bytes up to the next), so that a
    crafted value reaches the checks of the tree itself, not only the header's."""
    match = re.search(r"^tree_sizes=(.*)$", text, re.M)
    start, end = text.find("Tree=0"), text.find("end of trees")
    if match is None or start < 0 or end < 0:
        return text
    blocks = [b for b in re.split(r"(?=^Tree=\d+$)", text[start:end], flags=re.M) if b]
    sizes = " ".join(str(len(b.encode())) for b in blocks)
    return text[: match.start(1)] + sizes + text[match.end(1) :]


def _set(i: int, value: str) -> Callable[[list[str]], list[str]]:
    return lambda values: [value if j == i else v for j, v in enumerate(values)]


RANKER_EDITS: dict[str, Callable[[str], str]] = {
    "intact": lambda t: t,
    "a child points back to node 0": lambda t: _first(t, "right_child", _set(0, "0")),
    "a child index out of range": lambda t: _first(t, "left_child", _set(0, "999")),
    "a leaf index out of range": lambda t: _first(t, "left_child", _set(0, "-999")),
    "a feature index out of range": lambda t: _first(t, "split_feature", _set(0, "999")),
    "a negative feature index": lambda t: _first(t, "split_feature", _set(0, "-5")),
    "num_leaves 0": lambda t: _first(t, "num_leaves", lambda v: ["0"]),
    "num_leaves huge": lambda t: _first(t, "num_leaves", lambda v: ["100000000"]),
    "a NaN leaf value": lambda t: _first(t, "leaf_value", _set(0, "nan")),
    "an infinite threshold": lambda t: _first(t, "threshold", _set(0, "inf")),
    "a garbage decision_type": lambda t: _first(t, "decision_type", _set(0, "255")),
    "huge categorical boundaries": lambda t: _first(
        _first(t, "num_cat", lambda v: ["1"]), "decision_type", _set(0, "1")
    ).replace("shrinkage=", "cat_boundaries=0 1000000000\ncat_threshold=1\nshrinkage=", 1),
    "100k trees claimed": lambda t: _first(t, "tree_sizes", lambda v: [*v, *(["500"] * 100_000)]),
    "truncated to half": lambda t: t[: len(t) // 2],
}


def store_rankers() -> dict[str, str]:
    """Every crafted ranker stored under its own name: case → name."""
    from sentret_core.index import artefacts
    from sentret_core.learning.features import feature_names

    scorers = ("bm25.v1",)
    names = feature_names(scorers)
    record = {"learner": "lambdamart", "features": list(names), "first_stage": "bm25.v1", "depth": 50,
              "scorers": list(scorers)}
    text = _lambdamart_text(len(names))
    stored = {}
    for i, (case, edit) in enumerate(RANKER_EDITS.items()):
        crafted = edit(text)
        if case not in ("100k trees claimed", "truncated to half"):  # those two are about the header
            crafted = _resized(crafted)
        model = np.frombuffer(crafted.encode(), dtype=np.uint8).copy()
        artefacts.write(None, "ranker", f"hostile-{i}", {"model": model}, record)
        stored[case] = f"hostile-{i}"
    coef = np.ones(len(names))
    coef[0] = math.nan
    linear = {"mean": np.zeros(len(names)), "scale": np.ones(len(names)), "coef": coef, "intercept": np.zeros(1)}
    artefacts.write(None, "ranker", "hostile-linear-nan", linear, dict(record, learner="linear"))
    stored["linear with a NaN coefficient"] = "hostile-linear-nan"
    return stored


def ranker_workload(path: str, name: str) -> tuple[int, str, str]:
    from sentret_core import Index, score, top_k
    from sentret_core.errors import SentretError
    from sentret_core.learning.store import load

    try:
        index = Index.load(path)
        top = top_k(score(index, QUERY, "ltr.v1", model=name), 10)
        if not np.isfinite(top.scores).all():
            return 6, "", "non-finite scores"
        load(index, name).ranker.importance()
    except SentretError as err:
        return 4, "", f"{type(err).__name__}: {err}"
    except Exception as err:
        return 5, "", f"RAW {type(err).__name__}: {err}"
    return 0, "", ""
