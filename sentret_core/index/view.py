"""What the artefacts' modules read of an index (:class:`IndexView`), so that they need not import the reader, which
imports them to verify an index's artefacts. :class:`~sentret_core.index.reader.Index` has all of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from sentret_core.index.cache import DerivedCache


class IndexView(Protocol):
    """An index as its artefacts see it: its folder, manifest, counts and derived-data cache."""

    @property
    def path(self) -> Path: ...

    @property
    def manifest(self) -> dict[str, Any]: ...

    @property
    def cache(self) -> DerivedCache: ...

    @property
    def N(self) -> int: ...  # sentences

    @property
    def V(self) -> int: ...  # terms
