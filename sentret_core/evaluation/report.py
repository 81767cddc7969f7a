"""The report of one benchmark evaluation: per-model results, significance, text/Markdown/JSON.

Table 2 of Blanco & Zaragoza, SIGIR 2010 marks with ``*`` a model whose Wilcoxon signed-rank p-value against the
baseline is below 0.05; both the Wilcoxon and the paired t-test p-values are reported.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sentret_core.defaults import ALPHA, RELEVANT_GRADE
from sentret_core.evaluation.as_exported import as_exported
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.evaluable import RANDOM
from sentret_core.evaluation.measures import BINARY_THRESHOLD
from sentret_core.evaluation.runs import OPTIMISTIC, PESSIMISTIC
from sentret_core.evaluation.trec_io import TIES_TAG, Run, format_run, parse_run, write_qrels, write_run
from sentret_core.jsonable import finite_or_none, plain


@dataclass
class ModelResult:
    """One model's test-topic values, run, parameters (or per-fold parameters) and folds."""

    name: str
    per_topic: pd.DataFrame
    run: Run
    params: dict[str, Any] | None
    folds: list[dict[str, Any]] = field(default_factory=list)

    def means(self) -> dict[str, float]:
        return {str(c): float(v) for c, v in self.per_topic.mean().items()}


