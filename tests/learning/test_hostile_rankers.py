"""Crafted rankers: a stored ranker is data, never a path into LightGBM's C++ parser.

Each crafted model text is loaded, scored and asked for its importance in a forked child process,
so a SIGSEGV/SIGABRT or a hang shows as the child's exit status instead of killing the test run;
the child must get one SentretError naming the ranker and the problem.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, seed, settings
from hypothesis import strategies as st

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.reader import Index
from sentret_core.learning.features import feature_names
from sentret_core.learning.forest import parse_forest
from sentret_core.learning.learners import Ranker, fit
from sentret_core.learning.store import load, save
from sentret_core.models import score
from tests.conftest import build_from_texts, examples
from tests.learning.test_features import DOCS
from tests.learning.test_learners import synthetic

SCORERS = ("bm25.v1",)
NAMES = feature_names(SCORERS)
F = len(NAMES)
TIMEOUT = 60.0


def forked(fn: Callable[..., Any], *args: Any) -> tuple[str, str]:
    """Run ``fn(*args)`` in a forked child: (the name of what it raised or "ok", its message).

    Fails the test if the child dies of a signal, exits otherwise or does not finish in time."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)

    def child() -> None:
        try:
            fn(*args)
            send.send(("ok", ""))
        except SentretError as err:
            send.send(("SentretError", str(err)))
        except BaseException as err:  # anything else is what the test reports
            send.send((type(err).__name__, str(err)))

    process = context.Process(target=child)
    process.start()
    process.join(TIMEOUT)
    if process.is_alive():
        process.kill()
        process.join()
        pytest.fail(f"the child hung (still running after {TIMEOUT:.0f} s)")
    assert process.exitcode == 0, f"the child died (exit status {process.exitcode}; negative = killed by a signal)"
    return receive.recv()


@pytest.fixture(scope="module")
def model_text() -> str:
    """A real LambdaMART model text over ltr.v1's features for bm25.v1 (a few trees of up to 15 leaves)."""
    X, y, groups = synthetic(0)
    X = np.hstack([X, np.random.default_rng(3).normal(size=(len(X), F - 5))])
    ranker, _ = fit("lambdamart", NAMES, (X, y, groups), trees=4)
    return bytes(ranker.arrays["model"]).decode()


def with_tree0(text: str, key: str, change: Callable[[list[str]], list[str]]) -> str:
    """``text`` with the ``key=`` line of its first tree rewritten by ``change`` (on its words)."""
    start = text.index("Tree=0\n")
    line = re.compile(rf"^{key}=(.*)$", re.M).search(text, start)
    assert line is not None
    return resealed(text[: line.start()] + f"{key}=" + " ".join(change(line.group(1).split())) + text[line.end() :])


def resealed(text: str) -> str:
    """``text`` with its header's ``tree_sizes`` made to match its trees again, as an attacker would."""
    starts = [m.start() for m in re.finditer(r"^Tree=", text, re.M)] + [text.index("\nend of trees") + 1]
    sizes = " ".join(str(b - a) for a, b in itertools.pairwise(starts))
    return re.sub(r"^tree_sizes=.*$", f"tree_sizes={sizes}", text, count=1, flags=re.M)


def first(value: str) -> Callable[[list[str]], list[str]]:
    return lambda words: [value, *words[1:]]


def last(value: str) -> Callable[[list[str]], list[str]]:
    return lambda words: [*words[:-1], value]


