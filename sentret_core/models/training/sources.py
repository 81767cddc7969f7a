"""Other indexes a trainer may add to an index's own statistics (Momtazi & Klakow, IP&M 2015, trained on AQUAINT)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sentret_core.index.artefacts import fingerprint

if TYPE_CHECKING:
    from sentret_core.index.reader import Index


def as_index(source: Index | str | os.PathLike[str]) -> Index:
    from sentret_core.index.reader import Index

    return source if isinstance(source, Index) else Index.load(Path(source))


def source_list(sources: Sequence[Index | str | os.PathLike[str]]) -> list[Index]:
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    return [as_index(s) for s in sources]


def describe_sources(sources: Sequence[Index]) -> list[dict[str, str]]:
    return [{"path": str(Path(s.path).resolve()), "fingerprint": fingerprint(s)} for s in sources]


def vocabulary_map(index: Index, sources: Sequence[Index]) -> tuple[list[np.ndarray], int]:
    """Term-id maps of the index (identity) and of every source into one union vocabulary.

    The index's own terms keep their ids 0..V-1; terms only a source knows follow.
    """
    lookup = dict(index.term_index)
    maps = [np.arange(index.V, dtype=np.int64)]
    for source in sources:
        ids = np.empty(source.V, dtype=np.int64)
        for i, term in enumerate(source.vocab):
            tid = lookup.get(term)
            if tid is None:
                tid = len(lookup)
                lookup[term] = tid
            ids[i] = tid
        maps.append(ids)
    return maps, len(lookup)
