"""The sentence index (read-only, memory-mapped) and its on-disk format."""

from sentret_core.index.format import is_index
from sentret_core.index.reader import Index, verify

__all__ = ["Index", "is_index", "verify"]
