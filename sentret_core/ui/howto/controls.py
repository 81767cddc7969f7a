"""The How it works page's inputs: the query and one widget per model parameter, built from its declaration."""

from __future__ import annotations

import math
import re
from typing import Any

import streamlit as st

from sentret_core.models import ModelSpec, ParamSpec, get_model
from sentret_core.support.teaching import control_kind, slider_options
from sentret_core.ui.howto.computations import ParamItems
from sentret_core.ui.howto.training import artefact_control
from sentret_core.ui.state import PERSIST


def _key(model: str, name: str) -> str:
    return f"howto_p_{model}_{name}"


def _own_key(model: str, name: str) -> str:
    return f"howto_own_{model}_{name}"


GREEK = {"\\alpha": "α", "\\gamma": "γ", "\\lambda": "λ", "\\mu": "μ"}


def plain_symbol(symbol: str) -> str:
    """A LaTeX symbol as plain text for a label (and so its accessible name): ``\\lambda_{self}`` → "λ_self"."""
    for command, letter in GREEK.items():
        symbol = symbol.replace(command, letter)
    return symbol.replace("{", "").replace("}", "").replace("\\", "")


def _label(spec: ParamSpec) -> str:
    """The control's label in words: what the parameter does, then its symbol in plain text."""
    words = re.split(r" \(|: |; | — ", spec.description, maxsplit=1)[0].strip()
    if not words:
        words = spec.name
    elif len(words.split(" ", 1)[0]) > 1:  # "b of the title field" keeps its symbol's case
        words = words[:1].upper() + words[1:]
    symbol = plain_symbol(spec.symbol) if spec.symbol else spec.name
    return f"{words} ({symbol})"


def _help(spec: ParamSpec) -> str:
    symbol = f"${spec.symbol}$, " if spec.symbol else ""
    text = f"{symbol}`{spec.name}`: {spec.description}. Allowed: {spec.allowed()}."
    if spec.grid:
        text += f" The papers tuned over {', '.join(f'{g:g}' for g in spec.grid)}."
    return text


