"""What every browser test shares: the `browser` marker and the skip without Chromium (for every module of
this folder), one Chromium per module, and the app served on the small index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_util import CHROMIUM, SKIP_REASON, Server, chromium, streamlit_server
from tests.conftest import SMALL_DOCS, build_from_texts

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents and not CHROMIUM.exists():
            item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module's tests; each test opens its own context or page."""
    pytest.importorskip("playwright.sync_api", reason="no Playwright (pip install playwright)")
    with chromium() as opened:
        yield opened


@pytest.fixture(scope="module")
def small_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``streamlit run app.py`` on the three-document small index, built for the module and removed after."""
    root = tmp_path_factory.mktemp("browser-indexes")
    build_from_texts(root, SMALL_DOCS, "small")
    with streamlit_server(root / "small", root, tmp_path_factory.mktemp("logs") / "streamlit.log") as running:
        yield running