@dataclass
class Report:
    """Everything one evaluation produced; ``to_dict`` is the CLI's ``--json`` object."""

    bench: Benchmark
    metrics: list[str]
    baseline: str
    results: dict[str, ModelResult]
    comparison: pd.DataFrame
    settings: dict[str, Any]
    tuning: dict[str, Any] | None = None
    correction: str = "none"  # or "holm": p-values adjusted over the models tested against the baseline
    _exported: dict[str, dict[str, float]] | None = field(default=None, init=False, repr=False, compare=False)

    def p_values(self, model: str, metric: str) -> tuple[float, float]:
        """(Wilcoxon, t-test) p-values against the baseline, Holm-adjusted with ``correction="holm"``."""
        rows = self.comparison[(self.comparison["model"] == model) & (self.comparison["metric"] == metric)]
        if rows.empty:
            return math.nan, math.nan
        end = "_holm" if self.correction == "holm" else ""
        return float(rows[f"p_wilcoxon{end}"].iloc[0]), float(rows[f"p_ttest{end}"].iloc[0])

    def significant(self, model: str, metric: str) -> bool:
        """Wilcoxon p < 0.05 against the baseline (Table 2's ``*``), after the correction if any."""
        return model != self.baseline and self.p_values(model, metric)[0] < ALPHA

    def to_dict(self) -> dict[str, Any]:
        models = {}
        for name, result in self.results.items():
            significance = {}
            if name != self.baseline:
                for metric in [*self.metrics, PESSIMISTIC, OPTIMISTIC]:
                    rows = self.comparison[
                        (self.comparison["model"] == name) & (self.comparison["metric"] == metric)
                    ]
                    if not rows.empty:
                        row = rows.iloc[0]
                        significance[metric] = {
                            "diff": finite_or_none(row["diff"]),
                            "p_wilcoxon": finite_or_none(row["p_wilcoxon"]),
                            "p_ttest": finite_or_none(row["p_ttest"]),
                            "p_wilcoxon_holm": finite_or_none(row["p_wilcoxon_holm"]),
                            "p_ttest_holm": finite_or_none(row["p_ttest_holm"]),
                            "significant": self.significant(name, metric),
                        }
            entry: dict[str, Any] = {
                "mean": {k: finite_or_none(v) for k, v in result.means().items()},
                "params": plain(result.params),
                "significance": significance,
            }
            if result.folds:
                entry["folds"] = plain(result.folds)
            entry["as_exported"] = {k: finite_or_none(v) for k, v in self.as_exported()[name].items()}
            models[name] = entry
        return {
            **plain(self.bench.describe()),
            "metrics": self.metrics,
            "baseline": self.baseline,
            "significance_test": self.test_name(),
            "correction": self.correction,
            "tie_handling": "tie-aware (expectation over tied orderings); "
            "map-pessimistic/optimistic break ties "
            "against/for the relevant sentences",
            "as_exported": self.as_exported_note(),
            "settings": plain(self.settings),
            "tuning": plain(self.tuning),
            "models": models,
        }

    def test_name(self) -> str:
        """The test and the correction, in words (the reports and the app say which was used)."""
        tested = sum(1 for name in self.results if name != self.baseline)
        after = (f", Holm-Bonferroni adjusted over the {tested} models tested against the baseline"
                 if self.correction == "holm" else ", not corrected for testing several models")
        return (f"Wilcoxon signed-rank (and paired t-test), two-tailed, vs the baseline{after}; "
                "'significant' = Wilcoxon p < 0.05")

    # --- what trec_eval gives on the exported runs
    def level(self) -> int:
        """The relevance level of the tie-aware numbers, which ``trec_eval -l`` must be given to match."""
        return BINARY_THRESHOLD if self.bench.scale == "binary" else RELEVANT_GRADE

    def as_exported(self) -> dict[str, dict[str, float]]:
        """Per model, the means trec_eval (and ir_measures) compute on exactly its ``--run-out`` file:
        the run is written and read back, so unscored candidates are left out as in the file."""
        if self._exported is None:
            qrels = {t.id: self.bench.qrels[t.id] for t in self.bench.topics}
            self._exported = {}
            for name in self.results:
                run, tag = self.exported_run(name)
                found = as_exported(qrels, parse_run(format_run(run, tag=tag)), self.metrics, level=self.level())
                self._exported[name] = {str(k): float(v) for k, v in found.mean().items()}
        return self._exported

    def exported_run(self, name: str) -> tuple[Run, str]:
        """What ``name``'s run file holds, and its tag: a model's run as scored (ties in document order); the
        random baseline's as one seeded permutation of each topic's candidates, with distinct scores. Its
        tie-aware numbers are the expectation over every order; a file can hold only one, so it holds a
        random one (the seed in the tag), never the all-tied list a tool would order by document id."""
        result = self.results[name]
        if name != RANDOM:
            return result.run, f"{name}.{TIES_TAG}"
        seed = int(self.settings.get("seed") or 0)
        return permuted(result.run, seed), f"{name}.seed{seed}.{TIES_TAG}"

    def as_exported_note(self) -> str:
        return (
            f"as exported: what trec_eval -l {self.level()} (or ir_measures) computes on the --run-out files; "
            "the files list tied scores in document order, trec_eval re-orders them by document id "
            "(descending), so with ties it lands on one ordering, not on the tie-aware mean"
        )

    def exported_rows(self) -> list[tuple[str, list[str]]]:
        means = self.as_exported()
        return [(name, [f"{means[name].get(m, math.nan):.4f}" for m in self.metrics]) for name in self.results]

    # --- tables
    def _columns(self) -> list[str]:
        return [*self.metrics, PESSIMISTIC, OPTIMISTIC]

    def table_rows(self) -> list[tuple[str, list[str]]]:
        rows = []
        for name, result in self.results.items():
            means = result.means()
            cells = []
            for metric in self._columns():
                mark = "*" if self.significant(name, metric) else ""
                cells.append(f"{means.get(metric, math.nan):.4f}{mark}")
            rows.append((name, cells))
        return rows

    def p_rows(self) -> list[tuple[str, list[str]]]:
        rows = []
        for name in self.results:
            if name == self.baseline:
                continue
            cells = []
            for metric in self.metrics:
                p_w, p_t = self.p_values(name, metric)
                cells.append(f"{_p(p_w)} / {_p(p_t)}")
            rows.append((name, cells))
        return rows

    def header(self) -> str:
        b = self.bench
        text = (
            f"{b.name}: {b.data} — {len(b.topics):,} topics; collection {b.index.D:,} documents, "
            f"{b.index.N:,} sentences"
        )
        options = {k: v for k, v in b.options.items() if v not in (None, 1)}
        if options:
            text += " (" + ", ".join(f"{k}={v}" for k, v in options.items()) + ")"
        return text

    def notes(self) -> list[str]:
        notes = [
            f"tie-aware means over topics; * = Wilcoxon signed-rank p < {ALPHA} against {self.baseline}"
            f"{' (Holm-Bonferroni adjusted)' if self.correction == 'holm' else ''}; "
            f"{PESSIMISTIC}/{OPTIMISTIC} = MAP with ties broken against/for the relevant sentences",
        ]
        if self.bench.kind == "support":
            notes.append(
                f"candidates: scorers rank S_qe of their own top-{self.settings['k']}; position (eq. 8) "
                f"the S_qe of {self.settings['ranker']}; sum-*/avg-* and the baselines rank Ŝ_qe of "
                f"{self.settings['ranker']} (±{self.settings['window']} context)"
            )
        if self.tuning:
            notes.append(_tuning_note(self.tuning))
        return notes

    def to_text(self) -> str:
        labels = [_label(c) for c in self._columns()]
        width = max(len(n) for n in [*self.results, "model"]) + 2
        cell = max(10, *(len(x) + 1 for x in labels))
        lines = [self.header(), *self.notes(), ""]
        lines.append("model".ljust(width) + "".join(x.rjust(cell) for x in labels))
        for name, cells in self.table_rows():
            lines.append(name.ljust(width) + "".join(c.rjust(cell) for c in cells))
        p_rows = self.p_rows()
        if p_rows:
            adjusted = ", Holm-Bonferroni adjusted" if self.correction == "holm" else ""
            lines += ["", f"p-values against {self.baseline} (Wilcoxon / paired t-test{adjusted}):"]
            p_cell = max(19, *(len(x) + 2 for x in labels[: len(self.metrics)]))
            lines.append("model".ljust(width) + "".join(_label(m).rjust(p_cell) for m in self.metrics))
            for name, cells in p_rows:
                lines.append(name.ljust(width) + "".join(c.rjust(p_cell) for c in cells))
        lines += ["", self.as_exported_note() + ":"]
        lines.append("model".ljust(width) + "".join(_label(m).rjust(cell) for m in self.metrics))
        for name, cells in self.exported_rows():
            lines.append(name.ljust(width) + "".join(c.rjust(cell) for c in cells))
        lines += self._params_lines()
        return "\n".join(lines)

    def _params_lines(self) -> list[str]:
        lines = []
        for name, result in self.results.items():
            if result.folds:
                for fold in result.folds:
                    lines.append(f"  {name} fold {fold['fold']}: {_params_text(fold['params'])} "
                                 f"(train {fold['tune_metric']} {fold['train_score']:.4f})")
            elif result.params:
                lines.append(f"  {name}: {_params_text(result.params)}")
        return ["", "parameters:", *lines] if lines else []

    def to_markdown(self) -> str:
        labels = [_label(c) for c in self._columns()]
        lines = [f"| model | {' | '.join(labels)} |", "|---|" + "---:|" * len(labels)]
        for name, cells in self.table_rows():
            lines.append(f"| {name} | {' | '.join(cells)} |")
        p_rows = self.p_rows()
        if p_rows:
            lines += ["", f"p-values against {self.baseline} (Wilcoxon / paired t-test):", ""]
            lines.append(f"| model | {' | '.join(_label(m) for m in self.metrics)} |")
            lines.append("|---|" + "---:|" * len(self.metrics))
            lines += [f"| {name} | {' | '.join(cells)} |" for name, cells in p_rows]
        lines += ["", self.as_exported_note() + ":", ""]
        lines.append(f"| model | {' | '.join(_label(m) for m in self.metrics)} |")
        lines.append("|---|" + "---:|" * len(self.metrics))
        lines += [f"| {name} | {' | '.join(cells)} |" for name, cells in self.exported_rows()]
        return "\n".join(lines)

    # --- files
    def write_runs(self, path: str | os.PathLike[str]) -> list[Path]:
        """One TREC run file per model, named by :func:`run_paths` (tag: the model and how ties are
        ordered, ``bm25f.v1.ties-docorder``)."""
        paths = run_paths(path, self.results)
        for name in self.results:
            run, tag = self.exported_run(name)
            write_run(run, paths[name], tag=tag)
        return list(paths.values())

    def write_qrels(self, path: str | os.PathLike[str]) -> None:
        write_qrels({t.id: self.bench.qrels[t.id] for t in self.bench.topics}, path)


