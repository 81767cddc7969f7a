"""Assessment sessions: pooling (query, entity) topics for grading, and evaluating models on the grades.

Streamlit-free glue between the support engine (:mod:`sentret_core.support`), the judgments
store (:mod:`sentret_core.judgments`), the agreement measures and the evaluation metrics; the
Annotate, Admin and Evaluate pages and ``sentret judgments …`` are thin over it.

**Topics.** A topic is a (query, entity) pair. Topic files and the Admin page's text area hold
one ``query<TAB>entity`` per line; without an entity the query stands for *all its top
entities*: the first ``top_entities`` of :func:`~sentret_core.support.support`'s ranking (KLD
over the ranker's top-k, labels other than CARDINAL and ORDINAL). Blank lines and lines
starting with ``#`` are skipped.

**Entity keys.** An entity is named by its *entity key* ``text|LABEL`` (``Picasso|PERSON``),
the surface text and spaCy label that identify it in the index (SPEC.md: "Paris/GPE" and
"Paris/PERSON" differ), the form the Explore page's URL uses. Given as plain ``text`` (or
with another letter case), the entity of that text — and label, if given — mentioned in the
most sentences is taken (ties: the lower entity id). Pool items store the key as their
``entity``, so a session's TREC topic id is :func:`sentret_core.evaluation.trec_io.topic_id` of
(query, entity key), e.g. ``picasso%20peace:Picasso|PERSON`` — the same id the store's qrels
export writes.

**Pooling** (TREC-style, Blanco & Zaragoza §4 grade the pairs' candidate sentences): for each
topic, every pooling model ranks the entity's candidate support sentences
(:meth:`QueryContext.ranked_candidates`: a sentence scorer ranks the sentences of its own
top-k that mention the entity, S_qe) and the pool is the union of each model's top ``depth``
(:func:`sentret_core.judgments.pool`), shuffled so that the order tells nothing about which
model found a sentence. Items are grouped by topic — an assessor grades one (query, entity)
pair's sentences together, as the paper's judges did — topics in the order given (entities in
rank order), sentences shuffled within each topic with a seed derived from the session's
recorded seed and the topic id. Each item keeps a snapshot of the sentence's text and
document title, so the session can be graded and exported without the index.

**Evaluation.** Every model scores each judged topic's candidates exactly as the support
engine does (:meth:`QueryContext.candidates`, run docids = sentence ids); the metrics are
tie-aware (:func:`sentret_core.evaluation.measures.evaluate` with ``scale="graded"``: relevant iff
grade ≥ 3, NDCG gains 0, 1, 3, 7 for grades 1-4), unjudged candidates count as non-relevant,
topics without a relevant judged sentence are skipped, and each model is compared with a
baseline by paired t-test and Wilcoxon signed-rank (:func:`sentret_core.evaluation.significance.compare`).
The coverage curve (seed 002 Fig. 2) is the fraction of topics with a relevant sentence in
S_qe (the ranker's top-k) and in Ŝ_qe (with ±``window`` context sentences) as k grows.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from sentret_core.annotation.store import Judgment, PoolItem, PoolSettings, SessionInfo, pool
from sentret_core.defaults import DEFAULT_K, DEFAULT_RANKER, DEFAULT_SUPPORT_MODELS, DEFAULT_WINDOW, RELEVANT_GRADE
from sentret_core.errors import SentretError
from sentret_core.evaluation.coverage import coverage_curve
from sentret_core.evaluation.measures import DEFAULT_METRICS, evaluate, parse_metric
from sentret_core.evaluation.significance import compare
from sentret_core.evaluation.trec_io import Qrels, Run, parse_qrels, split_topic_id, topic_id

if TYPE_CHECKING:
    from sentret_core.annotation.store import Admin, JudgmentStore
    from sentret_core.index.reader import Index
    from sentret_core.support.context import QueryContext

DB_ENV = "SENTRET_JUDGMENTS_DB"
DEFAULT_DB = Path("data") / "judgments" / "sentret.sqlite"
DEFAULT_DEPTH = 10
DEFAULT_TOP_ENTITIES = 5
EVAL_METRICS: tuple[str, ...] = (*DEFAULT_METRICS, "ndcg")
KEY_SEP = "|"


def judgments_db_path() -> Path:
    """The app's judgments database: ``$SENTRET_JUDGMENTS_DB``, else ``data/judgments/sentret.sqlite``."""
    return Path(os.environ.get(DB_ENV, "").strip() or DEFAULT_DB)


