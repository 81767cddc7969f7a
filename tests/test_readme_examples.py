"""The README's Python examples run as written, on the small fixture index instead of the demo's.

Each ```python block is executed on its own, with only the demo index's path replaced; what a block
returns last is checked to be a real result, not only that nothing raised.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from sentret_core import Index

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
DEMO = '"data/indexes/demo"'
NEEDS = {"sentret_core.integrations.pyterrier": "pyterrier"}  # a block's import → the package it needs


def blocks() -> list[str]:
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def test_the_readme_has_the_examples_this_file_runs() -> None:
    found = blocks()
    assert len(found) >= 4
    assert all(DEMO in block for block in found)  # each loads the index it uses itself


@pytest.mark.parametrize("number", range(len(blocks())))
def test_a_readme_example_runs_as_written(number: int, small_index: Index) -> None:
    code = blocks()[number]
    for module, package in NEEDS.items():
        if module in code:
            pytest.importorskip(package)  # the test extra installs it: skipped only outside `make test`
    code = code.replace(DEMO, repr(str(small_index.path)))
    *body, last = code.strip().splitlines()
    namespace: dict[str, object] = {}
    exec("\n".join(body), namespace)  # the README's own code
    value = eval(last.split("  #")[0], namespace)  # its last line is an expression: what it shows
    if isinstance(value, pd.DataFrame):
        assert len(value) > 0, f"README example {number + 1} returned an empty table"
