"""A training that runs beside the app (``make run`` trains the demo's word classes and trigger tables in
the background; the admin's Train buttons): every page says so, with about how long it has left, and
the page reruns when it ends, so the models that read what it trains enable themselves (no restart).

The marker that says a training runs is :mod:`sentret_core.models.training.running`'s; the estimate
is the corpus size times a rate measured on the demo.
"""

from __future__ import annotations

import streamlit as st

from sentret_core.models.training.running import Running, running
from sentret_core.ui.history import read_url_next_run
from sentret_core.ui.offered import models_reading

WATCH_S = 3.0  # how often a page looks whether the training ended
KIND_NAMES = {"classes": "word classes", "triggers": "trigger tables", "minilm": "sentence vectors"}


def notice_text(now: Running, clock: float | None = None) -> str:
    """What a page says while ``now`` runs: what trains, which models wait for it, about how long is left
    (at ``clock``, a time.time() value; the current time by default)."""
    if not now.kinds:
        return "A training of this index runs in the background; the models that read it are enabled when it ends."
    what = " and ".join(KIND_NAMES.get(kind, kind) for kind in now.kinds)
    models = ", ".join(name for kind in now.kinds for name in models_reading(kind))
    left = now.seconds_left(now=clock)
    when = f"about {left:.0f} s left" if left >= 1 else "finishing"
    waiting = f" {models} are enabled when it finishes." if models else ""
    return f"The {what} of this index are training in the background, {when}.{waiting}"


def training_notice(index_path: str) -> None:
    """While a training of ``index_path`` runs: the notice, kept up to date; a rerun of the page when it ends."""
    if running(index_path) is not None:
        _watch(index_path)


@st.fragment(run_every=WATCH_S)
def _watch(index_path: str) -> None:
    now = running(index_path)
    if now is None:  # it ended: the whole page again, with the models it trained (read from the URL)
        read_url_next_run()
        st.rerun(scope="app")
    else:
        st.info(notice_text(now), icon="⏳")
