"""Learned rankers as shared artefacts (``data/rankers/<name>/``, :mod:`sentret_core.index.artefacts`).

A ranker's record says what it re-ranks (the first stage and its depth), which scorers its features
read, the learner and its settings, the training data's fingerprint, its metrics on development
topics and its feature importance. Loaded rankers are memoised per content hash.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.models.ltr.features import feature_names
from sentret_core.models.ltr.learners import LEARNERS, Ranker
from sentret_core.models.registry import get_model

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

KIND = "ranker"
MAX_DEPTH = 10_000  # sentences a ranker re-ranks per query at most
_LOADED: OrderedDict[str, Learned] = OrderedDict()
_KEEP = 8


@dataclass(frozen=True)
class Learned:
    """A stored ranker and what it re-ranks."""

    ranker: Ranker
    first_stage: str
    depth: int
    scorers: tuple[str, ...]
    meta: dict[str, Any]
    reference: str


def save(name: str, ranker: Ranker, *, first_stage: str, depth: int, scorers: Sequence[str],
         meta: dict[str, Any]) -> Learned:  # fmt: skip
    """Store ``ranker`` as ``name`` (replacing one of that name whole)."""
    if tuple(feature_names(scorers)) != ranker.features:
        raise SentretError("the ranker's features do not match its scorers")
    record = dict(meta, learner=ranker.learner, features=list(ranker.features), first_stage=first_stage,
                  depth=depth, scorers=list(scorers))  # fmt: skip
    _as_learned(artefacts.Artefact(name, KIND, "", ranker.arrays, record))  # refused before anything is written
    found = artefacts.write(None, KIND, name, ranker.arrays, record)
    return _as_learned(found)


def load(index: Index, name: str) -> Learned:
    """The stored ranker ``name``; a missing or damaged one is a SentretError saying what to do."""
    found = artefacts.read(index, KIND, name)
    learned = _LOADED.get(found.sha256)
    if learned is None:
        learned = _as_learned(found)
        _LOADED[found.sha256] = learned
        while len(_LOADED) > _KEEP:
            _LOADED.popitem(last=False)
    return learned


def _as_learned(found: artefacts.Artefact) -> Learned:
    meta = found.meta
    try:
        learner, features = str(meta["learner"]), tuple(str(f) for f in meta["features"])
        scorers = tuple(str(s) for s in meta["scorers"])
        first_stage, depth = str(meta["first_stage"]), int(meta["depth"])
    except (KeyError, TypeError, ValueError, OverflowError):
        raise SentretError(f"ranker {found.name!r} has an incomplete record; learn it again") from None
    for model in (first_stage, *scorers):  # a ranker reads other scorers, never a ranker (no loop)
        try:
            family = get_model(model).family
        except SentretError:
            raise SentretError(f"ranker {found.name!r} reads {model[:60]!r}, which is not a model here") from None
        if family == "ltr":
            raise SentretError(f"ranker {found.name!r} reads {model!r}, another learned ranker; learn it again")
    if len(set(scorers)) != len(scorers):
        raise SentretError(f"ranker {found.name!r} names a scorer twice; learn it again")
    if not 1 <= depth <= MAX_DEPTH:
        raise SentretError(f"ranker {found.name!r} re-ranks {depth} sentences; allowed is 1 to {MAX_DEPTH:,}")
    expected = ("model",) if learner == "lambdamart" else ("mean", "scale", "coef", "intercept")
    if learner not in LEARNERS or any(k not in found.arrays for k in expected) or features != feature_names(scorers):
        raise SentretError(f"ranker {found.name!r} is not one this sentret can read; learn it again")
    try:
        ranker = Ranker(learner, features, found.arrays).check()
    except SentretError as err:
        raise SentretError(f"ranker {found.name!r} cannot be used: {err}; learn it again") from None
    return Learned(ranker, first_stage, depth, scorers, meta, found.reference)
