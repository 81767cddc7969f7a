"""sentret's sentence-retrieval models as a PyTerrier transformer (``pip install 'sentret[pyterrier]'``).

``SentretRetriever(index, "bm25f.v1", k=100)`` retrieves for a topics frame (``qid``, ``query``
[, ``entity``]); given a results frame (with ``docno``) it re-ranks those sentences instead, so it
can follow Terrier's BM25 or another first stage in a pipeline, or be followed by a neural re-ranker::

    import pyterrier as pt
    from sentret_core.integrations.pyterrier import SentretRetriever

    first = SentretRetriever(index, "tfisf.v1", k=100)
    pipeline = first >> SentretRetriever(index, "lm-2si.v1") % 10
    pt.Experiment([first, pipeline], topics, qrels, eval_metrics=["map", "ndcg_cut_10"])

Only PyTerrier's Python core is used (``pt.Transformer``): no JVM is started and no Terrier jar is
downloaded, so it runs wherever pandas does; Terrier's own retrievers in the same pipeline need Java as
usual. Docnos are sentret's sentence ids, ``<document id>-<position>``
(:mod:`sentret_core.index.docnos`, built once per index); the frames are those of
:mod:`sentret_core.integrations.frames`, with each sentence's ``text``, which the next transformer of a
pipeline (``pt.apply``, a neural re-ranker) reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

try:
    import pyterrier as pt
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "sentret_core.integrations.pyterrier needs PyTerrier: pip install 'sentret[pyterrier]'"
    ) from err

from sentret_core.defaults import DEFAULT_K, DEFAULT_RANKER
from sentret_core.integrations import frames

if TYPE_CHECKING:
    from sentret_core.index.reader import Index


class SentretRetriever(pt.Transformer):
    """Retrieve with, or re-rank by, one registered sentret model (see ``sentret models``)."""

    def __init__(self, index: Index | str, model: str = DEFAULT_RANKER, k: int = DEFAULT_K,
                 params: Mapping[str, Any] | None = None) -> None:
        from sentret_core.index.reader import Index
        from sentret_core.models import get_model

        self.index = index if isinstance(index, Index) else Index.load(index)
        self.model = get_model(model).name
        self.k = k
        self.params = dict(params or {})
        get_model(self.model).resolve(self.params)  # a bad parameter is refused here, not at the first query

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        if "docno" in inp.columns:
            return frames.rerank(self.index, inp, self.model, self.params, text=True)
        return frames.retrieve(self.index, inp, self.model, self.k, self.params, text=True)

    def __repr__(self) -> str:
        return f"SentretRetriever({str(self.index.path)!r}, {self.model!r}, k={self.k})"
