"""The How it works page's control for a parameter that names a trained artefact (word classes,
trigger tables, sentence vectors, learned rankers): pick one, or train a new one under a new name (rankers are
learned on the Evaluate page).

Training writes to the index and can take minutes, so it is an admin action (left open, one
visitor trained 232 MB of artefacts in 43 s): behind the admin sign-in, with the parameters capped
(:data:`~sentret_core.defaults.APP_MAX_CLASSES`, :data:`~sentret_core.defaults.APP_MAX_PASSES`) and
one training of an index at a time, across every app process and ``sentret train`` (the marker of
:mod:`sentret_core.models.training.running`, which also tells every page that a training runs).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import streamlit as st

from sentret_core.defaults import APP_MAX_CLASSES, APP_MAX_PASSES
from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.format import read_manifest
from sentret_core.models import ParamSpec
from sentret_core.models.training.classes import train_classes
from sentret_core.models.training.running import BUSY, expected_seconds, running, training
from sentret_core.models.training.sentence_vectors import train_minilm
from sentret_core.models.training.triggers import train_triggers
from sentret_core.ui.state import PERSIST, current_index_path, error_guard, load_index

__all__ = ["BUSY", "NEEDS_ADMIN", "artefact_control", "one_training"]
NEEDS_ADMIN = "Training writes to the index and can take minutes: it needs the admin token."

TRAIN_HINT = {"classes": "word classes by the exchange algorithm: about 45 s on the demo corpus (2 busy cores)",
              "triggers": "inside- and across-sentence trigger tables: about a second on the demo corpus",
              "minilm": "every sentence encoded by MiniLM: about two minutes on the demo corpus (2 cores)"}


def _summary(record: dict[str, Any]) -> str:
    if record.get("kind") == "ranker":
        scores = "; ".join(f"{k} MAP {v['map']:.3f}" for k, v in (record.get("metrics") or {}).items())
        return f"{record['name']} ({record.get('learner')}{', ' + scores if scores else ''})"
    params = ", ".join(f"{k}={v}" for k, v in record.get("params", {}).items())
    return f"{record['name']} ({params})" if params else str(record["name"])


def artefact_control(model: str, spec: ParamSpec, key: str) -> str:
    """The artefact ``spec`` names: a choice among the index's artefacts of its kind, and a form
    that trains another (never replacing one: others may be reading it)."""
    kind = str(spec.artefact)
    path = str(current_index_path())
    records = {str(r["name"]): r for r in artefacts.available(path, kind)}
    value = str(spec.default)
    if records:
        names = list(records)
        if st.session_state.get(key) not in names:
            st.session_state[key] = spec.default if spec.default in names else names[0]
        value = str(st.selectbox(f"`{spec.name}` — trained {kind}", names, key=key, persist_state=PERSIST,
                                 format_func=lambda n: _summary(records[n]),
                                 help=f"{spec.description}. Train another below."))
    elif kind in TRAIN_HINT and kind in getattr(running(path), "kinds", ()):
        st.info(f"This index's {kind} are training in the background: this model is enabled when it finishes.")
    elif kind in TRAIN_HINT:
        st.warning(f"This index has no trained {kind} yet: the admin trains them below "
                   f"(or `sentret train {kind} INDEX`).")
    if kind not in TRAIN_HINT:  # a ranker is learned from judgments, on the Evaluate page or with `sentret learn`
        st.caption("Learn another ranker on the Evaluate page or with `sentret learn`.")
        return value
    with st.expander(f"Train {kind}", expanded=not records):
        if _signed_in_admin(f"howto_train_{model}_{kind}", ask=True):
            _train_form(model, kind, path, key, set(records))
    return value


def _signed_in_admin(key: str, ask: bool) -> bool:
    """Whether this browser session is signed in as the admin (the token checked again now); with
    ``ask``, the sign-in form is drawn when it is not."""
    from sentret_core.ui.admin_sign_in import admin_for, token_form
    from sentret_core.ui.judgments import page_store

    store = page_store()
    if store is None:
        return False
    return (token_form(store, key, NEEDS_ADMIN) if ask else admin_for(store)) is not None


def one_training(index_path: str, kind: str | None = None) -> AbstractContextManager[None]:
    """Hold the index's training marker for the block (the one ``sentret train`` holds too, so every
    page meanwhile says "training in the background"); a SentretError when another training holds it."""
    kinds = [kind] if kind else []
    try:
        manifest = read_manifest(index_path, strict=False)
    except Exception:  # the estimate only; what trains says what is wrong with the index
        manifest = {}
    return training(index_path, kinds, expected_seconds(manifest, kinds))


def _train_form(model: str, kind: str, path: str, key: str, taken: set[str]) -> None:
    with st.form(f"howto_train_{model}_{kind}"):
        st.caption(TRAIN_HINT[kind] + ". The result is a new named artefact of this index.")
        name = st.text_input("Name", value=kind if kind not in taken else "", key=f"{key}_new_name")
        options = {"classes": _class_options, "triggers": _trigger_options}.get(kind, lambda _: {})(key)
        if not st.form_submit_button(f"Train {kind}"):
            return
    with error_guard(f"train the {kind}"), one_training(path, kind):
        if not _signed_in_admin("", ask=False):  # the token is checked again at every action
            raise SentretError(NEEDS_ADMIN)
        name = artefacts.check_name(name.strip())
        if name in taken:
            raise SentretError(f"{name!r} exists already: choose a new name (others may be using it)")
        _check_caps(options)
        if kind == "classes":  # the exchange passes report how far they are
            bar = st.progress(0.0, text=f"Training classes {name!r}: counting bigrams…")

            def show(share: float, what: str) -> None:
                bar.progress(share, text=f"Training classes {name!r}: {what}")

            train_classes(load_index(path), name=name, progress=show, **options)
        elif kind == "minilm":  # a chunk of sentences at a time
            bar = st.progress(0.0, text=f"Encoding the sentences {name!r}…")

            def encoded(done: int, total: int) -> None:
                bar.progress(done / max(total, 1), text=f"Encoding the sentences {name!r}: {done:,} of {total:,}")

            train_minilm(load_index(path), name=name, progress=encoded)
        else:  # about a second on the demo corpus
            with st.spinner(f"Training {kind} {name!r}…", show_time=True):
                train_triggers(load_index(path), name=name, **options)
        st.session_state[key] = name
        st.rerun()


def _check_caps(options: dict[str, Any]) -> None:
    """The widgets cap K and the passes; a value sent past them (a forged request) is refused too."""
    for option, cap in (("classes", APP_MAX_CLASSES), ("iterations", APP_MAX_PASSES)):
        if option in options and not 0 <= int(options[option]) <= cap:
            raise SentretError(f"{option} must be at most {cap} in the app (`sentret train` has no such cap)")


def _class_options(key: str) -> dict[str, Any]:
    left, right = st.columns(2)
    return {
        "classes": left.number_input("Classes K", 1, APP_MAX_CLASSES, 100, key=f"{key}_K",
                                     help="Momtazi & Klakow, IP&M 2015: 100 was best; "
                                          f"at most {APP_MAX_CLASSES} here"),
        "min_count": right.number_input("Least count", 1, 1000, 3, key=f"{key}_min_count",
                                        help="rarer words join a class afterwards"),
        "iterations": left.number_input("Exchange passes at most", 0, APP_MAX_PASSES, 20, key=f"{key}_iterations",
                                        help=f"at most {APP_MAX_PASSES} here"),
        "seed": right.number_input("Seed", 0, 10_000, 0, key=f"{key}_seed",
                                   help="the order in which a pass visits the words"),
        "rare": st.selectbox("Rare words", ("assign", "shared"), key=f"{key}_rare",
                             help="each to its best class, or one shared class"),
    }


def _trigger_options(key: str) -> dict[str, Any]:
    st.caption("QA-pair and named-entity tables need question/answer pairs: "
               "`sentret train triggers INDEX --qa-pairs FILE`.")
    return {"min_count": st.number_input("Least count of a pair", 1, 1000, 2, key=f"{key}_min_count")}
