"""Published numbers that re-run themselves: one file of commands and expected values, checked cell by cell.

A tables file (``docs/tables.toml``) holds *runs* — a command line whose standard output is JSON, such as
``sentret eval … --json`` — and *tables*, each a Markdown table of a docs page whose cells are either text or a
value read from a run's JSON (``at = "models/bm25f.v1/mean/map"``: keys joined by ``/``) with the value it
is expected to have::

    data = "../shared/data"                  # what {data} in a command stands for (a setting can change it)

    [runs.wikiqa]
    command = "sentret eval wikiqa --data {data}/wikiqa/WikiQA-dev.tsv --models bm25.v1 --json"
    about = "30 s on 2 cores"

    [[tables]]
    name = "single-models"
    doc = "docs/evaluation.md"
    columns = ["model", "MAP"]
    rows = [["bm25.v1", {run = "wikiqa", at = "models/bm25.v1/mean/map", expected = 0.605}]]

:func:`check` runs each run a chosen table needs, once, and says of every cell **OK** (the value shows as
expected at the digits printed), **within tolerance** (``|value − expected| ≤ tolerance``, 0.002 unless
the cell says; for a p-value, on the same side of 0.05: the conclusion holds; for a timing or a size with
``factor = F``, within a factor F of it either way) or **FAIL**. A cell may also be a list of texts and values,
drawn one after the other (``[{…p50…}, " / ", {…p95…}, " ms"]``); ``scale`` multiplies what the run printed
(``scale = 1e-6`` for millions), and ``format = "count"`` prints thousands separators. The docs show
the file's expected values, never typed ones: :func:`render` draws a table, :func:`docs_text` puts it
between its page's markers ``<!-- table NAME -->`` and ``<!-- /table -->``, and a test asserts that every
page equals what the file gives (``benchmarks/tables.py`` rewrites them).
"""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sentret_core.errors import SentretError

DEFAULT_TOLERANCE = 0.002  # two units of the third decimal: another CPU's rounding, never another model
P_THRESHOLD = 0.05
Outcome = Literal["OK", "within tolerance", "FAIL"]
FORMATS = ("number", "p", "count")


@dataclass(frozen=True)
class Cell:
    """A value read from a run's JSON: where, what it should be, how it is shown."""

    run: str
    at: tuple[str, ...]
    expected: float
    digits: int = 3
    form: Literal["number", "p", "count"] = "number"
    tolerance: float = DEFAULT_TOLERANCE
    bold: bool = False
    factor: float | None = None  # timings and sizes: within this factor of expected, either way
    scale: float = 1.0  # what the run printed, times this, is the value shown

    def shown(self, value: float) -> str:
        if self.form == "p":
            text = format_p(value)
        else:
            text = f"{value:,.{self.digits}f}" if self.form == "count" else f"{value:.{self.digits}f}"
        return f"**{text}**" if self.bold else text


Piece = str | Cell
Parts = tuple[Piece, ...]  # one table cell drawn from several texts and values


def pieces(cell: Piece | Parts) -> Parts:
    """A table cell as its texts and values, in their order."""
    return cell if isinstance(cell, tuple) else (cell,)


@dataclass(frozen=True)
class Table:
    name: str
    doc: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Piece | Parts, ...], ...]

    def cells(self) -> list[tuple[str, str, Cell]]:
        """(row label, column, cell) for every value cell, those of a cell of several parts in their order."""
        return [(str(row[0]), self.columns[i], piece) for row in self.rows for i, cell in enumerate(row)
                for piece in pieces(cell) if isinstance(piece, Cell)]


@dataclass(frozen=True)
class Spec:
    data: str
    runs: Mapping[str, tuple[str, str]]  # name -> (command, about)
    tables: tuple[Table, ...]

    def table(self, name: str) -> Table:
        for table in self.tables:
            if table.name == name:
                return table
        raise SentretError(f"no table {name!r} (the tables: {', '.join(t.name for t in self.tables)})")


@dataclass(frozen=True)
class Checked:
    table: str
    row: str
    column: str
    cell: Cell
    value: float | None  # None: the run failed or has no such value
    outcome: Outcome
    why: str = ""


