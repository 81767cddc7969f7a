"""The judgment store's constants and typed records.

Grades 1-4; a sentence is relevant iff graded ≥ 3 (Blanco & Zaragoza, SIGIR 2010, §4).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from sentret_core.defaults import (
    DEFAULT_ENTITY_SCORE,
    DEFAULT_ENTITY_WEIGHTING,
    DEFAULT_K,
    DEFAULT_QRELS_SCALE,
    DEFAULT_RANKER,
    EXPLORE_ENTITY_WEIGHTING,
    EXPLORE_K,
    RELEVANT_GRADE,
    TREC_OFFSET,
)
from sentret_core.evaluation.trec_io import topic_id

if TYPE_CHECKING:
    from sentret_core.annotation.item_order import ItemOrder

GRADES = (1, 2, 3, 4)
GRADE_LABELS = {1: "non-relevant", 2: "fairly relevant", 3: "relevant", 4: "very relevant"}
ADMIN_TOKEN_ENV = "SENTRET_ADMIN_TOKEN"
RULES = ("majority", "mean", "annotator")
SENTENCE_IDS = ("docno", "internal")  # how exports name a sentence: <document id>-<position>, or the index's id
BUSY_TIMEOUT_S = 60.0
MAX_NAME = 200
MAX_NOTE = 5000
PERSON, IMPORTED = "person", "import"
INT64_MAX = 2**63 - 1  # every id stored in SQLite lies in [0, INT64_MAX]

# Qrels scales: the grade written for each stored grade 1-4. "trec" (the default) writes 0 for
# non-relevant, so trec_eval's default relevance level (rel ≥ 1) never counts a non-relevant
# sentence; the app's "relevant" (grade ≥ 3) is trec grade ≥ 2, i.e. `trec_eval -l 2` (.scales).
SCALES: dict[str, dict[int, int]] = {
    "trec": {g: g - TREC_OFFSET for g in GRADES},
    "1-4": {g: g for g in GRADES},
}
# importing adds a binary scale: 0 non-relevant, 1 relevant (grade 3)
IMPORT_SCALES: dict[str, dict[int, int]] = {
    **{name: {v: k for k, v in scale.items()} for name, scale in SCALES.items()},
    "binary": {0: GRADES[0], 1: RELEVANT_GRADE},
}
DEFAULT_SCALE = DEFAULT_QRELS_SCALE


class PoolItem(NamedTuple):
    """One (query, entity, sentence) triple to grade, with a snapshot of the sentence."""

    query: str
    entity: str
    sentence_id: int
    text: str = ""
    title: str = ""
    docno: str = ""  # ``<document id>-<position>`` (sentret_core.index.docnos): the id exports and runs share


@dataclass(frozen=True)
class EntityRanking:
    """How a bare query's entities are chosen: Blanco & Zaragoza's entity score over the ranker's top ``k``
    sentences (S_q), each counting as ``weighting`` says (:mod:`sentret_core.support.weighting`). The
    defaults are the Explore page's, so a session pools the entities its team sees there."""

    ranker: str = DEFAULT_RANKER
    k: int = EXPLORE_K
    score: str = DEFAULT_ENTITY_SCORE
    weighting: str = EXPLORE_ENTITY_WEIGHTING

    def describe(self) -> str:
        counted = "each sentence once" if self.weighting == "none" else f"sentences weighted by {self.weighting}"
        return f"entities by {self.score} over the top {self.k:,} sentences of {self.ranker}, {counted}"

    def to_dict(self) -> dict[str, Any]:
        return {"ranker": self.ranker, "k": self.k, "score": self.score, "weighting": self.weighting}


# how sessions pooled before the ranking was recorded: the library's defaults of the time
RECORDED_BEFORE = EntityRanking(DEFAULT_RANKER, DEFAULT_K, DEFAULT_ENTITY_SCORE, DEFAULT_ENTITY_WEIGHTING)


