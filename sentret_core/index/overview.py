"""What an index holds, in numbers: the CLI's ``info`` and the app's Corpus page share this."""

from __future__ import annotations

from typing import Any

import pandas as pd

from sentret_core.index.reader import Index


def entity_table(index: Index) -> pd.DataFrame:
    """Entities with their id, most frequent first (ties by text)."""
    table = index.entities.rename_axis("id").reset_index()
    return table.sort_values(["sf", "text"], ascending=[False, True], kind="stable")


def labels_summary(index: Index, top: int = 5) -> dict[str, dict[str, Any]]:
    """Per label: number of entities, mentions, and the ``top`` most frequent entities."""
    table = entity_table(index)
    mentions_per_entity = index.mentions["entity"].value_counts()
    table["mentions"] = table["id"].map(mentions_per_entity).fillna(0).astype(int)
    summary: dict[str, dict[str, Any]] = {}
    for label, group in sorted(table.groupby("label", observed=True), key=lambda item: -len(item[1])):
        summary[str(label)] = {
            "entities": len(group),
            "mentions": int(group["mentions"].sum()),
            "top": [{"text": str(t), "sf": int(sf)} for t, sf in zip(group["text"][:top], group["sf"][:top])],
        }
    return summary


def overview(index: Index, top: int = 5) -> dict[str, Any]:
    manifest = index.manifest
    return {
        "path": str(index.path),
        "model": manifest.get("model", ""),
        "created": manifest.get("created", ""),
        "source": manifest.get("source", ""),
        "counts": manifest["counts"],
        "avsl": round(index.avsl, 4),
        "labels": labels_summary(index, top),
    }


def document_sentences(index: Index, doc: int) -> pd.DataFrame:
    """The sentences of document ``doc`` in order: id, position, text, length."""
    first, count = int(index.doc_first[doc]), int(index.doc_nsent[doc])
    ids = range(first, first + count)
    return pd.DataFrame(
        {
            "sentence": list(ids),
            "position": [int(index.sent_pos[i]) for i in ids],
            "text": [index.texts[i] for i in ids],
            "terms": [int(index.sent_len[i]) for i in ids],
        }
    )
