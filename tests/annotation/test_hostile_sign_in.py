"""benchmarks/hostile_sign_in.py in CI: every hostile sign-in case ends ok (0 access, 0 wrong, 0 raw)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HOSTILE = Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_sign_in.py"


@pytest.mark.slow
def test_the_hostile_sign_in_benchmark_finds_no_access_wrong_or_raw(tmp_path: Path) -> None:
    out = tmp_path / "cases.json"
    done = subprocess.run([sys.executable, str(HOSTILE), "--quiet", "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    cases = json.loads(out.read_text())
    assert len(cases) == 14
    assert [f"{c['case']}: {c['outcome']} {c['message']}" for c in cases if c["outcome"] != "ok"] == []
    assert done.returncode == 0 and "14 cases: 0 access, 0 wrong, 0 raw, 14 ok" in done.stdout, done.stderr[-2000:]
