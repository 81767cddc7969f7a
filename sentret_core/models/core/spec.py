"""What the registry holds per model: :class:`ModelSpec`, and the scorer signatures."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.models.core.params import Params, ParamSpec

ENTITY_PARAM = "entity"  # a parameter by this name is the entity whose support sentences are ranked

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.core.query import Query


class Explained(NamedTuple):
    """A scorer's explanation of one sentence: table rows plus query-independent addends."""

    columns: tuple[str, ...]
    rows: list[dict[str, Any]]
    extra: dict[str, float]  # addends outside the per-term rows (log p(d|s))
    notes: dict[str, float]  # intermediate values worth showing (R(s), factors)


# (index, query, params) -> (candidate ids sorted ascending, int32/int64; scores float64)
Scorer = Callable[["Index", "Query", Any], tuple[np.ndarray, np.ndarray]]
Explainer = Callable[["Index", "Query", int, Any], Explained]
# (index, sentence id, params) -> p(t|θ_s) over the whole vocabulary
Distribution = Callable[["Index", int, Any], np.ndarray]
# (index, query, params, sentence ids) -> the model's score of each given sentence, in their order;
# exact for every sentence the scorer does not return (a closed candidate set scores them all)
Closed = Callable[["Index", "Query", Any, np.ndarray], np.ndarray]
# the scorer's (ids, scores) restricted to the sentences of a set, bit for bit, without a full scan
Subset = Callable[["Index", "Query", Any, np.ndarray], tuple[np.ndarray, np.ndarray]]
# (index, query, params, k) -> (ids ascending, scores, whether the model has any candidate) holding the
# top k of the scorer bit for bit, without scoring every candidate (or a RankedTopK, the top k itself); or None
# to fall back to the scorer
TopK = Callable[["Index", "Query", Any, int], "tuple[np.ndarray, np.ndarray, bool] | None"]


class RankedTopK(NamedTuple):
    """A top-k path's answer that is the top k already: score descending, ties by sentence id ascending, ids
    int64 (search() takes it as it is)."""

    ids: np.ndarray
    scores: np.ndarray
    any_candidate: bool


@dataclass(frozen=True)
class ExplanationParts:
    """Which columns of a model's explanation share out each term's contribution, for a stacked bar.

    Each row's contribution is split among ``columns`` in proportion to their share of ``whole``
    (BM25F: the fields' w_f·c(t,f)/B_f, of the pseudo-frequency x̃ they add up to).
    """

    split: str  # what one part is: "field"
    whole: str  # the column the parts add up to: "x̃"
    columns: tuple[tuple[str, str], ...]  # (column, part label): ("w·c/B (sentence)", "sentence")
    note: str  # how the contribution is shared, for a caption


def zero_without_a_match(index: Index, q: Query, p: Any, ids: np.ndarray) -> np.ndarray:
    """The score of a sentence a sum over matched query terms does not reach: 0 (TF-ISF, BM25)."""
    return np.zeros(len(ids))


