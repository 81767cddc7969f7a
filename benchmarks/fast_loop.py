"""The fast loop's own cost: `make test-fast` timed, with the machine's load, and the figure in tests/README.md.

    .venv/bin/python benchmarks/fast_loop.py [--write tests/README.md]   (make time-fast)

Runs ``pytest -m "not browser and not slow"`` as `make test-fast` does (property tests at the loop's budget,
tests/conftest.py), counts what it selected and what it left out, and prints the wall time and the load average
before and after. ``--write`` puts that sentence between the markers of the page, so the page is never typed by
hand; the sentence says the load it was measured at.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"(<!-- fast-loop -->).*?(<!-- /fast-loop -->)", re.S)
SUMMARY = re.compile(r"(\d+) passed(?:, (\d+) skipped)?(?:, (\d+) deselected)?")
SELECT = "not browser and not slow"


def measure() -> dict[str, float]:
    """One run of the loop: tests passed, skipped and left out, seconds, and the 1-minute load around it."""
    env = dict(os.environ)
    env.pop("SENTRET_PROPERTIES", None)  # the loop's budget, whatever the caller's shell says
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", SELECT],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    seconds = time.perf_counter() - start
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    found = SUMMARY.search(tail)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the fast loop did not pass (exit {done.returncode}): {tail or done.stderr[-500:]}")
    passed, skipped, left_out = (int(g or 0) for g in found.groups())
    return {"passed": passed, "skipped": skipped, "left_out": left_out, "seconds": seconds,
            "load_before": load_before, "load_after": os.getloadavg()[0]}


def sentence(m: dict[str, float]) -> str:
    run = int(m["passed"] + m["skipped"])
    loads = sorted((m["load_before"], m["load_after"]))
    return (f"{run:,} of the {run + int(m['left_out']):,} tests, in {m['seconds']:.0f} s on {os.cpu_count()} "
            f"cores at load {loads[0]:.1f}-{loads[1]:.1f}")


def write(page: Path, text: str) -> None:
    old = page.read_text(encoding="utf-8")
    if not MARKER.search(old):
        raise SystemExit(f"{page} has no <!-- fast-loop --> … <!-- /fast-loop --> markers")
    page.write_text(MARKER.sub(lambda m: f"{m.group(1)}{text}{m.group(2)}", old, count=1), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="the page whose fast-loop markers get the figure")
    args = parser.parse_args(argv)
    text = sentence(measure())
    print(text)
    if args.write is not None:
        write(args.write, text)
        print(f"written to {args.write}")


if __name__ == "__main__":
    main()
