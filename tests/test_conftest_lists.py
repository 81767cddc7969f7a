"""The lists in conftest.py that mark tests slow or give them the default ranker name real tests: a module
renamed or moved (into tests/models/, …) must take its entry along, or its tests would silently join
`make test-fast` or lose the ranker they need."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import NEEDS_DEFAULT_RANKER, SLOW_MODULES, SLOW_PREFIXES, SLOW_TESTS, is_slow

TESTS = Path(__file__).resolve().parent
MODULES = {path.stem: path for path in TESTS.rglob("test_*.py")}


def functions_of(module: str) -> set[str]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_listed_module_and_test_exists() -> None:
    assert sorted((set(SLOW_MODULES) | NEEDS_DEFAULT_RANKER) - set(MODULES)) == []
    for entry in SLOW_TESTS:
        module, test = entry.split("::")
        assert module in MODULES and test in functions_of(module), entry
    assert all(any(name.startswith(prefix) for name in MODULES) for prefix in SLOW_PREFIXES)


def test_a_module_a_prefix_and_a_single_test_are_each_slow() -> None:
    assert is_slow("test_wheel_app", "test_anything")
    assert is_slow("test_app_explore", "test_anything")
    assert is_slow("test_benchmarks", "test_wikiqa_real_topic_counts")
    assert not is_slow("test_benchmarks", "test_trecqa_reader_handles_raw_ampersands")
    assert not is_slow("test_models_hand", "test_anything")
