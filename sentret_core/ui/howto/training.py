"""The How it works page's control for a parameter that names a trained artefact (word classes,
trigger tables, learned rankers): pick one, or train a new one under a new name (rankers are
learned on the Evaluate page)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.models import ParamSpec
from sentret_core.models.training.classes import train_classes
from sentret_core.models.training.triggers import train_triggers
from sentret_core.ui.state import PERSIST, current_index_path, error_guard, load_index

TRAIN_HINT = {"classes": "word classes by the exchange algorithm: about 25 s on the demo corpus",
              "triggers": "inside- and across-sentence trigger tables: about a second on the demo corpus"}  # fmt: skip


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
                                 help=f"{spec.description}. Train another below."))  # fmt: skip
    elif kind in TRAIN_HINT:
        st.warning(f"This index has no trained {kind} yet: train them below (or `sentret train {kind} INDEX`).")
    if kind not in TRAIN_HINT:  # a ranker is learned from judgments, on the Evaluate page or with `sentret learn`
        st.caption("Learn another ranker on the Evaluate page or with `sentret learn`.")
        return value
    with st.expander(f"Train {kind}", expanded=not records):
        _train_form(model, kind, path, key, set(records))
    return value


def _train_form(model: str, kind: str, path: str, key: str, taken: set[str]) -> None:
    with st.form(f"howto_train_{model}_{kind}"):
        st.caption(TRAIN_HINT[kind] + ". The result is a new named artefact of this index.")
        name = st.text_input("Name", value=kind if kind not in taken else "", key=f"{key}_new_name")
        options = _class_options(key) if kind == "classes" else _trigger_options(key)
        if not st.form_submit_button(f"Train {kind}"):
            return
    with error_guard(f"train the {kind}"):
        name = artefacts.check_name(name.strip())
        if name in taken:
            raise SentretError(f"{name!r} exists already: choose a new name (others may be using it)")
        if kind == "classes":  # the exchange passes report how far they are
            bar = st.progress(0.0, text=f"Training classes {name!r}: counting bigrams…")

            def show(share: float, what: str) -> None:
                bar.progress(share, text=f"Training classes {name!r}: {what}")

            train_classes(load_index(path), name=name, progress=show, **options)
        else:  # about a second on the demo corpus
            with st.spinner(f"Training {kind} {name!r}…", show_time=True):
                train_triggers(load_index(path), name=name, **options)
        st.session_state[key] = name
        st.rerun()


def _class_options(key: str) -> dict[str, Any]:
    left, right = st.columns(2)
    return {
        "classes": left.number_input("Classes K", 1, 5000, 100, key=f"{key}_K", help="seed 001: 100 was best"),
        "min_count": right.number_input("Least count", 1, 1000, 3, key=f"{key}_min_count",
                                        help="rarer words join a class afterwards"),
        "iterations": left.number_input("Exchange passes at most", 0, 200, 20, key=f"{key}_iterations"),
        "seed": right.number_input("Seed", 0, 10_000, 0, key=f"{key}_seed",
                                   help="the order in which a pass visits the words"),
        "rare": st.selectbox("Rare words", ("assign", "shared"), key=f"{key}_rare",
                             help="each to its best class, or one shared class"),
    }  # fmt: skip


def _trigger_options(key: str) -> dict[str, Any]:
    st.caption("QA-pair and named-entity tables need question/answer pairs: "
               "`sentret train triggers INDEX --qa-pairs FILE`.")  # fmt: skip
    return {"min_count": st.number_input("Least count of a pair", 1, 1000, 2, key=f"{key}_min_count")}
