"""Every name of ``sentret_core.__all__`` imports from the package and is the very object of its home module.

The home of a name is where ``sentret_core/__init__.py`` imports it from under ``if TYPE_CHECKING:`` (what
mypy and a reader see; at run time ``__getattr__`` imports it on first use): so the type checker and the
running package agree on every name, and a name cannot be listed without a home or homed without being listed.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import sentret_core

INIT = Path(sentret_core.__file__)


def typed_homes() -> dict[str, str]:
    """Name → module, for every ``from module import name`` under ``if TYPE_CHECKING:`` in the package's
    ``__init__``."""
    homes: dict[str, str] = {}
    for block in ast.parse(INIT.read_text(encoding="utf-8")).body:
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING":
            for node in block.body:
                assert isinstance(node, ast.ImportFrom) and node.module, ast.unparse(node)
                for alias in node.names:
                    assert alias.asname is None and alias.name not in homes, ast.unparse(node)
                    homes[alias.name] = node.module
    return homes


HOMES = typed_homes()


def test_every_listed_name_has_a_typed_home_and_every_home_is_listed() -> None:
    assert sorted(HOMES) == sorted(set(sentret_core.__all__) - {"__version__"})
    assert len(sentret_core.__all__) == len(set(sentret_core.__all__))
    assert {"JudgmentStore", "agreement_summary", "evaluate", "load_benchmark"} <= set(HOMES)  # what notebooks use


@pytest.mark.parametrize("name", sorted(HOMES))
def test_a_public_name_imports_and_is_the_object_of_its_home_module(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from sentret_core import {name}", namespace)
    value = namespace[name]
    assert value is getattr(sentret_core, name)
    assert value is getattr(importlib.import_module(HOMES[name]), name)
    defined_in = getattr(value, "__module__", None)  # a function's or class's own module, where it is written
    if defined_in is not None:
        assert getattr(importlib.import_module(defined_in), value.__name__) is value
    assert name in dir(sentret_core)


def test_a_star_import_gives_exactly_the_listed_names() -> None:
    code = ("import sentret_core\nbefore = set(globals())\nfrom sentret_core import *\n"
            "print(sorted(set(globals()) - before - {'before'}) == sorted(sentret_core.__all__))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True", done.stderr
