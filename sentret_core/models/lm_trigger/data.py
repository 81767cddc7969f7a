"""What the trigger LM derives from the tables once per index: normalised tables, per-term hits,
and (``lm-trigger.v2``) the question-word rows normalised over the markers (:class:`AskData`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from sentret_core.index.neighbours import expand_ranges
from sentret_core.models.arrays.layout import layout
from sentret_core.models.arrays.postings import Postings
from sentret_core.models.arrays.vectors import EMPTY_IDS, EMPTY_SCORES, run_starts
from sentret_core.models.training.triggers import (
    ASK_TABLES,
    ASKS,
    TABLES,
    TriggerTables,
    load_triggers,
    sentence_labels,
)

if TYPE_CHECKING:
    from sentret_core.index.reader import Index



class _HitCache:
    """Recent (table, term) → hits, bounded by the number of stored sentence ids: the hits do not
    depend on the weights, so tuning and slider moves re-use them."""

    LIMIT = 4_000_000

    def __init__(self) -> None:
        self.store: OrderedDict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key: tuple[str, int]) -> tuple[np.ndarray, np.ndarray] | None:
        with self.lock:
            found = self.store.get(key)
            if found is not None:
                self.store.move_to_end(key)
            return found

    def put(self, key: tuple[str, int], value: tuple[np.ndarray, np.ndarray]) -> None:
        with self.lock:
            if key in self.store:
                return
            self.store[key] = value
            self.size += len(value[0])
            while self.size > self.LIMIT and len(self.store) > 1:
                _, (rows, _) = self.store.popitem(last=False)
                self.size -= len(rows)


@dataclass(frozen=True)
class TriggerData:
    tables: TriggerTables
    norm: dict[str, sp.csr_matrix]  # column-normalised: p_t(w|target) in row w
    massless: dict[str, np.ndarray]  # per target: True when nothing triggers it
    background: dict[str, np.ndarray]  # (N,) share of s's terms whose target has no mass (1: empty s)
    labels: Postings  # Y: term counts per label, as postings
    inv_s: np.ndarray  # (N,) 1/|s|, 0 for the empty sentence
    empty_s: np.ndarray  # (N,) 1.0 for the empty sentence
    hit_cache: _HitCache = field(default_factory=_HitCache, compare=False, repr=False)

    def hits(self, name: str, term: int, post: Postings) -> tuple[np.ndarray, np.ndarray]:
        """Σ_j p_t(term|s_j) per sentence (sorted ids, sums), cached."""
        found = self.hit_cache.get((name, term))
        if found is None:
            found = _hits(self.norm[name], term, self.labels if name == "ne" else post)
            self.hit_cache.put((name, term), found)
        return found


def _normalise_columns(table: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray]:
    mass = np.asarray(table.sum(axis=0)).ravel()
    scale = np.zeros(len(mass))
    np.divide(1.0, mass, out=scale, where=mass > 0)
    norm = sp.csr_matrix(table @ sp.diags(scale))
    norm.sort_indices()
    return norm, mass <= 0


def trigger_data(index: Index, name: str) -> TriggerData:
    """The normalised tables of trigger artefact ``name`` and what derives from them."""
    tables = load_triggers(index, name)

    def build() -> TriggerData:
        lay = layout(index)
        n_s = lay.sent_len
        inv_s = np.zeros(index.N)
        np.divide(1.0, n_s, out=inv_s, where=n_s > 0)
        empty_s = (n_s <= 0).astype(np.float64)
        Y = sentence_labels(index, tables.labels)
        norm, massless, background = {}, {}, {}
        for name in TABLES:
            norm[name], massless[name] = _normalise_columns(tables.tables[name])
            counts = Y if name == "ne" else index.X
            unmatched = n_s - np.asarray(counts @ (~massless[name]).astype(np.float64)).ravel()
            background[name] = unmatched * inv_s + empty_s
        return TriggerData(tables, norm, massless, background, Postings.of(Y), inv_s, empty_s)

    return index.cache.get(f"models.trigger.data/{tables.key}", build)


def _hits(norm: sp.csr_matrix, term: int, post: Postings) -> tuple[np.ndarray, np.ndarray]:
    """Σ_j p_t(term|s_j) per sentence s (sorted ids, sums) over the targets ``term`` triggers."""
    lo, hi = int(norm.indptr[term]), int(norm.indptr[term + 1])
    if lo == hi:
        return EMPTY_IDS, EMPTY_SCORES
    targets, weights = norm.indices[lo:hi], norm.data[lo:hi]
    start, end = post.indptr[targets], post.indptr[targets + 1]
    where = expand_ranges(start, end)
    rows = post.rows.take(where)
    vals = post.vals.take(where) * np.repeat(weights, end - start)
    order = rows.argsort(kind="stable")
    rows = rows.take(order)
    starts = run_starts(rows)
    return rows.take(starts), np.add.reduceat(vals.take(order), starts) if len(rows) else EMPTY_SCORES


# --- question-word markers (lm-trigger.v2) ------------------------------------------------------------


@dataclass(frozen=True)
class AskData:
    """The question-word rows of the QA and NE tables, ready for p_t(a|s) (``lm-trigger.v2``).

    For a table t ∈ {qa, ne} and a target x (a term for qa, an NER label for ne),
    ``norm[t][x, a]`` = f_t(a → x) / Σ_{a'} f_t(a' → x): eq. 9 normalised over the *markers* that
    trigger x, so p_t(·|x) is a distribution over :data:`ASKS`. A target no marker triggers has
    no mass (``massless``) and backs off to the prior p(a) = n(a)/Σ n(a'), the share of the
    training questions asking a (:attr:`prior`; all 0 when the tables had no QA pairs).
    """

    prior: np.ndarray  # (A,) p(a)
    norm: dict[str, sp.csr_matrix]  # qa: V × A, ne: labels × A
    massless: dict[str, np.ndarray]  # per target
    background: dict[str, np.ndarray]  # (N,) share of s's targets without mass (1 for the empty s)
    counts: dict[str, sp.csr_matrix]  # the targets of every sentence: X (qa), Y (ne)

    def probabilities(self, name: str, cand: np.ndarray, inv_s: np.ndarray) -> np.ndarray:
        """p_t(a|s) for every candidate and marker (len(cand) × A), eq. 10."""
        matched = np.asarray((self.counts[name][cand] @ self.norm[name]).todense())
        return matched * inv_s[:, None] + self.background[name].take(cand)[:, None] * self.prior[None, :]


def ask_data(index: Index, name: str) -> AskData:
    """The question-word data of trigger artefact ``name``."""
    tables = load_triggers(index, name)

    def build() -> AskData:
        data = trigger_data(index, name)
        n_s = layout(index).sent_len
        total = float(tables.asked.sum())
        prior = tables.asked / total if total > 0 else np.zeros(len(ASKS))
        counts = {"qa": sp.csr_matrix(index.X, dtype=np.float64), "ne": sentence_labels(index, tables.labels)}
        norm, massless, background = {}, {}, {}
        for table, rows in ASK_TABLES.items():
            transposed, massless[table] = _normalise_columns(sp.csr_matrix(tables.tables[rows]))
            norm[table] = sp.csr_matrix(transposed.T)
            unmatched = n_s - np.asarray(counts[table] @ (~massless[table]).astype(np.float64)).ravel()
            background[table] = unmatched * data.inv_s + data.empty_s
        return AskData(prior, norm, massless, background, counts)

    return index.cache.get(f"models.trigger.asks/{tables.key}", build)
