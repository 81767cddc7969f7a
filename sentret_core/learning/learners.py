"""The two learners of a ranker, from well-kept libraries, and the fitted :class:`Ranker`.

* ``lambdamart``: LightGBM's ``LGBMRanker`` with the lambdarank objective (Burges 2010), grouped
  by topic, stopped early on a development set's MAP when one is given;
* ``linear``: scikit-learn's logistic regression on standardised features (relevant or not), whose
  weights a class can read: a sentence's score is Σ_j w_j·z_j + b with z_j = (x_j - mean_j)/scale_j.

A ranker's arrays (a LightGBM model as its text, or the linear weights and scaling) are what its
artefact stores; predictions are deterministic. A stored ranker may come from anyone, so its arrays
are checked before use (:meth:`Ranker.check`): the trees by :mod:`~sentret_core.learning.forest`
(which also scores them, in numpy), the linear model's numbers for being finite.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.learning.forest import Forest, parse_forest

LEARNERS: tuple[str, ...] = ("lambdamart", "linear")
DEV_CUTOFF = 10  # MAP@10 is what early stopping watches
# The first default trees (15 leaves, little regularisation) let one prior carry a quarter of the gain (WikiQA:
# position 24%); the default is now smaller, sampled and shrunk trees, and learn(choose=True) picks among
# LAMBDAMART_GRID (or LINEAR_GRID's C) by cross-validation on the training topics only.
ISSUE_12_TREES = {"num_leaves": 15, "min_child_samples": 20, "colsample_bytree": 0.8, "reg_lambda": 1.0}
LAMBDAMART_GRID: tuple[dict[str, Any], ...] = (  # least to most regularised
    ISSUE_12_TREES,
    {"num_leaves": 7, "min_child_samples": 50, "colsample_bytree": 0.5, "reg_lambda": 5.0},
    {"num_leaves": 4, "min_child_samples": 100, "colsample_bytree": 0.5, "reg_lambda": 10.0},
)
LINEAR_GRID: tuple[dict[str, Any], ...] = ({"C": 1.0}, {"C": 0.1}, {"C": 0.01})  # least to most regularised
LAMBDAMART = {"learning_rate": 0.05, **LAMBDAMART_GRID[1]}
MIN_CHILD_SHARE = 20  # a leaf needs at most 1/20 of the rows, so that a small training set still splits
MAX_TREES = 1000
DEFAULT_TREES = 200
PATIENCE = 50


@dataclass(frozen=True)
class Ranker:
    """A fitted ranker: its learner, feature columns, and the arrays that define it."""

    learner: str
    features: tuple[str, ...]
    arrays: dict[str, np.ndarray] = field(compare=False)

    @cached_property
    def _forest(self) -> Forest:
        """The checked trees (a SentretError for a model text that is not one our learner makes)."""
        model = self.arrays.get("model")
        if not isinstance(model, np.ndarray) or model.dtype != np.uint8 or model.ndim != 1:
            raise SentretError("its model is not a LightGBM model text")
        try:
            text = model.tobytes().decode()
        except UnicodeDecodeError:
            raise SentretError("its model text is not UTF-8") from None
        return parse_forest(text, len(self.features))

    @cached_property
    def _booster(self) -> Any:
        import lightgbm

        return lightgbm.Booster(model_str=self._forest.text())  # re-written from checked arrays only

    def check(self) -> Ranker:
        """This ranker, once its arrays are checked: a SentretError says what is wrong."""
        if self.learner == "linear":
            _check_linear(self.arrays, len(self.features))
        else:
            _ = self._forest
        return self

    def _standardised(self, X: np.ndarray) -> np.ndarray:
        return (X - self.arrays["mean"]) / self.arrays["scale"]

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The score of each row of ``X`` (columns as :attr:`features`)."""
        self.check()
        if len(X) == 0:
            return np.zeros(0)
        if self.learner == "linear":
            return np.asarray(self._standardised(X) @ self.arrays["coef"] + float(self.arrays["intercept"][0]))
        return self._forest.predict(X)

    def contributions(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each feature's additive part of each row's score, and the rest (the intercept, or the
        trees' expected value): their sum is :meth:`predict` (LightGBM's exact TreeSHAP values)."""
        self.check()
        if self.learner == "linear":
            parts = self._standardised(X) * self.arrays["coef"]
            return parts, np.full(len(X), float(self.arrays["intercept"][0]))
        both = np.asarray(self._booster.predict(X, pred_contrib=True, num_threads=1), dtype=np.float64)
        return both[:, :-1], both[:, -1]

    def weights(self) -> dict[str, float]:
        """The linear model's weight of each (standardised) feature."""
        if self.learner != "linear":
            raise SentretError("only the linear learner has one weight per feature")
        return dict(zip(self.features, (float(w) for w in self.arrays["coef"])))

    def importance(self) -> dict[str, float]:
        """Which features mattered: LightGBM's total gain per feature, or |weight| for the linear model."""
        # LightGBM's total gain, computed from the checked trees
        values = np.abs(self.check().arrays["coef"]) if self.learner == "linear" else self._forest.gain_importance()
        return dict(zip(self.features, (float(v) for v in values)))


def _check_linear(arrays: dict[str, np.ndarray], n_features: int) -> None:
    shapes = {"mean": (n_features,), "scale": (n_features,), "coef": (n_features,), "intercept": (1,)}
    for key, shape in shapes.items():
        value = arrays.get(key)
        if not isinstance(value, np.ndarray) or value.shape != shape or value.dtype.kind not in "fi":
            raise SentretError(f"its {key} is not {shape[0]} number(s)")
        if not np.isfinite(value).all():
            raise SentretError(f"its {key} holds a value that is not finite (NaN or infinite)")
    if (arrays["scale"] == 0).any():
        raise SentretError("its scale holds a 0 (a feature would be divided by zero)")


Set = tuple[np.ndarray, np.ndarray, np.ndarray]  # features, labels (grades ≥ 0), group sizes


def check_learner(name: str) -> str:
    if name not in LEARNERS:
        raise SentretError(f"unknown learner {name!r}; choose one of {', '.join(LEARNERS)}")
    return name


def grid(learner: str) -> tuple[dict[str, Any], ...]:
    """The settings ``learn(choose=True)`` chooses among for ``learner``."""
    return LINEAR_GRID if check_learner(learner) == "linear" else LAMBDAMART_GRID


def fit(learner: str, features: Sequence[str], train: Set, dev: Set | None = None, *, seed: int = 0,
        c: float = 1.0, trees: int | None = None,
        setting: dict[str, Any] | None = None) -> tuple[Ranker, dict[str, Any]]:
    """Fit ``learner`` on ``train``; LambdaMART stops early on ``dev``, else runs ``trees`` trees
    (default 200). ``setting`` (one of :func:`grid`'s) replaces the defaults. Returns the ranker and
    what the fit chose (trees, C, the trees' settings)."""
    X, y, groups = train
    if len(X) == 0 or not (y > 0).any():
        raise SentretError("no training example is relevant: there is nothing to learn from")
    if check_learner(learner) == "linear":
        return _fit_linear(features, X, y, float((setting or {}).get("C", c)), seed)
    chosen = {**LAMBDAMART, **(setting or {})}
    return _fit_lambdamart(features, X, y, groups, dev, seed, trees or DEFAULT_TREES, chosen)


def _fit_linear(features: Sequence[str], X: np.ndarray, y: np.ndarray, c: float, seed: int) -> tuple[Ranker, dict]:
    from sklearn.linear_model import LogisticRegression

    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=2000, class_weight="balanced", random_state=seed)
    model.fit((X - mean) / scale, (y > 0).astype(np.int64))
    arrays = {"mean": mean, "scale": scale, "coef": model.coef_[0].astype(np.float64),
              "intercept": np.asarray(model.intercept_, dtype=np.float64)}
    return Ranker("linear", tuple(features), arrays), {"C": c}


