"""benchmarks/hostile_files.py, the hostile files and paths a review found and their neighbours, run whole in CI:
0 lost, 0 raw, 0 hang, 0 wrong (each case is also a test of its own where its code lives)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sentret_core import Index

HOSTILE = Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_files.py"


def test_the_hostile_files_matrix(small_index: Index) -> None:
    done = subprocess.run([sys.executable, str(HOSTILE), "--index", str(small_index.path), "--verbose"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    rows = [line.split()[0] for line in done.stdout.splitlines()[:-1]]
    assert len(rows) == 14 and set(rows) <= {"clear", "ok"}, done.stdout
    assert done.stdout.splitlines()[-1].startswith("13 clear, 1 ok, 0 lost, 0 raw, 0 hang, 0 wrong of 14 cases")
