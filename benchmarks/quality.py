"""Retrieval quality of every registered model on the dev data, beside the doc-order and random baselines.

    .venv/bin/python benchmarks/quality.py [--data-root ../shared/data] [--out benchmarks/out]
        [--models a,b,...] [--folds 2] [--max-rounds 3] [--distractors demo] [--no-tuning]

For WikiQA dev, TrecQA DEV and squad-support (SQuAD v1.1 dev, even articles) it evaluates every
model with its default parameters and tuned by k-fold cross-validation over topics (coordinate
ascent on MAP over the declared grids; test-fold numbers), with tie-aware metrics and Wilcoxon
tests against the baseline (doc-order; random on TrecQA, where doc-order ties everything). It
writes ``quality.md`` (tables), ``quality.json`` (every report as ``sentret eval --json``) and
PNG plots: MAP per model with significance marks, and the coverage curve of Blanco & Zaragoza, SIGIR 2010, Fig. 2, on
squad-support (fraction of (question, entity) topics whose support sentence is in S_qe / Ŝ_qe
as k grows). Plots are drawn with Pillow (installed with Streamlit), so matplotlib is not needed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sentret_core.defaults import DEFAULT_RANKER
from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.driver import evaluate_benchmark
from sentret_core.evaluation.evaluable import default_models
from sentret_core.evaluation.report import Report
from sentret_core.evaluation.runs import Evaluator

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
BENCHMARKS = (
    ("wikiqa", Path("wikiqa") / "WikiQA-dev.tsv"),
    ("trecqa", Path("trecqa") / "DEV.xml"),
    ("squad-support", Path("squad") / "dev-v1.1-even.json"),
)
TABLE_METRICS = ("map", "mrr", "p@1")
COVERAGE_KS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-root", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    parser.add_argument("--models", default=None, help="comma-separated (default: every registered model)")
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-rounds", type=int, default=3, help="coordinate-ascent rounds per fold")
    parser.add_argument("--distractors", choices=["demo"], default=None, help="squad-support distractors")
    parser.add_argument("--no-tuning", action="store_true", help="default parameters only")
    parser.add_argument("--cache", type=Path, default=None, help="benchmark index cache")
    parser.add_argument("--n-process", type=int, default=2)
    args = parser.parse_args(argv)
    if not args.data_root.exists():
        print(f"{args.data_root}: no data folder (it holds the read-only benchmark files)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    models = [m.strip() for m in args.models.split(",")] if args.models else None

    sections: list[str] = []
    reports: dict[str, Any] = {}
    plots: list[str] = []
    started = time.perf_counter()
    for name, relative in BENCHMARKS:
        path = args.data_root / relative
        clock = time.perf_counter()
        bench = load_benchmark(name, path, distractors=args.distractors if name == "squad-support" else None,
                               cache=args.cache, n_process=args.n_process, log=_log)
        _log(f"{name}: {len(bench.topics)} topics; evaluating defaults")
        chosen = models or default_models(bench.kind)
        default = evaluate_benchmark(bench, chosen)
        tuned = None
        if not args.no_tuning:
            _log(f"{name}: tuning by {args.folds}-fold cross-validation (at most {args.max_rounds} rounds)")
            tuned = evaluate_benchmark(bench, chosen, folds=args.folds, seed=args.seed,
                                       max_rounds=args.max_rounds, progress=_log)
        seconds = time.perf_counter() - clock
        reports[name] = {"default": default.to_dict(), "tuned": _compact(tuned.to_dict()) if tuned else None}
        png = args.out / f"quality-{name}.png"
        draw_bars(png, default, tuned)
        plots.append(png.name)
        sections.append(section(bench, default, tuned, seconds, png.name))
        if name == "squad-support":
            coverage = Evaluator(bench, ranker=DEFAULT_RANKER).coverage(COVERAGE_KS)
            png = args.out / "coverage-squad-support.png"
            draw_coverage(png, coverage, f"squad-support: coverage under {DEFAULT_RANKER}")
            plots.append(png.name)
            sections.append(coverage_section(coverage, png.name))
            reports[name]["coverage"] = {str(c): coverage[c].tolist() for c in coverage.columns}
            reports[name]["coverage_k"] = [float(k) for k in coverage.index]

    total = time.perf_counter() - started
    head = [
        "# sentret retrieval quality on the dev data",
        "",
        f"Generated by `benchmarks/quality.py` in {total:.0f} s. Tie-aware metrics (expectation over the "
        "orderings of tied scores); `*` = Wilcoxon signed-rank p < 0.05 against the baseline; "
        "MAP-pess / MAP-opt = ties broken against / for the relevant sentences. "
        f"Tuned = {args.folds}-fold cross-validation by topic (seed {args.seed}), greedy coordinate ascent "
        f"on MAP over each parameter's declared grid (≤ {args.max_rounds} rounds), test-fold values only.",
        "",
        "## Main table (MAP / MRR / P@1)",
        "",
        main_table(reports),
        "",
    ]
    (args.out / "quality.md").write_text("\n".join([*head, *sections]) + "\n", encoding="utf-8")
    (args.out / "quality.json").write_text(
        json.dumps(reports, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    written = f"{args.out / 'quality.md'}, {args.out / 'quality.json'} and {', '.join(plots)}"
    print(f"wrote {written} in {total:.0f} s")
    return 0


def _compact(report: dict[str, Any]) -> dict[str, Any]:
    """The report with each fold's topic lists replaced by their sizes (keeps the JSON small)."""
    for entry in report["models"].values():
        for fold in entry.get("folds", []):
            for key in ("train_topics", "test_topics"):
                fold[key] = len(fold[key])
    return report


