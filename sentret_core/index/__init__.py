"""The sentence index (read-only, memory-mapped) and its on-disk format.

``Index``, ``is_index`` and ``verify`` are imported on first use (PEP 562), so a light submodule
(:mod:`.docnos`, which the command line reads at start) does not load numpy, pandas and scipy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sentret_core.index.format import is_index
    from sentret_core.index.reader import Index, verify

__all__ = ["Index", "is_index", "verify"]
_WHERE = {"Index": "sentret_core.index.reader", "verify": "sentret_core.index.reader",
          "is_index": "sentret_core.index.format"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'sentret_core.index' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
