"""A LambdaMART ranker's trees as checked arrays: its model text is data, never a path into C++.

A stored ranker keeps LightGBM's model text. Handing a crafted text to LightGBM's own parser can
kill the process (a child pointing back at the root, an index out of range, a truncated text), so
:func:`parse_forest` reads the text here, in Python, and refuses anything that is not a tree
ensemble our learner could have made:

* the header: one class, one tree per iteration, the ``lambdarank`` objective (raw scores, no
  averaging), ``max_feature_idx`` equal to the ranker's feature count minus one;
* each ``Tree=i`` block, numbered in order: ``num_leaves`` in [1, :data:`MAX_LEAVES`], every
  array of the length ``num_leaves`` implies, every value finite; numerical splits only
  (``decision_type`` = default-left bit | missing type << 2, missing type none, zero or NaN);
  features in [0, max_feature_idx]; children either an internal node in [1, num_leaves - 1) or a
  leaf ``~j`` with j in [0, num_leaves), each node reached exactly once from the root (acyclic);
* as many trees as ``tree_sizes`` states, at most :data:`MAX_TREES`, and the closing
  ``end of trees`` (a truncated text is refused).

Scores are computed here in numpy from the checked arrays, with LightGBM's decision rule
(``Tree::NumericalDecision``: NaN is 0 unless the missing type is NaN; a missing value goes the
default way; else x ≤ threshold goes left) and its order of summation, so they equal
``Booster.predict`` exactly. Only the per-feature contributions (TreeSHAP) still use LightGBM, and
it is given :meth:`Forest.text`, a text re-written from the checked arrays, never the stored one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from sentret_core.errors import SentretError

MAX_TREES = 10_000  # the learner stops at 1,000
MAX_LEAVES = 1_024  # the learner grows 15; TreeSHAP's work grows with the square of a tree's depth
MAX_TEXT = 64 * 1024 * 1024
K_ZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold (a float): |x| ≤ it counts as 0
DEFAULT_LEFT, MISSING_SHIFT = 2, 2
DECISION_TYPES = frozenset(default | (missing << MISSING_SHIFT) for default in (0, 2) for missing in (0, 1, 2))
MISSING_ZERO, MISSING_NAN = 1, 2
FLOAT32_MAX = float(np.finfo(np.float32).max)
_INT = re.compile(r"-?\d{1,10}")
_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d{1,4})?|[-+]?(nan|inf|infinity)", re.IGNORECASE)
MAX_VALUE = 1e100  # so that the sum over MAX_TREES trees stays finite
_INTERNAL = ("split_feature", "split_gain", "threshold", "decision_type", "left_child", "right_child",
             "internal_value", "internal_weight", "internal_count")
_LEAF = ("leaf_value", "leaf_weight", "leaf_count")
_INTS = frozenset({"split_feature", "decision_type", "left_child", "right_child", "internal_count", "leaf_count"})
_CATEGORICAL = ("cat_boundaries", "cat_threshold")
EMPTY = np.zeros(0)


@dataclass(frozen=True)
class Tree:
    """One checked tree: per internal node its split, per leaf its value (LightGBM's arrays)."""

    num_leaves: int
    arrays: dict[str, np.ndarray]
    shrinkage: float

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]


@dataclass(frozen=True)
class Forest:
    """A checked ensemble: its trees and the number of features it reads."""

    trees: tuple[Tree, ...]
    n_features: int

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The raw score of each row, summed tree by tree as LightGBM does (so equal to it)."""
        X = np.array(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise SentretError(f"the ranker reads {self.n_features} features, not an array of shape {X.shape}")
        X[np.abs(X) <= K_ZERO] = 0.0  # LightGBM keeps only |x| > kZeroThreshold of a dense row
        plain = all(t.num_leaves == 1 or not (t["decision_type"] >> MISSING_SHIFT).any() for t in self.trees)
        if plain:  # no split treats a value as missing: NaN is simply 0 (the common case, done once)
            X[np.isnan(X)] = 0.0
        total = np.zeros(len(X))
        for tree in self.trees:  # in LightGBM's order, so the sums are the same to the last bit
            total += _output(tree, X, plain)
        return total

    def gain_importance(self) -> np.ndarray:
        """Total gain of each feature's splits (``feature_importance("gain")``: positive gains, as floats)."""
        total = np.zeros(self.n_features)
        for tree in self.trees:
            if tree.num_leaves > 1:
                gain = tree["split_gain"].astype(np.float32).astype(np.float64)
                positive = gain > 0
                np.add.at(total, tree["split_feature"][positive], gain[positive])
        return total

    def text(self) -> str:
        """LightGBM's model text, re-written from the checked arrays (all LightGBM ever parses)."""
        m = self.n_features - 1
        lines = ["tree", "version=v4", "num_class=1", "num_tree_per_iteration=1", "label_index=0",
                 f"max_feature_idx={m}", "objective=lambdarank",
                 "feature_names=" + " ".join(f"Column_{j}" for j in range(self.n_features)),
                 "feature_infos=" + " ".join("none" for _ in range(self.n_features)), ""]
        for i, tree in enumerate(self.trees):
            lines += [f"Tree={i}", f"num_leaves={tree.num_leaves}", "num_cat=0"]
            lines += [f"{key}={_format(tree.arrays.get(key, EMPTY), key in _INTS)}" for key in (*_INTERNAL, *_LEAF)]
            lines += ["is_linear=0", f"shrinkage={float(tree.shrinkage)!r}", "", ""]
        return "\n".join([*lines, "end of trees", ""])