def _log(message: str) -> None:
    print(f"[quality] {message}", file=sys.stderr, flush=True)


# --- Markdown ----------------------------------------------------------------------------------


def _cell(entry: dict[str, Any], metric: str) -> str:
    value = entry["mean"].get(metric)
    if value is None:
        return "–"
    mark = "*" if entry["significance"].get(metric, {}).get("significant") else ""
    return f"{value:.3f}{mark}"


def main_table(reports: dict[str, Any]) -> str:
    """Models as rows; per benchmark, MAP/MRR/P@1 with defaults and tuned."""
    names: list[str] = []
    for data in reports.values():
        names += [n for n in data["default"]["models"] if n not in names]
    columns = []
    for bench, data in reports.items():
        for label in ("default", "tuned"):
            if data[label] is not None:
                columns.append((bench, label, data[label]))
    header = "| model | " + " | ".join(f"{b} {label}" for b, label, _ in columns) + " |"
    lines = [header, "|---|" + "---:|" * len(columns)]
    for name in names:
        cells = []
        for _, _, report in columns:
            entry = report["models"].get(name)
            cells.append(" / ".join(_cell(entry, m) for m in TABLE_METRICS) if entry else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    bases = ", ".join(f"{b}: {data['default']['baseline']}" for b, data in reports.items())
    lines += ["", f"Baselines for the significance marks: {bases}."]
    return "\n".join(lines)


def section(bench: Benchmark, default: Report, tuned: Report | None, seconds: float, png: str) -> str:
    info = bench.describe()
    facts = ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in info.items()
                      if k not in ("benchmark", "data", "index", "options"))
    lines = [
        f"## {bench.name}",
        "",
        f"`{bench.data}` — {facts}. Options: {info['options'] or 'none'}. ({seconds:.0f} s)",
        "",
        *[f"- {note}" for note in default.notes()],
        "",
        "### Default parameters",
        "",
        default.to_markdown(),
        "",
    ]
    if tuned is not None:
        lines += [
            f"### Tuned ({_tuning_text(tuned)})",
            "",
            tuned.to_markdown(),
            "",
            "Chosen parameters per fold:",
            "",
        ]
        for name, result in tuned.results.items():
            for fold in result.folds:
                params = ", ".join(f"{k}={v}" for k, v in fold["params"].items())
                lines.append(f"- {name} fold {fold['fold']}: {params} (train MAP {fold['train_score']:.4f}, "
                             f"{fold['evaluations']} evaluations)")
        lines.append("")
    lines += [f"![MAP per model]({png})", ""]
    return "\n".join(lines)


def _tuning_text(report: Report) -> str:
    tuning = report.tuning or {}
    return f"{tuning.get('folds')}-fold CV, seed {tuning.get('seed')}, on {tuning.get('metric')}"


