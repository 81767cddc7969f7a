"""Creating a session: each topic's pool is the union of every model's top support sentences (TREC-style).

A query without a named entity stands for its top entities, chosen by the rule Explore uses: an
entity that only restates the query (:func:`~sentret_core.support.restating.restates`, e.g.
"Einstein" for "Albert Einstein and relativity") is left out, with a note, unless the topics name it.
:func:`build_pool` returns the plan (the pooled pairs and items) without storing anything, so the
pairs can be shown before :func:`create_session` stores that very plan.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sentret_core.annotation.item_order import ItemOrder
from sentret_core.annotation.narratives import store_narratives
from sentret_core.annotation.pooling import pool
from sentret_core.annotation.records import EntityRanking, PoolItem, PoolSettings, SessionInfo
from sentret_core.annotation.topics import (
    DEFAULT_DEPTH,
    DEFAULT_TOP_ENTITIES,
    TopicLine,
    find_entity,
    index_entity_key,
    parse_topics,
    split_entity_key,
)
from sentret_core.defaults import DEFAULT_SUPPORT_MODELS
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import split_topic_id, topic_id
from sentret_core.index.docnos import sentence_docnos

# entities asked for beyond the top ones, so that leaving restating ones out still pools as many
RESTATING_SPARE = 10

if TYPE_CHECKING:
    from sentret_core.annotation.admin import Admin
    from sentret_core.annotation.store import JudgmentStore
    from sentret_core.index.reader import Index
    from sentret_core.support.context import QueryContext


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
    set_aside: tuple[tuple[str, str], ...] = ()  # (query, entity key) left out: they restate the query
    index_path: str = ""  # the index the plan was pooled from
    narratives: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (query, entity key) → need

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The pooled (query, entity key) pairs, in the pool's order: what a session created from this plan grades."""
        return [(t.query, t.entity) for t in self.topics]


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