def permuted(run: Run, seed: int) -> Run:
    """Each topic's documents in one random order of ``seed`` (the same for the same seed and topic, on any
    machine), scored n, n-1, …, 1 down that order: distinct scores, so every tool reads the same ranking."""
    out: Run = {}
    for topic, ranked in run.items():
        digest = hashlib.sha256(f"{seed}:{topic}".encode("utf-8", "surrogatepass")).digest()
        order = np.random.default_rng(int.from_bytes(digest[:8], "little")).permutation(len(ranked))
        out[topic] = {doc: float(len(ranked) - rank) for doc, rank in zip(ranked, order)}
    return out


def run_paths(path: str | os.PathLike[str], models: Iterable[str]) -> dict[str, Path]:
    """Where :meth:`Report.write_runs` writes each model's run: ``<stem>.<model><suffix>`` beside ``path``
    (``runs.trec`` -> ``runs.bm25.v1.trec``), known before any work so that a command can check them."""
    target = Path(path)
    return {name: target.with_name(f"{target.stem}.{name}{target.suffix}") for name in models}


def _label(metric: str) -> str:
    special = {"map": "MAP", "mrr": "MRR", "r-prec": "R-Prec", PESSIMISTIC: "MAP-pess", OPTIMISTIC: "MAP-opt"}
    if metric in special:
        return special[metric]
    return metric.upper()


def _p(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_short(v)}" for k, v in params.items()) or "no parameters"


def _short(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _tuning_note(tuning: Mapping[str, Any]) -> str:
    if tuning["method"] == "cross-validation":
        return (
            f"tuned: {tuning['folds']}-fold cross-validation by topic (seed {tuning['seed']}), "
            "coordinate ascent "
            f"on {tuning['metric']} over the declared grids; test-fold values"
        )
    return (
        f"tuned on {tuning['train_data']} ({tuning['train_topics']} topics), "
        f"coordinate ascent on {tuning['metric']}"
    )
