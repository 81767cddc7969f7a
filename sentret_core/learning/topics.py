"""Topics to learn from: a benchmark's, or an annotation session's adjudicated judgments."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sentret_core.annotation.judged_eval import check_snapshots, session_qrels
from sentret_core.annotation.topics import find_entity
from sentret_core.defaults import RELEVANT_GRADE
from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.trec_io import split_topic_id
from sentret_core.learning.examples import LearningTopic
from sentret_core.models.core.query import normalise
from sentret_core.support.entity_stats import entity_sentences

if TYPE_CHECKING:
    from sentret_core.annotation.admin import Admin
    from sentret_core.index.reader import Index


def benchmark_topics(bench: Benchmark) -> list[LearningTopic]:
    """Every topic of ``bench``: a question's own sentences, or an answer entity's mentions."""
    row = {docid: sid for sid, docid in enumerate(bench.docids)}
    terms: dict[str, tuple[str, ...]] = {}
    topics = []
    for topic in bench.topics:
        if topic.question not in terms:
            terms[topic.question] = normalise(bench.index, topic.query)
        grades = {row[d]: g for d, g in bench.qrels[topic.id].items() if d in row}
        mentions = entity_sentences(bench.index, topic.entity) if topic.entity is not None else None
        candidates = topic.candidates if mentions is None else mentions
        topics.append(LearningTopic(topic.id, terms[topic.question], grades, candidates,
                                    outside_ties=bench.kind == "sentences", entity=topic.entity))
    return topics


def session_topics(admin: Admin, session: str, index: Index, rule: str = "majority") -> list[LearningTopic]:
    """The (query, entity) topics of a session, graded max(0, grade - 2): 1-2 not relevant, 3 → 1, 4 → 2."""
    check_snapshots(index, admin.all_judgments(session))
    qrels = session_qrels(admin, session, rule)
    topics = []
    for tid, judged in sorted(qrels.items()):
        query, key = split_topic_id(tid)
        entity = find_entity(index, key)
        grades = {int(sid): max(0, int(g) - RELEVANT_GRADE + 1) for sid, g in judged.items()}
        topics.append(LearningTopic(tid, normalise(index, query), grades, entity_sentences(index, entity),
                                    entity=entity))
    if not any(g > 0 for t in topics for g in t.grades.values()):
        raise SentretError(f"session {session!r} has no sentence graded {RELEVANT_GRADE} or 4: nothing to learn from")
    return topics
