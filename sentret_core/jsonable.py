"""Turn results into plain JSON values (one copy for runs, judged evaluation and the CLI)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np


def finite_or_none(value: Any) -> float | None:
    """``value`` as a float, or None where it is NaN or infinite (JSON has neither)."""
    number = float(value)
    return number if math.isfinite(number) else None


def plain(value: Any) -> Any:
    """JSON-ready: numpy scalars to Python, NaN/±inf to None, tuples to lists, paths to text."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return finite_or_none(value)
    if isinstance(value, Path):
        return str(value)
    return value
