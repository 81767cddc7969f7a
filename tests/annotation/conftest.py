"""Fixtures of the annotation tests: a judgments store holding session "s" (test_store.make_items' six items)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.store import JudgmentStore
from tests.annotation.test_store import SETTINGS, TOKEN, make_items


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    """A fresh store with session "s" (six items: two entities × three sentences), the admin token set."""
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    with JudgmentStore(tmp_path / "judgments.db") as opened:
        opened.create_session("s", "/indexes/demo", make_items(), SETTINGS)
        yield opened
