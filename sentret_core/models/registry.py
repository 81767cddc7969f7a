"""The registry of sentence scorers by versioned name (``"bm25f.v1"``).

A name without its version (``"bm25f"``) is an alias of the latest version. A version is frozen:
a change to a formula or a default is a new version, so runs and judgments stay comparable.
Later families (class-based and trigger LMs) add themselves with :func:`register`.
"""

from __future__ import annotations

from ..errors import SentretError
from . import bm25, lm, tfisf
from .spec import ModelSpec

MODELS: dict[str, ModelSpec] = {}
_ALIASES: dict[str, str] = {}

DEFAULT_MODEL = "bm25.v1"


def register(spec: ModelSpec, *, replace: bool = False) -> ModelSpec:
    """Add ``spec`` under its versioned name; its base name then points to the latest version."""
    if "." not in spec.name or not spec.name.rsplit(".v", 1)[-1].isdigit():
        raise ValueError(f"model name {spec.name!r} must end in a version, like 'bm25.v1'")
    if spec.name in MODELS and not replace:
        raise ValueError(f"model {spec.name!r} is already registered")
    MODELS[spec.name] = spec
    latest = _ALIASES.get(spec.base)
    if latest is None or MODELS[latest].version <= spec.version:
        _ALIASES[spec.base] = spec.name
    return spec


def get_model(name: str) -> ModelSpec:
    """The model registered as ``name`` (or the latest version of a base name)."""
    spec = MODELS.get(name)
    if spec is None:
        alias = _ALIASES.get(name) if isinstance(name, str) else None
        if alias is None:
            raise SentretError(f"unknown model {name!r}; choose one of {', '.join(MODELS)}")
        spec = MODELS[alias]
    return spec


def list_models() -> list[ModelSpec]:
    """Every registered model, in registration order."""
    return list(MODELS.values())


def aliases() -> dict[str, str]:
    """Base name → latest versioned name."""
    return dict(_ALIASES)


for _spec in (*tfisf.SPECS, *bm25.SPECS, *lm.SPECS):
    register(_spec)

# --- seed 001: class-based and trigger LMs (lm-class.v1, lm-trigger.v1) -------------------------
from . import classes, triggers  # noqa: E402

for _spec in (*classes.SPECS, *triggers.SPECS):
    register(_spec)
# --- end seed 001 ---------------------------------------------------------------------------------
