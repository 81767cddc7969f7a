"""Where the judgments database lives, and session topics: query lines and entity keys (text|LABEL)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from sentret_core.errors import SentretError
from sentret_core.evaluation.measures import DEFAULT_METRICS

if TYPE_CHECKING:
    from sentret_core.annotation.store import JudgmentStore
    from sentret_core.index.reader import Index

DB_ENV = "SENTRET_JUDGMENTS_DB"
DEFAULT_DB = Path("data") / "judgments" / "sentret.sqlite"
DEFAULT_DEPTH = 10
DEFAULT_TOP_ENTITIES = 5
EVAL_METRICS: tuple[str, ...] = (*DEFAULT_METRICS, "ndcg")
KEY_SEP = "|"


def judgments_db_path() -> Path:
    """The app's judgments database: ``$SENTRET_JUDGMENTS_DB``, else ``data/judgments/sentret.sqlite``."""
    return Path(os.environ.get(DB_ENV, "").strip() or DEFAULT_DB)


def open_store(path: str | os.PathLike[str] | None = None, *, read_only: bool = False) -> JudgmentStore:
    """Open the judgments database at ``path`` (default: the app's), creating its folder if needed.

    ``read_only``: for export, agreement and evaluation; it never waits for the write lock.
    """
    from sentret_core.annotation.store import JudgmentStore

    target = Path(path) if path is not None else judgments_db_path()
    if not read_only:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SentretError(f"cannot create the folder of {target}: {exc.strerror or exc}") from None
    return JudgmentStore(target, read_only=read_only)


# --------------------------------------------------------------------------- topics and entity keys


class TopicLine(NamedTuple):
    """One requested topic: a query and an entity key, or None for all the query's top entities; and the
    information need in words, shown to annotators while grading ("" for none)."""

    query: str
    entity: str | None
    line: int = 0
    narrative: str = ""


def parse_topics(text: str) -> list[TopicLine]:
    """``query<TAB>entity<TAB>narrative`` lines (entity and narrative optional); blank and ``#`` lines
    skipped, repeats dropped."""
    from sentret_core.annotation.narratives import check_narrative

    found: dict[tuple[str, str | None], TopicLine] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        parts = raw.split("\t")
        if len(parts) > 3:
            raise SentretError(
                f"topics line {number}: expected 'query<TAB>entity<TAB>narrative' (two tabs at most), "
                f"found {len(parts) - 1} tabs"
            )
        query = " ".join(parts[0].split())
        entity = " ".join(parts[1].split()) if len(parts) >= 2 else ""
        narrative = check_narrative(parts[2], f"topics line {number}: the narrative") if len(parts) == 3 else ""
        if narrative.replace("_", "").isalpha() and narrative.isupper():  # "Picasso<TAB>PERSON" meant a label
            raise SentretError(f"topics line {number}: the third column is the topic's narrative, not a label "
                               f"({narrative!r}): write the entity as text|LABEL, e.g. '{entity}|{narrative}'")
        if not query:
            raise SentretError(f"topics line {number}: the query is empty")
        key = (query, entity or None)
        found.setdefault(key, TopicLine(query, entity or None, number, narrative))
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
    sf = index.entity_sf
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
