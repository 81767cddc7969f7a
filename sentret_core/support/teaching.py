"""Pure helpers behind the "How it works" page: rank changes, overlaps, Fig. 1 set sizes, growth curves.

Nothing here draws or imports streamlit; the page composes these with the scoring API.

* :func:`rank_changes` / :func:`overlap` compare two rankings of sentence ids (two models on one
  query, or one model before and after a parameter change).
* :func:`set_sizes` gives the sets of Blanco & Zaragoza, SIGIR 2010, Fig. 1, for a query's ranking and an entity:
  S_q (the top k), Ŝ_q (S_q with the ±window context of each sentence), S_qe and Ŝ_qe (the
  sentences of each that mention the entity).
* :func:`entry_ranks` says, for given sentences, at which k each enters S_q and Ŝ_q; from it
  :func:`entity_growth` draws |S_qe| and |Ŝ_qe| as k grows, and :func:`first_hits` gives the
  first-hit k of a set of *relevant* sentences — the input of
  :func:`sentret_core.evaluation.coverage.coverage_curve` (Blanco & Zaragoza, SIGIR 2010, Fig. 2) once judgments exist.
* :func:`contribution_parts` splits each query term's contribution in an
  :class:`~sentret_core.models.Explanation` by field (BM25F), mixture component (the LMs) or
  neighbour (TF-ISF_con), for a stacked bar chart.
* :func:`control_kind` / :func:`slider_options` choose the widget a parameter is drawn with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from sentret_core.defaults import DEFAULT_WINDOW
from sentret_core.models.core.registry import MODELS
from sentret_core.support.entity_stats import entity_sentences
from sentret_core.support.sets import entry_ranks

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models import Explanation, ParamSpec

MAX_SLIDER_STEPS = 2000  # a range with more steps than this is offered as its tuning grid instead


# --- comparing rankings --------------------------------------------------------------------------


class RankChange(NamedTuple):
    """Where a sentence of the ``after`` ranking stood in the ``before`` ranking (ranks 1-based)."""

    sentence: int
    rank: int
    previous: int | None  # None: not in the ``before`` ranking

    @property
    def delta(self) -> int | None:
        """Places gained (positive: moved up), None when the sentence is new."""
        return None if self.previous is None else self.previous - self.rank

    @property
    def label(self) -> str:
        """``↑3``, ``↓1``, ``=`` or ``new``."""
        delta = self.delta
        if delta is None:
            return "new"
        if delta > 0:
            return f"↑{delta}"
        if delta < 0:
            return f"↓{-delta}"
        return "="


def rank_changes(before: Sequence[int], after: Sequence[int]) -> list[RankChange]:
    """For each sentence of ``after`` (in its order), its rank there and in ``before``."""
    where = {int(s): rank for rank, s in enumerate(before, start=1)}
    return [RankChange(int(s), rank, where.get(int(s))) for rank, s in enumerate(after, start=1)]


class Overlap(NamedTuple):
    shared: int  # |A ∩ B|
    union: int  # |A ∪ B|
    only_a: tuple[int, ...]  # in A's order
    only_b: tuple[int, ...]  # in B's order

    @property
    def jaccard(self) -> float:
        """|A ∩ B| / |A ∪ B| (1.0 for two empty lists)."""
        return self.shared / self.union if self.union else 1.0


def overlap(a: Sequence[int], b: Sequence[int]) -> Overlap:
    """How much two top lists share."""
    set_a, set_b = {int(s) for s in a}, {int(s) for s in b}
    return Overlap(
        len(set_a & set_b),
        len(set_a | set_b),
        tuple(int(s) for s in a if int(s) not in set_b),
        tuple(int(s) for s in b if int(s) not in set_a),
    )


# --- Blanco & Zaragoza, Fig. 1: S_q, Ŝ_q, S_qe, Ŝ_qe -------------------------------------------


class SetSizes(NamedTuple):
    """Sizes of the sets of Blanco & Zaragoza, Fig. 1, for one query, one entity and one k."""

    sentences: int  # |S|, every sentence of the index
    entity: int  # sentences of the whole index that mention e (Σ_s G[s,e])
    top: int  # |S_q|
    context: int  # |Ŝ_q|
    top_entity: int  # |S_qe|
    context_entity: int  # |Ŝ_qe|


def set_sizes(
    index: Index, ranking: Sequence[int] | np.ndarray, entity: int, k: int, window: int = DEFAULT_WINDOW
) -> SetSizes:
    """|S|, |G[:,e]|, |S_q|, |Ŝ_q|, |S_qe|, |Ŝ_qe| with S_q the first ``k`` of ``ranking``."""
    top = np.asarray(ranking, dtype=np.int64)[: max(k, 0)]
    context = index.neighbourhood(top, window)
    mentions = entity_sentences(index, entity)
    return SetSizes(
        sentences=int(index.N),
        entity=len(mentions),
        top=len(top),
        context=len(context),
        top_entity=int(np.isin(top, mentions).sum()),
        context_entity=int(np.isin(context, mentions).sum()),
    )


def log_ks(largest: int, points: int = 40) -> np.ndarray:
    """About ``points`` distinct integers from 1 to ``largest``, evenly spaced on a log axis."""
    largest = max(int(largest), 1)
    grid = np.unique(np.round(np.logspace(0, math.log10(largest), points)).astype(np.int64))
    return grid[(grid >= 1) & (grid <= largest)]


def entity_growth(
    index: Index,
    ranking: Sequence[int] | np.ndarray,
    entity: int,
    ks: Sequence[int] | np.ndarray,
    window: int = DEFAULT_WINDOW,
) -> pd.DataFrame:
    """|S_q|, |S_qe| and |Ŝ_qe| for each k in ``ks`` (S_q = the first k of ``ranking``)."""
    mentions = entity_sentences(index, entity)
    plain, with_context = entry_ranks(index, ranking, mentions, window)
    grid = np.asarray(ks, dtype=np.int64)
    plain, with_context = np.sort(plain), np.sort(with_context)
    return pd.DataFrame(
        {
            "k": grid,
            "|S_q|": np.minimum(grid, len(ranking)),
            "|S_qe|": np.searchsorted(plain, grid, side="right"),
            "|Ŝ_qe|": np.searchsorted(with_context, grid, side="right"),
        }
    )


# --- explaining a score ---------------------------------------------------------------------------

CONTRIBUTION = "contribution"
EXTRA_TERM = "(query-independent)"
MIXTURE = "p(t|θ)"


class Parts(NamedTuple):
    """A stacked-bar view of an explanation: one row per (term, part)."""

    frame: pd.DataFrame  # columns term, part, value
    split: str  # "field", "mixture component", "neighbour" or "term"
    note: str  # how the split was made, for the caption


def _component_columns(columns: Sequence[str], rows: Sequence[dict[str, Any]], total: str) -> list[str]:
    """The longest run of numeric columns just before ``total`` that add up to it on every row."""
    end = list(columns).index(total)
    try:
        target = np.array([float(r[total]) for r in rows], dtype=np.float64)
    except (TypeError, ValueError, KeyError):
        return []
    best: list[str] = []
    running = np.zeros(len(rows))
    for start in range(end - 1, -1, -1):
        try:
            column = np.array([float(r[columns[start]]) for r in rows], dtype=np.float64)
        except (TypeError, ValueError, KeyError):
            break  # a text column: the run stops here
        if (column < -1e-12).any():
            break  # mixture components are probabilities; every longer run would hold this column
        running = running + column
        if end - start >= 2 and np.allclose(running, target, rtol=1e-9, atol=1e-12):
            best = list(columns[start:end])
    return best


def contribution_parts(explanation: Explanation) -> Parts:
    """Each term's contribution split into parts that stack to it, plus query-independent addends.

    * TF-ISF_con: the rows are already per (neighbour, term) and add up: part = the neighbour.
    * a model registered with :class:`~sentret_core.models.core.spec.ExplanationParts` (BM25F: the
      saturation k1 acts on x̃ = Σ_f w_f·c(t,f)/B_f, so a term's contribution is shared among the
      fields in proportion to their share of x̃): the declared columns, in proportion to their share
      of the declared whole.
    * the LMs: log p(t|θ) of a mixture is shared among the mixture's components in
      proportion to their share of p(t|θ).
    * otherwise one part per term.
    """
    columns, rows = list(explanation.columns), explanation.rows
    parts: dict[tuple[str, str], float] = {}

    def add(term: Any, part: str, value: float) -> None:
        key = (str(term), part)
        parts[key] = parts.get(key, 0.0) + value

    split, note = "term", "each bar is one query term's contribution"
    declared = MODELS[explanation.model].parts if explanation.model in MODELS else None
    components = _component_columns(columns, rows, MIXTURE) if rows and MIXTURE in columns else []
    if "offset" in columns:
        split, note = "neighbour", "each term's contribution from the sentence itself and from each neighbour"
        for row in rows:
            offset = int(row["offset"])
            part = "s itself" if offset == 0 else f"{'next' if offset > 0 else 'prev'} {abs(offset)}"
            add(row["term"], part, float(row[CONTRIBUTION]))
    elif declared is not None and declared.whole in columns:
        split, note = declared.split, declared.note
        for row in rows:
            whole = float(row[declared.whole])
            for col, part in declared.columns:
                share = float(row[col]) / whole if whole > 0 else 0.0
                add(row["term"], part, share * float(row[CONTRIBUTION]))
    elif components:
        split = "mixture component"
        note = "log p(t|θ) of a mixture is shared among its components in proportion to their share of p(t|θ)"
        for row in rows:
            p = float(row[MIXTURE])
            for col in components:
                share = float(row[col]) / p if p > 0 else 0.0
                add(row["term"], col, share * float(row[CONTRIBUTION]))
    else:
        for row in rows:
            add(row["term"], "contribution", float(row[CONTRIBUTION]))
    for name, value in explanation.extra.items():
        add(EXTRA_TERM, name, float(value))
    frame = pd.DataFrame(
        [{"term": t, "part": p, "value": v} for (t, p), v in parts.items()], columns=["term", "part", "value"]
    )
    return Parts(frame, split, note)


# --- parameter widgets ----------------------------------------------------------------------------


def control_kind(spec: ParamSpec) -> str:
    """How to draw a parameter: ``select`` (choices), ``toggle`` (bool), ``slider`` or ``grid``.

    ``grid`` is a select-slider over the papers' tuning grid, for a range too wide to slide
    (μ of the Dirichlet LMs runs from 0 to 10⁶).
    """
    if spec.choices is not None:
        return "select"
    if spec.type is bool:
        return "toggle"
    if spec.min is None or spec.max is None:
        return "grid" if spec.grid else "number"
    step = spec.step or (1 if spec.type is int else 0.01)
    if (spec.max - spec.min) / step > MAX_SLIDER_STEPS and spec.grid:
        return "grid"
    return "slider"


def slider_options(spec: ParamSpec) -> list[float | int]:
    """The values a ``grid`` control offers: the tuning grid plus the default, ascending."""
    values = set(spec.grid or ())
    if spec.default is not None:
        values.add(spec.default)
    return sorted(values)
