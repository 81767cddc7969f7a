"""Word classes learned from a corpus's own bigram statistics (seed 001 §3; SPEC "Class-based LM").

    from sentret_core.models.training.classes import train_classes
    cmap = train_classes(index, classes=100)                # the index's own bigrams
    cmap = train_classes(index, sources=["data/indexes/demo"])  # plus other corpora (seed 001: AQUAINT)

**Statistics.** ``f(w, w')`` = how often term w' directly follows term w inside a sentence of the
index's term sequences (``seq_terms``; sentences never join). The index keeps terms only (SPEC
"Notation": stop words and punctuation removed), so these are bigrams of *content words*: "met on
Saturday morning" gives ``met→saturday`` and ``saturday→morning``. Seed 001 used bigrams of the raw
text (its best notion of co-occurrence, §4 and Table 4); ours skip the stop words in between.
With ``sources``, the bigrams of other indexes are added, their terms matched to the index's by
string; words that only the sources know take part in training (as context and as members of
classes) but only the index's own terms are kept in the map.

**Algorithm.** The exchange algorithm (Kneser & Ney 1993; Martin, Liermann & Ney 1998), which
maximises the same class-bigram log-likelihood as Brown clustering (seed 001 eq. 7, one class
map used on both sides of a bigram):

    F = Σ_{g,h} N(g,h) log N(g,h) − Σ_g N(g,·) log N(g,·) − Σ_h N(·,h) log N(·,h)   (+ a constant)

1. *Initialisation* (the incremental variant seed 001 describes after Algorithm 1): the K most
   frequent trainable words each open a class; every other trainable word, in order of
   frequency, joins the class that increases F most.
2. *Exchange passes*: every trainable word (in a seeded random order) is taken out of its class
   and put into the class that increases F most (it stays unless another class is strictly
   better; a class may empty, and then refill). Passes stop after ``iterations`` or when a pass
   moves no word.
3. *Rare words* (seen fewer than ``min_count`` times) take part in 1-2 only as context, in one
   fixed class of their own. Afterwards, with ``rare="assign"``, each joins its best class given
   the trained map (as in step 2, each judged against the same final map, so the order does not
   matter); with ``rare="shared"`` they keep that one shared class. A word with no bigram at all
   (only ever alone in a sentence) stays in the shared class either way.

The move of one word is evaluated for all K classes at once: only the classes its successors and
predecessors fall into change a row or column of N(g,h), so the gain is a few K×(those classes)
array operations (``_Exchange.gains``).

**Caching.** A trained map is kept in ``index.cache`` and written beside the index, atomically,
as ``cache-classes-<key>.npz`` with its parameters, sources and training statistics in
``cache-classes-<key>.json`` (``sentret verify`` ignores files named ``cache*``; the index itself
is never modified). ``<key>`` hashes the parameters, the algorithm version and the fingerprints
of the index and of every source. :func:`train_classes` also records its map as the index's
*trained* map (``cache-classes.json``), which the class LM uses with ``classes_from="trained"``.
A folder that cannot be written only loses the disk copy.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.models.training.cache_files import (
    cache_key,
    describe_sources,
    fingerprint,
    get_current,
    load_cache,
    save_cache,
    set_current,
    source_list,
)
from sentret_core.models.training.exchange import RARE_CHOICES, bigrams, exchange

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

ALGORITHM = "exchange.v1"
_TRAIN_LOCK = threading.RLock()


@dataclass(frozen=True)
class ClassMap:
    """The class C(t) of every term of an index, with how it was trained."""

    key: str
    classes: np.ndarray  # (V,) int32
    n_classes: int
    params: dict[str, Any]
    sources: tuple[dict[str, str], ...]
    stats: dict[str, Any]

    def members(self, index: Index, c: int, top: int = 8) -> list[str]:
        """The ``top`` most frequent terms of class ``c`` in the index."""
        ids = np.flatnonzero(self.classes == c)
        cf = np.asarray(index.cf)[ids]
        best = ids[np.lexsort((ids, -cf))][:top]
        vocab = index.vocab
        return [vocab[int(t)] for t in best]


def _check(classes: int, min_count: int, iterations: int, seed: int, rare: str) -> None:
    if not 1 <= classes <= 1_000_000:
        raise SentretError(f"classes must be from 1 to 1,000,000 (got {classes})")
    if min_count < 1 or iterations < 0 or seed < 0:
        raise SentretError(
            f"min_count ≥ 1, iterations ≥ 0 and seed ≥ 0 are required (got {min_count}, {iterations}, {seed})"
        )
    if rare not in RARE_CHOICES:
        raise SentretError(f"rare must be one of {', '.join(RARE_CHOICES)} (got {rare!r})")


def class_map(
    index: Index,
    *,
    classes: int = 100,
    min_count: int = 3,
    iterations: int = 10,
    seed: int = 0,
    rare: str = "assign",
    sources: Sequence[Index | str | os.PathLike[str]] = (),
    cache: bool = True,
) -> ClassMap:
    """The class map of ``index`` for these parameters: from memory, from disk, or trained now.

    ``cache=False`` trains now and neither reads nor writes any cache (for timing and tests).
    """
    _check(classes, min_count, iterations, seed, rare)
    extra = source_list(sources)
    params = {"classes": int(classes), "min_count": int(min_count), "iterations": int(iterations),
              "seed": int(seed), "rare": rare}  # fmt: skip
    described = describe_sources(extra)
    key = cache_key({"algorithm": ALGORITHM, "params": params, "index": fingerprint(index),
                     "sources": [d["fingerprint"] for d in described]})  # fmt: skip
    if not cache:
        return _train(index, extra, params, described, key, save=False)
    memo = f"models.classes/{key}"
    found: ClassMap | None = index.cache.get(memo)
    if found is not None:
        return found
    with _TRAIN_LOCK:
        found = index.cache.get(memo)
        if found is not None:
            return found
        loaded = load_cache(index, "classes", key)
        if loaded is not None and len(loaded[0].get("classes", ())) == index.V:
            arrays, meta = loaded
            found = ClassMap(key, arrays["classes"].astype(np.int32), int(meta["n_classes"]),
                             dict(meta["params"]), tuple(meta["sources"]), dict(meta["stats"]))  # fmt: skip
        else:
            found = _train(index, extra, params, described, key, save=True)
        index.cache[memo] = found
    return found


def _train(
    index: Index,
    extra: list[Index],
    params: dict[str, Any],
    described: list[dict[str, str]],
    key: str,
    save: bool,
) -> ClassMap:
    clock = time.perf_counter()
    stats_in = bigrams(index, extra)
    counted = time.perf_counter() - clock
    result = exchange(
        stats_in.matrix,
        stats_in.counts,
        params["classes"],
        min_count=params["min_count"],
        iterations=params["iterations"],
        seed=params["seed"],
        rare=params["rare"],
    )
    seconds = time.perf_counter() - clock
    own = result.classes[: index.V]
    stats = {
        "seconds": round(seconds, 3),
        "bigram_seconds": round(counted, 3),
        "words": int(stats_in.matrix.shape[0]),
        "trained_words": result.trained_words,
        "bigram_tokens": float(stats_in.matrix.sum()),
        "bigram_types": int(stats_in.matrix.nnz),
        "passes": result.passes,
        "moves": result.moves,
        "objective": result.objective,
        "shared_class": result.shared,
        "nonempty_classes": len(np.unique(result.classes)),
    }
    cmap = ClassMap(key, own.astype(np.int32), result.n_classes, params, tuple(described), stats)
    if save:
        meta = {"algorithm": ALGORITHM, "params": params, "sources": described, "stats": stats,
                "n_classes": result.n_classes, "index": str(index.path), "created": time.time()}  # fmt: skip
        save_cache(index, "classes", key, {"classes": cmap.classes}, meta)
    return cmap


def train_classes(
    index: Index,
    *,
    sources: Sequence[Index | str | os.PathLike[str]] = (),
    classes: int = 100,
    min_count: int = 3,
    iterations: int = 10,
    seed: int = 0,
    rare: str = "assign",
) -> ClassMap:
    """Train (or load) a class map and make it the index's *trained* map (``classes_from="trained"``)."""
    cmap = class_map(index, classes=classes, min_count=min_count, iterations=iterations, seed=seed,
                     rare=rare, sources=sources)  # fmt: skip
    set_current(index, "classes", cmap.key)
    return cmap


def trained_class_map(index: Index) -> ClassMap | None:
    """The map :func:`train_classes` last recorded for the index, or None."""
    key = get_current(index, "classes")
    if key is None:
        return None
    memo = f"models.classes/{key}"
    found: ClassMap | None = index.cache.get(memo)
    if found is not None:
        return found
    loaded = load_cache(index, "classes", key)
    if loaded is None or len(loaded[0].get("classes", ())) != index.V:
        return None
    arrays, meta = loaded
    found = ClassMap(key, arrays["classes"].astype(np.int32), int(meta["n_classes"]),
                     dict(meta["params"]), tuple(meta["sources"]), dict(meta["stats"]))  # fmt: skip
    index.cache[memo] = found
    return found
