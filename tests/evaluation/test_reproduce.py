"""The tables file behind the docs' published numbers (sentret_core/evaluation/reproduce.py, `sentret reproduce`):
each cell measured by its run and judged OK / within tolerance / FAIL, every run run once, the docs' tables
drawn from the file, and the repository's own pages equal to what docs/tables.toml gives."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from sentret_core.cli.main import main
from sentret_core.errors import SentretError
from sentret_core.evaluation.reproduce import (
    Cell,
    Parts,
    Piece,
    Table,
    check,
    command_line,
    docs_text,
    format_p,
    judge,
    load,
    pieces,
    render,
    run_json,
)

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "docs" / "tables.toml"
PRINTS = {"models": {"bm25.v1": {"mean": {"map": 0.60514, "mrr": 0.6091}, "p": 0.0003}}}


def tables_file(tmp_path: Path, command: str, *, expected_map: float = 0.605) -> Path:
    path = tmp_path / "tables.toml"
    path.write_text(f"""data = "{tmp_path}"

[runs.fake]
command = {json.dumps(command)}
about = "an instant"

[[tables]]
name = "one"
doc = "page.md"
columns = ["model", "MAP", "MRR", "p"]
rows = [
  ["bm25.v1", {{run = "fake", at = "models/bm25.v1/mean/map", expected = {expected_map}, bold = true}},
              {{run = "fake", at = "models/bm25.v1/mean/mrr", expected = 0.61}},
              {{run = "fake", at = "models/bm25.v1/p", expected = 0.0004, format = "p"}}],
  ["missing", {{run = "fake", at = "models/bm99/mean/map", expected = 0.5}}, "", ""],
]
""", encoding="utf-8")
    return path


def printing(document: Any) -> str:
    """A command line that prints ``document`` as JSON (this Python, no sentret)."""
    return shlex.join([sys.executable, "-c", f"import json; print(json.dumps({document!r}))"])


def test_each_cell_is_judged_and_each_run_runs_once(tmp_path: Path) -> None:
    spec = load(tables_file(tmp_path, "sentret eval wikiqa --data {data}/dev.tsv --json"))
    calls: list[list[str]] = []

    def fake(words: list[str], root: Path) -> Any:
        calls.append(words)
        return PRINTS

    found = check(spec, spec.tables, tmp_path, run=fake)
    assert calls == [[sys.executable, "-m", "sentret_core", "eval", "wikiqa", "--data", f"{tmp_path}/dev.tsv",
                      "--json"]]  # once for four cells; `sentret` is this Python's, {data} the file's
    assert [(c.row, c.column, c.value, c.outcome) for c in found] == [
        ("bm25.v1", "MAP", 0.60514, "OK"),  # 0.605 at three digits
        ("bm25.v1", "MRR", 0.6091, "within tolerance"),  # 0.609 shown, |0.6091 - 0.61| <= 0.002
        ("bm25.v1", "p", 0.0003, "within tolerance"),  # another p, the same side of 0.05
        ("missing", "MAP", None, "FAIL"),
    ]
    assert found[-1].why == "no value at models/bm99/mean/map"
    assert check(spec, spec.tables, tmp_path, data="/elsewhere", run=fake)[0].outcome == "OK"
    assert calls[-1][6] == "/elsewhere/dev.tsv"


def test_the_judgement_at_its_edges() -> None:
    cell = Cell("r", ("x",), 0.638)
    assert [judge(cell, v) for v in (0.6384, 0.6376, 0.640, 0.6401, 0.636, 0.6359)] == [
        "OK", "OK", "within tolerance", "FAIL", "within tolerance", "FAIL"]
    p = Cell("r", ("x",), 0.023, form="p")
    assert [judge(p, v) for v in (0.0234, 0.04, 0.06)] == ["OK", "within tolerance", "FAIL"]
    assert [format_p(v) for v in (0.19, 0.4, 0.023, 0.0003, 0.00009, 1.0)] == [
        "0.19", "0.40", "0.023", "0.00030", "< 0.0001", "1.0"]  # two significant digits


def test_timings_are_judged_within_a_factor_and_counts_scaled() -> None:
    """A p95 of 468 ms with factor 1.5: 312-702 ms holds (the same machine, another load), 2× does not."""
    timing = Cell("r", ("x",), 468, digits=0, factor=1.5)
    assert [judge(timing, v) for v in (468.4, 312.0, 702.0, 703.0, 311.0, 0.0)] == [
        "OK", "within tolerance", "within tolerance", "FAIL", "FAIL", "FAIL"]
    count = Cell("r", ("x",), 285_969, digits=0, form="count")
    assert count.shown(285_969) == "285,969" and judge(count, 285_969.2) == "OK"
    assert judge(count, 285_970) == "FAIL"  # a count is exact: the default tolerance is far below one


def test_a_cell_of_several_parts_draws_and_checks_each_value(tmp_path: Path) -> None:
    path = tmp_path / "tables.toml"
    path.write_text(f"""[runs.fake]
