"""Whole batches at once, each on one BLAS thread, while the MiniLM encoder (:mod:`.encoder`) encodes many."""

from __future__ import annotations

import importlib
import threading
from functools import lru_cache
from typing import Any

MAX_WORKERS = 8  # batches at once at most (each holds its own activations)


@lru_cache(maxsize=1)
def _controller() -> Any:
    """threadpoolctl's handle on the loaded BLAS (a dependency of scikit-learn's), or None without it."""
    try:  # untyped (no py.typed), so imported by name
        return importlib.import_module("threadpoolctl").ThreadpoolController()
    except ImportError:
        return None


class _OneBlasThread:
    """While entered, each BLAS call runs on one thread; entering gives the count BLAS had, and that many
    batches run at once, one a thread: a batch's many small matmuls and elementwise steps gain more so than
    from BLAS's own threads, which spin between calls (1.2-1.4× the sentences/s on 2 cores). BLAS's limit is
    process-wide: concurrent encodes share it, and the last to leave lifts it."""

    def __init__(self) -> None:
        self._lock, self._users, self._threads = threading.Lock(), 0, 1
        self._limiter: Any = None

    def __enter__(self) -> int:
        with self._lock:
            if self._users == 0:
                controller = _controller()
                pools = [] if controller is None else controller.select(user_api="blas").info()
                self._threads = max([1, *(int(p["num_threads"]) for p in pools)])
                if self._threads > 1:
                    self._limiter = controller.limit(limits=1, user_api="blas")
            self._users += 1
            return self._threads

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0 and self._limiter is not None:
                self._limiter.restore_original_limits()
                self._limiter = None


ONE_BLAS_THREAD = _OneBlasThread()
