"""Evaluation: TREC qrels/run I/O, tie-aware metrics, significance, tuning, coverage.

Everything here is a pure function of its arguments: no index, no spaCy, no UI.

**Formats.** A qrels file has one judgment per line, ``topic 0 docid grade``; a run file one
retrieved item per line, ``topic Q0 docid rank score tag`` (trec_eval's formats). In memory
they are ``Qrels = {topic: {docid: grade}}`` and ``Run = {topic: {docid: score}}``. As in
trec_eval the rank column is ignored when reading: the order is given by the scores.
Fields are whitespace-separated, so an id never contains whitespace; a (query, entity) topic
id is built with :func:`topic_id`, which percent-escapes whitespace, ``%`` and ``:``.

**Metrics** (per topic, then averaged over topics):

* RR (``"mrr"``): ``1 / rank`` of the first relevant item, 0 if none is retrieved.
* P@k (``"p@k"``): relevant items among ranks 1..k, divided by k (also when fewer are retrieved).
* AP (``"map"``): ``(1/R) * sum over relevant retrieved items d of P@rank(d)``, where R is the
  number of relevant judged items of the topic in the qrels, retrieved or not.
* R-Prec (``"r-prec"``): P@R.
* NDCG@k (``"ndcg@k"``; ``"ndcg"`` for the whole ranking):
  ``DCG@k = sum_{i<=k} gain_i / log2(1 + i)``, divided by the DCG@k of the ideal ranking of
  every judged item of the topic (the qrels), i.e. ``IDCG@k``; 0 when ``IDCG@k`` is 0.

An item is *relevant* iff its grade >= the relevance threshold; an unjudged retrieved item
has grade 0, so it is never relevant and has gain 0.

**Scales and gains.** ``scale="graded"`` (judgments 1-4, as in the entity-support
collections): relevant iff grade >= 3, gain ``2**(g-1) - 1`` i.e. (0, 1, 3, 7) for grades
(1, 2, 3, 4). ``scale="binary"`` (labels 0/1: WikiQA, TrecQA): relevant iff grade >= 1, gain
``2**g - 1`` i.e. 1 for label 1 (and the usual TREC exponential gain for larger labels).
``scale="auto"`` (the default) picks binary iff no grade in the qrels exceeds 1. Grades <= 0
always have gain 0. Both the threshold and the gains can be given explicitly.

**Ties** (McSherry & Najork, "Computing Information Retrieval Performance Measures
Efficiently in the Presence of Tied Scores", ECIR 2008). Items with equal scores form a tie
group; ``mode="tie-aware"`` (the default) reports the *expectation* of each metric over
every ordering of every tie group, in closed form and linear time after sorting. Let a group
hold n items at ranks a+1..a+n, r of them relevant and total gain G, with c relevant items
ranked before it. By symmetry each item of the group is at each of its ranks with
probability 1/n, so:

* P@k: every rank a+j of the group holds r/n relevant items in expectation.
* DCG@k: every rank a+j of the group holds gain G/n in expectation.
* AP: a relevant item of the group at rank a+j has ``c + 1 + (j-1)(r-1)/(n-1)`` relevant
  items at or above it in expectation (the other r-1 are spread over the other n-1 slots),
  so the group adds ``(r/n) * sum_{j=1..n} (c + 1 + (j-1)(r-1)/(n-1)) / (a+j)`` to R*AP.
* RR: only the first group with r > 0 matters; its first relevant item is at in-group
  position i with probability ``C(n-i, r-1) / C(n, r)``, so
  ``E[RR] = sum_{i=1..n-r+1} C(n-i, r-1) / C(n, r) / (a+i)``.

``mode="pessimistic"`` / ``"optimistic"`` break ties against / in favour of the relevant
(higher-gain) items, i.e. the minimum / maximum of the metric over the tie orderings, which
shows how large the effect of ties is.

**Topics.** A topic of the qrels with no relevant item is skipped from the results (as the
WikiQA protocol evaluates only questions with at least one correct sentence), unless
``empty_topics="zero"``, which scores it 0 on every metric. A topic with relevant items but
absent from the run scores 0. Run topics absent from the qrels are ignored (as in trec_eval).
"""

from __future__ import annotations

import itertools
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from sentret_core.errors import SentretError

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]
Mode = Literal["tie-aware", "pessimistic", "optimistic"]
Scale = Literal["auto", "graded", "binary"]
GainSpec = Mapping[int, float] | Callable[[int], float]
Params = dict[str, Any]
PerTopicValues = pd.DataFrame | pd.Series | Mapping[str, float]

MODES: tuple[str, ...] = ("tie-aware", "pessimistic", "optimistic")
SCALES: tuple[str, ...] = ("auto", "graded", "binary")
DEFAULT_METRICS: tuple[str, ...] = ("map", "mrr", "p@1", "p@10", "r-prec", "ndcg@10")
METRIC_FORMS: tuple[str, ...] = ("map", "mrr", "r-prec", "p@<k>", "ndcg@<k>", "ndcg")
GRADED_THRESHOLD = 3
BINARY_THRESHOLD = 1
_ALIASES = {"ap": "map", "rr": "mrr", "rprec": "r-prec", "r-precision": "r-prec"}