def _fit_lambdamart(
    features: Sequence[str],
    X: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    dev: Set | None,
    seed: int,
    trees: int,
    setting: dict[str, Any],
) -> tuple[Ranker, dict]:
    import lightgbm

    used_setting = dict(setting, min_child_samples=min(int(setting["min_child_samples"]),
                                                       max(1, len(X) // MIN_CHILD_SHARE)))
    model = lightgbm.LGBMRanker(objective="lambdarank", n_estimators=MAX_TREES if dev is not None else trees,
                                random_state=seed, deterministic=True, force_row_wise=True, n_jobs=1,
                                verbose=-1, **used_setting)
    extra: dict[str, Any] = {}
    if dev is not None and (dev[1] > 0).any():
        extra = {"eval_X": (dev[0],), "eval_y": (dev[1],), "eval_group": [dev[2]], "eval_at": [DEV_CUTOFF],
                 "eval_metric": "map", "callbacks": [lightgbm.early_stopping(PATIENCE, verbose=False)]}
    model.fit(X, y.astype(np.int64), group=groups, **extra)
    booster = model.booster_
    used = int(model.best_iteration_ or booster.current_iteration())
    text = booster.model_to_string(num_iteration=used)
    arrays = {"model": np.frombuffer(text.encode(), dtype=np.uint8).copy()}
    return Ranker("lambdamart", tuple(features), arrays), {"trees": used, **used_setting}
