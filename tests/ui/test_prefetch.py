"""The files the first results need, found in the installed Streamlit (their names carry a hash that changes
with each release: a release that renames or drops one fails here, not silently in the browser)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from sentret_core.ui.prefetch import LAZY, SCRIPT, lazy_files


def test_every_lazy_file_is_found_once_in_the_installed_streamlit() -> None:
    found = lazy_files()
    assert [next(f for f in found if f.startswith(start)) for start in LAZY] == list(found)  # one each, in order
    spec = importlib.util.find_spec("streamlit")
    assert spec is not None and spec.origin is not None
    static = Path(spec.origin).parent / "static" / "static"
    assert all((static / file).is_file() for file in found)


def test_the_script_fetches_them_once_per_page_load() -> None:
    assert "window.sentretPrefetch" in SCRIPT and "import(base + file)" in SCRIPT
    assert "requestIdleCallback" in SCRIPT