@dataclass(frozen=True)
class PoolSettings:
    """How a session's pool was made: the models pooled, the depth, the shuffle seed and the entity ranking."""

    models: tuple[str, ...] = ()
    depth: int = 10
    seed: int = 0
    ranking: EntityRanking = field(default_factory=EntityRanking)

    def __post_init__(self) -> None:
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 1:
            raise ValueError(f"pool depth must be an integer in [1, ∞); got {self.depth!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"pool seed must be an integer; got {self.seed!r}")
        object.__setattr__(self, "models", tuple(str(m) for m in self.models))

    def to_json(self) -> str:
        return json.dumps({"models": list(self.models), "depth": self.depth, "seed": self.seed,
                           "ranking": self.ranking.to_dict()})

    @classmethod
    def from_json(cls, text: str) -> PoolSettings:
        data = json.loads(text)
        ranked = data.get("ranking")
        ranking = RECORDED_BEFORE if not isinstance(ranked, dict) else EntityRanking(
            str(ranked["ranker"]), int(ranked["k"]), str(ranked["score"]), str(ranked["weighting"]))
        return cls(tuple(data["models"]), int(data["depth"]), int(data["seed"]), ranking)


class SessionInfo(NamedTuple):
    name: str
    index_path: str
    queries: tuple[str, ...]
    entities: tuple[tuple[str, str], ...]
    settings: PoolSettings
    is_open: bool
    created_at: str
    n_items: int
    item_order: ItemOrder | None = None  # who grades which item, in what order (None: one shared order)


class ItemView(NamedTuple):
    """What an annotator is shown: never which model retrieved the sentence."""

    item_id: int
    position: int
    query: str
    entity: str
    sentence_id: int
    text: str
    title: str


class Judgment(NamedTuple):
    """One annotator's grade of one item, with every field the exports carry."""

    session: str
    topic_id: str
    query: str
    entity: str
    sentence_id: int
    position: int
    title: str
    text: str
    annotator: str
    annotator_kind: str
    grade: int
    note: str | None
    created_at: str
    updated_at: str
    flagged: bool = False  # the annotator's flag ("look at this one again"); not in the history
    docno: str | None = None  # the sentence's docno (None: pooled before sentret recorded them)
    seconds: float | None = None  # time on task: seconds on screen before its grades (None: not measured)


JUDGMENT_FIELDS: tuple[str, ...] = Judgment._fields


class HistoryEntry(NamedTuple):
    id: int
    annotator: str
    query: str
    entity: str
    sentence_id: int
    action: str
    old_grade: int | None
    new_grade: int | None
    old_note: str | None
    new_note: str | None
    undoes: int | None
    at: str


class AnnotatorInfo(NamedTuple):
    """An annotator of a session as the admin sees it (never a secret, only whether one is set)."""

    name: str
    kind: str  # PERSON or IMPORTED
    disabled: bool
    has_passphrase: bool
    has_link: bool
    graded: int
    created_at: str
    role: str = "annotator"  # see roles.py

    @property
    def status(self) -> str:
        if self.kind == IMPORTED:
            return "imported grades"
        if self.disabled:
            return "disabled"
        return "active" if self.has_passphrase or self.has_link else "no secret yet"


class AnnotatorSecret(NamedTuple):
    """What an annotator signs in with, returned once when it is made (only scrypt hashes are stored).

    ``token`` goes into the sign-in link (``/annotate?session=S&token=T``); ``passphrase`` is typed
    with the name in the sign-in form.
    """

    session: str
    name: str
    token: str
    passphrase: str


class Progress(NamedTuple):
    total: int
    graded: int
    skipped: int

    @property
    def remaining(self) -> int:
        return self.total - self.graded


_JUDGMENT_SELECT = """
    SELECT s.name, p.query, p.entity, p.sentence_id, p.position, p.title, p.text,
           a.name, a.kind, j.grade, j.note, j.created_at, j.updated_at, j.flagged, p.docno, j.seconds
    FROM judgments j
    JOIN pool_items p ON p.id = j.item_id
    JOIN annotators a ON a.id = j.annotator_id
    JOIN sessions s ON s.id = j.session_id
"""



def judgment_select(conn: Any) -> str:
    """:data:`_JUDGMENT_SELECT`, or on a database older than v5 (read-only) the same with no flags."""
    select = _JUDGMENT_SELECT
    if not any(row[1] == "flagged" for row in conn.execute("PRAGMA table_info(judgments)")):
        select = select.replace("j.flagged", "0")
    if not any(row[1] == "docno" for row in conn.execute("PRAGMA table_info(pool_items)")):
        select = select.replace("p.docno", "NULL")  # a database older than the docnos (read-only)
    if not any(row[1] == "seconds" for row in conn.execute("PRAGMA table_info(judgments)")):
        select = select.replace("j.seconds", "NULL")  # older than time on task (read-only)
    return select


ITEM_COLUMNS = "p.id, p.position, p.query, p.entity, p.sentence_id, p.text, p.title"


def judgment_from_row(row: Sequence[Any]) -> Judgment:
    (session, query, entity, sentence_id, position, title, text, annotator, kind, grade, note, created, updated,
     flagged, docno, seconds) = row
    return Judgment(session, topic_id(query, entity), query, entity, sentence_id, position, title, text,
                    annotator, kind, grade, note, created, updated, bool(flagged), docno, seconds)


class ImportLine(NamedTuple):
    """A parsed import line: which item, whose grade."""

    line: int
    query: str
    entity: str
    sentence_id: int
    annotator: str
    kind: str
    grade: int
    note: str | None
    created_at: str | None
    updated_at: str | None
    flagged: bool = False
    docno: str | None = None  # the item named by its docno (``sentence_id`` is then -1)
    seconds: float | None = None  # time on task, when the line has one

    @property
    def sentence(self) -> str:
        """The sentence as the line named it: its docno, or its internal id."""
        return self.docno if self.docno is not None else str(self.sentence_id)