command = {json.dumps(printing({"build": {"s": 6.49, "heap_mb": 1432.0}, "terms": 12_000_123}))}
[[tables]]
name = "scale"
doc = "page.md"
columns = ["", "1M sentences"]
rows = [
  ["build; its peak memory", [{{run = "fake", at = "build/s", expected = 6.5, digits = 1, factor = 2}}, " s; ",
      {{run = "fake", at = "build/heap_mb", expected = 1.4, digits = 1, scale = 1e-3, factor = 2}}, " GB"]],
  ["term occurrences", [{{run = "fake", at = "terms", expected = 12.0, digits = 1, scale = 1e-6}}, "M"]],
]
""", encoding="utf-8")
    spec = load(path)
    assert render(spec.tables[0]).splitlines()[2:] == ["| build; its peak memory | 6.5 s; 1.4 GB |",
                                                        "| term occurrences | 12.0M |"]
    found = check(spec, spec.tables, tmp_path)
    assert [(c.row, c.value, c.outcome) for c in found] == [
        ("build; its peak memory", 6.49, "OK"), ("build; its peak memory", pytest.approx(1.432), "OK"),
        ("term occurrences", pytest.approx(12.000123), "OK")]


def test_a_run_that_fails_or_prints_no_json_fails_its_cells(tmp_path: Path) -> None:
    broken = shlex.join([sys.executable, "-c", "import sys; sys.exit('no such benchmark file')"])
    spec = load(tables_file(tmp_path, broken))
    found = check(spec, spec.tables, tmp_path)
    assert {c.outcome for c in found} == {"FAIL"} and found[0].why == "fake: exit 1: no such benchmark file"
    with pytest.raises(SentretError, match="not JSON"):
        run_json([sys.executable, "-c", "print('MAP 0.6')"], tmp_path)
    with pytest.raises(SentretError, match="cannot run"):
        run_json([str(tmp_path / "nothing-here")], tmp_path)


def test_a_real_command_is_run_in_the_working_folder(tmp_path: Path) -> None:
    spec = load(tables_file(tmp_path, printing(PRINTS)))
    assert [c.outcome for c in check(spec, spec.tables, tmp_path)][:3] == ["OK", "within tolerance",
                                                                            "within tolerance"]


def test_a_leading_python_is_this_python(tmp_path: Path) -> None:
    """So ``python benchmarks/learned.py --json`` runs where sentret is installed, not the first python on PATH."""
    script = tmp_path / "prints.py"
    script.write_text(f"import json, sys; print(json.dumps({{'python': sys.executable, **{PRINTS!r}}}))\n")
    assert command_line(f"python {script} --json", "") == [sys.executable, str(script), "--json"]
    spec = load(tables_file(tmp_path, f"python {script}"))
    assert [c.outcome for c in check(spec, spec.tables, tmp_path)][:3] == ["OK", "within tolerance",
                                                                            "within tolerance"]
    assert command_line("pythonic x", "") == ["pythonic", "x"]


@pytest.mark.parametrize("row, message", [
    ('["x", {run = "nope", at = "a", expected = 1}]', "no run 'nope'"),
    ('["x", {run = "fake", at = "a", expected = "0.6"}]', "expected must be a number"),
    ('["x", {run = "fake", at = "a", expected = 1, format = "pct"}]', "format is number, p, count"),
    ('["x"]', "has 1 cells for 2 columns"),
    ('["x", {run = "fake", at = "a", expected = 1, digits = "3"}]', "digits must be a whole number"),
    ('["x", {run = "fake", at = "a", expected = 1, tolerance = 5}]', "tolerance must be a number from 0 to 1"),
    ('["x", {run = "fake", at = "a", expected = 1, factor = 0.5}]', "factor must be a number of at least 1"),
    ('["x", {run = "fake", at = "a", expected = 1, scale = 0}]', "scale must be a positive number"),
    ('["x", []]', "a cell of several parts lists texts and values"),
    ('["x", [["y"]]]', "a cell of several parts lists texts and values"),
])
def test_a_bad_tables_file_is_one_message(tmp_path: Path, row: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(f'[runs.fake]\ncommand = "true"\n[[tables]]\nname = "t"\ndoc = "d.md"\ncolumns = ["a", "b"]\n'
                    f"rows = [{row}]\n", encoding="utf-8")
    with pytest.raises(SentretError, match=message):
        load(path)
    with pytest.raises(SentretError, match="no tables file"):
        load(tmp_path / "none.toml")


def test_the_docs_show_the_files_values_between_their_markers(tmp_path: Path) -> None:
    spec = load(tables_file(tmp_path, "true"))
    assert render(spec.tables[0]) == (
        "| model | MAP | MRR | p |\n|---|---|---|---|\n"
        "| bm25.v1 | **0.605** | 0.610 | 0.00040 |\n| missing | 0.500 |  |  |")
    page = "Before.\n\n<!-- table one: from tables.toml -->\n| old | table |\n<!-- /table -->\n\nAfter.\n"
    drawn = docs_text(spec, "page.md", page)
    assert drawn == page.replace("| old | table |", render(spec.tables[0]))
    assert docs_text(spec, "page.md", drawn) == drawn and docs_text(spec, "other.md", page) == page
    with pytest.raises(SentretError, match=r"page\.md has no <!-- table one -->"):
        docs_text(spec, "page.md", "no markers here")


def test_sentret_reproduce_says_each_cell_and_fails_on_a_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    good = tables_file(tmp_path, printing(PRINTS))
    assert main(["reproduce", str(good), "--table", "one"]) == 1  # the "missing" row fails
    out, err = capsys.readouterr()
    assert "one | bm25.v1 | MAP: 0.6051, expected 0.605: OK" in out
    assert "one | missing | MAP: —, expected 0.5: FAIL (no value at models/bm99/mean/map)" in out
    assert "sentret reproduce: running fake (an instant)" in err
    assert "sentret reproduce: 4 cells: 1 OK, 2 within tolerance, 1 FAIL" in err
    assert main(["reproduce", str(good), "--list"]) == 0
    assert capsys.readouterr().out == "one (page.md): 4 values from fake [an instant]\n"
    assert main(["reproduce", str(good), "--table", "two"]) == 2
    assert "no table 'two' (the tables: one)" in capsys.readouterr().err
    (tmp_path / "page.md").write_text("<!-- table one -->\n| stale |\n<!-- /table -->\n", encoding="utf-8")
    assert main(["reproduce", str(good), "--check-docs"]) == 1
    assert "page.md: its tables differ" in capsys.readouterr().out
    page = docs_text(load(good), "page.md", (tmp_path / "page.md").read_text(encoding="utf-8"))
    (tmp_path / "page.md").write_text(page, encoding="utf-8")
    assert main(["reproduce", str(good), "--check-docs"]) == 0


def test_the_repositorys_pages_show_docs_tables_toml() -> None:
    spec = load(TABLES)
    assert spec.tables and all(table.cells() for table in spec.tables)
    for doc in {table.doc for table in spec.tables}:
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert docs_text(spec, doc, text) == text, f"{doc}: run python benchmarks/tables.py"


@pytest.mark.slow
def test_the_cheap_run_of_docs_tables_toml_reproduces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The untuned WikiQA dev run (about 30 s): its cells hold on this machine."""
    monkeypatch.chdir(ROOT)
    spec = load(TABLES)
    def only_cheap(row: tuple[Piece | Parts, ...]) -> tuple[Piece | Parts, ...]:
        cheap = [all(not isinstance(p, Cell) or p.run == "wikiqa-dev" for p in pieces(c)) for c in row]
        return tuple(c if ok else "" for c, ok in zip(row, cheap, strict=True))

    cheap = [Table(t.name, t.doc, t.columns, tuple(only_cheap(row) for row in t.rows)) for t in spec.tables]
    found = [c for c in check(spec, cheap, ROOT) if c.cell.run == "wikiqa-dev"]
    assert found and [(c.row, c.column, c.value) for c in found if c.outcome == "FAIL"] == []
