"""Explicit training steps that write named artefacts of an index (the word classes and
trigger tables of Momtazi & Klakow, IP&M 2015; the sentence vectors of minilm.v1). Scorers only read
what these write."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sentret_core.errors import SentretError
from sentret_core.index import artefacts

if TYPE_CHECKING:
    from sentret_core.index.reader import Index


def trainers() -> dict[str, Callable[..., Any]]:
    """Artefact kind → its training function (``train_classes``, ``train_triggers``)."""
    from sentret_core.models.training.classes import train_classes
    from sentret_core.models.training.sentence_vectors import train_minilm
    from sentret_core.models.training.triggers import train_triggers

    return {"classes": train_classes, "triggers": train_triggers, "minilm": train_minilm}


def needed(model: str, params: Mapping[str, Any] | None = None) -> dict[str, tuple[str, str]]:
    """Parameter → (kind, name) of every artefact ``model`` names with ``params``."""
    from sentret_core.models.core.registry import get_model

    spec = get_model(model)
    resolved = spec.resolve(params)
    return {p.name: (p.artefact, str(getattr(resolved, p.name))) for p in spec.param_specs() if p.artefact}


def used(index: Index, model: str, params: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Parameter → ``name@hash`` of each artefact ``model`` names (``name@missing`` if untrained)."""
    found = {}
    for param, (kind, name) in needed(model, params).items():
        try:
            found[param] = artefacts.reference(index, kind, name)
        except SentretError:
            found[param] = f"{name}@missing"
    return found


def train_missing_defaults(
    index: Index, models: Iterable[tuple[str, Mapping[str, Any] | None]], note: Callable[[str], None]
) -> list[str]:
    """Train, with default settings, each *default-named* artefact the models need and the index lacks.

    An explicit step for indexes sentret builds itself (the benchmarks'): a name a user chose must
    already exist, so it is never trained here.
    """
    from sentret_core.models.core.registry import get_model

    made = []
    for model, params in models:
        defaults = {p.name: p.default for p in get_model(model).param_specs()}
        for param, (kind, name) in needed(model, params).items():
            if kind not in trainers() or name != defaults[param] or _has(index, kind, name):  # rankers are learned
                continue
            note(f"training the {kind} artefact {name!r} of {index.path}")
            trainers()[kind](index, name=name)
            made.append(name)
    return made


def _has(index: Index, kind: str, name: str) -> bool:
    return any(r.get("name") == name for r in artefacts.available(index.path, kind))
