"""What trec_eval gives on a run file, beside sentret's tie-aware figure.

trec_eval (and ir_measures through pytrec_eval) ignores a run's rank column and orders each topic's
documents by score descending, breaking ties by document id in *descending* string order (its
``comp_sim_docno``). Among tied scores that order is arbitrary, so a tie-aware metric (the expectation
over every ordering of the ties, McSherry & Najork, ECIR 2008) and trec_eval's number differ when a run
has ties; :func:`as_exported` gives the latter by evaluating that one ordering, with trec_eval's
conventions: relevant iff grade ≥ its level (``-l``, default 1) and nDCG's gain the grade itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from sentret_core.defaults import TREC_EVAL_LEVEL
from sentret_core.evaluation.measures import DEFAULT_METRICS, evaluate
from sentret_core.evaluation.trec_io import Run


def trec_eval_order(run: Mapping[str, Mapping[str, float]]) -> Run:
    """``run`` with each topic's documents re-scored n, n-1, …, 1 in trec_eval's order: score descending,
    ties by document id descending. Distinct scores: any metric of it is that one ordering's."""
    ordered: Run = {}
    for topic, ranked in run.items():
        items = sorted(ranked.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        ordered[topic] = {docid: float(len(items) - i) for i, (docid, _) in enumerate(items)}
    return ordered


def as_exported(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] = DEFAULT_METRICS,
    *,
    level: int = TREC_EVAL_LEVEL,
) -> pd.DataFrame:
    """Per-topic values trec_eval computes on ``run`` (see the module docstring)."""
    return evaluate(qrels, trec_eval_order(run), metrics, relevance_threshold=level, gains=float)


def tie_aware(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] = DEFAULT_METRICS,
    *,
    level: int = TREC_EVAL_LEVEL,
) -> pd.DataFrame:
    """Per-topic tie-aware values of ``run`` under the same relevance level and gains."""
    return evaluate(qrels, run, metrics, relevance_threshold=level, gains=float)
