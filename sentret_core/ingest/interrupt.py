"""Signals during a build: SIGTERM, SIGINT and SIGHUP clean up first, then act as they would have.

While :func:`cleanup_on_signals` is active (in the main thread), the first of these signals stops the
spaCy worker processes the build started, then raises :class:`Interrupted` so that the build removes
its staging folder on the way out; leaving the block restores the previous handlers and raises the
signal again, so the process ends as it would have (killed by SIGTERM, KeyboardInterrupt for SIGINT).
A signal that was ignored (``nohup``) stays ignored. Worker processes forked meanwhile die with the
build on Linux even when it is killed with SIGKILL, which no handler can catch.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from sentret_core.errors import SentretError

SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))
_WORKER_GRACE_S = 2.0
_PR_SET_PDEATHSIG = 1
_WORKERS_STOPPED = r".*\[W127\]"
_guarded_by: int | None = None  # the pid whose build is guarded; its forked children see it too
_prctl: Callable[..., int] | None = None


class Interrupted(BaseException):
    """A signal arrived during a build (a BaseException, like KeyboardInterrupt: no ``except Exception`` stops it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


@contextlib.contextmanager
def cleanup_on_signals() -> Iterator[None]:
    """Turn SIGTERM, SIGINT and SIGHUP into :class:`Interrupted` for the duration of the block."""
    global _guarded_by
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; the process's own handling stays
        return
    before = set(multiprocessing.active_children())
    previous: dict[int, Any] = {}
    fired: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:  # a forked worker: die as the signal says
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if fired:
            return  # already cleaning up: let it finish
        fired.append(signum)
        _stop_workers(before)
        warnings.filterwarnings("ignore", message=_WORKERS_STOPPED)  # spaCy's W127: we stopped them
        raise Interrupted(signum)

    owner = os.getpid()
    for signum in SIGNALS:
        current = signal.getsignal(signum)
        if current is not None and current is not signal.SIG_IGN:  # None: set outside Python, leave it
            previous[signum] = signal.signal(signum, handler)
    _guarded_by = owner
    try:
        with warnings.catch_warnings():  # the handler's filter lasts as long as the build
            yield
    except Interrupted as exc:
        _guarded_by = None
        _restore(previous)
        _raise_again(exc.signum)
        raise SentretError(f"the build was {exc}; nothing was left behind") from None
    finally:
        _guarded_by = None
        _restore(previous)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold the signals back during a step that must not be cut in half (moving the index into place)."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _stop_workers(before: set[multiprocessing.process.BaseProcess]) -> None:
    """Terminate the worker processes started since the build began, without waiting for their batch."""
    workers = [p for p in multiprocessing.active_children() if p not in before]
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(_WORKER_GRACE_S)
        if worker.is_alive():
            worker.kill()
            worker.join()


def _restore(previous: dict[int, Any]) -> None:
    for signum, old in previous.items():
        signal.signal(signum, old)
    previous.clear()


def _raise_again(signum: int) -> None:
    """Deliver ``signum`` to the handler it had before the build (the default one ends the process)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    signal.raise_signal(signum)


def _die_with_the_build() -> None:
    """In a process just forked by a guarded build: be killed when the build dies (Linux)."""
    if _guarded_by is None or _prctl is None or os.getppid() != _guarded_by:
        return
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != _guarded_by:  # the build died before the request took effect
        os._exit(1)


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_die_with_the_build)