def _output(tree: Tree, X: np.ndarray, plain: bool) -> np.ndarray:
    """Each row's leaf value (LightGBM's ``Tree::Predict`` of a numerical tree)."""
    if tree.num_leaves == 1:
        return np.full(len(X), tree["leaf_value"][0])
    out = np.empty(len(X))
    rows, node = np.arange(len(X)), np.zeros(len(X), dtype=np.int64)
    while len(rows):  # each step moves every row one level down: at most num_leaves - 1 steps
        x = X[rows, tree["split_feature"][node]]
        if plain:
            left = x <= tree["threshold"][node]
        else:
            kind = tree["decision_type"][node]
            missing = (kind >> MISSING_SHIFT) & 3
            x = np.where(np.isnan(x) & (missing != MISSING_NAN), 0.0, x)
            is_missing = ((missing == MISSING_ZERO) & (np.abs(x) <= K_ZERO)) | ((missing == MISSING_NAN) & np.isnan(x))
            left = np.where(is_missing, (kind & DEFAULT_LEFT) != 0, x <= tree["threshold"][node])
        child = np.where(left, tree["left_child"][node], tree["right_child"][node])
        leaf = child < 0
        out[rows[leaf]] = tree["leaf_value"][~child[leaf]]
        rows, node = rows[~leaf], child[~leaf]
    return out


def _format(values: np.ndarray, ints: bool) -> str:
    return " ".join(str(int(v)) if ints else repr(float(v)) for v in values)


def parse_forest(text: str, n_features: int) -> Forest:
    """The checked trees of a LightGBM model text for ``n_features`` features (a SentretError
    saying what is wrong otherwise)."""
    if len(text) > MAX_TEXT:
        raise SentretError(f"its model text is over {MAX_TEXT // 2**20} MiB")
    if not text.isascii():
        raise SentretError("its model text holds characters LightGBM never writes (not ASCII)")
    head, sep, _ = text.partition("\nTree=")
    if not sep:
        raise SentretError("its model text has no trees")
    if not head.startswith("tree\n"):
        raise SentretError("its model text does not start as LightGBM's does ('tree')")
    header = _key_values(head.splitlines()[1:], "the header")
    _check_header(header, n_features)
    end = text.find("\nend of trees", len(head))
    if end < 0:
        raise SentretError("its model text is incomplete (no 'end of trees')")
    blocks = re.split(r"(?m)^(?=Tree=)", text[len(head) + 1 : end + 1])[1:]
    if len(blocks) > MAX_TREES:
        raise SentretError(f"it has {len(blocks):,} trees; at most {MAX_TREES:,} are allowed")
    if "tree_sizes" in header:  # LightGBM cuts the text into trees by these sizes: they must be exact
        stated = header["tree_sizes"].split()
        if len(stated) != len(blocks):
            raise SentretError(f"its header states {len(stated):,} trees but the text holds {len(blocks):,}")
        if stated != [str(len(block)) for block in blocks]:
            raise SentretError("its header's tree_sizes do not match the trees' lengths")
    return Forest(tuple(_tree(block, i, n_features) for i, block in enumerate(blocks)), n_features)


