"""Model parameters: frozen dataclasses whose fields declare their own range.

Every parameter of every model is a field made with :func:`param`, which records its type,
default, allowed range (``min``/``max`` or ``choices``), a slider ``step``, the ``grid`` the
papers tuned over, a LaTeX ``symbol`` and a one-line ``description``. The app builds its
sliders and help text from :meth:`Params.specs`; construction validates every value and
raises :class:`~sentret_core.errors.SentretError` naming the parameter and what is allowed.

Values may also arrive as strings (from the command line or a URL): ``"1.5"``, ``"3"``,
``"true"`` are parsed to the declared type.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.index.artefacts import NAME as ARTEFACT_NAME

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


@dataclass(frozen=True)
class ParamSpec:
    """What one parameter accepts, and how to present and tune it."""

    name: str
    type: type
    default: Any
    description: str
    symbol: str = ""
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] | None = None
    step: float | None = None
    grid: tuple[Any, ...] | None = None
    nullable: bool = False
    artefact: str | None = None  # the kind of trained artefact it names ("classes", "triggers"), read by name
    # the smallest value allowed above 0: values strictly between 0 and it are refused (a Dirichlet
    # μ that tiny is 0 for any sentence, and its reciprocal overflows)
    min_positive: float | None = None
    # ``min`` itself is excluded: the formula is undefined there (an unsmoothed language model's
    # log 0 for a sentence without a query term)
    above_min: bool = False
    # set by the caller from what it is doing, not chosen by a user (``ltr.v1``'s entity, which the
    # support engine passes per entity): no control in the app, never tuned
    contextual: bool = False

    def allowed(self) -> str:
        """The allowed values in words, for error messages and help text."""
        if self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.artefact is not None:
            text = f"the name of a trained {self.artefact} artefact (lower-case letters, digits, '.', '_', '-')"
        elif self.type is bool:
            text = "True or False"
        else:
            kind = "an integer" if self.type is int else "a number"
            if self.min_positive is not None and self.max is not None:
                text = f"0 or {kind} with {self.min_positive:g} ≤ {self.name} ≤ {self.max:g}"
            elif self.above_min and self.min is not None and self.max is not None:
                text = f"{kind} with {self.min:g} < {self.name} ≤ {self.max:g}"
            elif self.min is not None and self.max is not None:
                text = f"{kind} with {self.min:g} ≤ {self.name} ≤ {self.max:g}"
            elif self.min is not None:
                text = f"{kind} ≥ {self.min:g}"
            elif self.max is not None:
                text = f"{kind} ≤ {self.max:g}"
            else:
                text = kind
        return text + (", or None" if self.nullable else "")

    def convert(self, value: Any) -> Any:
        """``value`` as this parameter's type, checked against its range."""
        if value is None or (self.nullable and isinstance(value, str) and value.strip().lower() == "none"):
            if self.nullable:
                return None
            raise self._error(value)
        converted = self._coerce(value)
        if converted is None:
            raise self._error(value)
        if self.choices is not None and converted not in self.choices:
            raise self._error(value)
        if self.artefact is not None and not ARTEFACT_NAME.fullmatch(converted):
            raise self._error(value)
        if self.type in (int, float):
            if not math.isfinite(converted):
                raise self._error(value)
            if (self.min is not None and converted < self.min) or (self.max is not None and converted > self.max):
                raise self._error(value)
            if self.above_min and converted == self.min:
                raise self._error(value)
            if self.min_positive is not None and 0 < converted < self.min_positive:
                raise self._error(value)
        return converted

    def _coerce(self, value: Any) -> Any:
        kind = self.type
        if isinstance(value, str) and kind is not str:
            text = value.strip().lower()
            if kind is bool:
                return True if text in _TRUE else False if text in _FALSE else None
            try:
                value = float(text)
            except ValueError:
                return None
        if kind is bool:
            return bool(value) if isinstance(value, (bool, np.bool_)) else None
        if isinstance(value, (bool, np.bool_)):
            return None
        if kind is float:
            if not isinstance(value, (int, float, np.integer, np.floating)):
                return None
            try:
                return float(value)
            except OverflowError:  # an int beyond any float: outside every range
                return math.inf
        if kind is int:
            if isinstance(value, (int, np.integer)):
                return int(value)
            if isinstance(value, (float, np.floating)) and float(value).is_integer():
                return int(value)
            return None
        if kind is str:
            return value if isinstance(value, str) else None
        return None

    def _error(self, value: Any) -> SentretError:
        return SentretError(f"parameter {self.name!r} = {value!r} is not allowed; it must be {self.allowed()}")


class Range(TypedDict, total=False):
    """A range several parameters share, each with its own symbol: ``param(default, help, symbol=…, **range)``."""

    min: float | None
    max: float | None
    choices: tuple[Any, ...] | None
    step: float | None
    grid: tuple[Any, ...] | None
    nullable: bool
    min_positive: float | None


class Preset(Range, total=False):
    """A range with its symbol, for parameters that share both: ``param(default, help, **preset)``."""

    symbol: str


def param(
    default: Any,
    description: str,
    *,
    symbol: str = "",
    min: float | None = None,
    max: float | None = None,
    choices: tuple[Any, ...] | None = None,
    step: float | None = None,
    grid: tuple[Any, ...] | None = None,
    nullable: bool = False,
    artefact: str | None = None,
    min_positive: float | None = None,
    above_min: bool = False,
    contextual: bool = False,
) -> Any:
    """A dataclass field carrying its :class:`ParamSpec` (its name and type are filled in later)."""
    meta = {
        "description": description,
        "symbol": symbol,
        "min": min,
        "max": max,
        "choices": choices,
        "step": step,
        "grid": grid,
        "nullable": nullable,
        "artefact": artefact,
        "min_positive": min_positive,
        "above_min": above_min,
        "contextual": contextual,
    }
    return field(default=default, metadata={"sentret.param": meta})


_TYPES = {"float": float, "int": int, "bool": bool, "str": str}


def _base_type(annotation: Any) -> type:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    for part in str(text).replace(" ", "").split("|"):
        if part in _TYPES:
            return _TYPES[part]
    raise TypeError(f"unsupported parameter annotation {annotation!r}")


def grid_range(start: float, stop: float, step: float) -> tuple[float, ...]:
    """``start, start+step, …, stop`` rounded to clean decimals (0.1..0.9 step 0.1 and the like)."""
    count = round((stop - start) / step) + 1
    return tuple(round(start + i * step, 10) for i in range(count))


@dataclass(frozen=True)
class Params:
    """Base of every model's parameters: validates and converts each field on construction."""

    _specs: ClassVar[dict[type, tuple[ParamSpec, ...]]] = {}

    def __post_init__(self) -> None:
        for spec in self.specs():
            object.__setattr__(self, spec.name, spec.convert(getattr(self, spec.name)))
        self.check()

    def check(self) -> None:
        """Constraints between parameters; raise SentretError naming them."""

    @classmethod
    def specs(cls) -> tuple[ParamSpec, ...]:
        cached = Params._specs.get(cls)
        if cached is None:
            cached = tuple(
                ParamSpec(name=f.name, type=_base_type(f.type), default=f.default, **f.metadata["sentret.param"])
                for f in dataclasses.fields(cls)
                if "sentret.param" in f.metadata
            )
            Params._specs[cls] = cached
        return cached

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(spec.name for spec in cls.specs())

    def to_dict(self) -> dict[str, Any]:
        return {spec.name: getattr(self, spec.name) for spec in self.specs()}

    def replace(self, **changes: Any) -> Params:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class NoParams(Params):
    """A parameter-free model (TF-ISF and its parameter-free variants)."""
