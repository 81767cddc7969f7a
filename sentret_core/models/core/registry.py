"""The registry of sentence scorers by versioned name (``"bm25f.v1"``).

A model registers where its scorer is defined, with the :func:`register` decorator::

    @register("bm25.v1", display_name="BM25", family="bm25", params=BM25Params,
              explainer=explain_bm25, formula=..., paper=..., description=...)
    def score_bm25(index, q, p): ...

A name without its version (``"bm25f"``) is an alias of the latest version. A version is frozen:
a change to a formula or a default is a new version, so runs and judgments stay comparable.
``sentret_core.models`` imports every family module, so importing it registers every model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sentret_core.errors import SentretError
from sentret_core.models.core.families import get_family
from sentret_core.models.core.spec import (
    Closed,
    Distribution,
    Explainer,
    ExplanationParts,
    ModelSpec,
    Scorer,
    Subset,
    TopK,
)

MODELS: dict[str, ModelSpec] = {}
_ALIASES: dict[str, str] = {}


def add(spec: ModelSpec, *, replace: bool = False) -> ModelSpec:
    """Add ``spec`` under its versioned name; its base name then points to the latest version."""
    if "." not in spec.name or not spec.name.rsplit(".v", 1)[-1].isdigit():
        raise ValueError(f"model name {spec.name!r} must end in a version, like 'bm25.v1'")
    if spec.name in MODELS and not replace:
        raise ValueError(f"model {spec.name!r} is already registered")
    get_family(spec.family)  # a declared family (models/core/families.py)
    MODELS[spec.name] = spec
    latest = _ALIASES.get(spec.base)
    if latest is None or MODELS[latest].version <= spec.version:
        _ALIASES[spec.base] = spec.name
    return spec


def register(
    name: str,
    *,
    display_name: str,
    family: str,
    params: type[Any],
    explainer: Explainer,
    formula: str,
    paper: str,
    description: str,
    distribution: Distribution | None = None,
    open_vocabulary: bool = False,
    reads_text: bool = False,
    closed: Closed | None = None,
    subset: Subset | None = None,
    top_k: TopK | None = None,
    parts: ExplanationParts | None = None,
    explain_tolerance: float = 1e-9,
    replace: bool = False,
) -> Callable[[Scorer], Scorer]:
    """Decorator: register the decorated scorer as model ``name`` (keyword arguments as in ModelSpec;
    ``closed`` scores the sentences the scorer does not return, for closed candidate sets; ``subset``
    scores given sentences only, equal to the scorer's for them; ``top_k`` is a faster exact top k
    that :func:`~sentret_core.models.search` uses; ``parts`` names the explanation columns that split
    a term's contribution; ``explain_tolerance`` how closely the explanation's total matches the score)."""

    def decorate(scorer: Scorer) -> Scorer:
        add(
            ModelSpec(
                name=name,
                display_name=display_name,
                family=family,
                params=params,
                scorer=scorer,
                explainer=explainer,
                formula=formula,
                paper=paper,
                description=description,
                distribution=distribution,
                open_vocabulary=open_vocabulary,
                reads_text=reads_text,
                closed=closed,
                subset=subset,
                top_k=top_k,
                parts=parts,
                explain_tolerance=explain_tolerance,
            ),
            replace=replace,
        )
        return scorer

    return decorate


def unregister(name: str) -> ModelSpec:
    """Remove the model registered as the versioned ``name`` (a test's toy model); its base name then
    points to the latest version left, if any. Raises SentretError for a name not registered."""
    spec = MODELS.pop(name, None)
    if spec is None:
        raise SentretError(f"model {name!r} is not registered")
    left = [other for other in MODELS.values() if other.base == spec.base]
    if left:
        _ALIASES[spec.base] = max(left, key=lambda other: other.version).name
    else:
        _ALIASES.pop(spec.base, None)
    return spec


def get_model(name: str) -> ModelSpec:
    """The model registered as ``name`` (or the latest version of a base name)."""
    spec = MODELS.get(name)
    if spec is None:
        alias = _ALIASES.get(name) if isinstance(name, str) else None
        if alias is None:
            hint = ("; ltr.v1 is registered by importing sentret_core.learning.scorer (any name of sentret_core "
                    "imports it)") if name == "ltr.v1" else ""
            raise SentretError(f"unknown model {name!r}; choose one of {', '.join(MODELS)}{hint}")
        spec = MODELS[alias]
    return spec


def list_models() -> list[ModelSpec]:
    """Every registered model, in registration order."""
    return list(MODELS.values())


def aliases() -> dict[str, str]:
    """Base name → latest versioned name."""
    return dict(_ALIASES)