def _key_values(lines: list[str], where: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep and line.strip() != "average_output":
            raise SentretError(f"{where} of its model text has a line that is not key=value: {line[:40]!r}")
        if key in found:
            raise SentretError(f"{where} of its model text gives {key!r} twice")
        found[key] = value.strip()
    return found


def _check_header(header: dict[str, str], n_features: int) -> None:
    expected = {"num_class": "1", "num_tree_per_iteration": "1", "max_feature_idx": str(n_features - 1)}
    for key, value in expected.items():
        if header.get(key) != value:
            raise SentretError(f"its model text has {key}={header.get(key)!r}; a ranker of {n_features} "
                               f"features has {key}={value}")
    if header.get("objective", "").split(" ")[0] != "lambdarank" or "average_output" in header:
        raise SentretError(f"its model text is not a LambdaMART ranker (objective {header.get('objective')!r})")


def _tree(block: str, i: int, n_features: int) -> Tree:
    lines = block.rstrip("\n").splitlines()
    where = f"tree {i}"
    if not lines or lines[0] != f"Tree={i}":
        raise SentretError(f"{where} of its model text does not start with 'Tree={i}'")
    fields = _key_values(lines[1:], where)
    leaves = _int(fields.get("num_leaves", ""), f"{where}: num_leaves")
    if not 1 <= leaves <= MAX_LEAVES:
        raise SentretError(f"{where} has num_leaves={leaves}; allowed is 1 to {MAX_LEAVES:,}")
    if fields.get("num_cat", "0") != "0" or any(fields.get(k) for k in _CATEGORICAL):
        raise SentretError(f"{where} has categorical splits, which no ranker of sentret makes")
    if fields.get("is_linear", "0") != "0":
        raise SentretError(f"{where} is a linear tree, which no ranker of sentret makes")
    shrinkage = float(_floats(fields.get("shrinkage", "1"), f"{where}: shrinkage", 1)[0])
    if leaves == 1:  # a constant: LightGBM writes its other arrays empty
        if any(fields.get(key) for key in (*_INTERNAL, "leaf_weight")):
            raise SentretError(f"{where} has one leaf but splits")
        count = _ints(fields["leaf_count"], f"{where}: leaf_count", 1) if fields.get("leaf_count") else np.zeros(1)
        value = _floats(fields.get("leaf_value", ""), f"{where}: leaf_value", 1)
        return Tree(1, {"leaf_value": value, "leaf_count": count.astype(np.int64)}, shrinkage)
    arrays = {}
    for key in (*_INTERNAL, *_LEAF):
        if key not in fields:
            raise SentretError(f"{where} has no {key}")
        size = leaves if key in _LEAF else leaves - 1
        name = f"{where}: {key}"
        arrays[key] = _ints(fields[key], name, size) if key in _INTS else _floats(fields[key], name, size)
    tree = Tree(leaves, arrays, shrinkage)
    _check_nodes(tree, where, n_features)
    return tree


def _check_nodes(tree: Tree, where: str, n_features: int) -> None:
    internal = tree.num_leaves - 1
    feature, kinds = tree["split_feature"], tree["decision_type"]
    if feature.min() < 0 or feature.max() >= n_features:
        raise SentretError(f"{where} splits on a feature outside 0..{n_features - 1}")
    if not set(kinds.tolist()) <= DECISION_TYPES:
        raise SentretError(f"{where} has an unknown decision_type (allowed: {sorted(DECISION_TYPES)})")
    if np.abs(tree["split_gain"]).max() > FLOAT32_MAX:
        raise SentretError(f"{where} has a split_gain out of range")
    if min(tree["internal_count"].min(), tree["leaf_count"].min()) < 0:
        raise SentretError(f"{where} has a negative count")
    children = np.concatenate([tree["left_child"], tree["right_child"]])
    bad = (children >= internal) | (children < -tree.num_leaves) | (children == 0)
    if bad.any():
        raise SentretError(f"{where} has a child index outside the tree (or pointing back at the root)")
    # a tree: every node but the root is some node's child exactly once, and all are reached from the root
    seen = np.bincount(np.where(children >= 0, children, internal - children - 1), minlength=2 * internal + 1)
    if seen[1:].max() != 1 or seen[1:].min() != 1:
        raise SentretError(f"{where} is not a tree: a node is reached twice or never")
    reached, frontier = 1, [0]
    while frontier:  # each non-root node has one parent, so this walks a tree and ends
        frontier = [c for n in frontier for c in (tree["left_child"][n], tree["right_child"][n]) if c >= 0]
        reached += len(frontier)
    if frontier or reached != internal:
        raise SentretError(f"{where} is not a tree: it has a cycle")


def _int(value: str, name: str) -> int:
    if not _INT.fullmatch(value) or not -(2**31) <= int(value) < 2**31:
        raise SentretError(f"{name} is not a 32-bit integer: {value[:40]!r}")
    return int(value)


def _ints(value: str, name: str, size: int) -> np.ndarray:
    words = value.split()
    if len(words) != size:
        raise SentretError(f"{name} has {len(words)} values; num_leaves implies {size}")
    return np.array([_int(w, name) for w in words], dtype=np.int64)


def _floats(value: str, name: str, size: int) -> np.ndarray:
    words = value.split()
    if len(words) != size:
        raise SentretError(f"{name} has {len(words)} values; num_leaves implies {size}")
    if not all(_FLOAT.fullmatch(w) for w in words):
        raise SentretError(f"{name} holds a value that is not a number")
    numbers = np.array([float(w) for w in words], dtype=np.float64)
    if not np.isfinite(numbers).all():
        raise SentretError(f"{name} holds a value that is not finite (NaN or infinite)")
    if np.abs(numbers).max(initial=0.0) > MAX_VALUE:
        raise SentretError(f"{name} holds a value beyond ±{MAX_VALUE:g}")
    return numbers
