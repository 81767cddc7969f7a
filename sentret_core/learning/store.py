"""Learned rankers as shared artefacts (``data/rankers/<name>/``, :mod:`sentret_core.index.artefacts`).

A ranker's record says what it re-ranks (the first stage, the semantic stage whose top sentences join
C — absent in rankers learned before it existed — and their depth), which feature set it was learned
with, which scorers its features
read, the learner and its settings, the training data's fingerprint, its metrics on development
topics and its feature importance. Loaded rankers are memoised per record (which holds the arrays'
content hash: two rankers of equal arrays may re-rank different first stages).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.learning.features import feature_set
from sentret_core.learning.learners import LEARNERS, Ranker
from sentret_core.models.core.registry import get_model

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
    semantic_stage: str | None = None  # its top-``depth`` joins the first stage's in C


def save(name: str, ranker: Ranker, *, first_stage: str, depth: int, scorers: Sequence[str],
         meta: dict[str, Any], semantic_stage: str | None = None) -> Learned:
    """Store ``ranker`` as ``name`` (replacing one of that name whole)."""
    version = feature_set(ranker.features, scorers)
    if version is None:
        raise SentretError("the ranker's features do not match its scorers")
    if semantic_stage is not None and semantic_stage not in scorers:
        raise SentretError(f"the semantic stage {semantic_stage!r} is not among the ranker's scorers")
    record = dict(meta, learner=ranker.learner, features=list(ranker.features), first_stage=first_stage,
                  depth=depth, scorers=list(scorers), feature_set=version, semantic_stage=semantic_stage)
    _as_learned(artefacts.Artefact(name, KIND, "", ranker.arrays, record))  # refused before anything is written
    found = artefacts.write(None, KIND, name, ranker.arrays, record)
    return _as_learned(found)


def load(index: Index, name: str) -> Learned:
    """The stored ranker ``name``; a missing or damaged one is a SentretError saying what to do."""
    found = artefacts.read(index, KIND, name)
    key = artefacts.record_checksum(found.meta)  # the arrays' hash and what the record says of them
    learned = _LOADED.get(key)
    if learned is None:
        learned = _as_learned(found)
        _LOADED[key] = learned
        while len(_LOADED) > _KEEP:
            _LOADED.popitem(last=False)
    return learned


def _as_learned(found: artefacts.Artefact) -> Learned:
    meta = found.meta
    try:
        learner, features = str(meta["learner"]), tuple(str(f) for f in meta["features"])
        scorers = tuple(str(s) for s in meta["scorers"])
        first_stage, depth = str(meta["first_stage"]), int(meta["depth"])
        semantic = meta.get("semantic_stage")
        semantic_stage = None if semantic is None else str(semantic)
    except (KeyError, TypeError, ValueError, OverflowError):
        raise SentretError(f"ranker {found.name!r} has an incomplete record; learn it again") from None
    if semantic_stage is not None and semantic_stage not in scorers:
        raise SentretError(f"ranker {found.name!r} names a semantic stage it has no features of; learn it again")
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
    if learner not in LEARNERS or any(k not in found.arrays for k in expected):
        raise SentretError(f"ranker {found.name!r} is not one this sentret can read; learn it again")
    if feature_set(features, scorers) is None:
        raise SentretError(f"ranker {found.name!r} was learned with an older feature set (or its features do not "
                           "match its scorers); learn it again")
    try:
        ranker = Ranker(learner, features, found.arrays).check()
    except SentretError as err:
        raise SentretError(f"ranker {found.name!r} cannot be used: {err}; learn it again") from None
    return Learned(ranker, first_stage, depth, scorers, meta, found.reference, semantic_stage)
