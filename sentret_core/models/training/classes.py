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

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

ALGORITHM = "exchange.v1"
RARE_CHOICES = ("assign", "shared")
_TRAIN_LOCK = threading.RLock()
_EPS = 1e-7


def xlogx(x: Any) -> Any:
    """x·log x with 0·log 0 = 0."""
    return xlogy(x, x)


# --- cache files beside the index (shared with the trigger tables) --------------------------------


def fingerprint(index: Index) -> str:
    """A short hash of what the statistics are computed from (the index's own checksums)."""
    files = index.manifest.get("files", {})
    names = ("seq_terms.npy", "seq_indptr.npy", "terms.parquet", "X.data.npy", "X.indices.npy",
             "mentions.parquet", "entities.parquet", "sent_pos.npy")  # fmt: skip
    text = "|".join(f"{n}={files.get(n, '')}" for n in names) + f"|N={index.N}|V={index.V}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cache_key(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _write_atomic(folder: Path, name: str, write: Any) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f"cache-tmp-{name}-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the index's other files are readable
        os.replace(tmp, folder / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save_cache(
    index: Index, kind: str, key: str, arrays: dict[str, np.ndarray], meta: dict[str, Any]
) -> bool:
    """Write ``cache-<kind>-<key>.npz`` then its ``.json`` manifest (the manifest marks it whole)."""
    folder = Path(index.path)
    try:
        _write_atomic(folder, f"cache-{kind}-{key}.npz", lambda h: np.savez(h, **arrays))  # type: ignore[arg-type]
        text = json.dumps(dict(meta, key=key, kind=kind), indent=2, sort_keys=True, default=str)
        _write_atomic(folder, f"cache-{kind}-{key}.json", lambda h: h.write(text.encode()))
    except OSError:
        return False
    return True


def load_cache(index: Index, kind: str, key: str) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """The arrays and manifest of a cache entry written by :func:`save_cache`, or None."""
    folder = Path(index.path)
    try:
        meta = json.loads((folder / f"cache-{kind}-{key}.json").read_text())
        if meta.get("key") != key or meta.get("kind") != kind:
            return None
        with np.load(folder / f"cache-{kind}-{key}.npz", allow_pickle=False) as data:
            arrays = {name: np.asarray(data[name]) for name in data.files}
    except (OSError, ValueError, KeyError):
        return None
    return arrays, meta


def set_current(index: Index, kind: str, key: str) -> None:
    """Record ``key`` as the index's current ``kind`` (``cache-<kind>.json``)."""
    index.cache[f"models.{kind}.current"] = key
    text = json.dumps({"current": key}).encode()
    with contextlib.suppress(OSError):
        _write_atomic(Path(index.path), f"cache-{kind}.json", lambda h: h.write(text))


def get_current(index: Index, kind: str) -> str | None:
    """The key :func:`set_current` recorded for the index (read from disk once per loaded index)."""
    memo = f"models.{kind}.current"
    key = index.cache.get(memo)
    if key is None:
        try:
            key = json.loads((Path(index.path) / f"cache-{kind}.json").read_text()).get("current")
        except (OSError, ValueError, AttributeError):
            key = None
        if key:
            index.cache[memo] = str(key)
    return str(key) if key else None


def as_index(source: Index | str | os.PathLike[str]) -> Index:
    from sentret_core.index.reader import Index

    return source if isinstance(source, Index) else Index.load(Path(source))


def source_list(sources: Sequence[Index | str | os.PathLike[str]]) -> list[Index]:
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    return [as_index(s) for s in sources]


def describe_sources(sources: Sequence[Index]) -> list[dict[str, str]]:
    return [{"path": str(Path(s.path).resolve()), "fingerprint": fingerprint(s)} for s in sources]


def vocabulary_map(index: Index, sources: Sequence[Index]) -> tuple[list[np.ndarray], int]:
    """Term-id maps of the index (identity) and of every source into one union vocabulary.

    The index's own terms keep their ids 0..V-1; terms only a source knows follow.
    """
    lookup = dict(index.term_index)
    maps = [np.arange(index.V, dtype=np.int64)]
    for source in sources:
        ids = np.empty(source.V, dtype=np.int64)
        for i, term in enumerate(source.vocab):
            tid = lookup.get(term)
            if tid is None:
                tid = len(lookup)
                lookup[term] = tid
            ids[i] = tid
        maps.append(ids)
    return maps, len(lookup)


# --- bigram statistics ------------------------------------------------------------------------


@dataclass(frozen=True)
class Bigrams:
    """f(w,w') over a vocabulary of W words whose first ``own`` are the index's terms."""

    matrix: sp.csr_matrix  # W×W: [w, w'] = times w' directly follows w in a sentence
    counts: np.ndarray  # (W,) occurrences of each word
    own: int


def sequence_bigrams(indptr: np.ndarray, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(left, right) of every pair of adjacent terms inside one sentence."""
    n = len(terms)
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    inner = np.ones(n - 1, dtype=bool)
    last = np.asarray(indptr[1:], dtype=np.int64) - 1  # last position of every sentence
    last = last[(last >= 0) & (last < n - 1)]
    inner[last] = False
    return terms[:-1][inner], terms[1:][inner]


def bigrams(index: Index, sources: Sequence[Index] = ()) -> Bigrams:
    maps, W = vocabulary_map(index, sources)
    lefts, rights, counts = [], [], np.zeros(W, dtype=np.float64)
    for ix, mapping in zip([index, *sources], maps):
        terms = mapping[np.asarray(ix.seq_terms, dtype=np.int64)]
        left, right = sequence_bigrams(np.asarray(ix.seq_indptr), terms)
        lefts.append(left)
        rights.append(right)
        counts += np.bincount(terms, minlength=W)
    left, right = np.concatenate(lefts), np.concatenate(rights)
    matrix = sp.csr_matrix((np.ones(len(left)), (left, right)), shape=(W, W))
    matrix.sum_duplicates()
    matrix.sort_indices()
    return Bigrams(matrix, counts, index.V)


# --- the exchange algorithm ----------------------------------------------------------------------


@dataclass
class ExchangeResult:
    classes: np.ndarray  # (W,) class of every word
    n_classes: int  # K, plus one if the shared class holds any word
    shared: int  # id of the shared class of rare / isolated words, or -1 if it is empty
    objective: float  # F of the final map (rare words assigned)
    passes: int
    moves: list[int] = field(default_factory=list)
    trained_words: int = 0


class _Exchange:
    """The class-bigram counts N(g,h) of K classes plus a fixed class R (= K) of the others."""

    def __init__(self, B: sp.csr_matrix, cls: np.ndarray, K: int) -> None:
        self.B = B
        self.BT = B.T.tocsr()
        self.BT.sort_indices()
        self.K = K
        self.cls = cls
        self.succ = np.asarray(B.sum(axis=1)).ravel()
        self.pred = np.asarray(B.sum(axis=0)).ravel()
        self.self_count = B.diagonal()
        onehot = sp.csr_matrix((np.ones(len(cls)), (np.arange(len(cls)), cls)), shape=(len(cls), K + 1))
        self.M = np.asarray((onehot.T @ B @ onehot).todense(), dtype=np.float64)
        self.fM = xlogx(self.M)
        self.L = self.M.sum(axis=1)
        self.R = self.M.sum(axis=0)
        self.size = np.bincount(cls, minlength=K + 1)

    def vectors(self, w: int) -> tuple[np.ndarray, np.ndarray]:
        """a[h] = f(w, class h), b[g] = f(class g, w) under the current map."""
        B, BT, n = self.B, self.BT, self.K + 1
        lo, hi = B.indptr[w], B.indptr[w + 1]
        a = np.bincount(self.cls[B.indices[lo:hi]], B.data[lo:hi], minlength=n)
        lo, hi = BT.indptr[w], BT.indptr[w + 1]
        b = np.bincount(self.cls[BT.indices[lo:hi]], BT.data[lo:hi], minlength=n)
        return a, b

    def _refresh(self, g: int) -> None:
        self.fM[g, :] = xlogx(self.M[g, :])
        self.fM[:, g] = xlogx(self.M[:, g])

    def remove(self, w: int, a: np.ndarray, b: np.ndarray) -> None:
        """Take w out of its class; a, b become its counts against the classes without it."""
        g, s = int(self.cls[w]), self.self_count[w]
        M = self.M
        M[g, :] -= a
        M[:, g] -= b
        M[g, g] += s
        self.L[g] -= self.succ[w]
        self.R[g] -= self.pred[w]
        self.size[g] -= 1
        self._refresh(g)
        a[g] -= s
        b[g] -= s

    def add(self, w: int, k: int, a: np.ndarray, b: np.ndarray) -> None:
        """Put w (removed) into class k; a, b are its counts against the classes without it."""
        s = self.self_count[w]
        M = self.M
        M[k, :] += a
        M[:, k] += b
        M[k, k] += s
        self.L[k] += self.succ[w]
        self.R[k] += self.pred[w]
        self.size[k] += 1
        self.cls[w] = k
        self._refresh(k)
        a[k] += s
        b[k] += s

    def gains(self, w: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The change of F if the removed word w joined class k, for k = 0..K-1 at once."""
        K, M, fM = self.K, self.M, self.fM
        s = self.self_count[w]
        ha = np.flatnonzero(a)
        hb = np.flatnonzero(b)
        # every entry below is > 0 (a[ha], b[hb] > 0), so x·log x needs no guard for 0
        v = M[:K, ha] + a[ha]
        gain = (v * np.log(v)).sum(axis=1) - fM[:K, ha].sum(axis=1)
        v = M[hb, :K] + b[hb, None]
        gain += (v * np.log(v)).sum(axis=0) - fM[hb, :K].sum(axis=0)
        d = np.diagonal(M)[:K]
        ak, bk = a[:K], b[:K]
        # N(k,k) gains a[k] + b[k] + f(w,w); the two sums above counted a[k] and b[k] apart
        gain += xlogx(d + ak + bk + s) - xlogx(d + ak) - xlogx(d + bk) + np.diagonal(fM)[:K]
        L, R = self.L[:K], self.R[:K]
        gain -= xlogx(L + self.succ[w]) - xlogx(L)
        gain -= xlogx(R + self.pred[w]) - xlogx(R)
        return gain

    def objective(self) -> float:
        return float(self.fM.sum() - xlogx(self.L).sum() - xlogx(self.R).sum())


def exchange(
    B: sp.csr_matrix,
    counts: np.ndarray,
    K: int,
    *,
    min_count: int = 3,
    iterations: int = 10,
    seed: int = 0,
    rare: str = "assign",
) -> ExchangeResult:
    """Cluster the W words of the bigram matrix ``B`` into (at most) K classes; see the module doc."""
    if rare not in RARE_CHOICES:
        raise SentretError(f"rare must be one of {', '.join(RARE_CHOICES)} (got {rare!r})")
    W = B.shape[0]
    B = sp.csr_matrix(B, dtype=np.float64)
    B.sum_duplicates()
    B.sort_indices()
    linked = (np.diff(B.indptr) > 0) | (np.bincount(B.indices, minlength=W) > 0)
    order = np.lexsort((np.arange(W), -np.asarray(counts, dtype=np.float64)))
    trainable = order[((counts >= min_count) & linked)[order]]
    K = int(min(K, len(trainable)))
    if K == 0:  # nothing to train on: one class holds every word
        return ExchangeResult(np.zeros(W, dtype=np.int32), 1, 0, 0.0, 0, [], 0)
    cls = np.full(W, K, dtype=np.int64)
    cls[trainable[:K]] = np.arange(K)
    ex = _Exchange(B, cls, K)
    # 1. incremental initialisation: the other trainable words join their best class, by frequency
    for w in trainable[K:].tolist():
        a, b = ex.vectors(w)
        ex.remove(w, a, b)
        ex.add(w, int(np.argmax(ex.gains(w, a, b))), a, b)
    # 2. exchange passes
    rng = np.random.default_rng(seed)
    moves: list[int] = []
    for _ in range(iterations):
        moved = 0
        for w in rng.permutation(trainable).tolist():
            g = int(cls[w])
            a, b = ex.vectors(w)
            ex.remove(w, a, b)
            gain = ex.gains(w, a, b)
            k = int(np.argmax(gain))
            if gain[k] > gain[g] + _EPS * max(1.0, abs(gain[g])):
                ex.add(w, k, a, b)
                moved += 1
            else:
                ex.add(w, g, a, b)
        moves.append(moved)
        if moved == 0:
            break
    # 3. rare words: each to its best class given the trained map
    rest = np.flatnonzero((cls == K) & linked)
    if rare == "assign" and len(rest):
        chosen = np.empty(len(rest), dtype=np.int64)
        for i, w in enumerate(rest.tolist()):
            a, b = ex.vectors(w)
            ex.remove(w, a, b)
            chosen[i] = int(np.argmax(ex.gains(w, a, b)))
            ex.add(w, K, a, b)
        for w, k in zip(rest.tolist(), chosen.tolist()):
            a, b = ex.vectors(w)
            ex.remove(w, a, b)
            ex.add(w, k, a, b)
    used_shared = bool((cls == K).any())
    return ExchangeResult(
        cls.astype(np.int32),
        K + 1 if used_shared else K,
        K if used_shared else -1,
        ex.objective(),
        len(moves),
        moves,
        len(trainable),
    )


# --- class maps of an index ------------------------------------------------------------------------


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
