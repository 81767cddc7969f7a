"""Holm-Bonferroni correction when several models are tested against one baseline."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from sentret_core.cli import main as cli
from sentret_core.evaluation.significance import compare, holm
from tests.evaluation.test_candidates import QUESTIONS, write


def test_holm_by_hand() -> None:
    # p = (0.01, 0.04, 0.03, 0.005), m = 4; ascending 0.005, 0.01, 0.03, 0.04 get ×4, ×3, ×2, ×1:
    # 0.02, 0.03, 0.06, 0.04 → running maximum 0.02, 0.03, 0.06, 0.06; back in the order given:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1
    adjusted = holm([0.01, math.nan, 0.02])  # NaN (an undefined test) stays NaN and does not count in m
    assert adjusted[0] == pytest.approx(0.02) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.02)


def test_compare_adjusts_per_metric_over_the_models_but_not_the_baseline() -> None:
    topics = [f"t{i}" for i in range(8)]
    base = pd.DataFrame({"map": [0.1] * 8}, index=topics)
    better = pd.DataFrame({"map": [0.1 + 0.1 * (i + 1) for i in range(8)]}, index=topics)
    same = pd.DataFrame({"map": [0.1 + (0.01 if i % 2 else -0.01) for i in range(8)]}, index=topics)
    found = compare({"base": base, "better": better, "same": same}, "base").set_index("model")
    raw = found.loc[["better", "same"], "p_ttest"].tolist()
    assert found.loc[["better", "same"], "p_ttest_holm"].tolist() == pytest.approx(holm(raw))
    assert math.isnan(found.loc["base", "p_ttest_holm"])


def test_sentret_eval_names_the_correction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write(tmp_path / "my.jsonl", QUESTIONS)
    argv = ["eval", "candidates", "--data", str(data), "--models", "bm25f.v1,tfisf.v1,lm-dir.v1",
            "--cache", str(tmp_path / "cache"), "--correction", "holm"]
    assert cli.main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["correction"] == "holm"
    assert "Holm-Bonferroni adjusted over the 4 models" in report["significance_test"]  # 3 and random
    assert "p_wilcoxon_holm" in report["models"]["tfisf.v1"]["significance"]["map"]
    assert cli.main(argv) == 0
    assert "(Wilcoxon / paired t-test, Holm-Bonferroni adjusted)" in capsys.readouterr().out
