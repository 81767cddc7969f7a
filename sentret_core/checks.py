"""Argument checks at the public API: one place, one message style.

Every public entry point (``score``, ``top_k``, ``explain``, ``distribution``, ``support``,
``evaluate_benchmark``) checks its arguments here before any work, so a bad argument never reaches
numpy or spaCy. A wrong *type* raises :class:`~sentret_core.errors.ArgumentTypeError` (a
``TypeError``), a value of the right type outside its range raises
:class:`~sentret_core.errors.ArgumentValueError` (a ``ValueError``); both are
:class:`~sentret_core.errors.SentretError`, so the CLI and the app show them as user errors.
Each message names the argument, the value it got and what is allowed, e.g.
``k must be an integer with 1 ≤ k ≤ 1,000,000 (got 1.5, a float)``.

Integers are Python ``int`` or numpy integers; ``bool`` (an ``int`` subclass), floats — even
integral ones like ``3.0`` — strings and ``None`` are refused: ``k=True`` or ``k=10.0`` is almost
always a mistake, and guessing hides it.

Query text is *cleaned*, never refused (:func:`clean_text`): a surrogate pair is joined into its
character, and each lone surrogate and each control character (Unicode category Cc: NUL, the C0 and
C1 controls, DEL; tabs and newlines too) becomes a space, because spaCy cannot hash a lone
surrogate and a control character is never part of a word a user meant. Nothing else changes:
no NFC/NFKC normalisation, because the index stores terms exactly as its documents spell them
(the nlp pass does not normalise), so normalising only the query would make an NFD query miss the
NFD text it was copied from. Format characters (RTL marks, zero-width joiners) stay for the same
reason. A query that held nothing but such characters comes back empty and gives no results, with
:data:`ONLY_CONTROL` as the reason.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from sentret_core.errors import ArgumentTypeError, ArgumentValueError

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

ONLY_CONTROL = (
    "the query has no terms: it held only control characters or unpaired surrogates, "
    "which are removed before tokenising"
)
_SHOWN = 60  # characters of a bad value quoted in a message


def show(value: Any) -> str:
    """``value`` as a message quotes it: its repr (cut to a readable length) and its type."""
    text = repr(value)
    if len(text) > _SHOWN:
        text = text[: _SHOWN - 1] + "…"
    kind = type(value).__name__
    if value is None or isinstance(value, bool):
        return text
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    return f"{text}, {article} {kind}"


# --- numbers --------------------------------------------------------------------------------------


def _range_text(name: str, lo: int | None, hi: int | None, *, below: bool = False) -> str:
    upper = "<" if below else "≤"
    if lo is not None and hi is not None:
        return f"an integer with {lo:,} ≤ {name} {upper} {hi:,}"
    if lo is not None:
        return f"an integer ≥ {lo:,}"
    if hi is not None:
        return f"an integer {upper} {hi:,}"
    return "an integer"


def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None, *, below: bool = False) -> int:
    """``value`` as an ``int`` in [lo, hi] (``below``: [lo, hi)); Python and numpy integers only."""
    allowed = _range_text(name, lo, hi, below=below)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be {allowed} (got {show(value)})")
    number = int(value)
    too_high = hi is not None and (number >= hi if below else number > hi)
    if (lo is not None and number < lo) or too_high:
        raise ArgumentValueError(f"{name} must be {allowed} (got {number:,})")
    return number


def check_optional_int(name: str, value: Any, lo: int | None = None, hi: int | None = None) -> int | None:
    """``None`` or :func:`check_int`."""
    return None if value is None else check_int(name, value, lo, hi)


def check_sentence(index: Index, value: Any, name: str = "sentence_id") -> int:
    """A sentence id of ``index``: an integer in [0, N)."""
    if index.N == 0:
        raise ArgumentValueError(f"{name} {show(value)} cannot be used: the index has no sentences")
    allowed = _range_text(name, 0, index.N, below=True)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be {allowed} (got {show(value)})")
    number = int(value)
    if not 0 <= number < index.N:
        raise ArgumentValueError(
            f"{name} {number:,} is out of range: it must be {allowed} (the index has {index.N:,} sentences)"
        )
    return number


# --- strings and collections ----------------------------------------------------------------------


def check_str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a string (got {show(value)})")
    return value


def check_strings(name: str, value: Any) -> tuple[str, ...]:
    """A list or tuple (any iterable but a string or a mapping) of strings, as a tuple."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"{name} must be a list of strings (got {show(value)})")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise ArgumentTypeError(f"{name} must be a list of strings; it holds {show(item)}")
    return items


