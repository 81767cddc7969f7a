"""The fast loop's budget (tests/conftest.py) and the script that writes its figure (benchmarks/fast_loop.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tests.conftest as conftest
from tests.conftest import examples

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import fast_loop  # noqa: E402

sys.path.remove(str(ROOT / "benchmarks"))


def test_the_loop_runs_a_tenth_of_each_budget_and_the_full_run_all_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "FULL_PROPERTIES", False)
    assert [examples(n) for n in (500, 150, 60, 5)] == [50, 15, 10, 10]
    monkeypatch.setattr(conftest, "FULL_PROPERTIES", True)
    assert [examples(n) for n in (500, 150, 60, 5)] == [500, 150, 60, 5]


def test_make_test_and_test_any_cpu_run_the_full_budget() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "SENTRET_PROPERTIES=full $(BIN)/python -m pytest -q -ra\n" in makefile
    assert "test-any-cpu: export SENTRET_PROPERTIES = full\n" in makefile


def test_the_figure_is_written_between_the_markers_and_only_there(tmp_path: Path) -> None:
    page = tmp_path / "README.md"
    page.write_text("before <!-- fast-loop -->old figure<!-- /fast-loop --> after\n", encoding="utf-8")
    measured = {"passed": 2000, "skipped": 58, "left_out": 486, "seconds": 88.4, "load_before": 1.3,
                "load_after": 0.9}
    text = fast_loop.sentence(measured)
    assert text.startswith("2,058 of the 2,544 tests, in 88 s on ") and text.endswith("at load 0.9-1.3")
    fast_loop.write(page, text)
    assert page.read_text(encoding="utf-8") == f"before <!-- fast-loop -->{text}<!-- /fast-loop --> after\n"
    page.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="markers"):
        fast_loop.write(page, text)


def test_the_tests_readme_has_the_markers() -> None:
    assert fast_loop.MARKER.search((ROOT / "tests" / "README.md").read_text(encoding="utf-8"))
