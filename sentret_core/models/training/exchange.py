"""Bigram statistics and the exchange algorithm (Kneser & Ney 1993; Martin et al. 1998).

It optimises the class-bigram likelihood of Brown clustering (Momtazi & Klakow, IP&M 2015, §3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from sentret_core.errors import SentretError
from sentret_core.models.training.sources import vocabulary_map

Progress = Callable[[float, str], None]  # (share done, what is happening)

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

RARE_CHOICES = ("assign", "shared")  # how words under min_count get a class (see classes.fit_classes)
_EPS = 1e-7


def xlogx(x: Any) -> Any:
    """x·log x with 0·log 0 = 0."""
    return xlogy(x, x)


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
    progress: Progress | None = None,
) -> ExchangeResult:
    """Cluster the W words of the bigram matrix ``B`` into (at most) K classes; see the module doc.

    ``progress(share, what)`` is told after the initialisation and after each pass (passes stop
    early once none moves a word, so the share then jumps to 1).
    """
    tell = progress or (lambda _share, _what: None)
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
    steps = iterations + 2  # the initialisation, the passes, the rare words
    tell(1 / steps, f"{len(trainable):,} words in {K} classes; exchange passes next (at most {iterations})")
    # 2. exchange passes
    rng = np.random.default_rng(seed)
    moves: list[int] = []
    for done in range(1, iterations + 1):
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
        tell((done + 1) / steps, f"pass {done} of at most {iterations}: {moved:,} words moved")
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
    tell(1.0, "done")
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
