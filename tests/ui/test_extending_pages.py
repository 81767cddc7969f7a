"""docs/extending.md's "Add a page to the app", run as written: step 1's block becomes a module of
``sentret_core.ui.pages`` (from a temporary folder put on the package's path), step 2's line is added to
``PAGES``, and the page is drawn on its own and inside the whole app."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import sentret_core.ui.main as main
import sentret_core.ui.pages as pages
from sentret_core import Index

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"


def recipe_blocks() -> list[str]:
    """The Python blocks of "Add a page to the app": the page's module, then its line of ``PAGES``."""
    section = DOC.read_text(encoding="utf-8").split("## Add a page to the app", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 2, "the page section should hold two Python blocks: the module and its PAGES line"
    return blocks


@pytest.fixture
def sizes_page(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[main.Page]:
    module, line = recipe_blocks()
    (tmp_path / "sizes.py").write_text(module, encoding="utf-8")
    monkeypatch.setattr(pages, "__path__", [*pages.__path__, str(tmp_path)])
    entry = eval(line.strip().rstrip(","), vars(main))  # step 2's line, as main.py would read it
    monkeypatch.setattr(main, "PAGES", (*main.PAGES, entry))
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(small_index.path.parent))
    try:
        yield entry
    finally:
        sys.modules.pop("sentret_core.ui.pages.sizes", None)


def sizes_script() -> None:
    from sentret_core.ui.pages import sizes  # type: ignore[attr-defined]

    sizes.render()


def app_script() -> None:
    import sentret_core.ui.main as app_main

    app_main.run()


def test_the_recipe_page_draws_the_index_sizes(sizes_page: main.Page, small_index: Index) -> None:
    assert sizes_page == main.Page("sizes", "Sizes", "📏", "sizes")
    app = AppTest.from_function(sizes_script, default_timeout=60).run()
    assert not app.exception and not app.error
    assert app.title[0].value == "Sizes"
    assert {m.label: m.value for m in app.metric} == {
        "Documents": f"{small_index.D:,}", "Sentences": f"{small_index.N:,}", "Terms": f"{small_index.V:,}"}


def test_the_app_runs_with_the_recipe_page_in_its_navigation(sizes_page: main.Page) -> None:
    app = AppTest.from_function(app_script, default_timeout=60).run()
    assert not app.exception
    main._import_pages()  # what the app does in the background once: every page of PAGES, the new one included
    assert importlib.import_module("sentret_core.ui.pages.sizes").render
