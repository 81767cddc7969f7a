"""``sentret reproduce``: re-run the docs' published numbers from their tables file and say, cell by cell,
OK, within tolerance or FAIL (:mod:`sentret_core.evaluation.reproduce`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sentret_core.cli.common import command

DEFAULT_TABLES = "docs/tables.toml"


def register(sub: Any) -> None:
    p = command(sub, "reproduce", "Re-run the published tables from their file of commands and expected values; "
                "say OK / within tolerance / FAIL per cell (exit 1 on a FAIL).", _run_reproduce)
    p.add_argument("tables", nargs="?", default=DEFAULT_TABLES, metavar="FILE",
                   help=f"the tables file (default {DEFAULT_TABLES}); its commands run in the working directory")
    p.add_argument("--table", action="append", default=None, metavar="NAME",
                   help="only this table (repeatable; default: every table)")
    p.add_argument("--data-dir", default=None, metavar="DIR",
                   help="what {data} in a command stands for (default: the file's own 'data')")
    p.add_argument("--list", action="store_true", help="list the tables and the runs they need; run nothing")
    p.add_argument("--check-docs", action="store_true",
                   help="run nothing: check that every docs page shows its tables as the file gives them")
    p.add_argument("--json", action="store_true", help="every cell as JSON")
    p.set_defaults(reads_models=False)


def _run_reproduce(args: argparse.Namespace) -> int:
    from sentret_core.errors import SentretError
    from sentret_core.evaluation import reproduce

    spec = reproduce.load(Path(args.tables))
    tables = [spec.table(name) for name in args.table] if args.table else list(spec.tables)
    if args.list:
        for table in tables:
            runs = sorted({cell.run for _, _, cell in table.cells()})
            print(f"{table.name} ({table.doc}): {len(table.cells())} values from "
                  + ", ".join(f"{r} [{spec.runs[r][1]}]" if spec.runs[r][1] else r for r in runs))
        return 0
    if args.check_docs:
        stale = []
        for doc in sorted({t.doc for t in tables}):
            try:
                text = Path(doc).read_text(encoding="utf-8")
            except OSError as exc:
                raise SentretError(f"cannot read {doc}: {exc.strerror or exc}") from None
            if reproduce.docs_text(spec, doc, text) != text:
                stale.append(doc)
        for doc in stale:
            print(f"{doc}: its tables differ from {args.tables} (python benchmarks/tables.py rewrites them)")
        print(f"sentret reproduce: {len(stale)} of {len({t.doc for t in tables})} pages differ", file=sys.stderr)
        return 1 if stale else 0
    found = reproduce.check(spec, tables, Path.cwd(), args.data_dir,
                            said=lambda line: print(f"sentret reproduce: {line}", file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps([{"table": c.table, "row": c.row, "column": c.column, "value": c.value,
                           "expected": c.cell.expected, "outcome": c.outcome, "why": c.why} for c in found], indent=2))
    else:
        for c in found:
            value = "—" if c.value is None else f"{c.value:.4f}"
            why = f" ({c.why})" if c.why else ""
            print(f"{c.table} | {c.row} | {c.column}: {value}, expected {c.cell.expected:g}: {c.outcome}{why}")
    counts = {outcome: sum(c.outcome == outcome for c in found) for outcome in ("OK", "within tolerance", "FAIL")}
    print(f"sentret reproduce: {len(found)} cells: " + ", ".join(f"{n} {o}" for o, n in counts.items()),
          file=sys.stderr)
    return 1 if counts["FAIL"] else 0