def coverage_section(curve: pd.DataFrame, png: str) -> str:
    lines = [
        "### Coverage (Blanco & Zaragoza, SIGIR 2010, Fig. 2)",
        "",
        "Fraction of (question, entity) topics with a relevant sentence among the candidates, as k grows: "
        "S_qe = the top-k sentences mentioning the entity (no context), Ŝ_qe = with the ±2 context "
        "sentences of every top-k sentence.",
        "",
        "| k | " + " | ".join(curve.columns) + " |",
        "|---:|" + "---:|" * len(curve.columns),
    ]
    for k, row in curve.iterrows():
        lines.append(f"| {int(float(str(k)))} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    lines += ["", f"![coverage]({png})", ""]
    return "\n".join(lines)


# --- plots (Pillow) ------------------------------------------------------------------------------

COLOURS = ((66, 114, 196), (237, 125, 49), (112, 173, 71))
LEGEND = {"S_qe": "S_qe (top-k, no context)", "Ŝ_qe": "S^_qe (top-k with ±2 context)"}  # no Ŝ glyph


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has one bitmap size
        return ImageFont.load_default()


def draw_bars(path: Path, default: Report, tuned: Report | None) -> None:
    """Horizontal bars of MAP per model (defaults, and tuned when given), ``*`` where significant."""
    from PIL import Image, ImageDraw

    series = [("default", default)] + ([("tuned", tuned)] if tuned is not None else [])
    names = list(default.results)
    bar, gap, left, right, top = 14, 10, 190, 90, 60
    height = top + len(names) * (bar * len(series) + gap) + 40
    width = 900
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    font, small = _font(14), _font(12)
    title = f"{default.bench.name}: MAP (tie-aware), * = Wilcoxon p < 0.05 vs {default.baseline}"
    draw.text((10, 10), title, fill="black", font=font)
    for i, (label, _) in enumerate(series):
        x = left + i * 120
        draw.rectangle((x, 36, x + 12, 48), fill=COLOURS[i])
        draw.text((x + 18, 34), label, fill="black", font=small)
    span = width - left - right
    for tick in np.linspace(0, 1, 6):
        x = left + tick * span
        draw.line((x, top - 4, x, height - 36), fill=(220, 220, 220))
        draw.text((x - 8, height - 32), f"{tick:.1f}", fill="black", font=small)
    y = top
    for name in names:
        draw.text((10, y + bar * len(series) / 2 - 8), name, fill="black", font=small)
        for i, (_, report) in enumerate(series):
            value = report.results[name].means()["map"]
            x1 = left + max(value, 0.0) * span
            draw.rectangle((left, y, x1, y + bar - 2), fill=COLOURS[i])
            mark = "*" if report.significant(name, "map") else ""
            draw.text((x1 + 4, y - 1), f"{value:.3f}{mark}", fill="black", font=small)
            y += bar
        y += gap
    image.save(path)


def draw_coverage(path: Path, curve: pd.DataFrame, title: str) -> None:
    """The coverage curves against log k."""
    from PIL import Image, ImageDraw

    width, height, left, right, top, bottom = 760, 460, 70, 30, 50, 60
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    font, small = _font(14), _font(12)
    draw.text((10, 10), title, fill="black", font=font)
    ks = np.asarray(curve.index, dtype=float)
    lo, hi = math.log10(ks.min()), math.log10(ks.max())

    def point(k: float, fraction: float) -> tuple[float, float]:
        x = left + (math.log10(k) - lo) / (hi - lo or 1) * (width - left - right)
        return x, top + (1 - fraction) * (height - top - bottom)

    for fraction in np.linspace(0, 1, 6):
        _, y = point(ks.min(), fraction)
        draw.line((left, y, width - right, y), fill=(225, 225, 225))
        draw.text((left - 34, y - 7), f"{fraction:.1f}", fill="black", font=small)
    for exponent in range(math.floor(lo), math.ceil(hi) + 1):
        x, _ = point(10.0**exponent, 0)
        draw.line((x, top, x, height - bottom), fill=(225, 225, 225))
        draw.text((x - 12, height - bottom + 6), f"10^{exponent}", fill="black", font=small)
    draw.text((width // 2 - 10, height - 28), "k", fill="black", font=font)
    for i, column in enumerate(curve.columns):
        points = [point(k, v) for k, v in zip(ks, curve[column].to_numpy())]
        draw.line(points, fill=COLOURS[i], width=3)
        for x, y in points:
            draw.ellipse((x - 3, y - 3, x + 3, y + 3), fill=COLOURS[i])
        draw.rectangle((left + 20, top + 10 + i * 20, left + 32, top + 22 + i * 20), fill=COLOURS[i])
        draw.text(
            (left + 38, top + 8 + i * 20), LEGEND.get(str(column), str(column)), fill="black", font=small
        )
    image.save(path)


if __name__ == "__main__":
    raise SystemExit(main())