@dataclass(frozen=True)
class ModelSpec:
    """A registered sentence scorer: a versioned name, its parameters, code and provenance."""

    name: str  # versioned, e.g. "bm25f.v1"
    display_name: str
    family: str  # a declared family (models/core/families.py): "tfisf", "bm25", "lm", "embed", "minilm", "ltr", …
    params: type[Params]
    scorer: Scorer
    explainer: Explainer
    formula: str  # LaTeX
    paper: str
    description: str
    distribution: Distribution | None = None
    open_vocabulary: bool = False  # it scores words the index has never seen (embed.v1)
    reads_text: bool = False  # it reads the query as written, stop words and order (minilm.v1), not its terms
    closed: Closed | None = None  # its score of a sentence the scorer does not return (None: it has none)
    subset: Subset | None = None  # its scores of a given set only (for a scorer that scans every sentence)
    top_k: TopK | None = None  # its exact top k without scoring every candidate (search() uses it)
    parts: ExplanationParts | None = None  # the explanation columns that split a contribution
    # how closely its explanation's float64 total matches its score (relative and absolute): 1e-6 for a
    # score computed in float32 (embed.v1), whose explanation sums the same float32 values in float64
    explain_tolerance: float = 1e-9
    _resolved: dict[Any, Params] = field(default_factory=dict, compare=False, repr=False)

    @property
    def base(self) -> str:
        """The name without its version: ``"bm25f"``."""
        return self.name.rsplit(".v", 1)[0]

    @property
    def source(self) -> str:
        """Where the scorer is defined, as ``path:line`` relative to the package's parent folder."""
        code = getattr(self.scorer, "__code__", None)
        if code is None:
            return "?"
        path = Path(code.co_filename)
        root = Path(__file__).resolve().parents[3]  # the folder holding sentret_core/
        with contextlib.suppress(ValueError):
            path = path.resolve().relative_to(root)
        return f"{path.as_posix()}:{code.co_firstlineno}"

    @property
    def takes_entity(self) -> bool:
        """True when the model ranks one entity's support sentences given that entity (a parameter
        ``entity``, e.g. ``ltr.v1``): the support engine then scores once per entity."""
        return ENTITY_PARAM in self.params.names()

    def reason(self, q: Query) -> str | None:
        """Why ``q`` cannot match under this model, before scoring (``None``: score it). A model with an
        open vocabulary scores any query that has terms, known to the index or not."""
        return None if self.open_vocabulary and q.terms else q.reason

    def score_at(self, index: Index, q: Query, params: Params, ids: np.ndarray) -> np.ndarray:
        """The score of each sentence of ``ids`` (a closed candidate set), in their order: the
        scorer's, bit for bit, for those it returns; :attr:`closed`'s for the rest (an LM's smoothed
        likelihood, TF-ISF's and BM25's 0); ``-inf`` for the rest when the model has no such score."""
        ids = np.asarray(ids, dtype=np.int64)
        found, scores = self.scorer(index, q, params) if self.reason(q) is None else (ids[:0], np.zeros(0))
        where = np.minimum(np.searchsorted(found, ids), max(len(found) - 1, 0))
        hit = found.take(where) == ids if len(found) else np.zeros(len(ids), dtype=bool)
        values = np.full(len(ids), -np.inf)
        values[hit] = scores.take(where[hit])
        missed = ~hit
        if self.closed is not None and missed.any():
            values[missed] = self.closed(index, q, params, ids[missed])
        return values

    @property
    def version(self) -> int:
        return int(self.name.rsplit(".v", 1)[1])

    def param_specs(self) -> tuple[ParamSpec, ...]:
        return self.params.specs()

    def defaults(self) -> Params:
        return self.resolve()

    def resolve(self, params: Mapping[str, Any] | Params | None = None) -> Params:
        """Validated parameters: the defaults updated with ``params``.

        Raises SentretError naming the model, the parameter and its allowed values.
        """
        if isinstance(params, Params):
            if not isinstance(params, self.params):
                raise SentretError(f"{self.name} takes {self.params.__name__} parameters, not {type(params).__name__}")
            return params
        items = dict(params or {})
        try:
            # typed: True == 1 == 1.0 as keys, but only 1 and 1.0 are valid values of a float
            key: Any = tuple(sorted((name, type(v).__name__, v) for name, v in items.items()))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self._resolved:
            return self._resolved[key]
        known = self.params.names()
        for name in items:
            if name not in known:
                allowed = ", ".join(known) if known else "none (it is parameter-free)"
                raise SentretError(f"{self.name} has no parameter {name!r}; its parameters: {allowed}")
        try:
            resolved = self.params(**items)
        except SentretError as err:
            raise SentretError(f"{self.name}: {err}") from None
        if key is not None and len(self._resolved) < 4096:
            self._resolved[key] = resolved
        return resolved

    def describe(self) -> dict[str, Any]:
        """Everything the app needs to draw this model's controls and help."""
        return {
            "name": self.name,
            "base": self.base,
            "version": self.version,
            "display_name": self.display_name,
            "family": self.family,
            "formula": self.formula,
            "paper": self.paper,
            "description": self.description,
            "params": [
                {
                    "name": s.name,
                    "type": s.type.__name__,
                    "default": s.default,
                    "min": s.min,
                    "max": s.max,
                    "choices": s.choices,
                    "step": s.step,
                    "artefact": s.artefact,
                    "grid": s.grid,
                    "symbol": s.symbol,
                    "description": s.description,
                    "nullable": s.nullable,
                    "min_positive": s.min_positive,
                    "above_min": s.above_min,
                }
                for s in self.param_specs()
            ],
        }
