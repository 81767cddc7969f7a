"""CSV exports that a spreadsheet opens as text, never as formulas.

A cell whose text begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by
spreadsheet programs as a formula (``=HYPERLINK(...)`` in a note or an annotator's name would run
when a colleague opens the export), so such a cell is written with a leading ``'``, the OWASP rule
for CSV injection. Numbers stay numbers. The JSONL export keeps every value exactly as stored.

Rows end with CRLF (RFC 4180, the csv module's default): with LF endings the csv module leaves a
field holding a bare CR unquoted, and a reader then splits the row there.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    """``value`` as a spreadsheet will show it: text beginning like a formula gets a leading ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """The CSV text of ``rows`` under ``header``, every text cell made safe (:func:`safe_cell`)."""
    out = io.StringIO()
    writer = csv.writer(out)  # RFC 4180's CRLF: then a field holding a bare CR or LF is quoted too
    writer.writerow([safe_cell(name) for name in header])
    writer.writerows([safe_cell(value) for value in row] for row in rows)
    return out.getvalue()
