"""Entity support (Blanco & Zaragoza, SIGIR 2010, §3): S_q and Ŝ_q, entity ranking, and support sentences per model."""

from sentret_core.support.engine import support
from sentret_core.support.records import SupportResult

__all__ = ["SupportResult", "support"]