def open_store(path: str | os.PathLike[str] | None = None) -> JudgmentStore:
    """Open (creating its folder if needed) the judgments database at ``path`` (default: the app's)."""
    from sentret_core.annotation.store import JudgmentStore

    target = Path(path) if path is not None else judgments_db_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SentretError(f"cannot create the folder of {target}: {exc.strerror or exc}") from None
    return JudgmentStore(target)


# --------------------------------------------------------------------------- topics and entity keys


class TopicLine(NamedTuple):
    """One requested topic: a query and an entity key, or None for all the query's top entities."""

    query: str
    entity: str | None
    line: int = 0


def parse_topics(text: str) -> list[TopicLine]:
    """``query<TAB>entity`` lines (entity optional); blank and ``#`` lines skipped, repeats dropped."""
    found: dict[tuple[str, str | None], TopicLine] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        parts = raw.split("\t")
        if len(parts) > 2:
            raise SentretError(
                f"topics line {number}: expected 'query<TAB>entity' (one tab at most), "
                f"found {len(parts) - 1} tabs"
            )
        query = " ".join(parts[0].split())
        entity = " ".join(parts[1].split()) if len(parts) == 2 else ""
        if not query:
            raise SentretError(f"topics line {number}: the query is empty")
        key = (query, entity or None)
        found.setdefault(key, TopicLine(query, entity or None, number))
    if not found:
        raise SentretError("no topics: give one 'query<TAB>entity' per line (the entity is optional)")
    return list(found.values())


def entity_key(text: str, label: str) -> str:
    """``text|LABEL``: how sessions, topic ids and the Explore page name an entity."""
    return f"{text}{KEY_SEP}{label}"


def split_entity_key(key: str) -> tuple[str, str | None]:
    """``(text, label)`` of an entity key; label None when the key is plain text."""
    text, sep, label = key.rpartition(KEY_SEP)
    if sep and text.strip() and label and label.replace("_", "").isalpha() and label.isupper():
        return text.strip(), label
    return key.strip(), None


def find_entity(index: Index, key: str) -> int:
    """The entity id named by ``key`` (``text|LABEL`` or ``text``; see the module docstring)."""
    text, label = split_entity_key(key)
    if label is not None and (text, label) in index.entity_index:
        return index.entity_index[(text, label)]
    matches = _matching(index, text, label)
    if not matches and label is not None:  # "AC|DC": a text that merely looks like text|LABEL
        matches = _matching(index, key.strip(), None)
    if not matches:
        wanted = text.casefold()
        pairs = zip(index.entity_texts, index.entity_labels)
        labels = sorted({lab for t, lab in pairs if t.casefold() == wanted})
        hint = f" (it exists as {', '.join(entity_key(text, lab) for lab in labels)})" if labels else ""
        raise SentretError(f"no entity {key!r} in the index{hint}")
    sf = index.entities["sf"].to_numpy()
    return max(matches, key=lambda i: (int(sf[i]), -i))


def _matching(index: Index, text: str, label: str | None) -> list[int]:
    wanted = text.casefold()
    return [
        i
        for i, (t, lab) in enumerate(zip(index.entity_texts, index.entity_labels))
        if t.casefold() == wanted and (label is None or lab == label)
    ]


def index_entity_key(index: Index, entity: int) -> str:
    return entity_key(index.entity_texts[entity], index.entity_labels[entity])


# --------------------------------------------------------------------------- pooling


@dataclass(frozen=True)
class PooledTopic:
    """One (query, entity) topic of a pool: each model's top ``depth`` and the shuffled union."""

    query: str
    entity: str  # entity key
    entity_id: int
    topic_id: str
    ranked: dict[str, tuple[int, ...]]  # model → its top-depth candidates, best first
    pooled: tuple[int, ...]  # the union, in the order shown to assessors


