"""What the team has judged, for the Explore page: a (query, entity) topic's grades per sentence over every
session pooled from the same index, as Quepid shows a search result's rating inline.

Grades are shown without their annotators' names (the exports, behind the admin token, carry those); a
sentence's relevance is its majority grade ≥ 3 (ties to the lower; an adjudicated item's adjudicated grade),
as the qrels exports decide it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from sentret_core.annotation.adjudication import has_adjudications
from sentret_core.annotation.pooling import adjudicate
from sentret_core.defaults import RELEVANT_GRADE

if TYPE_CHECKING:
    from sentret_core.annotation.store import JudgmentStore


class Judged(NamedTuple):
    """A sentence's grades in one topic (every session, every annotator not removed) and its decided grade."""

    grades: tuple[int, ...]
    grade: int  # the majority (or adjudicated) grade

    @property
    def relevant(self) -> bool:
        return self.grade >= RELEVANT_GRADE


def judged_sentences(store: JudgmentStore, index_path: str | Path, query: str, entity: str) -> dict[int, Judged]:
    """Sentence id → its judgments in topic (``query``, ``entity`` key), over the sessions of ``index_path``."""
    wanted = Path(index_path).resolve()
    with store.db.read() as conn:
        sessions = [sid for sid, where in conn.execute("SELECT id, index_path FROM sessions")
                    if Path(where).resolve() == wanted]
        if not sessions:
            return {}
        marks = ",".join("?" * len(sessions))
        rows = conn.execute(
            "SELECT p.session_id, p.id, p.sentence_id, j.grade FROM pool_items p"
            " JOIN judgments j ON j.session_id = p.session_id AND j.item_id = p.id"
            " JOIN annotators a ON a.id = j.annotator_id AND a.removed_at IS NULL"
            f" WHERE p.session_id IN ({marks}) AND p.query = ? AND p.entity = ?",
            (*sessions, query, entity),
        ).fetchall()
        decided = dict(((s, i), g) for s, i, g in conn.execute(
            f"SELECT session_id, item_id, grade FROM adjudications WHERE session_id IN ({marks})", sessions
        )) if has_adjudications(conn) else {}
    grades: dict[int, list[int]] = {}
    overruled: dict[int, int] = {}
    for session_id, item_id, sentence, grade in rows:
        grades.setdefault(int(sentence), []).append(int(grade))
        if (session_id, item_id) in decided:
            overruled[int(sentence)] = int(decided[session_id, item_id])
    return {sid: Judged(tuple(sorted(found)), overruled.get(sid, adjudicate(found, "majority")))
            for sid, found in grades.items()}


def precision_over_judged(judged: Mapping[int, Judged], sentences: Iterable[int]) -> tuple[int, int]:
    """(relevant, judged) among ``sentences``: the precision a column has over its judged sentences."""
    found = [judged[s] for s in sentences if s in judged]
    return sum(j.relevant for j in found), len(found)
