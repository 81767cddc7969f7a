"""Explore's results as files: the entities and their support sentences, as CSV or JSON.

The CSV has one row per (entity, model, support sentence), the entity's statistics repeated on each
(an entity without support sentences under a model still gets one row, its sentence cells empty);
every text cell is made safe for spreadsheets (:func:`~sentret_core.annotation.csv_export.safe_cell`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, replace
from typing import Any

from sentret_core.annotation.csv_export import csv_text
from sentret_core.support.records import EntitySupport, SupportResult

CSV_HEADER = ("query", "entity_rank", "entity", "label", "entity_score", "score_name", "S_qe", "S_hat_qe",
              "rarity", "combination", "kld", "restates_query", "model", "sentence_rank", "sentence", "score",
              "title", "text")


def entities_csv(result: SupportResult, kept: list[EntitySupport], restating: list[EntitySupport]) -> str:
    """The shown entities (``kept`` then ``restating``) and their support sentences as CSV text."""
    rows: list[list[object]] = []
    for group, restates in ((kept, False), (restating, True)):
        for es in group:
            e = es.entity
            head = [result.query, e.rank, e.text, e.label, e.score, result.entity_score, e.frequency,
                    e.context_frequency, e.rarity, e.combination, e.kld, restates]
            for model in result.models:
                sentences = es.sentences.get(model, ())
                if not sentences:
                    rows.append([*head, model, "", "", "", "", ""])
                for s in sentences:
                    rows.append([*head, model, s.rank, s.sentence, s.score, s.title, s.text])
    return csv_text(CSV_HEADER, rows)


def entities_json(result: SupportResult, kept: list[EntitySupport], restating: list[EntitySupport]) -> str:
    """The request, the shown entities and their support sentences as JSON (``restating``: set aside)."""
    data: dict[str, Any] = asdict(replace(result, entities=tuple(kept)))
    data["restating"] = [asdict(es) for es in restating]
    data.pop("timings", None)
    return json.dumps(data, ensure_ascii=False, indent=1)


def file_stem(query: str) -> str:
    """A safe file name for a query's results: "sentret-spanish-civil-war"."""
    words = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-")[:60].strip("-")
    return f"sentret-{words or 'results'}"
