"""Word classes learned from a corpus's own bigram statistics (Momtazi & Klakow, IP&M 2015, §3).

    from sentret_core.models.training.classes import train_classes
    cmap = train_classes(index, classes=100)                  # artefact "classes": the index's own bigrams
    cmap = train_classes(index, name="classes-big", sources=["data/indexes/demo"])  # plus other corpora

**Statistics.** ``f(w, w')`` = how often term w' directly follows term w inside a sentence of the
index's term sequences (``seq_terms``; sentences never join). The index keeps terms only (docs/spec.md:
stop words and punctuation removed), so these are bigrams of *content words*: "met on
Saturday morning" gives ``met→saturday`` and ``saturday→morning``. Momtazi & Klakow used bigrams of the raw
text (its best notion of co-occurrence, §4 and Table 4); ours skip the stop words in between.
With ``sources``, the bigrams of other indexes are added, their terms matched to the index's by
string; words that only the sources know take part in training (as context and as members of
classes) but only the index's own terms are kept in the map.

**Algorithm.** The exchange algorithm (Kneser & Ney 1993; Martin, Liermann & Ney 1998), which
maximises the same class-bigram log-likelihood as Brown clustering (Momtazi & Klakow eq. 7, one class
map used on both sides of a bigram):

    F = Σ_{g,h} N(g,h) log N(g,h) − Σ_g N(g,·) log N(g,·) − Σ_h N(·,h) log N(·,h)   (+ a constant)

1. *Initialisation* (the incremental variant Momtazi & Klakow describe after Algorithm 1): the K most
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

**Artefacts.** :func:`train_classes` writes the map as a named artefact of the index
(``INDEX/artefacts/<name>/``, :mod:`sentret_core.index.artefacts`) with its parameters, sources
and training statistics; the class LM reads it by name (``lm-class.v1`` parameter ``classes``,
default ``"classes"``) and never trains. ``sentret train classes INDEX`` does the same from the
shell. :func:`fit_classes` trains and returns a map without writing anything.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.models.training.exchange import RARE_CHOICES, Progress, bigrams, exchange
from sentret_core.models.training.sources import describe_sources, source_list

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

ALGORITHM = "exchange.v1"
KIND = "classes"
DEFAULT_NAME = "classes"


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


def fit_classes(
    index: Index,
    *,
    sources: Sequence[Index | str | os.PathLike[str]] = (),
    classes: int = 100,
    min_count: int = 3,
    iterations: int = 20,
    seed: int = 0,
    rare: str = "assign",
    progress: Progress | None = None,
) -> ClassMap:
    """Train a class map of ``index`` (plus the bigrams of ``sources``) and return it; writes nothing.
    ``progress(share, what)`` follows the exchange passes."""
    _check(classes, min_count, iterations, seed, rare)
    extra = source_list(sources)
    params = {"classes": int(classes), "min_count": int(min_count), "iterations": int(iterations),
              "seed": int(seed), "rare": rare}
    described = describe_sources(extra)
    clock = time.perf_counter()
    stats_in = bigrams(index, extra)
    counted = time.perf_counter() - clock
    result = exchange(stats_in.matrix, stats_in.counts, int(classes), min_count=int(min_count),
                      iterations=int(iterations), seed=int(seed), rare=rare, progress=progress)
    stats = {
        "seconds": round(time.perf_counter() - clock, 3),
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
    own = result.classes[: index.V].astype(np.int32)
    key = artefacts.content_hash({"classes": own})  # the hash train_classes' artefact will carry
    return ClassMap(key, own, result.n_classes, params, tuple(described), stats)


def train_classes(
    index: Index,
    *,
    name: str = DEFAULT_NAME,
    sources: Sequence[Index | str | os.PathLike[str]] = (),
    classes: int = 100,
    min_count: int = 3,
    iterations: int = 20,
    seed: int = 0,
    rare: str = "assign",
    progress: Progress | None = None,
) -> ClassMap:
    """Train a class map and write it as artefact ``name`` of ``index`` (replacing one of that name)."""
    artefacts.check_name(name)
    cmap = fit_classes(index, sources=sources, classes=classes, min_count=min_count, iterations=iterations,
                       seed=seed, rare=rare, progress=progress)
    meta = {"algorithm": ALGORITHM, "params": cmap.params, "sources": list(cmap.sources), "stats": cmap.stats,
            "n_classes": cmap.n_classes}
    return _as_map(artefacts.write(index, KIND, name, {"classes": cmap.classes}, meta))


def load_classes(index: Index, name: str = DEFAULT_NAME) -> ClassMap:
    """The class map written as artefact ``name`` (a clear error if there is none: nothing trains here)."""
    found = artefacts.read(index, KIND, name)
    return index.cache.get(f"models.classes/{found.sha256}", lambda: _as_map(found))


def _as_map(found: artefacts.Artefact) -> ClassMap:
    meta = found.meta
    return ClassMap(found.sha256, found.arrays["classes"].astype(np.int32), int(meta["n_classes"]),
                    dict(meta["params"]), tuple(meta["sources"]), dict(meta["stats"]))
