"""Model suggestions: a guessed grade per pooled sentence, shown to annotators to correct (Label Studio's
``predictions``, Argilla's suggestions, Prodigy's ``*.correct`` recipes) and never counted as a grade.

A suggestion belongs to a *source*, a model's name or a file's, and lives in ``suggestions`` (schema step
``_SUGGESTIONS``), apart from the judgments: agreement, votes, adjudication and every export of grades ignore
it. The admin adds them (:func:`add_suggestions`) from a registered model (:func:`model_suggestions`) or
from qrels or JSONL grades (:func:`file_suggestions`), and sees how often each annotator's grade equalled
them (:func:`agreement_with_suggestions`), which measures anchoring as much as the model.

A model's suggestion comes from its ranking of the topic's pooled sentences (its support score H_qe(s), as
Explore ranks them): the best quarter suggests 4, the next 3, then 2, the last quarter and the sentences it
does not score 1 (at least one 4 when the model scores any). A ranking says which sentences come first,
not how relevant they are: the grades are a guess for an annotator to correct, not a judgment.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from sentret_core.annotation.auth import check_grade, clean_name, timestamp_now
from sentret_core.annotation.records import ImportLine
from sentret_core.annotation.suggested import has_suggestions
from sentret_core.defaults import RELEVANT_GRADE
from sentret_core.errors import SentretError

if TYPE_CHECKING:
    from sentret_core.annotation.admin import Admin
    from sentret_core.index.reader import Index


class SuggestionAgreement(NamedTuple):
    """How often one annotator's grades equalled one source's suggestions, over the items both have."""

    annotator: str
    source: str
    compared: int
    same_grade: int
    same_relevance: int  # both relevant (≥ 3) or both not


def add_suggestions(admin: Admin, session: str, source: str, grades: Mapping[int, int]) -> int:
    """Store ``source``'s suggested grade of each item id of ``grades`` (replacing its earlier ones); how many."""
    source = clean_name(source, "the suggestions' source")
    checked = {int(item): check_grade(grade) for item, grade in grades.items()}
    store = admin.store
    with store.db.transaction() as conn:
        session_id = admin.session_id(conn, session)
        known = {int(r[0]) for r in conn.execute("SELECT id FROM pool_items WHERE session_id = ?", (session_id,))}
        strangers = sorted(set(checked) - known)
        if strangers:
            raise SentretError(f"item(s) {strangers[:5]} are not in session {session!r}")
        conn.execute("DELETE FROM suggestions WHERE session_id = ? AND source = ?", (session_id, source))
        now = timestamp_now()
        conn.executemany("INSERT INTO suggestions (session_id, item_id, source, grade, at) VALUES (?, ?, ?, ?, ?)",
                         [(session_id, item, source, grade, now) for item, grade in checked.items()])
    return len(checked)


def rank_grades(ranked: list[int], others: Iterable[int]) -> dict[int, int]:
    """Grades from a ranking (best first): quarters get 4, 3, 2, 1; ``others`` (not ranked) get 1."""
    grades = {item: 1 for item in others}
    n = len(ranked)
    for place, item in enumerate(ranked):
        grades[item] = 4 - min(3, math.floor(4 * place / n))
    return grades


def model_suggestions(admin: Admin, session: str, index: Index, model: str) -> dict[int, int]:
    """Item id → the grade ``model``'s ranking of each topic's pooled sentences suggests (module docstring)."""
    from sentret_core.annotation.topics import find_entity
    from sentret_core.support.context import QueryContext, check_support_model

    model = check_support_model(model)
    items: dict[tuple[str, str], dict[int, int]] = {}  # topic → sentence id → item id
    store = admin.store
    with store.db.read() as conn:
        session_id = admin.session_id(conn, session)
        for item, query, entity, sentence in conn.execute(
                "SELECT id, query, entity, sentence_id FROM pool_items WHERE session_id = ?", (session_id,)):
            items.setdefault((str(query), str(entity)), {})[int(sentence)] = int(item)
    ranking = store.session(session).settings.ranking
    grades: dict[int, int] = {}
    contexts: dict[str, QueryContext] = {}
    for (query, entity), pooled in items.items():
        if query not in contexts:
            contexts[query] = QueryContext.of(index, query, ranker=ranking.ranker, k=ranking.k,
                                              entity_weighting=ranking.weighting)
        ids, _ = contexts[query].ranked_candidates(find_entity(index, entity), model)
        ranked = [pooled[int(s)] for s in ids if int(s) in pooled]
        grades |= rank_grades(ranked, [item for item in pooled.values() if item not in set(ranked)])
    return grades


def file_suggestions(admin: Admin, session: str, lines: list[ImportLine]) -> dict[int, int]:
    """Item id → grade of parsed qrels or JSONL lines (:mod:`.io`); a line outside the pool is an error."""
    store = admin.store
    with store.db.read() as conn:
        session_id = admin.session_id(conn, session)
        return {store.db.find_item(conn, session_id, line, session): line.grade for line in lines}


def agreement_with_suggestions(admin: Admin, session: str) -> list[SuggestionAgreement]:
    """Per annotator and source: items compared, equal grades, equal relevance (grade ≥ 3 or not)."""
    store = admin.store
    with store.db.read() as conn:
        if not has_suggestions(conn):
            return []
        session_id = admin.session_id(conn, session)
        rows = conn.execute(
            "SELECT a.name, s.source, j.grade, s.grade FROM judgments j"
            " JOIN suggestions s ON s.session_id = j.session_id AND s.item_id = j.item_id"
            " JOIN annotators a ON a.id = j.annotator_id AND a.removed_at IS NULL"
            " WHERE j.session_id = ? AND a.kind = 'person' ORDER BY a.name_key, s.source",
            (session_id,),
        ).fetchall()
    found: dict[tuple[str, str], list[int]] = {}
    for who, source, grade, suggested in rows:
        counts = found.setdefault((str(who), str(source)), [0, 0, 0])
        counts[0] += 1
        counts[1] += grade == suggested
        counts[2] += (grade >= RELEVANT_GRADE) == (suggested >= RELEVANT_GRADE)
    return [SuggestionAgreement(who, source, *counts) for (who, source), counts in found.items()]