@dataclass(frozen=True)
class PoolPlan:
    """What a session is created from: the items, the settings recorded, and what was left out."""

    items: tuple[PoolItem, ...]
    settings: PoolSettings
    topics: tuple[PooledTopic, ...]
    notes: tuple[str, ...] = ()  # requested topics that added nothing, and why


def topic_label(topic: str) -> str:
    """A topic id for people: ``query · text (LABEL)``; the id itself if it is not a (query, entity) id."""
    try:
        query, key = split_topic_id(topic)
    except SentretError:
        return topic
    text, label = split_entity_key(key)
    return f"{query} · {text} ({label})" if label else f"{query} · {text}"


def topic_seed(seed: int, topic: str) -> int:
    """The shuffle seed of one topic: the first 8 bytes of sha256("<seed>:<topic id>")."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{topic}".encode()).digest()[:8], "big")


def _check_models(models: Sequence[str]) -> tuple[str, ...]:
    from sentret_core.support.context import check_support_model

    names = tuple(dict.fromkeys(check_support_model(m.strip()) for m in models if m.strip()))
    if not names:
        raise SentretError("choose at least one model")
    return names


def _check_int(value: object, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise SentretError(f"{what} must be an integer from {lo} to {hi:,} (got {value!r})")
    return value


def build_pool(
    index: Index,
    topics: Sequence[TopicLine] | str,
    *,
    models: Sequence[str] = DEFAULT_SUPPORT_MODELS,
    depth: int = DEFAULT_DEPTH,
    seed: int = 0,
    top_entities: int = DEFAULT_TOP_ENTITIES,
    ranker: str = DEFAULT_RANKER,
    k: int = DEFAULT_K,
    entity_labels: Iterable[str] | None = None,
) -> PoolPlan:
    """Pool every topic's candidates: the union of each model's top ``depth``, shuffled (module docstring).

    ``topics`` is a list of :class:`TopicLine` or the text of a topics file. A topic without any
    candidate sentence is left out with a note; no item at all is an error.
    """
    from sentret_core.support.context import QueryContext
    from sentret_core.support.engine import support

    lines = parse_topics(topics) if isinstance(topics, str) else list(topics)
    if not lines:
        raise SentretError("no topics to pool")
    names = _check_models(models)
    depth = _check_int(depth, "the pool depth", 1, 1000)
    top_entities = _check_int(top_entities, "the number of top entities", 1, 1000)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SentretError(f"the seed must be an integer (got {seed!r})")
    labels = list(entity_labels) if entity_labels is not None else None

    by_query: dict[str, list[TopicLine]] = {}
    for line in lines:
        by_query.setdefault(line.query, []).append(line)
    pooled: list[PooledTopic] = []
    notes: list[str] = []
    seen: set[tuple[str, int]] = set()
    for query, asked in by_query.items():
        ctx = QueryContext(index, query, ranker=ranker, k=k, entity_labels=labels)
        if ctx.reason:
            notes.append(f"{query!r}: {ctx.reason}")
            continue
        entities: list[int] = []
        for line in asked:
            if line.entity is not None:
                entities.append(find_entity(index, line.entity))
                continue
            found = support(index, query, ranker=ranker, k=k, top_entities=top_entities,
                            models=(names[0],), per_entity=1, entity_labels=labels)  # fmt: skip
            if not found.entities:
                notes.append(f"{query!r}: {found.reason or 'no entity in the top sentences'}")
            entities += [es.entity.entity for es in found.entities]
        for entity in entities:
            if (query, entity) in seen:
                continue
            seen.add((query, entity))
            topic = _pool_topic(index, ctx, entity, names, depth, seed)
            if topic.pooled:
                pooled.append(topic)
            else:
                notes.append(f"{query!r} / {topic.entity}: no model has a candidate sentence")
    items = tuple(
        PoolItem(t.query, t.entity, sid, index.texts[sid], index.titles[int(index.sent_doc[sid])])
        for t in pooled
        for sid in t.pooled
    )
    if not items:
        why = "; ".join(notes) or "no candidate sentences"
        raise SentretError(f"nothing to grade: {why}")
    return PoolPlan(items, PoolSettings(names, depth, seed), tuple(pooled), tuple(notes))


def _pool_topic(
    index: Index, ctx: QueryContext, entity: int, models: Sequence[str], depth: int, seed: int
) -> PooledTopic:
    key = index_entity_key(index, entity)
    tid = topic_id(ctx.query, key)
    ranked = {m: tuple(int(s) for s in ctx.ranked_candidates(entity, m)[0][:depth]) for m in models}
    union = pool(ranked, depth, topic_seed(seed, tid)) if any(ranked.values()) else []
    return PooledTopic(ctx.query, key, entity, tid, ranked, tuple(union))


def create_session(
    store: JudgmentStore,
    name: str,
    index: Index,
    topics: Sequence[TopicLine] | str,
    passphrase: str,
    **options: Any,
) -> tuple[SessionInfo, PoolPlan]:
    """Pool ``topics`` (:func:`build_pool` with ``options``) and store them as session ``name``."""
    if not isinstance(name, str) or not name.strip():
        raise SentretError("give the session a name")
    if not isinstance(passphrase, str) or not passphrase:
        raise SentretError("a session needs a non-empty passphrase")
    if any(info.name == name.strip() for info in store.sessions()):
        raise SentretError(f"a session named {name.strip()!r} already exists")
    plan = build_pool(index, topics, **options)
    info = store.create_session(name, index.path, list(plan.items), passphrase, plan.settings)
    return info, plan


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class AgreementSummary:
    """Agreement on the items graded by more than one annotator (see :mod:`sentret_core.agreement`)."""

    annotators: tuple[str, ...]
    items: int  # items with at least one grade
    shared: int  # items with at least two grades
    complete: int  # items graded by every annotator
    cohen: pd.DataFrame  # annotator × annotator Cohen's κ (NaN: no shared item)
    pairs: tuple[tuple[str, str, int, float | None], ...]  # (a, b, shared items, κ)
    fleiss: float | None
    alpha: float | None  # Krippendorff's α, ordinal
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "annotators": list(self.annotators),
            "items": self.items,
            "shared_items": self.shared,
            "complete_items": self.complete,
            "cohen_kappa": [
                {"a": a, "b": b, "shared_items": n, "kappa": kappa} for a, b, n, kappa in self.pairs
            ],
            "fleiss_kappa": self.fleiss,
            "krippendorff_alpha_ordinal": self.alpha,
            "notes": list(self.notes),
        }


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def agreement_summary(judgments: Iterable[Judgment]) -> AgreementSummary:
    """Cohen's κ per pair, Fleiss' κ (on items graded by all) and ordinal Krippendorff's α (items with
    ≥ 2 grades)."""
    from sentret_core.annotation.agreement import (
        fleiss_kappa,
        krippendorff_alpha,
        pairwise_cohen_kappa,
        ratings_from_judgments,
    )

    ratings = ratings_from_judgments(judgments)
    if ratings.empty:
        empty = pd.DataFrame()
        return AgreementSummary((), 0, 0, 0, empty, (), None, None, ("no judgments yet",))
    matrix = ratings.pivot(index="item", columns="annotator", values="grade")
    names = tuple(str(c) for c in matrix.columns)
    counts = matrix.notna().sum(axis=1)
    shared, complete = int((counts >= 2).sum()), int((counts == len(names)).sum())
    notes: list[str] = []
    cohen = pairwise_cohen_kappa(ratings) if len(names) >= 2 else pd.DataFrame()
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            n = int(matrix[[a, b]].dropna().shape[0])
            kappa: Any = cohen.loc[a, b] if n else math.nan
            pairs.append((a, b, n, _finite(float(kappa)) if n else None))
    fleiss = alpha = None
    if len(names) < 2:
        notes.append("agreement needs at least two annotators")
    else:
        if complete:
            fleiss = _finite(fleiss_kappa(ratings))
        else:
            notes.append(f"Fleiss' κ: no item was graded by all {len(names)} annotators")
        if shared:
            alpha = _finite(krippendorff_alpha(ratings, "ordinal"))
        else:
            notes.append("Krippendorff's α: no item was graded by two annotators")
    if any(kappa is None and n for _, _, n, kappa in pairs) or (shared and alpha is None):
        notes.append("undefined (None) where the grades show no variation at all")
    return AgreementSummary(names, len(matrix), shared, complete, cohen, tuple(pairs), fleiss, alpha,
                            tuple(notes))  # fmt: skip


# --------------------------------------------------------------------------- evaluation


@dataclass
class Evaluation:
    """Every model's tie-aware metrics on the judged topics, compared with a baseline."""

    models: tuple[str, ...]
    baseline: str
    metrics: tuple[str, ...]
    per_topic: dict[str, pd.DataFrame]  # model → topics × metrics
    comparison: pd.DataFrame  # evaluate.compare: model, metric, mean, diff, p_ttest, p_wilcoxon, significant
    coverage: pd.DataFrame  # index k; columns S_qe, Ŝ_qe
    runs: dict[str, Run]
    skipped_topics: tuple[str, ...] = ()  # judged topics without a relevant sentence
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def topics(self) -> list[str]:
        return [str(t) for t in self.per_topic[self.baseline].index]

    def means(self) -> pd.DataFrame:
        """Models × metrics: the mean over topics."""
        return pd.DataFrame({m: self.per_topic[m].mean() for m in self.models}).T.loc[list(self.models)]

    def differences(self, metric: str) -> pd.DataFrame:
        """Topics × models (baseline excluded): the model's value minus the baseline's on ``metric``."""
        name = parse_metric(metric).name
        base = self.per_topic[self.baseline][name]
        return pd.DataFrame(
            {m: self.per_topic[m][name] - base for m in self.models if m != self.baseline},
            index=base.index,
        )

    def to_dict(self) -> dict[str, Any]:
        means = self.means()
        rows = self.comparison.to_dict(orient="records")
        return {
            "models": list(self.models),
            "baseline": self.baseline,
            "metrics": list(self.metrics),
            "topics": len(self.topics),
            "skipped_topics": list(self.skipped_topics),
            "settings": self.settings,
            "means": {m: {c: _finite(float(v)) for c, v in means.loc[m].items()} for m in self.models},
            "comparison": [{k: _plain(v) for k, v in row.items()} for row in rows],
            "coverage": {
                str(col): {
                    str(k): float(v)
                    for k, v in zip(self.coverage.index.tolist(), self.coverage[col].tolist())
                }
                for col in self.coverage.columns
            },
        }


