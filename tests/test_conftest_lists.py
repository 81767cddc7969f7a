"""The lists in conftest.py that mark tests slow name real tests: a module renamed or moved must take its
entry along, or its tests would silently join `make test-fast`. And the folders mirror the package."""

from __future__ import annotations

import ast

from tests.conftest import SLOW_MODULES, SLOW_PREFIXES, SLOW_TESTS, TESTS, is_slow

PACKAGE = TESTS.parent / "sentret_core"
MODULES = {path.relative_to(TESTS).with_suffix("").as_posix(): path for path in TESTS.rglob("test_*.py")}


def functions_of(module: str) -> set[str]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_listed_module_and_test_exists() -> None:
    assert sorted(set(SLOW_MODULES) - set(MODULES)) == []
    for entry in SLOW_TESTS:
        module, test = entry.split("::")
        assert module in MODULES and test in functions_of(module), entry
    assert all(any(name.startswith(prefix) for name in MODULES) for prefix in SLOW_PREFIXES)


def test_a_module_a_prefix_and_a_single_test_are_each_slow() -> None:
    assert is_slow("test_wheel_app", "test_anything")
    assert is_slow("ui/test_app_explore", "test_anything")
    assert is_slow("evaluation/test_benchmarks", "test_wikiqa_real_topic_counts")
    assert not is_slow("evaluation/test_benchmarks", "test_trecqa_reader_handles_raw_ampersands")
    assert not is_slow("models/test_hand", "test_anything")


def test_the_test_folders_mirror_the_package() -> None:
    """A folder per subpackage of sentret_core (and browser/ for the end-to-end tests in Chromium); at the top
    only the tests of the package as a whole: its public API, its house rules, its docs and its wheel."""
    folders = {path.name for path in TESTS.iterdir() if (path / "__init__.py").exists()}
    subpackages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert folders == subpackages | {"browser", "golden"}  # golden/: the recorded scores and their script
    top = {name for name in MODULES if "/" not in name}
    assert top == {"test_api_checks", "test_api_fuzz", "test_citations", "test_conftest_lists", "test_defaults",
                   "test_fast_loop", "test_import_cost", "test_packaging", "test_public_api",
                   "test_docs_links", "test_golden_scores", "test_layout", "test_private_access",
                   "test_readme_examples", "test_wheel_app"}