# --------------------------------------------------------------------------------------------
# Topic ids
# --------------------------------------------------------------------------------------------

_ESCAPE_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _escape(text: str) -> str:
    """Percent-encode (UTF-8 bytes, as in RFC 3986) every whitespace character, ``%`` and ``:``."""
    out = []
    for char in text:
        if char in "%:" or char.isspace():
            out.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8")))
        else:
            out.append(char)
    return "".join(out)


def _unescape(text: str, whole: str) -> str:
    def decode(match: re.Match[str]) -> str:
        escaped = match.group(0)
        raw = bytes(int(escaped[i + 1 : i + 3], 16) for i in range(0, len(escaped), 3))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SentretError(f"topic id {whole!r}: {match.group(0)} is not UTF-8") from None

    decoded = _ESCAPE_RUN.sub(decode, text)
    if "%" in _ESCAPE_RUN.sub("", text):
        raise SentretError(f"topic id {whole!r}: a '%' must be followed by two hex digits")
    return decoded


def topic_id(query_id: str, entity_key: str) -> str:
    """The TREC topic id ``<query-id>:<entity-key>`` of a (query, entity) pair.

    Whitespace, ``%`` and ``:`` inside either part are percent-encoded, so the id never
    contains whitespace, has exactly one bare ``:``, and :func:`split_topic_id` inverts it.
    """
    return f"{_escape(query_id)}:{_escape(entity_key)}"


def split_topic_id(tid: str) -> tuple[str, str]:
    """Invert :func:`topic_id`: ``(query_id, entity_key)``; raise if ``tid`` is not such an id."""
    parts = tid.split(":")
    if len(parts) != 2:
        raise SentretError(f"topic id {tid!r} is not of the form <query-id>:<entity-key> with one bare ':'")
    return _unescape(parts[0], tid), _unescape(parts[1], tid)


# --------------------------------------------------------------------------------------------
# TREC qrels and run files
# --------------------------------------------------------------------------------------------