# name → (how the text is made hostile, what the error must say)
CRAFTED: dict[str, tuple[Callable[[str], str], str]] = {
    "cycle-to-root": (lambda t: with_tree0(t, "left_child", last("0")), "pointing back at the root"),
    "child-out-of-range": (lambda t: with_tree0(t, "right_child", first("9999")), "child index outside"),
    "leaf-out-of-range": (lambda t: with_tree0(t, "left_child", first("-9999")), "child index outside"),
    "child-negative-huge": (lambda t: with_tree0(t, "left_child", first("-2147483648")), "child index outside"),
    "feature-out-of-range": (lambda t: with_tree0(t, "split_feature", first(str(F + 50))), "feature outside"),
    "feature-negative": (lambda t: with_tree0(t, "split_feature", first("-1")), "feature outside"),
    "num-leaves-zero": (lambda t: with_tree0(t, "num_leaves", lambda _: ["0"]), "num_leaves=0"),
    "num-leaves-huge": (lambda t: with_tree0(t, "num_leaves", lambda _: ["1000000000"]), "num_leaves=1000000000"),
    "nan-leaf": (lambda t: with_tree0(t, "leaf_value", first("nan")), "leaf_value holds a value that is not finite"),
    "inf-threshold": (lambda t: with_tree0(t, "threshold", first("inf")), "threshold holds a value that is not fin"),
    "garbage-decision-type": (lambda t: with_tree0(t, "decision_type", first("77")), "unknown decision_type"),
    "huge-categorical": (
        lambda t: resealed(
            with_tree0(with_tree0(t, "num_cat", lambda _: ["1"]), "decision_type", first("1")).replace(
                "num_cat=1\n", "num_cat=1\ncat_boundaries=0 2000000000\ncat_threshold=1\n", 1
            )
        ),
        "categorical splits",
    ),
    "100k-trees-claimed": (
        lambda t: re.sub(r"^tree_sizes=.*$", "tree_sizes=" + " ".join(["700"] * 100_000), t, count=1, flags=re.M),
        "states 100,000 trees but the text holds 4",
    ),
    "truncated-to-half": (lambda t: t[: len(t) // 2], "incomplete"),
    "wrong-feature-count": (
        lambda t: re.sub(r"^max_feature_idx=.*$", "max_feature_idx=3", t, count=1, flags=re.M),
        f"max_feature_idx={F - 1}",
    ),
    "not-utf8": (lambda t: t.replace("Tree=1", "Tree=\udcff"), "not UTF-8"),
}


def _store_arrays(name: str, learner: str, arrays: dict[str, np.ndarray]) -> None:
    """Write a ranker's files as someone else's sentret would (``save`` itself refuses bad ones)."""
    record = {"learner": learner, "features": list(NAMES), "first_stage": "bm25.v1", "depth": 50,
              "scorers": list(SCORERS)}
    artefacts.write(None, "ranker", name, arrays, record)


def _store(name: str, text: str) -> None:
    _store_arrays(name, "lambdamart", {"model": np.frombuffer(text.encode(errors="surrogateescape"), np.uint8).copy()})


def _load_and_use(name: str) -> None:
    ranker = load(SimpleNamespace(path=Path(".")), name).ranker  # type: ignore[arg-type]  # a shared kind
    X = np.zeros((3, F))
    ranker.predict(X)
    ranker.importance()
    ranker.contributions(X)


def _use_unstored(text: str) -> None:
    Ranker("lambdamart", NAMES, {"model": np.frombuffer(text.encode(), dtype=np.uint8).copy()}).importance()


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_a_crafted_lambdamart_text_is_refused_before_lightgbm_sees_it(model_text: str, case: str) -> None:
    craft, says = CRAFTED[case]
    _store(case, craft(model_text))
    kind, message = forked(_load_and_use, case)
    assert kind == "SentretError", (kind, message)
    assert f"ranker {case!r} cannot be used" in message and says in message, message


def test_importance_of_a_cyclic_tree_is_an_error_not_a_crash(model_text: str) -> None:
    # node 1's left child is node 1 itself: walking the tree from the root would never end
    cyclic = with_tree0(model_text, "left_child", lambda words: [words[0], "1", *words[2:]])
    kind, message = forked(_use_unstored, cyclic)
    assert kind == "SentretError" and "tree 0" in message, (kind, message)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("hostile-rankers"), DOCS)


def test_ltr_v1_with_a_crafted_ranker_is_an_error_for_the_query(tiny: Index, model_text: str) -> None:
    _store("crafted", CRAFTED["cycle-to-root"][0](model_text))
    kind, message = forked(lambda: score(tiny, "Paris capital", "ltr.v1", model="crafted"))
    assert kind == "SentretError" and "ranker 'crafted'" in message, (kind, message)


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("coef", np.nan, "coef holds a value that is not finite"),
        ("intercept", np.inf, "intercept holds"),
        ("mean", -np.inf, "mean holds"),
        ("scale", 0.0, "scale holds a 0"),
    ],
)
def test_a_linear_ranker_with_a_non_finite_number_is_refused(key: str, value: float, says: str) -> None:
    arrays = {"mean": np.zeros(F), "scale": np.ones(F), "coef": np.ones(F), "intercept": np.zeros(1)}
    arrays[key] = arrays[key].copy()
    arrays[key][0] = value
    _store_arrays("bad-linear", "linear", arrays)
    with pytest.raises(SentretError, match=r"coef|intercept|mean|scale"):
        save("bad-linear", Ranker("linear", NAMES, arrays), first_stage="bm25.v1", depth=50, scorers=SCORERS, meta={})
    kind, message = forked(_load_and_use, "bad-linear")
    assert kind == "SentretError" and "ranker 'bad-linear' cannot be used" in message and says in message, message


def test_numpy_scores_equal_lightgbm_on_trained_rankers() -> None:
    import lightgbm

    X, y, groups = synthetic(0, topics=100)
    X[::5, 2] = np.nan  # missing values in training: LightGBM makes splits of missing type NaN (decision 8, 10)
    X[::3, 0] = 0.0
    names = tuple(f"f{j}" for j in range(5))
    test, _, _ = synthetic(5)
    test[::4, 2], test[::3, 0], test[::7, 1] = np.nan, 0.0, 1e-36
    for train, trees in (((X, y, groups), 30), (synthetic(0, topics=100), 60)):
        ranker, _ = fit("lambdamart", names, train, trees=trees)
        booster = lightgbm.Booster(model_str=bytes(ranker.arrays["model"]).decode())
        assert np.abs(ranker.predict(test) - booster.predict(test, num_threads=1)).max() <= 1e-12
        gain = booster.feature_importance(importance_type="gain")
        assert np.allclose(list(ranker.importance().values()), gain, rtol=1e-12, atol=0)
        parts, rest = ranker.contributions(test[:20])  # LightGBM on the re-written text: same TreeSHAP
        assert np.abs(np.column_stack([parts, rest]) - booster.predict(test[:20], pred_contrib=True)).max() <= 1e-12