def format_p(p: float) -> str:
    """A p-value as the docs print it: two significant digits, ``< 0.0001`` below that."""
    return "< 0.0001" if p < 0.0001 else f"{p:.{max(0, 1 - math.floor(math.log10(p)))}f}"


def load(path: Path) -> Spec:
    """The tables file at ``path``, checked: every cell names a run the file has, every row fits its columns."""
    from sentret_core.files import read_toml

    if not path.is_file():
        raise SentretError(f"no tables file at {path}")
    raw = read_toml(path, str(path))
    runs: dict[str, tuple[str, str]] = {}
    for name, run in _of(raw.get("runs", {}), dict, f"{path}: [runs]").items():
        command = _of(_of(run, dict, f"{path}: [runs.{name}]").get("command"), str, f"{path}: [runs.{name}] command")
        runs[name] = (command, str(run.get("about", "")))
    tables = tuple(_table(_of(t, dict, f"{path}: [[tables]]"), runs, path)
                   for t in _of(raw.get("tables", []), list, f"{path}: tables"))
    names = [t.name for t in tables]
    if len(set(names)) != len(names):
        raise SentretError(f"{path}: two tables share a name ({', '.join(names)})")
    return Spec(str(raw.get("data", "")), runs, tables)


def _of(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind):
        raise SentretError(f"{where}: expected {'text' if kind is str else kind.__name__}, got {value!r}")
    return value


def _table(raw: dict[str, Any], runs: Mapping[str, Any], path: Path) -> Table:
    name = _of(raw.get("name"), str, f"{path}: a table's name")
    where = f"{path}: table {name!r}"
    columns = tuple(str(c) for c in _of(raw.get("columns"), list, f"{where} columns"))
    rows = []
    for row in _of(raw.get("rows"), list, f"{where} rows"):
        row = _of(row, list, f"{where}: a row")
        if len(row) != len(columns):
            raise SentretError(f"{where}: the row {row[:1]} has {len(row)} cells for {len(columns)} columns")
        rows.append(tuple(_cell(c, runs, f"{where}, row {row[0]!r}") for c in row))
    return Table(name, _of(raw.get("doc"), str, f"{where} doc"), columns, tuple(rows))


def _cell(raw: Any, runs: Mapping[str, Any], where: str) -> Piece | Parts:
    if isinstance(raw, list):
        if not raw or any(isinstance(part, list) for part in raw):
            raise SentretError(f"{where}: a cell of several parts lists texts and values, got {raw!r}")
        return tuple(_piece(part, runs, where) for part in raw)
    return _piece(raw, runs, where)