def _plain(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return _finite(float(value))
    return value


def _topic_targets(index: Index, qrels: Mapping[str, Mapping[str, int]]) -> dict[str, tuple[str, int]]:
    """topic id → (query, entity id), with sentence ids checked against the index."""
    targets: dict[str, tuple[str, int]] = {}
    for tid, judged in qrels.items():
        query, key = split_topic_id(tid)
        for docid in judged:
            try:
                sid = int(docid)
            except ValueError:
                raise SentretError(
                    f"topic {tid!r}: document {docid!r} is not a sentence id (session qrels use sentence ids)"
                ) from None
            if not 0 <= sid < index.N:
                raise SentretError(
                    f"topic {tid!r}: sentence {sid} is not in this index ({index.N:,} sentences)"
                )
        targets[tid] = (query, find_entity(index, key))
    return targets


def evaluate_judgments(
    index: Index,
    qrels: Mapping[str, Mapping[str, int]],
    *,
    models: Sequence[str] = DEFAULT_SUPPORT_MODELS,
    baseline: str | None = None,
    metrics: Sequence[str] = EVAL_METRICS,
    ranker: str = DEFAULT_RANKER,
    k: int = DEFAULT_K,
    window: int = DEFAULT_WINDOW,
    ks: Sequence[float] | None = None,
) -> Evaluation:
    """Evaluate ``models`` on graded (query, entity) qrels (topic ids ``query:text|LABEL``, docids =
    sentence ids); ``baseline`` defaults to the first model. See the module docstring."""
    from sentret_core.models import get_model
    from sentret_core.support.context import QueryContext

    names = _check_models(models)
    base = _check_models([baseline])[0] if baseline else names[0]
    if base not in names:
        names = (*names, base)
    metric_names = tuple(dict.fromkeys(parse_metric(m).name for m in metrics))
    if not metric_names:
        raise SentretError("choose at least one metric")
    ranker = get_model(ranker).name
    if not qrels:
        raise SentretError("there are no judgments to evaluate")
    targets = _topic_targets(index, qrels)
    runs: dict[str, Run] = {m: {} for m in names}
    contexts: dict[str, QueryContext] = {}
    for tid, (query, entity) in targets.items():
        ctx = contexts.get(query)
        if ctx is None:
            ctx = contexts[query] = QueryContext(index, query, ranker=ranker, k=k, window=window)
        for model in names:
            ids, scores = ctx.candidates(entity, model)
            runs[model][tid] = {str(int(s)): float(v) for s, v in zip(ids.tolist(), scores.tolist())}
    per_topic = {
        m: evaluate(qrels, runs[m], list(metric_names), scale="graded") for m in names
    }
    skipped = tuple(per_topic[base].attrs.get("skipped_topics", ()))
    if per_topic[base].empty:
        raise SentretError(
            f"no topic has a relevant judgment (grade ≥ {RELEVANT_GRADE}): there is nothing to evaluate"
        )
    comparison = compare(per_topic, base)
    grid = ks if ks is not None else np.unique(np.round(np.logspace(0, 4, 41)))
    coverage = coverage_curve(_first_hits(index, qrels, targets, contexts, ranker, window), grid)
    settings = {"ranker": ranker, "k": k, "window": window, "scale": "graded",
                "relevant": f"grade >= {RELEVANT_GRADE}", "ties": "tie-aware"}  # fmt: skip
    return Evaluation(names, base, metric_names, per_topic, comparison, coverage, runs, skipped, settings)


def _first_hits(
    index: Index,
    qrels: Mapping[str, Mapping[str, int]],
    targets: Mapping[str, tuple[str, int]],
    contexts: Mapping[str, QueryContext],
    ranker: str,
    window: int,
) -> dict[str, dict[str, float | None]]:
    """Per topic with a relevant sentence: the smallest k whose S_qe (the ranker's top-k that
    mention e) / Ŝ_qe (with ±window context) holds a relevant sentence; None if no k does."""
    from sentret_core.models import score

    ranks_by_query: dict[str, np.ndarray] = {}
    plain: dict[str, float | None] = {}
    context: dict[str, float | None] = {}
    for tid, (query, _) in targets.items():
        relevant = [int(d) for d, g in qrels[tid].items() if g >= RELEVANT_GRADE]
        if not relevant:
            continue
        ranks = ranks_by_query.get(query)
        if ranks is None:
            found = score(index, list(contexts[query].terms), ranker)
            ranks = np.full(index.N, np.inf)
            order = np.lexsort((found.ids, -found.scores))
            ranks[np.asarray(found.ids)[order]] = np.arange(1, len(order) + 1)
            ranks_by_query[query] = ranks
        best = min(float(ranks[s]) for s in relevant)
        around = min(float(ranks[n]) for s in relevant for n in index.neighbours(s, window))
        plain[tid] = best if math.isfinite(best) else None
        context[tid] = around if math.isfinite(around) else None
    return {"S_qe": plain, "Ŝ_qe": context}


def session_qrels(admin: Admin, name: str, rule: str = "majority", annotator: str | None = None) -> Qrels:
    """A session's adjudicated judgments as qrels (see :meth:`Admin.export_qrels`)."""
    text = admin.export_qrels(name, rule=rule, annotator=annotator)
    if not text:
        raise SentretError(f"session {name!r} has no judgments yet")
    return parse_qrels(text, source=f"session {name}")


def check_snapshots(index: Index, judgments: Iterable[Judgment]) -> None:
    """Raise if ``index`` is not the index the judged sentences were pooled from."""
    for j in judgments:
        sid = j.sentence_id
        if not 0 <= sid < index.N or (j.text and index.texts[sid] != j.text):
            raise SentretError(
                f"the index {index.path} does not hold the sentences session {j.session!r} was pooled "
                f"from (sentence {sid} differs); open the session's own index"
            )


def evaluate_session(
    admin: Admin,
    name: str,
    index: Index,
    *,
    rule: str = "majority",
    annotator: str | None = None,
    **options: Any,
) -> Evaluation:
    """:func:`evaluate_judgments` on session ``name``'s adjudicated grades (``rule``: majority,
    mean or annotator) after checking that ``index`` is the session's own."""
    check_snapshots(index, admin.all_judgments(name))
    return evaluate_judgments(index, session_qrels(admin, name, rule, annotator), **options)