def _read_text(path: str | os.PathLike[str], what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise SentretError(f"cannot read {what} file {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise SentretError(f"{path}: the {what} file is not UTF-8 text") from None


def _write_text(path: str | os.PathLike[str], text: str, what: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise SentretError(f"cannot write {what} file {path}: {error.strerror or error}") from None


def parse_qrels(text: str, *, source: str = "<qrels>") -> Qrels:
    """Parse TREC qrels text: lines ``topic iteration docid grade`` (blank lines are skipped).

    A malformed line or a duplicate (topic, docid) raises :class:`SentretError` naming
    ``source`` and the 1-based line number.
    """
    qrels: Qrels = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{source}:{lineno}"
        if len(fields) != 4:
            raise SentretError(
                f"{where}: a qrels line has 4 fields 'topic 0 docid grade', found {len(fields)}"
            )
        topic, _, docid, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise SentretError(f"{where}: grade {grade_text!r} is not an integer") from None
        judged = qrels.setdefault(topic, {})
        if docid in judged:
            raise SentretError(f"{where}: document {docid!r} is judged twice for topic {topic!r}")
        judged[docid] = grade
    return qrels


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file (UTF-8); see :func:`parse_qrels`."""
    return parse_qrels(_read_text(path, "qrels"), source=str(path))


def parse_run(text: str, *, source: str = "<run>") -> Run:
    """Parse TREC run text: lines ``topic Q0 docid rank score tag`` (blank lines are skipped).

    The rank column must be an integer but is otherwise ignored (the scores order the
    items, as in trec_eval). A malformed line, a NaN score or a duplicate (topic, docid)
    raises :class:`SentretError` naming ``source`` and the 1-based line number.
    """
    run: Run = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{source}:{lineno}"
        if len(fields) != 6:
            raise SentretError(
                f"{where}: a run line has 6 fields 'topic Q0 docid rank score tag', found {len(fields)}"
            )
        topic, _, docid, rank_text, score_text, _ = fields
        try:
            int(rank_text)
        except ValueError:
            raise SentretError(f"{where}: rank {rank_text!r} is not an integer") from None
        try:
            score = float(score_text)
        except ValueError:
            raise SentretError(f"{where}: score {score_text!r} is not a number") from None
        if math.isnan(score):
            raise SentretError(f"{where}: score is NaN")
        ranked = run.setdefault(topic, {})
        if docid in ranked:
            raise SentretError(f"{where}: document {docid!r} is ranked twice for topic {topic!r}")
        ranked[docid] = score
    return run


def read_run(path: str | os.PathLike[str]) -> Run:
    """Read a TREC run file (UTF-8); see :func:`parse_run`."""
    return parse_run(_read_text(path, "run"), source=str(path))


def _check_field(value: str, what: str) -> str:
    if not isinstance(value, str) or not value or any(char.isspace() for char in value):
        raise SentretError(
            f"{what} {value!r} cannot be written to a TREC file: it must be a non-empty string "
            "without whitespace (build topic ids with topic_id())"
        )
    return value


def format_qrels(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """TREC qrels text, one ``topic 0 docid grade`` line per judgment, in mapping order."""
    lines = []
    for topic, judged in qrels.items():
        _check_field(topic, "topic id")
        for docid, grade in judged.items():
            _check_field(docid, "document id")
            if isinstance(grade, bool) or not isinstance(grade, (int, np.integer)):
                raise SentretError(f"grade {grade!r} of {topic} {docid} is not an integer")
            lines.append(f"{topic} 0 {docid} {int(grade)}\n")
    return "".join(lines)


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | os.PathLike[str]) -> None:
    """Write :func:`format_qrels` to ``path`` (UTF-8)."""
    _write_text(path, format_qrels(qrels), "qrels")


def format_run(run: Mapping[str, Mapping[str, float]], *, tag: str = "sentret") -> str:
    """TREC run text: per topic, items by score descending (ties by docid), ranks from 1.

    Scores are written with ``repr``, the shortest text that reads back to the same float.
    """
    _check_field(tag, "run tag")
    lines = []
    for topic, ranked in run.items():
        _check_field(topic, "topic id")
        items = []
        for docid, score in ranked.items():
            _check_field(docid, "document id")
            value = float(score)
            if math.isnan(value):
                raise SentretError(f"score of {topic} {docid} is NaN")
            items.append((-value, docid))
        for rank, (negated, docid) in enumerate(sorted(items), start=1):
            lines.append(f"{topic} Q0 {docid} {rank} {-negated!r} {tag}\n")
    return "".join(lines)


def write_run(
    run: Mapping[str, Mapping[str, float]], path: str | os.PathLike[str], *, tag: str = "sentret"
) -> None:
    """Write :func:`format_run` to ``path`` (UTF-8)."""
    _write_text(path, format_run(run, tag=tag), "run")


# --------------------------------------------------------------------------------------------
# Per-topic metrics on arrays
# --------------------------------------------------------------------------------------------


class _Groups(NamedTuple):
    """Tie groups in rank order: ``start`` = items ranked before, ``size`` n, ``total`` sum."""

    start: npt.NDArray[np.int64]
    size: npt.NDArray[np.int64]
    total: npt.NDArray[np.float64]


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise SentretError(f"unknown tie mode {mode!r}; choose one of {', '.join(MODES)}")


def _scores(scores: npt.ArrayLike) -> npt.NDArray[np.float64]:
    array = np.asarray(scores, dtype=np.float64)
    if array.ndim != 1:
        raise SentretError("scores must be a one-dimensional array")
    if np.isnan(array).any():
        raise SentretError("scores must not be NaN")
    return array


def _relevance(relevant: npt.ArrayLike, n: int) -> npt.NDArray[np.float64]:
    array = np.asarray(relevant)
    if array.shape != (n,):
        raise SentretError(f"expected {n} relevance values (one per score), got {array.shape}")
    if array.dtype != np.bool_ and not np.isin(array, (0, 1)).all():
        raise SentretError("relevance values must be booleans or 0/1; threshold the grades first")
    return array.astype(np.float64)


def _gain_values(gains: npt.ArrayLike, n: int | None) -> npt.NDArray[np.float64]:
    array = np.asarray(gains, dtype=np.float64)
    if array.ndim != 1 or (n is not None and array.shape[0] != n):
        raise SentretError(f"expected {n} gains (one per score), got shape {array.shape}")
    if not np.isfinite(array).all() or (array < 0).any():
        raise SentretError("gains must be finite and non-negative")
    return array


def _groups(scores: npt.NDArray[np.float64], values: npt.NDArray[np.float64], mode: str) -> _Groups:
    """Sort by score descending and split into tie groups.

    Tie-aware: groups are runs of equal scores. Pessimistic/optimistic: ties are broken by
    ``values`` ascending/descending and every item is its own group.
    """
    _check_mode(mode)
    n = scores.shape[0]
    if mode == "tie-aware":
        order = np.argsort(-scores, kind="stable")
        ranked = scores[order]
        start = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]]) if n else np.zeros(0, int)
        size = np.diff(np.r_[start, n])
        total = np.add.reduceat(values[order], start) if n else np.zeros(0)
        return _Groups(start.astype(np.int64), size.astype(np.int64), total.astype(np.float64))
    key = values if mode == "pessimistic" else -values
    order = np.lexsort((key, -scores))
    return _Groups(np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64), values[order])


def _expected_by_rank(groups: _Groups) -> npt.NDArray[np.float64]:
    """Expected value at each rank: every rank of a group holds the group mean ``total / n``."""
    return np.repeat(groups.total / np.maximum(groups.size, 1), groups.size)


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise SentretError(f"cutoff k must be a positive integer, got {k!r}")
    return int(k)


def _n_relevant(n_relevant: int | None, retrieved: npt.NDArray[np.float64]) -> int:
    found = int(retrieved.sum())
    if n_relevant is None:
        return found
    if n_relevant < found:
        raise SentretError(f"n_relevant={n_relevant} is smaller than the {found} relevant items retrieved")
    return int(n_relevant)


def precision_at_k(
    scores: npt.ArrayLike, relevant: npt.ArrayLike, k: int, *, mode: Mode = "tie-aware"
) -> float:
    """P@k = |relevant items at ranks 1..k| / k; tie-aware: each rank of a group holds r/n."""
    k = _check_k(k)
    score_array = _scores(scores)
    rel = _relevance(relevant, score_array.shape[0])
    expected = _expected_by_rank(_groups(score_array, rel, mode))
    return float(expected[:k].sum() / k)


def r_precision(
    scores: npt.ArrayLike,
    relevant: npt.ArrayLike,
    n_relevant: int | None = None,
    *,
    mode: Mode = "tie-aware",
) -> float:
    """R-Prec = P@R; R = ``n_relevant`` (relevant judged items, default: those retrieved).

    0 if R = 0.
    """
    score_array = _scores(scores)
    rel = _relevance(relevant, score_array.shape[0])
    total = _n_relevant(n_relevant, rel)
    return precision_at_k(score_array, rel, total, mode=mode) if total else 0.0


def average_precision(
    scores: npt.ArrayLike,
    relevant: npt.ArrayLike,
    n_relevant: int | None = None,
    *,
    mode: Mode = "tie-aware",
) -> float:
    """AP = (1/R) sum over relevant retrieved d of P@rank(d); 0 if R = 0.

    R = ``n_relevant`` (the relevant judged items of the topic, retrieved or not; default:
    those retrieved). Tie-aware (McSherry & Najork 2008): a group at ranks a+1..a+n with r
    relevant items and c relevant items before it adds
    ``(r/n) * sum_{j=1..n} (c + 1 + (j-1)(r-1)/(n-1)) / (a+j)`` to R*AP.
    """
    score_array = _scores(scores)
    rel = _relevance(relevant, score_array.shape[0])
    total = _n_relevant(n_relevant, rel)
    if total == 0 or score_array.shape[0] == 0:
        return 0.0
    groups = _groups(score_array, rel, mode)
    r, n = groups.total, groups.size.astype(np.float64)
    before = np.cumsum(r) - r
    slope = np.where(n > 1, (r - 1) / np.maximum(n - 1, 1), 0.0)
    group_of = np.repeat(np.arange(n.shape[0]), groups.size)
    rank = np.arange(1, score_array.shape[0] + 1, dtype=np.float64)
    j = rank - groups.start[group_of]
    terms = (r / n)[group_of] * (before[group_of] + 1 + (j - 1) * slope[group_of]) / rank
    return float(terms.sum() / total)


def reciprocal_rank(scores: npt.ArrayLike, relevant: npt.ArrayLike, *, mode: Mode = "tie-aware") -> float:
    """RR = 1 / rank of the first relevant item; 0 if none is retrieved.

    Tie-aware: in the first group holding relevant items (ranks a+1..a+n, r relevant) the
    first relevant item is at position i with probability ``p_i = C(n-i, r-1) / C(n, r)``,
    computed by the recurrence ``p_1 = r/n``, ``p_{i+1} = p_i (n-i-r+1) / (n-i)``;
    ``E[RR] = sum_i p_i / (a+i)``.
    """
    score_array = _scores(scores)
    rel = _relevance(relevant, score_array.shape[0])
    groups = _groups(score_array, rel, mode)
    hits = np.flatnonzero(groups.total > 0)
    if hits.shape[0] == 0:
        return 0.0
    first = hits[0]
    a, n, r = int(groups.start[first]), int(groups.size[first]), float(groups.total[first])
    i = np.arange(1, n, dtype=np.float64)
    ratios = np.maximum((n - i - r + 1) / (n - i), 0.0)
    probability = (r / n) * np.r_[1.0, np.cumprod(ratios)]
    return float((probability / (a + np.arange(1, n + 1))).sum())


def _discounts(m: int) -> npt.NDArray[np.float64]:
    """The DCG discounts ``1 / log2(1 + rank)`` for ranks 1..m."""
    return 1.0 / np.log2(np.arange(2, m + 2, dtype=np.float64))


def dcg_at_k(
    scores: npt.ArrayLike, gains: npt.ArrayLike, k: int | None = None, *, mode: Mode = "tie-aware"
) -> float:
    """DCG@k = sum_{rank<=k} gain / log2(1 + rank) (k=None: whole ranking).

    Tie-aware: each rank of a group holds the group's mean gain.
    """
    score_array = _scores(scores)
    gain_array = _gain_values(gains, score_array.shape[0])
    expected = _expected_by_rank(_groups(score_array, gain_array, mode))
    m = expected.shape[0] if k is None else min(_check_k(k), expected.shape[0])
    return float((expected[:m] * _discounts(m)).sum())


def ideal_dcg_at_k(ideal_gains: npt.ArrayLike, k: int | None = None) -> float:
    """IDCG@k: DCG@k of the judged gains sorted descending."""
    ordered = np.sort(_gain_values(ideal_gains, None))[::-1]
    m = ordered.shape[0] if k is None else min(_check_k(k), ordered.shape[0])
    return float((ordered[:m] * _discounts(m)).sum())


def ndcg_at_k(
    scores: npt.ArrayLike,
    gains: npt.ArrayLike,
    k: int | None = None,
    ideal_gains: npt.ArrayLike | None = None,
    *,
    mode: Mode = "tie-aware",
) -> float:
    """NDCG@k = DCG@k / IDCG@k; ``ideal_gains`` = gains of every judged item (default:
    ``gains``); 0 when IDCG@k = 0. Tie-aware by linearity of the expectation (IDCG is fixed).
    """
    ideal = ideal_dcg_at_k(gains if ideal_gains is None else ideal_gains, k)
    if ideal <= 0:
        return 0.0
    return dcg_at_k(scores, gains, k, mode=mode) / ideal


# --------------------------------------------------------------------------------------------
# Metric names, gains, and evaluation of a whole run
# --------------------------------------------------------------------------------------------


class Metric(NamedTuple):
    """A parsed metric name: ``kind`` in map/mrr/r-prec/p/ndcg, cutoff ``k``, canonical ``name``."""

    kind: str
    k: int | None
    name: str


def parse_metric(name: str) -> Metric:
    """Parse ``"map"``, ``"mrr"``, ``"r-prec"``, ``"p@<k>"``, ``"ndcg@<k>"`` or ``"ndcg"``.

    Case-insensitive; aliases ``ap``, ``rr``, ``rprec``. Unknown names raise
    :class:`SentretError` listing the allowed forms.
    """
    text = str(name).strip().lower()
    text = _ALIASES.get(text, text)
    if text in ("map", "mrr", "r-prec", "ndcg"):
        return Metric(text, None, text)
    match = re.fullmatch(r"(p|ndcg)@(\d+)", text)
    if match and int(match.group(2)) >= 1:
        k = int(match.group(2))
        return Metric(match.group(1), k, f"{match.group(1)}@{k}")
    raise SentretError(f"unknown metric {name!r}; allowed: {', '.join(METRIC_FORMS)} (k >= 1)")


def graded_gain(grade: int) -> float:
    """Gain of a grade on the 1-4 scale: ``2**(g-1) - 1`` = (0, 1, 3, 7); 0 for g <= 0."""
    return float(2 ** (grade - 1) - 1) if grade >= 1 else 0.0


def binary_gain(grade: int) -> float:
    """Gain of a 0/1 label: ``2**g - 1`` (label 1 -> 1); 0 for g <= 0."""
    return float(2**grade - 1) if grade >= 1 else 0.0


def resolve_scale(qrels: Mapping[str, Mapping[str, int]], scale: Scale = "auto") -> str:
    """``"binary"`` or ``"graded"``; ``"auto"`` is binary iff no grade in ``qrels`` exceeds 1."""
    if scale not in SCALES:
        raise SentretError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    if scale != "auto":
        return scale
    top = max((g for judged in qrels.values() for g in judged.values()), default=0)
    return "binary" if top <= 1 else "graded"


def _gain_function(gains: GainSpec | None, scale: str) -> Callable[[int], float]:
    if gains is None:
        return binary_gain if scale == "binary" else graded_gain
    if callable(gains):
        function: Callable[[int], float] = gains
        return lambda g: float(function(g)) if g >= 1 else 0.0
    table = dict(gains)

    def lookup(grade: int) -> float:
        if grade <= 0:
            return 0.0
        if grade not in table:
            raise SentretError(f"no gain given for grade {grade}; the gain map has {sorted(table)}")
        return float(table[grade])

    return lookup


def _map_gains(grades: Iterable[int], gain: Callable[[int], float]) -> npt.NDArray[np.float64]:
    array = np.fromiter(grades, dtype=np.int64)
    if array.shape[0] == 0:
        return np.zeros(0)
    unique, inverse = np.unique(array, return_inverse=True)
    values = np.array([gain(int(g)) for g in unique], dtype=np.float64)
    return _gain_values(values[inverse.reshape(-1)], None)


def _topic_metrics(
    judged: Mapping[str, int],
    ranked: Mapping[str, float],
    metrics: Sequence[Metric],
    mode: Mode,
    threshold: int,
    gain: Callable[[int], float],
) -> list[float]:
    docids = list(ranked)
    scores = np.fromiter((ranked[d] for d in docids), dtype=np.float64, count=len(docids))
    grades = [judged.get(d, 0) for d in docids]
    relevant = np.array([g >= threshold for g in grades], dtype=bool)
    total = sum(1 for g in judged.values() if g >= threshold)
    gains = _map_gains(grades, gain)
    ideal = _map_gains(judged.values(), gain)
    values = []
    for metric in metrics:
        if metric.kind == "map":
            values.append(average_precision(scores, relevant, total, mode=mode))
        elif metric.kind == "mrr":
            values.append(reciprocal_rank(scores, relevant, mode=mode))
        elif metric.kind == "r-prec":
            values.append(r_precision(scores, relevant, total, mode=mode))
        elif metric.kind == "p":
            assert metric.k is not None
            values.append(precision_at_k(scores, relevant, metric.k, mode=mode))
        else:
            values.append(ndcg_at_k(scores, gains, metric.k, ideal, mode=mode))
    return values


def _check_run(run: Mapping[str, Mapping[str, float]]) -> None:
    for topic, ranked in run.items():
        for docid, score in ranked.items():
            try:
                value = float(score)
            except (TypeError, ValueError):
                value = math.nan
            if math.isnan(value):
                raise SentretError(
                    f"run score {score!r} of topic {topic!r}, document {docid!r} is not a number"
                )


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] | str = DEFAULT_METRICS,
    *,
    mode: Mode = "tie-aware",
    scale: Scale = "auto",
    relevance_threshold: int | None = None,
    gains: GainSpec | None = None,
    empty_topics: Literal["skip", "zero"] = "skip",
) -> pd.DataFrame:
    """Per-topic metric values: rows = qrels topics (index ``topic``), columns = metric names.

    ``relevance_threshold`` defaults to 3 on a graded scale and 1 on a binary one; ``gains``
    (a grade -> gain mapping or function, used only for grades >= 1) defaults to the scale's
    gain (see the module docstring). Topics with no relevant judged item are skipped
    (``empty_topics="skip"``, listed in ``result.attrs["skipped_topics"]``) or score 0
    (``"zero"``). The mean over topics is ``result.mean()``. Pass ``scale`` explicitly when
    evaluating a subset of a graded collection, so the detection cannot flip.
    """
    _check_mode(mode)
    if empty_topics not in ("skip", "zero"):
        raise SentretError(f"empty_topics must be 'skip' or 'zero', got {empty_topics!r}")
    if not qrels:
        raise SentretError("the qrels are empty: there is nothing to evaluate")
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise SentretError(f"no metrics asked for; allowed: {', '.join(METRIC_FORMS)}")
    parsed = list({m.name: m for m in map(parse_metric, names)}.values())
    resolved = resolve_scale(qrels, scale)
    threshold = relevance_threshold
    if threshold is None:
        threshold = BINARY_THRESHOLD if resolved == "binary" else GRADED_THRESHOLD
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)) or threshold < 1:
        raise SentretError(f"relevance_threshold must be an integer >= 1, got {threshold!r}")
    gain = _gain_function(gains, resolved)
    _check_run(run)
    rows: dict[str, list[float]] = {}
    skipped = []
    for topic, judged in qrels.items():
        if not any(g >= threshold for g in judged.values()):
            if empty_topics == "skip":
                skipped.append(topic)
            else:
                rows[topic] = [0.0] * len(parsed)
            continue
        rows[topic] = _topic_metrics(judged, run.get(topic, {}), parsed, mode, threshold, gain)
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=[m.name for m in parsed])
    frame = frame.astype(np.float64)
    frame.index.name = "topic"
    frame.attrs["skipped_topics"] = tuple(skipped)
    return frame


# --------------------------------------------------------------------------------------------
# Significance
# --------------------------------------------------------------------------------------------


def _paired(model: npt.ArrayLike, baseline: npt.ArrayLike) -> npt.NDArray[np.float64]:
    x = np.asarray(model, dtype=np.float64)
    y = np.asarray(baseline, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise SentretError(f"paired tests need equal-length vectors, got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise SentretError("paired tests got NaN per-topic values")
    return x - y


def paired_t_test(model: npt.ArrayLike, baseline: npt.ArrayLike) -> float:
    """Two-tailed p-value of the paired t-test (``scipy.stats.ttest_rel``).

    All differences zero -> 1.0; fewer than two topics -> NaN (the test is undefined).
    """
    diff = _paired(model, baseline)
    if not diff.any():
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_rel(np.asarray(model, float), np.asarray(baseline, float))
    return float(result.pvalue)


def wilcoxon_test(model: npt.ArrayLike, baseline: npt.ArrayLike) -> float:
    """Two-tailed p-value of the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, zero
    differences dropped as in Wilcoxon's original method). All differences zero -> 1.0."""
    diff = _paired(model, baseline)
    if not diff.any():
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.wilcoxon(diff)
    return float(result.pvalue)


def compare(per_topic: Mapping[str, pd.DataFrame], baseline: str, *, alpha: float = 0.05) -> pd.DataFrame:
    """Compare each model's per-topic values with ``baseline``'s, metric by metric.

    Every frame must hold the baseline's topics (rows) and metrics (columns). Returns one row
    per (model, metric), baseline included: ``mean``, ``diff`` (mean - baseline mean),
    ``p_ttest``, ``p_wilcoxon`` (both two-tailed, paired) and ``significant`` (both p < alpha).
    """
    if baseline not in per_topic:
        raise SentretError(f"baseline {baseline!r} is not among the models {sorted(per_topic)}")
    base = per_topic[baseline]
    topics = set(base.index)
    records = []
    for model, frame in per_topic.items():
        if set(frame.index) != topics:
            raise SentretError(f"model {model!r} is evaluated on other topics than the baseline {baseline!r}")
        missing = [m for m in base.columns if m not in frame.columns]
        if missing:
            raise SentretError(f"model {model!r} lacks the metrics {missing}")
        aligned = frame.loc[base.index]
        for metric in base.columns:
            x = aligned[metric].to_numpy(dtype=np.float64)
            y = base[metric].to_numpy(dtype=np.float64)
            p_t, p_w = paired_t_test(x, y), wilcoxon_test(x, y)
            records.append(
                {
                    "model": model,
                    "metric": metric,
                    "mean": float(x.mean()) if x.size else math.nan,
                    "diff": float((x - y).mean()) if x.size else math.nan,
                    "p_ttest": p_t,
                    "p_wilcoxon": p_w,
                    "significant": bool(p_t < alpha and p_w < alpha),
                }
            )
    return pd.DataFrame.from_records(
        records,
        columns=["model", "metric", "mean", "diff", "p_ttest", "p_wilcoxon", "significant"],
    )


# --------------------------------------------------------------------------------------------
# Tuning and cross-validation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TuningResult:
    """The best ``params`` found, their objective ``score``, and every evaluation in call order."""

    params: Params
    score: float
    evaluations: tuple[tuple[Params, float], ...] = field(default=())


def _check_space(space: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    if not space:
        raise SentretError("the parameter space is empty")
    grids = {name: list(values) for name, values in space.items()}
    for name, values in grids.items():
        if not values:
            raise SentretError(f"parameter {name!r} has no values to try")
    return grids


class _Objective:
    """Calls the objective once per point (cached by grid indices) and records the calls."""

    def __init__(self, objective: Callable[[Params], float], grids: dict[str, list[Any]]):
        self.objective = objective
        self.grids = grids
        self.cache: dict[tuple[int, ...], float] = {}
        self.log: list[tuple[Params, float]] = []

    def params(self, point: tuple[int, ...]) -> Params:
        return {name: self.grids[name][i] for name, i in zip(self.grids, point, strict=True)}

    def __call__(self, point: tuple[int, ...]) -> float:
        if point not in self.cache:
            params = self.params(point)
            value = float(self.objective(dict(params)))
            if math.isnan(value):
                raise SentretError(f"the objective returned NaN for {params}")
            self.cache[point] = value
            self.log.append((params, value))
        return self.cache[point]


def grid_search(objective: Callable[[Params], float], space: Mapping[str, Sequence[Any]]) -> TuningResult:
    """Maximise ``objective`` over the full grid (the product of every parameter's values).

    Points are visited in ``itertools.product`` order of ``space``; a tie keeps the first point.
    """
    grids = _check_space(space)
    f = _Objective(objective, grids)
    best_point: tuple[int, ...] | None = None
    best = -math.inf
    for point in itertools.product(*(range(len(v)) for v in grids.values())):
        value = f(point)
        if best_point is None or value > best:
            best_point, best = point, value
    assert best_point is not None
    return TuningResult(f.params(best_point), best, tuple(f.log))


def coordinate_ascent(
    objective: Callable[[Params], float],
    space: Mapping[str, Sequence[Any]],
    start: Mapping[str, Any] | None = None,
    *,
    max_rounds: int = 100,
) -> TuningResult:
    """Greedy coordinate ascent: maximise ``objective`` one parameter at a time.

    From ``start`` (default: every parameter's first value), each round visits the
    parameters in ``space`` order and moves one to the value of its grid that scores best
    with the others fixed; ties keep the current value, else the earliest grid value. Stops
    after a round without a strict gain (or ``max_rounds``). Each point is evaluated once.
    """
    grids = _check_space(space)
    begin = dict(start or {})
    unknown = [name for name in begin if name not in grids]
    if unknown:
        raise SentretError(f"start names unknown parameters {unknown}; known: {list(grids)}")
    point = []
    for name, values in grids.items():
        if name not in begin:
            point.append(0)
        elif begin[name] in values:
            point.append(values.index(begin[name]))
        else:
            raise SentretError(f"start value {begin[name]!r} of {name!r} is not in {values}")
    f = _Objective(objective, grids)
    best = f(tuple(point))
    for _ in range(max_rounds):
        improved = False
        for axis, values in enumerate(grids.values()):
            chosen = point[axis]
            for i in range(len(values)):
                candidate = (*point[:axis], i, *point[axis + 1 :])
                value = f(candidate)
                if value > best:
                    chosen, best = i, value
            if chosen != point[axis]:
                point[axis] = chosen
                improved = True
        if not improved:
            break
    return TuningResult(f.params(tuple(point)), best, tuple(f.log))


@dataclass(frozen=True)
class Fold:
    """One fold: the topics tuned on, the topics tested on, and the parameters chosen."""

    index: int
    train: tuple[str, ...]
    test: tuple[str, ...]
    params: Params


@dataclass(frozen=True)
class CrossValidationResult:
    """Test-fold per-topic values (rows = topics, each tested once) and the folds."""

    per_topic: pd.DataFrame
    folds: tuple[Fold, ...]


def _as_frame(values: PerTopicValues) -> pd.DataFrame:
    if isinstance(values, pd.DataFrame):
        return values.copy()
    if isinstance(values, pd.Series):
        return values.to_frame(values.name if values.name is not None else "value")
    return pd.Series(dict(values), dtype=np.float64).to_frame("value")


def _run_fold(
    index: int,
    train: Sequence[str],
    test: Sequence[str],
    tune: Callable[[list[str]], Params],
    evaluate: Callable[[list[str], Params], PerTopicValues],
) -> tuple[Fold, pd.DataFrame]:
    params = dict(tune(list(train)))
    frame = _as_frame(evaluate(list(test), dict(params)))
    allowed = set(test)
    stray = [t for t in frame.index if t not in allowed]
    if stray:
        raise SentretError(f"fold {index}: evaluate returned non-test topics {stray[:5]}")
    return Fold(index, tuple(train), tuple(test), params), frame


def _combine(folds: list[tuple[Fold, pd.DataFrame]]) -> CrossValidationResult:
    frames = [frame for _, frame in folds]
    per_topic = pd.concat(frames) if frames else pd.DataFrame()
    per_topic.index.name = "topic"
    return CrossValidationResult(per_topic, tuple(fold for fold, _ in folds))


def cross_validate(
    topics: Iterable[str],
    k: int,
    seed: int,
    tune: Callable[[list[str]], Params],
    evaluate: Callable[[list[str], Params], PerTopicValues],
) -> CrossValidationResult:
    """k-fold cross-validation by topic: tune on k-1 folds, evaluate on the held-out one.

    The distinct topics are sorted, shuffled with ``numpy.random.default_rng(seed)`` and split
    into k near-equal folds, so the folds depend only on the topic set and the seed. ``tune``
    sees only training topics; ``evaluate(test_topics, params)`` returns per-topic values (a
    DataFrame, Series or mapping) for test topics only. Report ``per_topic`` (test folds only).
    """
    ordered = sorted(set(topics))
    if isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= len(ordered):
        raise SentretError(f"k must be an integer from 2 to the number of topics ({len(ordered)}), got {k!r}")
    permutation = np.random.default_rng(seed).permutation(len(ordered))
    chunks = [sorted(chunk.tolist()) for chunk in np.array_split(permutation, k)]
    results = []
    for index, chunk in enumerate(chunks):
        held = set(chunk)
        test = [ordered[i] for i in chunk]
        train = [t for i, t in enumerate(ordered) if i not in held]
        results.append(_run_fold(index, train, test, tune, evaluate))
    return _combine(results)


def train_test(
    train_topics: Iterable[str],
    test_topics: Iterable[str],
    tune: Callable[[list[str]], Params],
    evaluate: Callable[[list[str], Params], PerTopicValues],
    *,
    allow_overlap: bool = False,
) -> CrossValidationResult:
    """Tune on one topic set, evaluate on another (e.g. train on one collection, test on another).

    Shared topic ids raise :class:`SentretError` unless ``allow_overlap`` (for two collections
    whose ids merely coincide).
    """
    train = list(dict.fromkeys(train_topics))
    test = list(dict.fromkeys(test_topics))
    if not train or not test:
        raise SentretError("train_test needs at least one training and one test topic")
    shared = set(train) & set(test)
    if shared and not allow_overlap:
        raise SentretError(
            f"{len(shared)} topics are in both the training and the test set, e.g. {sorted(shared)[0]!r}"
        )
    return _combine([_run_fold(0, train, test, tune, evaluate)])


# --------------------------------------------------------------------------------------------
# Coverage curve
# --------------------------------------------------------------------------------------------


def coverage_fraction(
    first_hit_k: Mapping[str, float | None], ks: Sequence[float] | npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """For each k in ``ks``, the fraction of topics whose first relevant item enters the
    candidate set at a (1-based) k' <= k. ``None`` or NaN = never covered."""
    if not first_hit_k:
        raise SentretError("coverage needs at least one topic")
    hits = np.array(
        [math.inf if v is None or math.isnan(float(v)) else float(v) for v in first_hit_k.values()]
    )
    if (hits < 1).any():
        raise SentretError("first-hit ranks are 1-based: every value must be >= 1 or None")
    grid = np.asarray(ks, dtype=np.float64).reshape(-1)
    ordered = np.sort(hits)
    return np.searchsorted(ordered, grid, side="right") / float(hits.shape[0])


def coverage_curve(
    first_hits: Mapping[str, Mapping[str, float | None]], ks: Sequence[float] | npt.ArrayLike
) -> pd.DataFrame:
    """Coverage fractions of several candidate sets (e.g. ``{"S_qe": ..., "Ŝ_qe": ...}``):
    index ``k``, one column per set."""
    grid = np.asarray(ks, dtype=np.float64).reshape(-1)
    columns = {label: coverage_fraction(hits, grid) for label, hits in first_hits.items()}
    return pd.DataFrame(columns, index=pd.Index(grid, name="k"))