def _piece(raw: Any, runs: Mapping[str, Any], where: str) -> Piece:
    if isinstance(raw, str):
        return raw
    raw = _of(raw, dict, where)
    run = _of(raw.get("run"), str, f"{where}: run")
    if run not in runs:
        raise SentretError(f"{where}: no run {run!r} in [runs]")
    expected = raw.get("expected")
    if isinstance(expected, bool) or not isinstance(expected, (int, float)):
        raise SentretError(f"{where}: expected must be a number, got {expected!r}")
    form = raw.get("format", "number")
    if form not in FORMATS:
        raise SentretError(f"{where}: format is {', '.join(FORMATS)}, got {form!r}")
    at = tuple(_of(raw.get("at"), str, f"{where}: at").split("/"))
    digits, tolerance = raw.get("digits", 3), raw.get("tolerance", DEFAULT_TOLERANCE)
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 9:
        raise SentretError(f"{where}: digits must be a whole number from 0 to 9, got {digits!r}")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance < 1:
        raise SentretError(f"{where}: tolerance must be a number from 0 to 1, got {tolerance!r}")
    factor, scale = raw.get("factor"), raw.get("scale", 1.0)
    if factor is not None and (isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor >= 1):
        raise SentretError(f"{where}: factor must be a number of at least 1, got {factor!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < math.inf:
        raise SentretError(f"{where}: scale must be a positive number, got {scale!r}")
    return Cell(run, at, float(expected), digits, form, float(tolerance), raw.get("bold") is True,
                None if factor is None else float(factor), float(scale))


def render(table: Table) -> str:
    """The Markdown table, each value cell showing its expected value."""
    def text(cell: Piece | Parts) -> str:
        return "".join(p if isinstance(p, str) else p.shown(p.expected) for p in pieces(cell))

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(text(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


def _markers(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- table {re.escape(name)}(?=[\s:])[^>]*-->\n)(.*?)(^<!-- /table -->)",
                      re.DOTALL | re.MULTILINE)


def docs_text(spec: Spec, doc: str, text: str) -> str:
    """The page ``doc``'s ``text`` with each of its tables drawn between its markers (SentretError: none)."""
    for table in (t for t in spec.tables if t.doc == doc):
        pattern = _markers(table.name)
        if not pattern.search(text):
            raise SentretError(f"{doc} has no <!-- table {table.name} --> … <!-- /table --> for its table")
        text = pattern.sub(lambda m, t=table: m.group(1) + render(t) + "\n" + m.group(3), text)  # type: ignore[misc]
    return text


def measured(document: Any, at: Sequence[str]) -> float:
    """The number at ``at`` in a run's JSON; KeyError naming the missing key."""
    value = document
    for key in at:
        if not isinstance(value, dict) or key not in value:
            raise KeyError("/".join(at))
        value = value[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise KeyError(f"{'/'.join(at)} is {value!r}, not a number")
    return float(value)


def judge(cell: Cell, value: float) -> Outcome:
    if cell.shown(value) == cell.shown(cell.expected):
        return "OK"
    if cell.form == "p":
        return "within tolerance" if (value < P_THRESHOLD) == (cell.expected < P_THRESHOLD) else "FAIL"
    if cell.factor is not None:
        ratio = value / cell.expected if value > 0 and cell.expected > 0 else math.inf
        return "within tolerance" if max(ratio, 1 / ratio) <= cell.factor * (1 + 1e-12) else "FAIL"
    return "within tolerance" if abs(value - cell.expected) <= cell.tolerance + 1e-12 else "FAIL"


def command_line(command: str, data: str) -> list[str]:
    """The command's words with ``{data}`` filled in; a leading ``sentret`` is this Python's sentret, a leading
    ``python`` this Python (so ``python benchmarks/….py`` runs where sentret is installed)."""
    words = [word.replace("{data}", data) for word in shlex.split(command)]
    if words[:1] == ["sentret"]:
        return [sys.executable, "-m", "sentret_core", *words[1:]]
    return [sys.executable, *words[1:]] if words[:1] == ["python"] else words


def run_json(words: list[str], root: Path) -> Any:
    """Run ``words`` in ``root`` and parse what it printed; SentretError with its last words when it fails."""
    try:
        done = subprocess.run(words, cwd=root, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise SentretError(f"cannot run {words[0]}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise SentretError(f"exit {done.returncode}: {last}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        raise SentretError("its output is not JSON (a command of a tables file prints --json)") from None


def check(spec: Spec, tables: Sequence[Table], root: Path, data: str | None = None,
          run: Callable[[list[str], Path], Any] = run_json,
          said: Callable[[str], None] = lambda line: None) -> list[Checked]:
    """Every value cell of ``tables``, measured: each run they need runs once, in ``root`` (``said``: a line
    before each run)."""
    outputs: dict[str, Any] = {}
    found: list[Checked] = []
    for table in tables:
        for row, column, cell in table.cells():
            if cell.run not in outputs:
                command, about = spec.runs[cell.run]
                said(f"running {cell.run}" + (f" ({about})" if about else ""))
                try:
                    outputs[cell.run] = run(command_line(command, data or spec.data), root)
                except SentretError as exc:
                    outputs[cell.run] = exc
            document = outputs[cell.run]
            if isinstance(document, SentretError):
                found.append(Checked(table.name, row, column, cell, None, "FAIL", f"{cell.run}: {document}"))
                continue
            try:
                value = measured(document, cell.at) * cell.scale
            except KeyError as exc:
                found.append(Checked(table.name, row, column, cell, None, "FAIL", f"no value at {exc.args[0]}"))
                continue
            found.append(Checked(table.name, row, column, cell, value, judge(cell, value)))
    return found
