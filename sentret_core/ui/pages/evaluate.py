"""Evaluate: every chosen model's tie-aware metrics on a session's grades (or uploaded qrels).

A session's grades are read with the admin token (annotators must not see each other's grades
while a session runs); uploaded qrels need no token and are evaluated on the current index.
Metrics: tie-aware, graded (relevant iff grade ≥ 3; NDCG gains 0, 1, 3, 7), with paired
t-test and Wilcoxon p-values against the chosen baseline, per-topic differences and the
coverage curve of seed 002 Fig. 2.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from sentret_core.annotation.judged_eval import Evaluation, evaluate_judgments, evaluate_session
from sentret_core.annotation.records import RULES
from sentret_core.annotation.session_setup import topic_label
from sentret_core.annotation.topics import EVAL_METRICS
from sentret_core.defaults import DEFAULT_RANKER, DEFAULT_SUPPORT_MODELS
from sentret_core.evaluation.trec_io import parse_qrels
from sentret_core.ui.judgments import page_store, session_index
from sentret_core.ui.learn_form import learn_form
from sentret_core.ui.offered import offered_models
from sentret_core.ui.pages.admin import token_form
from sentret_core.ui.pages.explore import model_title, support_models
from sentret_core.ui.state import current_index, error_guard, guarded, page_setup, uploaded_text
from sentret_core.ui.text import md

RESULT = "evaluate_result"
SESSION, UPLOAD = "A session's grades", "Uploaded qrels"


def render() -> None:
    page_setup("Evaluate", "Tie-aware metrics of support-sentence models on graded judgments (relevant iff "
               "grade ≥ 3), with significance against a baseline.")  # fmt: skip
    source = st.radio("Judgments", [SESSION, UPLOAD], horizontal=True, key="evaluate_source")
    all_models = support_models()
    left, right = st.columns([3, 1])
    models = left.multiselect("Models", all_models, default=list(DEFAULT_SUPPORT_MODELS), key="evaluate_models",
                              format_func=model_title)  # fmt: skip
    baseline = right.selectbox("Baseline", models, key="evaluate_baseline", format_func=model_title)
    metrics = st.multiselect("Metrics", EVAL_METRICS, default=list(EVAL_METRICS), key="evaluate_metrics")
    c1, c2 = st.columns(2)
    k = int(c1.number_input("k: each model's top-k holds the candidates", 1, 100_000, 1000, step=100,
                            key="evaluate_k"))  # fmt: skip
    rankers = offered_models()
    ranker = c2.selectbox("Ranker (coverage curve, Ŝ_qe)", rankers, index=rankers.index(DEFAULT_RANKER),
                          key="evaluate_ranker", format_func=model_title)  # fmt: skip
    options: dict[str, Any] = {"models": models, "baseline": baseline, "metrics": metrics, "k": k,
                               "ranker": ranker}  # fmt: skip
    evaluation = _from_session(options) if source == SESSION else _from_upload(options)
    if evaluation is not None:
        st.session_state[RESULT] = evaluation
    shown = st.session_state.get(RESULT)
    if shown is not None:
        show(shown)


def _ready(options: dict[str, Any]) -> bool:
    if not options["models"]:
        st.error("Choose at least one model.")
        return False
    if not options["metrics"]:
        st.error("Choose at least one metric.")
        return False
    return True


def _from_session(options: dict[str, Any]) -> Evaluation | None:
    store = page_store()
    if store is None:
        return None
    admin = token_form(store, "evaluate")
    if admin is None:
        return None
    sessions = [s.name for s in store.sessions()]
    if not sessions:
        st.info("No session yet: create one on the Admin page.")
        return None
    left, mid, right = st.columns(3)
    name = left.selectbox("Session", sessions, index=len(sessions) - 1, key="evaluate_session")
    rule: str = mid.selectbox("Adjudication", list(RULES), key="evaluate_rule") or "majority"
    who = None
    if rule == "annotator":
        annotators: list[str] = list(admin.progress_by_annotator(name)) if name else []
        who = right.selectbox("Annotator", annotators, key="evaluate_annotator")
    clicked = st.button("Evaluate", type="primary", key="evaluate_run")
    if name is not None:
        learn_form(admin, name, store.session(name).index_path)
    if not clicked:
        return None
    st.session_state.pop(RESULT, None)
    if not _ready(options) or name is None:
        return None
    info = store.session(name)
    index = session_index(info.index_path)
    if index is None:
        st.error(f"The index of session {md(repr(name))} ({md(info.index_path)}) cannot be opened.")
        return None
    with st.spinner("Scoring every model on the judged topics…"):
        return guarded("evaluate the session", evaluate_session, admin, name, index, rule=rule, annotator=who,
                       **options)  # fmt: skip


def _from_upload(options: dict[str, Any]) -> Evaluation | None:
    upload = st.file_uploader("qrels: 'query:text|LABEL 0 sentence_id grade' lines", key="evaluate_qrels")
    if upload is None:
        st.info("Upload qrels exported from a session (they are evaluated on the current index).")
        return None
    if not st.button("Evaluate", type="primary", key="evaluate_run"):
        return None
    st.session_state.pop(RESULT, None)
    if not _ready(options):
        return None
    index = current_index()
    if index is None:
        return None
    with error_guard(f"evaluate {upload.name}"):
        qrels = parse_qrels(uploaded_text(upload), source=upload.name)
        with st.spinner("Scoring every model on the judged topics…"):
            return evaluate_judgments(index, qrels, **options)
    return None


def show(evaluation: Evaluation) -> None:
    """The means with significance marks, a bar chart, per-topic differences and the coverage curve."""
    st.subheader("Results")
    skipped = len(evaluation.skipped_topics)
    st.caption(
        f"{len(evaluation.topics)} topics with a relevant sentence"
        + (f" ({skipped} judged topics without one are left out)" if skipped else "")
        + f" · baseline {model_title(evaluation.baseline)} · * = both paired t-test and Wilcoxon p < 0.05"
    )
    st.dataframe(results_table(evaluation), width="stretch")
    chosen = st.selectbox("Metric", list(evaluation.metrics), key="evaluate_chart_metric")
    metric = chosen or evaluation.metrics[0]
    means = evaluation.means().reset_index(names="model")
    st.bar_chart(means, x="model", y=metric, horizontal=True)
    comparison = evaluation.comparison
    rows = comparison[comparison["metric"] == metric].set_index("model")
    with st.expander(f"p-values against {evaluation.baseline} on {metric}"):
        st.dataframe(rows[["mean", "diff", "p_ttest", "p_wilcoxon", "significant"]], width="stretch")
    if len(evaluation.models) > 1:
        st.subheader(f"Per-topic difference from {evaluation.baseline} ({metric})")
        differences = evaluation.differences(metric)
        differences.index = pd.Index([topic_label(t) for t in differences.index], name="topic")
        st.bar_chart(differences, horizontal=True, stack=False)
        st.dataframe(differences.round(4), width="stretch")
    st.subheader("Coverage: topics with a relevant sentence among the candidates")
    st.caption("S_qe: the ranker's top-k sentences that mention the entity; Ŝ_qe: with ±2 context sentences "
               "(seed 002, Fig. 2).")  # fmt: skip
    coverage = evaluation.coverage.reset_index().melt(id_vars="k", var_name="set", value_name="covered")
    st.vega_lite_chart(
        coverage,
        {
            "mark": {"type": "line", "point": True},
            "encoding": {
                "x": {"field": "k", "type": "quantitative", "scale": {"type": "log"}, "title": "k (log)"},
                "y": {"field": "covered", "type": "quantitative", "scale": {"domain": [0, 1]},
                      "title": "fraction of topics", "axis": {"format": "%"}},
                "color": {"field": "set", "type": "nominal", "title": None},
            },
        },
        width="stretch",
    )  # fmt: skip


def results_table(evaluation: Evaluation) -> pd.DataFrame:
    """Models × metrics, means formatted with a * where the difference from the baseline is significant."""
    means = evaluation.means()
    comparison = evaluation.comparison.set_index(["model", "metric"])
    table = pd.DataFrame(index=means.index, columns=means.columns, dtype=object)
    for model in means.index:
        for metric in means.columns:
            significant = bool(comparison.loc[(model, metric), "significant"])
            mark = "*" if model != evaluation.baseline and significant else ""
            table.loc[model, metric] = f"{means.loc[model, metric]:.4f}{mark}"
    table.index.name = "model"
    return table
