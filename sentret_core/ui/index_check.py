"""The app checks every index fully the first time it opens it, without making anyone wait.

Loading an index makes only the cheap checks (:mod:`sentret_core.index.validate`); the rest —
every file's sha256, the artefacts, files that do not belong — is :func:`~sentret_core.index.reader.verify`,
run here in a background thread once per index build and process. Until it is done the pages say
so and use the index (each file is still checked against its sha256 when first read); an index that
fails is refused with ``st.error``, and the last index that passed stays open.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from sentret_core.index.reader import Index, verify
from sentret_core.ui.text import md

GOOD = "index_check_last_good"  # session key: the last index that passed its check
WAIT = 1.0  # seconds a page waits for a small index's check before it draws the note (it is done by then)
SMALL_BYTES = 10_000_000  # a bigger index (the demo: 44 MB) is not waited for: the first page comes first
POLL = 2.0  # seconds between looks at a check in progress
log = logging.getLogger(__name__)


@dataclass
class Check:
    """One background verification of one build of an index."""

    path: Path
    started: float = field(default_factory=time.monotonic)
    problems: list[str] | None = None  # None while it runs
    done: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        try:
            self.problems = verify(self.path)
        except Exception as err:  # an index that cannot even be read fails its check
            self.problems = [str(err)]
        finally:
            self.done.set()

    @property
    def failed(self) -> bool:
        return self.done.is_set() and bool(self.problems)


_CHECKS: dict[tuple[str, int, int], Check] = {}
_LOCK = threading.Lock()
MEMO_SIZE = 64  # index builds whose check is remembered; the oldest finished ones are forgotten first


def _key(path: Path) -> tuple[str, int, int]:
    """An index build: its folder and its manifest's stamp (a rebuilt index is checked again)."""
    try:
        stamp = (path / "manifest.json").stat()
        return str(path.resolve()), stamp.st_mtime_ns, stamp.st_ino
    except OSError:
        return str(path.resolve()), 0, 0


def check(path: Path) -> Check:
    """The check of the index at ``path``, started in the background the first time it is asked for."""
    key = _key(path)
    with _LOCK:
        found = _CHECKS.get(key)
        if found is None:
            found = _CHECKS[key] = Check(path)
            threading.Thread(target=found.run, name=f"sentret-verify {path}", daemon=True).start()
            finished = [k for k, c in _CHECKS.items() if c.done.is_set()]
            for old in finished[: max(0, len(_CHECKS) - MEMO_SIZE)]:
                del _CHECKS[old]
    return found


def refusal(path: Path, problems: list[str]) -> str:
    shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
    return f"The index {path} is damaged and is not used: {shown}. Run `sentret verify {path}` for the list."


def open_checked(path: Path, load: Callable[[str], Index], guarded: Callable[..., Index | None]) -> Index | None:
    """The index at ``path`` (loaded by ``load``, errors shown by ``guarded``) once it passes or while
    its check runs; when it fails, ``st.error`` says why and the last index that passed is kept."""
    index = guarded("load the index", load, str(path))
    if index is not None:
        for note in index.notes:
            _log_once(note)
        status = check(index.path)
        status.done.wait(_wait_for(index))
        if status.failed:
            st.error(md(refusal(index.path, status.problems or [])))
            index = None
        elif not status.done.is_set():
            _progress(status)
        else:
            st.session_state[GOOD] = str(path)
    if index is None:
        previous = st.session_state.get(GOOD)
        if previous and previous != str(path):
            st.session_state["index_path"] = previous
            st.info(md(f"Keeping the index {previous} open."))
            return guarded("load the index", load, previous)
    return index


def _wait_for(index: Index) -> float:
    """How long a page waits for ``index``'s check: :data:`WAIT` for a small index, none for a big one."""
    try:
        size = sum(int(v) for v in (index.manifest.get("sizes") or {}).values())
    except (TypeError, ValueError, AttributeError):  # a manifest the cheap checks let through: wait as before
        return WAIT
    return WAIT if size <= SMALL_BYTES else 0.0


@st.fragment(run_every=POLL)
def _progress(status: Check) -> None:
    """The note while a check runs; when it ends, the page runs again to act on the result."""
    if status.done.is_set():
        st.rerun(scope="app")
    seconds = time.monotonic() - status.started
    st.caption(
        md(
            f"⏳ Checking every file of the index {status.path} in the background ({seconds:.0f} s so far); "
            "the results below are served meanwhile."
        )
    )


_LOGGED: set[str] = set()


def _log_once(note: str) -> None:
    if note not in _LOGGED:
        if len(_LOGGED) >= MEMO_SIZE * 16:  # a note may be logged again after this many others
            _LOGGED.clear()
        _LOGGED.add(note)
        log.warning("%s", note)