def check_labels(value: Any, name: str = "entity_labels") -> tuple[str, ...] | None:
    """``None`` (the default labels) or a list of label strings; whether the index knows them is
    :func:`~sentret_core.support.entities.resolve_labels`'s check."""
    return None if value is None else check_strings(name, value)


def check_entity_ids(index: Index, value: Any, name: str = "entities") -> tuple[int, ...] | None:
    """``None`` or a list of entity ids of ``index`` (integers in [0, E))."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"{name} must be a list of entity ids (got {show(value)})")
    return tuple(check_int(f"{name}[{i}]", e, 0, index.E, below=True) for i, e in enumerate(value))


def check_params(value: Any, name: str = "params") -> dict[str, dict[str, Any]]:
    """``None`` or a mapping from a model name to a mapping of its parameter names to values.

    The values themselves are checked by each model's declared ranges when the model resolves
    them (:meth:`~sentret_core.models.core.spec.ModelSpec.resolve`).
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(f"{name} must be a mapping of model name to parameters, or None (got {show(value)})")
    checked: dict[str, dict[str, Any]] = {}
    for model, values in value.items():
        if not isinstance(model, str):
            raise ArgumentTypeError(f"{name} keys must be model names (got {show(model)})")
        if not isinstance(values, Mapping):
            raise ArgumentTypeError(
                f"{name}[{model!r}] must be a mapping of parameter name to value (got {show(values)})"
            )
        for key in values:
            if not isinstance(key, str):
                raise ArgumentTypeError(f"{name}[{model!r}] keys must be parameter names (got {show(key)})")
        checked[model] = dict(values)
    return checked


def check_model_name(value: Any, name: str = "model") -> str:
    """A model name as a string; whether it is registered is the registry's check."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a model name such as 'bm25f.v1' (got {show(value)})")
    return value


def check_callable(name: str, value: Any) -> Callable[..., Any] | None:
    if value is not None and not callable(value):
        raise ArgumentTypeError(f"{name} must be a function or None (got {show(value)})")
    return value


def check_instance(name: str, value: Any, kind: type, what: str) -> Any:
    if not isinstance(value, kind):
        raise ArgumentTypeError(f"{name} must be {what} (got {show(value)})")
    return value


# --- query text -----------------------------------------------------------------------------------


class Cleaned(NamedTuple):
    """Query text after :func:`clean_text`, and how many characters it replaced."""

    text: str
    removed: int

    @property
    def emptied(self) -> bool:
        """True when cleaning left only spaces of a text that had something in it."""
        return self.removed > 0 and not self.text.strip()


def clean_text(text: str) -> Cleaned:
    """``text`` with surrogate pairs joined and lone surrogates and control characters made spaces.

    Idempotent; a text without such characters comes back as it is (the same object).
    """
    if text.isprintable():  # the fast path: no control character, no surrogate (category Cs)
        return Cleaned(text, 0)
    pieces: list[str] = []
    removed, i, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        code = ord(ch)
        if 0xD800 <= code <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            # a pair as two code points (e.g. from a JSON "\ud83d\ude00" escape) is its character
            pieces.append(chr(0x10000 + ((code - 0xD800) << 10) + (ord(text[i + 1]) - 0xDC00)))
            i += 2
            continue
        if 0xD800 <= code <= 0xDFFF or unicodedata.category(ch) == "Cc":
            pieces.append(" ")
            removed += 1
        else:
            pieces.append(ch)
        i += 1
    return Cleaned("".join(pieces), removed)


def check_query(value: Any, name: str = "query") -> str | tuple[str, ...]:
    """A query: a string (cleaned with :func:`clean_text`) or a list of already normalised terms."""
    if isinstance(value, str):
        return clean_text(value).text
    if isinstance(value, (list, tuple)):
        for item in value:
            if not isinstance(item, str):
                raise ArgumentTypeError(f"{name} must be a string or a list of strings; it holds {show(item)}")
        return value if isinstance(value, tuple) else tuple(value)  # normalise()'s Terms keep their text
    raise ArgumentTypeError(f"{name} must be a string or a list of terms (got {show(value)})")


def query_emptied(value: Any) -> bool:
    """Did cleaning empty this query (a string of only control characters or lone surrogates)?"""
    return isinstance(value, str) and clean_text(value).emptied
