"""Reading a page's state from its URL: every value checked, and a bad one named in a warning.

A link reproduces a view, so every widget's value lives in the URL's query parameters. A value the
page cannot use (an unknown model, k out of range, a label the index lacks) is never dropped in
silence: :class:`UrlReader` collects one sentence per bad value, naming it and what was used instead,
and :func:`show_warnings` draws them (as text: a URL is typed by anyone).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

from sentret_core.ui.history import set_url
from sentret_core.ui.text import md

T = TypeVar("T")
_ASCII_INTEGER = re.compile(r"[0-9]{1,9}")  # int() also takes "٣", " 3 " and "3_000"; a link never needs them


def is_ascii_integer(raw: str) -> bool:
    """Whether ``raw`` is a whole number written in ASCII digits (at most 9 of them, so it is cheap)."""
    return _ASCII_INTEGER.fullmatch(raw) is not None


def ascii_integer(raw: str) -> int:
    """``raw`` as an int when :func:`is_ascii_integer`, else ValueError."""
    if not is_ascii_integer(raw):
        raise ValueError(f"{raw!r} is not a whole number")
    return int(raw)


class UrlReader:
    """The page's query parameters, read one by one with a fallback and a warning for a bad value."""

    def __init__(self, params: Any = None) -> None:
        source = st.query_params if params is None else params
        self.params: dict[str, str] = {str(k): str(source[k]) for k in source}
        self.warnings: list[str] = []

    def has(self, key: str) -> bool:
        return key in self.params

    def text(self, key: str, default: str = "") -> str:
        return self.params.get(key, default)

    def _bad(self, key: str, value: str, why: str, used: object) -> None:
        self.warnings.append(f"The link's {key}={value!r} {why}; using {used!r} instead.")

    def choice(self, key: str, options: Sequence[T], default: T, parse: Callable[[str], T] | None = None) -> T:
        """One of ``options`` (by its string form unless ``parse`` is given)."""
        if key not in self.params:
            return default
        raw = self.params[key]
        found = [o for o in options if (parse(raw) if parse else raw) == (o if parse else str(o))]
        if found:
            return found[0]
        self._bad(key, raw, "is not one of " + ", ".join(str(o) for o in options), default)
        return default

    def integer(self, key: str, low: int, high: int, default: int) -> int:
        return int(self._within(key, ascii_integer, "a whole number", low, high, default, f"{low}-{high}"))

    def number(self, key: str, low: float, high: float, default: float) -> float:
        return float(self._within(key, float, "a number", low, high, default, f"{low:g}-{high:g}"))

    def _within(self, key: str, parse: Callable[[str], float], what: str, low: float, high: float,
                default: float, span: str) -> float:
        if key not in self.params:
            return default
        raw = self.params[key]
        try:
            value = parse(raw)
        except ValueError:
            self._bad(key, raw, f"is not {what}", default)
            return default
        if not low <= value <= high:
            self._bad(key, raw, f"is outside {span}", default)
            return default
        return value

    def many(self, key: str, options: Sequence[str], default: list[str], most: int | None = None) -> list[str]:
        """A comma-separated subset of ``options``; unknown items are left out and named."""
        if key not in self.params:
            return list(default)
        raw = [item for item in self.params[key].split(",") if item]
        known = [item for item in dict.fromkeys(raw) if item in options]
        unknown = [item for item in raw if item not in options]
        if most is not None and len(known) > most:
            self.warnings.append(f"The link's {key} names {len(known)} values; at most {most} are shown: "
                                 f"using {', '.join(known[:most])!r}.")
            known = known[:most]
        if unknown:
            used = known or list(default)
            self.warnings.append(f"The link's {key} has {', '.join(repr(u) for u in unknown)}, not one of "
                                 f"{', '.join(options)}; using {', '.join(used)!r} instead.")
            return used
        return known or list(default)

    def flag(self, key: str, default: bool) -> bool:
        if key not in self.params:
            return default
        raw = self.params[key]
        if raw in ("1", "0"):
            return raw == "1"
        self._bad(key, raw, "is not 1 or 0", "1" if default else "0")
        return default


def write(values: dict[str, Any], keys: Sequence[str], keep: Sequence[str] = ("index",)) -> None:
    """Put ``values`` into the URL (lists comma-joined, booleans 1/0); an empty one removes its key, and
    so does a key that is neither in ``keys`` nor in ``keep`` (another page's, left by a page switch).

    The URL changes in one step or not at all: each change of ``st.query_params`` reaches the browser
    as a history update of its own (see sentret_core.ui.history)."""
    current = {str(k): st.query_params[k] for k in st.query_params}
    wanted = {k: v for k, v in current.items() if k in keep and k not in keys}
    for key in keys:
        text = url_text(values.get(key))
        if text is not None:
            wanted[key] = text
    if wanted != current:
        set_url(wanted)


def url_text(value: Any) -> str | None:
    """``value`` as it is written in a URL (lists comma-joined, booleans 1/0); None for an empty one."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value) or None
    return str(value)


def show_warnings(warnings: Sequence[str]) -> None:
    for warning in warnings:
        st.warning(md(warning))