def _nice(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10ⁿ at or above ``value``."""
    scale = 10.0 ** math.floor(math.log10(value))
    return next(m * scale for m in (1, 2, 2.5, 5, 10) if m * scale >= value - 1e-12)


def slider_range(spec: ParamSpec, current: float) -> tuple[float, float]:
    """A float slider's range for teaching: from the declared minimum to just past the papers' tuned values
    and twice the default (so the default sits near the middle, not jammed at the left of 0-10); widened to
    hold ``current`` (a link may set any allowed value)."""
    low, high = float(spec.min or 0.0), float(spec.max or 0.0)
    anchors = [float(v) for v in (*(spec.grid or ()), 2 * float(spec.default or 0.0)) if v is not None]
    reach = max(anchors, default=0.0)
    if reach > max(low, 0.0):
        high = min(high, _nice(reach))
    return low, max(high, float(current))


def _reset(model: str) -> None:
    """Every control of ``model`` back to its default: the widgets' values themselves, not only the
    ranking (a value kept with ``persist_state`` outlives a popped key)."""
    for spec in get_model(model).param_specs():
        if spec.artefact is not None:
            continue  # which trained artefact is a choice of data, not a parameter setting
        if spec.nullable:
            st.session_state[_own_key(model, spec.name)] = False
            st.session_state.pop(_key(model, spec.name), None)
        else:
            st.session_state[_key(model, spec.name)] = _widget_value(spec, spec.default)


def _widget_value(spec: ParamSpec, value: Any) -> Any:
    """``value`` as the widget for ``spec`` holds it (a float slider holds floats)."""
    if control_kind(spec) == "slider":
        return int(value) if spec.type is int else float(value)
    return value


def seed_params(model: str, values: dict[str, Any]) -> None:
    """Set ``model``'s controls to ``values`` (checked already), e.g. from a link."""
    for spec in get_model(model).param_specs():
        if spec.name not in values:
            continue
        value = values[spec.name]
        if spec.nullable:
            st.session_state[_own_key(model, spec.name)] = value is not None
            if value is None:
                continue
        st.session_state[_key(model, spec.name)] = _widget_value(spec, value)


def param_control(model: str, spec: ParamSpec) -> Any:
    """One parameter's widget, built from its declared range, step, choices and description."""
    key, label, help_text = _key(model, spec.name), _label(spec), _help(spec)
    kind = control_kind(spec)
    if spec.nullable:
        own = st.toggle(f"Own value: {label}", key=_own_key(model, spec.name), help=help_text, persist_state=PERSIST)
        if not own:
            return None
    default = spec.default
    if default is None:  # a nullable parameter switched on: start at the middle of its range
        default = spec.type((spec.min or 0) + ((spec.max or 1) - (spec.min or 0)) / 2)
    if key not in st.session_state:  # the value lives in the session state (a link or Reset sets it there)
        st.session_state[key] = _widget_value(spec, default)
    if kind == "select":
        return st.selectbox(label, list(spec.choices or ()), key=key, help=help_text, persist_state=PERSIST)
    if kind == "toggle":
        return st.toggle(label, key=key, help=help_text, persist_state=PERSIST)
    if kind == "grid":
        return st.select_slider(label, slider_options(spec), key=key, help=help_text, persist_state=PERSIST,
                                format_func=lambda v: f"{v:g}")
    if kind == "number":
        return st.number_input(label, key=key, help=help_text, persist_state=PERSIST)
    if spec.type is int:
        low, high = int(spec.min or 0), int(spec.max or 0)
        return st.slider(label, low, high, step=int(spec.step or 1), key=key, help=help_text,
                         persist_state=PERSIST)
    step = float(spec.step or 0.01)
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    bottom, top = slider_range(spec, float(st.session_state[key]))
    return st.slider(label, bottom, top, step=step,
                     key=key, help=help_text, format=f"%.{decimals}f", persist_state=PERSIST)


def parameter_controls(spec: ModelSpec) -> dict[str, Any]:
    """Every parameter's widget (an artefact's: a choice and a Train form), then per-field overrides."""
    specs = tuple(p for p in spec.param_specs() if not p.contextual)  # ltr.v1.entity: the engine sets it
    if not specs:
        st.caption("This model has no parameters.")
        return {}
    values: dict[str, Any] = {}
    for p in specs:
        if p.artefact is not None:
            values[p.name] = artefact_control(spec.name, p, _key(spec.name, p.name))
        elif not p.nullable:
            values[p.name] = param_control(spec.name, p)
    nullable = [p for p in specs if p.nullable]
    if nullable:
        with st.expander("Per-field overrides"):
            for p in nullable:
                values[p.name] = param_control(spec.name, p)
    st.button("Reset to defaults", on_click=_reset, args=(spec.name,), key=f"howto_reset_{spec.name}")
    return values


def changed(spec: ModelSpec, values: dict[str, Any]) -> ParamItems:
    """The parameters that differ from the model's defaults, as a hashable cache key."""
    defaults = {p.name: p.default for p in spec.param_specs()}
    return tuple(sorted((k, v) for k, v in values.items() if v != defaults.get(k)))


def query_input() -> str:
    """The query: the Explore page's when it has one the user has not overridden here."""
    explore = st.session_state.get("explore_query")
    if isinstance(explore, str) and explore.strip() and explore != st.session_state.get("howto_from_explore"):
        st.session_state["howto_from_explore"] = explore
        st.session_state["howto_query"] = explore
    if "howto_query" not in st.session_state:
        st.session_state["howto_query"] = "Spanish Civil War"
    return str(st.text_input("Query", key="howto_query", persist_state=PERSIST,
                             help="Taken from the Explore page when you have typed one there."))
