"""The app's judgment store (one per process) and the index a session was pooled from, for the session pages."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.topics import judgments_db_path, open_store
from sentret_core.errors import SentretError
from sentret_core.index.format import is_index
from sentret_core.index.reader import Index
from sentret_core.ui.state import guarded, load_index


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
