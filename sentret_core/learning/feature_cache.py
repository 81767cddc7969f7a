"""Features computed once per (index, topics, feature set): a second learner on the same data — the linear
model after LambdaMART, another seed, ``--choose`` — reads them back instead of scoring every topic again.

The key is a sha256 of everything the rows depend on: the index (its checksums and those of its trained
artefacts, which the class, trigger and transformer features read), every topic (id, terms, grades,
candidates, closed or not, entity), the scorers, first stage, depth, semantic stage and other documents,
and the sentret version (which fixes the feature set and the models' defaults). One ``.npz`` per key in
``$SENTRET_FEATURE_CACHE`` (default ``data/cache/features``; ``off`` turns the cache off), written to a
temporary file and renamed; a file that cannot be read back is computed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from sentret_core._version import __version__
from sentret_core.index import artefacts
from sentret_core.index.reader import Index
from sentret_core.learning.examples import Examples, LearningTopic, build_examples

CACHE_ENV = "SENTRET_FEATURE_CACHE"
DEFAULT_CACHE = Path("data") / "cache" / "features"
OFF = "off"
_ARRAYS = ("X", "y", "groups", "relevant", "outside", "outside_relevant", "taught_only")
log = logging.getLogger(__name__)


def cache_root() -> Path | None:
    given = os.environ.get(CACHE_ENV, "")
    return None if given.strip().lower() == OFF else Path(given or DEFAULT_CACHE)


def cached_examples(index: Index, topics: Sequence[LearningTopic], scorers: Sequence[str], first_stage: str,
                    depth: int, progress: Callable[[float], None] | None = None, semantic_stage: str | None = None,
                    other_documents: int = 0) -> tuple[Examples, bool]:
    """:func:`~sentret_core.learning.examples.build_examples`'s result, and whether it was read from the cache."""
    root = cache_root()
    path = None if root is None else root / (
        examples_key(index, topics, scorers, first_stage, depth, semantic_stage, other_documents) + ".npz")
    if path is not None and (found := _read(path)) is not None:
        return found, True
    made = build_examples(index, topics, scorers, first_stage, depth, progress, semantic_stage, other_documents)
    if path is not None:
        _write(path, made)
    return made, False


def examples_key(index: Index, topics: Sequence[LearningTopic], scorers: Sequence[str], first_stage: str,
                 depth: int, semantic_stage: str | None, other_documents: int) -> str:
    digest = hashlib.sha256()
    trained = sorted(str(record.get("sha256", "")) + str(record.get("name", ""))
                     for record in artefacts.available(index.path))
    digest.update(json.dumps([__version__, artefacts.fingerprint(index), trained, list(scorers), first_stage, depth,
                              semantic_stage, other_documents]).encode())
    for topic in topics:
        grades = sorted((int(s), int(g)) for s, g in topic.grades.items())
        digest.update(json.dumps([topic.id, list(topic.terms), grades, topic.outside_ties, topic.entity]).encode())
        candidates = np.array([] if topic.candidates is None else topic.candidates, dtype=np.int64)
        digest.update(b"none" if topic.candidates is None else candidates.tobytes())
    return digest.hexdigest()[:32]


def _read(path: Path) -> Examples | None:
    try:
        with np.load(path, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in _ARRAYS}
            features = tuple(str(f) for f in stored["features"])
            topics = tuple(str(t) for t in stored["topics"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError) as err:  # damaged or of another sentret: computed again
        log.info("the cached features %s cannot be read (%s); computing them again", path, err)
        return None
    return Examples(features, arrays["X"], arrays["y"], arrays["groups"], topics, arrays["relevant"],
                    arrays["outside"], arrays["outside_relevant"], arrays["taught_only"])


def _write(path: Path, made: Examples) -> None:
    """Store ``made``; a cache that cannot be written is said and skipped, never an error."""
    taught = made.taught_only if made.taught_only is not None else np.zeros(len(made.y), bool)
    arrays = {"X": made.X, "y": made.y, "groups": made.groups, "relevant": made.relevant, "outside": made.outside,
              "outside_relevant": made.outside_relevant, "taught_only": taught,
              "features": np.array(made.features, dtype=str), "topics": np.array(made.topics, dtype=str)}
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".npz")
        with os.fdopen(handle, "wb") as out:
            np.savez(out, **arrays)  # type: ignore[arg-type]  # numpy's stubs read **arrays as allow_pickle
        os.replace(tmp, path)
    except OSError as err:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        log.warning("the features could not be cached in %s (%s); the next learner computes them again",
                    path.parent, err.strerror or err)