def check_models(models: Sequence[str]) -> tuple[str, ...]:
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
    ranking: EntityRanking | None = None,
    entity_labels: Iterable[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> PoolPlan:
    """Pool every topic's candidates: the union of each model's top ``depth``, shuffled (module docstring).

    ``topics`` is a list of :class:`TopicLine` or the text of a topics file. ``ranking`` chooses a bare
    query's entities and S_q (default: the Explore page's, so the pool holds the entities a team sees
    there, with the support sentences Explore shows). A topic without any
    candidate sentence is left out with a note; no item at all is an error. ``progress(done, total)``
    is called after each query is pooled.
    """
    from sentret_core.support.context import QueryContext
    from sentret_core.support.engine import support
    from sentret_core.support.restating import restates

    lines = parse_topics(topics) if isinstance(topics, str) else list(topics)
    if not lines:
        raise SentretError("no topics to pool")
    names = check_models(models)
    depth = _check_int(depth, "the pool depth", 1, 1000)
    top_entities = _check_int(top_entities, "the number of top entities", 1, 1000)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SentretError(f"the seed must be an integer (got {seed!r})")
    labels = list(entity_labels) if entity_labels is not None else None
    ranking = EntityRanking() if ranking is None else ranking
    if not isinstance(ranking, EntityRanking):
        raise SentretError(f"the entity ranking must be an EntityRanking (got {type(ranking).__name__})")
    chosen: dict[str, Any] = {"ranker": ranking.ranker, "k": ranking.k, "entity_labels": labels,
              "entity_weighting": ranking.weighting}

    by_query: dict[str, list[TopicLine]] = {}
    for line in lines:
        by_query.setdefault(line.query, []).append(line)
    pooled: list[PooledTopic] = []
    notes: list[str] = []
    set_aside: list[tuple[str, str]] = []
    seen: set[tuple[str, int]] = set()
    told: dict[tuple[str, int], str] = {}  # (query, entity id) → its narrative: a named line's, else its query's
    for query, asked in _reported(list(by_query.items()), progress):
        ctx = QueryContext.of(index, query, **chosen)
        if ctx.reason:
            notes.append(f"{query!r}: {ctx.reason}")
            continue
        entities: list[int] = []
        for line in asked:
            if line.entity is not None:
                entities.append(find_entity(index, line.entity))
                told[(query, entities[-1])] = line.narrative
                continue
            found = support(index, query, **chosen, entity_score=ranking.score,
                            top_entities=top_entities + RESTATING_SPARE, models=(names[0],), per_entity=1)
            if not found.entities:
                notes.append(f"{query!r}: {found.reason or 'no entity in the top sentences'}")
            top: list[int] = []
            for es in found.entities:
                entity = es.entity.entity
                if len(top) == top_entities:
                    break
                if restates(index, ctx.terms, entity):
                    set_aside.append((query, index_entity_key(index, entity)))
                else:
                    top.append(entity)
                    told.setdefault((query, entity), line.narrative)
            entities += top
        for entity in entities:
            if (query, entity) in seen:
                continue
            seen.add((query, entity))
            topic = _pool_topic(index, ctx, entity, names, depth, seed)
            if topic.pooled:
                pooled.append(topic)
            else:
                notes.append(f"{query!r} / {topic.entity}: no model has a candidate sentence")
    docnos = sentence_docnos(index)
    items = tuple(
        PoolItem(t.query, t.entity, sid, index.texts[sid], index.titles[int(index.sent_doc[sid])], docnos[sid])
        for t in pooled
        for sid in t.pooled
    )
    if not items:
        why = "; ".join(notes) or "no candidate sentences"
        raise SentretError(f"nothing to grade: {why}")
    for query, key in set_aside:
        notes.append(f"{query!r} / {key}: it only restates the query (name it in the topics to pool it)")
    settings = PoolSettings(names, depth, seed, ranking)
    narratives = {(t.query, t.entity): told[(t.query, t.entity_id)] for t in pooled if told.get((t.query, t.entity_id))}
    return PoolPlan(items, settings, tuple(pooled), tuple(notes), tuple(set_aside), str(index.path), narratives)



def _reported(items: list[tuple[str, list[TopicLine]]], progress: Callable[[int, int], None] | None
              ) -> Iterator[tuple[str, list[TopicLine]]]:
    """``items`` one by one, calling ``progress(done, total)`` once the loop is done with each."""
    for done, item in enumerate(items, 1):
        yield item
        if progress is not None:
            progress(done, len(items))

def _pool_topic(
    index: Index, ctx: QueryContext, entity: int, models: Sequence[str], depth: int, seed: int
) -> PooledTopic:
    key = index_entity_key(index, entity)
    tid = topic_id(ctx.query, key)
    ranked = {m: tuple(int(s) for s in ctx.ranked_candidates(entity, m)[0][:depth]) for m in models}
    union = pool(ranked, depth, topic_seed(seed, tid)) if any(ranked.values()) else []
    return PooledTopic(ctx.query, key, entity, tid, ranked, tuple(union))


def check_session_name(store: JudgmentStore, name: object) -> str:
    """A new session's name, stripped; refused when empty or taken."""
    if not isinstance(name, str) or not name.strip():
        raise SentretError("give the session a name")
    if any(info.name == name.strip() for info in store.sessions()):
        raise SentretError(f"a session named {name.strip()!r} already exists")
    return name.strip()


MAX_GUIDELINES = 20_000


def check_guidelines(text: object) -> str:
    """Session guidelines as stored: text of at most MAX_GUIDELINES characters, trimmed."""
    if text is None:
        return ""
    if not isinstance(text, str):
        raise SentretError(f"guidelines must be text; got {type(text).__name__}")
    if len(text) > MAX_GUIDELINES:
        raise SentretError(f"guidelines must be at most {MAX_GUIDELINES:,} characters; got {len(text):,}")
    if any(0xD800 <= ord(ch) <= 0xDFFF or (ord(ch) < 32 and ch not in "\n\t") for ch in text.replace("\r\n", "\n")):
        raise SentretError("guidelines must be plain text without control characters or lone surrogates")
    return text.replace("\r\n", "\n").strip()


def set_guidelines(admin: Admin, session: str, text: object) -> str:
    """Write the guidelines annotators of ``session`` see on the grading page (the admin's, so an
    :class:`Admin`, which only the admin token gives, is required); returns them as stored."""
    from sentret_core.annotation.admin import Admin as _Admin

    if not isinstance(admin, _Admin):
        raise SentretError("only the admin sets a session's guidelines")
    clean = check_guidelines(text)
    store = admin.store
    with store.db.transaction() as conn:
        session_id = admin.session_id(conn, session)
        conn.execute("UPDATE sessions SET guidelines = ? WHERE id = ?", (clean, session_id))
    return clean


def create_session(
    store: JudgmentStore,
    name: str,
    index: Index,
    topics: Sequence[TopicLine] | str,
    plan: PoolPlan | None = None,
    guidelines: str = "",
    order: ItemOrder | None = None,
    **options: Any,
) -> tuple[SessionInfo, PoolPlan]:
    """Pool ``topics`` (:func:`build_pool` with ``options``) and store them as session ``name``;
    ``plan``, a :func:`build_pool` result already shown to the admin, is stored as it is instead.
    ``guidelines``: Markdown shown to its annotators on the grading page (:func:`set_guidelines`).
    ``order``: who grades which item, in what order (:mod:`.item_order`; None: all, in one order).

    The admin then adds its annotators, each with a personal secret (``Admin.add_annotator``).
    """
    check_session_name(store, name)
    guidelines = check_guidelines(guidelines)
    if plan is None:
        plan = build_pool(index, topics, **options)
    elif plan.index_path != str(index.path):
        raise SentretError(f"the pool was made from the index {plan.index_path}, not {index.path}: preview it again")
    info = store.create_session(name, index.path, list(plan.items), plan.settings, order)
    with store.db.transaction() as conn:
        session_id = store.db.session_row(conn, info.name)[0]
        conn.execute("UPDATE sessions SET guidelines = ? WHERE id = ?", (guidelines, session_id))
        store_narratives(conn, session_id, plan.narratives)
    return info, plan
