"""The app's judgment store (one per process) and the index a session was pooled from, for the session pages."""

from __future__ import annotations

import logging
from pathlib import Path

import streamlit as st

from sentret_core.annotation.judged_marks import Judged, judged_sentences, precision_over_judged
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.topics import judgments_db_path, open_store
from sentret_core.errors import SentretError
from sentret_core.index.format import is_index
from sentret_core.index.reader import Index
from sentret_core.ui.state import guarded, load_index

log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def cached_store(path: str) -> JudgmentStore:
    """One store (one WAL connection, thread-safe) per database file and process."""
    return open_store(path)


def app_store() -> JudgmentStore:
    """The app's judgments database (``$SENTRET_JUDGMENTS_DB`` or ``data/judgments/sentret.sqlite``)."""
    return cached_store(str(judgments_db_path()))


def page_store() -> JudgmentStore | None:
    """The app's judgments database, or ``None`` after showing why it cannot be opened."""
    return guarded("open the judgments database", app_store)


def session_index(path: str) -> Index | None:
    """The index a session was pooled from, if it is still there (for highlighting and context)."""
    if not is_index(Path(path)):
        return None
    try:
        return load_index(path)
    except SentretError:
        return None


def explore_judged(index_path: str, query: str, entity: str) -> dict[int, Judged] | None:
    """The team's grades of topic (``query``, ``entity``) per sentence, over the sessions of ``index_path``;
    None without a judgments database (or when it cannot be read: Explore works without it)."""
    db = judgments_db_path()
    try:
        stamp = max(p.stat().st_mtime_ns for p in (db, Path(f"{db}-wal")) if p.exists()) if db.is_file() else None
        if stamp is None:
            return None
        return _judged(str(db), stamp, index_path, query, entity)
    except (OSError, SentretError) as err:
        log.warning("the judgments of %r are not shown: %s", query, err)
        return None


@st.cache_data(show_spinner=False, max_entries=256)
def _judged(db: str, stamp: int, index_path: str, query: str, entity: str) -> dict[int, Judged]:
    """Cached by the database's modification time (``stamp``): a new grade shows at the next run."""
    with open_store(db, read_only=True) as store:
        return judged_sentences(store, index_path, query, entity)


def judged_mark(judged: dict[int, Judged] | None, sentence: int) -> str:
    """A support sentence's judged mark (HTML): its grades and whether they make it relevant, or "unjudged"."""
    if judged is None:
        return ""
    found = judged.get(sentence)
    if found is None:
        return ' · <span class="sentret-unjudged">unjudged</span>'
    verdict = "relevant" if found.relevant else "not relevant"
    grades = " · ".join(map(str, found.grades))
    return f' · <span class="sentret-judged" title="the team\'s grades, 1-4">judged {grades} → {verdict}</span>'


def judged_summary(judged: dict[int, Judged] | None, sentences: list[int]) -> str:
    """A column's precision over its judged sentences (HTML), or "" when none is judged."""
    if not judged:
        return ""
    relevant, counted = precision_over_judged(judged, sentences)
    if not counted:
        return "<br><small>none of these judged yet</small>"
    return (f"<br><small>{counted} of {len(sentences)} judged · precision over the judged "
            f"{relevant}/{counted} = {relevant / counted:.2f}</small>")
