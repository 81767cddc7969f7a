"""Write the docs' generated tables from their file of commands and expected values (``docs/tables.toml``):

    .venv/bin/python benchmarks/tables.py [--tables docs/tables.toml]

Each table goes between its page's markers ``<!-- table NAME -->`` and ``<!-- /table -->``, showing the
file's expected values; nothing is run (``sentret reproduce`` re-runs them and says which still hold).
``tests/evaluation/test_reproduce.py`` fails when a page differs from what the file gives.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sentret_core.errors import SentretError  # noqa: E402
from sentret_core.evaluation.reproduce import docs_text, load  # noqa: E402
from sentret_core.files import write_text_atomic  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=str(ROOT / "docs" / "tables.toml"))
    args = parser.parse_args()
    try:
        spec = load(Path(args.tables))
        pages = {doc: (ROOT / doc).read_text(encoding="utf-8") for doc in sorted({t.doc for t in spec.tables})}
        drawn = {doc: docs_text(spec, doc, text) for doc, text in pages.items()}  # every page, before any is written
    except (SentretError, OSError) as exc:
        print(f"tables: error: {exc}", file=sys.stderr)
        return 2
    for doc, text in pages.items():
        page, new = ROOT / doc, drawn[doc]
        if new != text:
            write_text_atomic(page, new, "docs page")
        print(f"{doc}: {'rewritten' if new != text else 'as the file gives it'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