# --- Hypothesis: any change to a number or an index is refused, or harmless -------------------------------

MUTABLE = ("num_leaves", "split_feature", "threshold", "decision_type", "left_child", "right_child", "leaf_value",
           "split_gain", "internal_count", "leaf_count", "max_feature_idx", "tree_sizes")
VALUES = st.one_of(
    st.integers(-(2**33), 2**33).map(str),
    st.integers(-20, 40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "", "x", "-0", "0x10", "9" * 30]),
)


# LightGBM runs in a fresh interpreter: a forked child of a process whose OpenMP threads have run can hang
LIGHTGBM_SIDE = """
import json, sys
import lightgbm, numpy as np
X = np.random.default_rng(0).normal(size=(16, int(sys.argv[1])))
print(json.dumps(lightgbm.Booster(model_str=sys.stdin.read()).predict(X, num_threads=1).tolist()))
"""


def lightgbm_scores(text: str) -> np.ndarray:
    """LightGBM's scores of 16 fixed rows under model ``text`` (the hostile text itself), in a child process."""
    try:
        done = subprocess.run([sys.executable, "-c", LIGHTGBM_SIDE, str(F)], input=text, capture_output=True,
                              text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"LightGBM hung on a text the validator accepted (over {TIMEOUT:.0f} s)")
    assert done.returncode == 0, f"LightGBM died on a text the validator accepted ({done.returncode}): {done.stderr}"
    return np.array(json.loads(done.stdout.splitlines()[-1]), dtype=np.float64)


@seed(29)
@settings(max_examples=examples(50), derandomize=True, deadline=None, phases=(Phase.explicit, Phase.generate))
@given(data=st.data())
def test_a_mutated_model_text_is_refused_or_safe(model_text: str, data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(MUTABLE))
    lines = [m for m in re.finditer(rf"^{key}=(.*)$", model_text, re.M)]
    line = lines[data.draw(st.integers(0, len(lines) - 1))]
    words = line.group(1).split() or [""]
    at = data.draw(st.integers(0, len(words) - 1))
    words[at] = data.draw(VALUES)
    text = model_text[: line.start()] + f"{key}=" + " ".join(words) + model_text[line.end() :]
    if key != "tree_sizes" and data.draw(st.booleans()):
        text = resealed(text)  # else the changed length alone is reason enough to refuse
    try:
        forest = parse_forest(text, F)
    except SentretError:
        return  # refused in Python: LightGBM never sees it
    scores = lightgbm_scores(text)
    assert np.isfinite(scores).all()
    assert np.array_equal(forest.predict(np.random.default_rng(0).normal(size=(16, F))), scores)


@pytest.mark.parametrize("depth", [0, -5, 10**40, float("inf")])
def test_a_ranker_record_with_an_impossible_depth_is_refused(depth: float) -> None:
    arrays = {"mean": np.zeros(F), "scale": np.ones(F), "coef": np.ones(F), "intercept": np.zeros(1)}
    record = {"learner": "linear", "features": list(NAMES), "first_stage": "bm25.v1", "depth": depth,
              "scorers": list(SCORERS)}
    artefacts.write(None, "ranker", "deep", arrays, record)
    kind, message = forked(_load_and_use, "deep")
    assert kind == "SentretError" and "ranker 'deep'" in message, (kind, message)


@pytest.mark.parametrize(
    ("first_stage", "scorers", "says"),
    [
        ("ltr.v1", ("bm25.v1",), "another learned ranker"),
        ("bm25.v1", ("ltr.v1",), "another learned ranker"),
        ("nope.v1", ("bm25.v1",), "not a model here"),
        ("bm25.v1", ("bm25.v1", "bm25.v1"), "a scorer twice"),
    ],
)
def test_a_ranker_record_that_reads_a_ranker_or_nothing_is_refused(
    first_stage: str, scorers: tuple[str, ...], says: str
) -> None:
    # a ranker whose first stage is ltr.v1 would score itself forever (RecursionError) on today's code
    names = feature_names(scorers)
    arrays = {"mean": np.zeros(len(names)), "scale": np.ones(len(names)), "coef": np.ones(len(names)),
              "intercept": np.zeros(1)}
    record = {"learner": "linear", "features": list(names), "first_stage": first_stage, "depth": 10,
              "scorers": list(scorers)}
    artefacts.write(None, "ranker", "ltr", arrays, record)  # under ltr.v1's default name
    kind, message = forked(_load_and_use, "ltr")
    assert kind == "SentretError" and "ranker 'ltr'" in message and says in message, (kind, message)
