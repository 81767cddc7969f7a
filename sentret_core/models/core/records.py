"""The records scorers hand back: :class:`Scores` and :class:`Explanation`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.models.core.params import Params

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Scores:
    """Scores of the candidate sentences of one query under one model.

    ``ids`` are sentence ids (int64) and ``scores`` their scores (float64), same length.
    From :func:`~sentret_core.models.score` the ids are sorted ascending; from
    :func:`~sentret_core.models.top_k` they are in rank order (``ranked`` is True).
    ``terms`` are the normalised query terms in order (repeats kept); ``oov`` the distinct ones
    the index has never seen. ``reason`` says why there are no candidates, when there are none.
    """

    ids: np.ndarray
    scores: np.ndarray
    terms: tuple[str, ...]
    model: str
    params: Params
    reason: str | None = None
    oov: tuple[str, ...] = ()
    ranked: bool = False

    def __len__(self) -> int:
        return len(self.ids)

    def __bool__(self) -> bool:
        return len(self.ids) > 0

    def score_of(self, sentence: int) -> float | None:
        """The score of ``sentence``, or None if it is not a candidate."""
        if self.ranked:
            hits = np.flatnonzero(self.ids == sentence)
            return float(self.scores[hits[0]]) if len(hits) else None
        pos = int(np.searchsorted(self.ids, sentence))
        if pos < len(self.ids) and self.ids[pos] == sentence:
            return float(self.scores[pos])
        return None

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        frame = pd.DataFrame({"sentence": self.ids, "score": self.scores})
        if self.ranked:
            frame.insert(0, "rank", np.arange(1, len(frame) + 1))
        return frame


@dataclass(frozen=True)
class Explanation:
    """Each query term's contribution to one sentence's score.

    ``rows`` has one record per term (per term and field, neighbour or mixture component
    where the model has them), with the columns named in ``columns``; the ``contribution``
    column sums, with ``extra`` (query-independent addends such as log p(d|s)), to ``total``,
    which equals the sentence's score from :func:`~sentret_core.models.score`.
    ``candidate`` says whether the sentence is among the query's candidates at all (a
    non-candidate's total is what the formula gives, but ``score`` does not return it).
    """

    model: str
    sentence: int
    params: Params
    terms: tuple[str, ...]
    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    total: float
    candidate: bool
    extra: dict[str, float] = field(default_factory=dict)
    notes: dict[str, float] = field(default_factory=dict)
    formula: str = ""

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(list(self.rows), columns=list(self.columns))

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "sentence": self.sentence,
            "params": self.params.to_dict(),
            "terms": list(self.terms),
            "rows": [dict(r) for r in self.rows],
            "extra": dict(self.extra),
            "notes": dict(self.notes),
            "total": self.total,
            "candidate": self.candidate,
        }
