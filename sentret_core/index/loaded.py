"""The index argument of the public API: a loaded :class:`Index`, or an error naming the argument."""

from __future__ import annotations

from typing import Any

from sentret_core.checks import check_instance
from sentret_core.index.reader import Index


def check_index(value: Any, name: str = "index") -> Index:
    """``value`` when it is a loaded :class:`Index`; else an ArgumentTypeError naming ``name``."""
    result: Index = check_instance(name, value, Index, "a loaded Index (Index.load(path))")
    return result
