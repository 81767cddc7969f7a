"""The README's Python examples run as written, on the small fixture index instead of the demo's.

Each ```python block is executed on its own, with only the demo index's path replaced (and a judgments
file's, by one in the test's own folder); a benchmark is read from the real ../shared/data, into a cache of
the test's own, and the block skips where that folder is absent. What a block returns last is checked to be
a real result, not only that nothing raised.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.evaluation.benchmarks.indexing import CACHE_ENV
from tests.conftest import SHARED_DATA

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
DEMO = '"data/indexes/demo"'
SHARED = '"../shared/data/'  # a benchmark's file: the block loads it instead of an index
JUDGMENTS = '"data/pilot.sqlite"'  # a judgments file the block creates
NEEDS = {"sentret_core.integrations.pyterrier": "pyterrier"}  # a block's import → the package it needs


def blocks() -> list[str]:
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def test_the_readme_has_the_examples_this_file_runs() -> None:
    found = blocks()
    assert len(found) >= 4
    assert all(DEMO in block or SHARED in block for block in found)  # each loads what it uses itself
    assert any(SHARED in block for block in found) and any(JUDGMENTS in block for block in found)


@pytest.mark.parametrize("number", range(len(blocks())))
def test_a_readme_example_runs_as_written(
    number: int, small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = blocks()[number]
    for module, package in NEEDS.items():
        if module in code:
            pytest.importorskip(package)  # the test extra installs it: skipped only outside `make test`
    if SHARED in code and not SHARED_DATA.is_dir():
        pytest.skip(f"needs the real benchmark files in {SHARED_DATA} (there in CI)")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "benchmarks"))  # never data/indexes/benchmarks
    monkeypatch.delenv(ADMIN_TOKEN_ENV, raising=False)  # what a block sets is unset afterwards
    code = code.replace(DEMO, repr(str(small_index.path))).replace(JUDGMENTS, repr(str(tmp_path / "pilot.sqlite")))
    code = code.replace(SHARED, f'"{SHARED_DATA}/')
    *body, last = code.strip().splitlines()
    namespace: dict[str, object] = {}
    exec("\n".join(body), namespace)  # the README's own code
    value = eval(last.split("  #")[0], namespace)  # its last line is an expression: what it shows
    if isinstance(value, pd.DataFrame):
        assert len(value) > 0, f"README example {number + 1} returned an empty table"
