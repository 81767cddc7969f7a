"""Evaluate: every chosen model's tie-aware metrics on a session's grades (or uploaded qrels).

A session's grades are read with the admin token (annotators must not see each other's grades
while a session runs); uploaded qrels need no token and are evaluated on the current index.
Metrics: tie-aware, graded (:func:`.scales.relevance_rule`; NDCG gains 0, 1, 3, 7), with paired
t-test and Wilcoxon p-values against the chosen baseline, per-topic differences and the
coverage curve of Blanco & Zaragoza, SIGIR 2010, Fig. 2.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, NamedTuple

import pandas as pd
import streamlit as st

from sentret_core.annotation.admin import Admin
from sentret_core.annotation.judged_eval import Evaluation, evaluate_judgments, evaluate_session
from sentret_core.annotation.records import RULES
from sentret_core.annotation.scales import parse_scaled_qrels, relevance_rule
from sentret_core.annotation.session_setup import topic_label
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.topics import EVAL_METRICS
from sentret_core.defaults import APP_MAX_K, DEFAULT_K, DEFAULT_RANKER, DEFAULT_SUPPORT_MODELS
from sentret_core.ui.judgments import page_store, session_index
from sentret_core.ui.learn_form import learn_form
from sentret_core.ui.offered import (
    LTR_MODEL,
    default_ranker,
    is_learned,
    learned_choice,
    learned_params,
    model_title,
    offered_models,
    stored_rankers,
    support_models,
)
from sentret_core.ui.pages.admin import token_form
from sentret_core.ui.qrels_scale import choose_scale, guarded_text
from sentret_core.ui.state import current_index, error_guard, guarded, index_label, page_setup, uploaded_text
from sentret_core.ui.text import md
from sentret_core.ui.url import UrlReader, show_warnings

RESULT = "evaluate_result"  # (the inputs, the Evaluation) of the last evaluation
SESSION, UPLOAD = "A session's grades", "Uploaded qrels"


class Job(NamedTuple):
    """One evaluation the page can run: everything its result depends on, and how to run it."""

    inputs: tuple[Any, ...]  # the options and a fingerprint of the judgments
    run: Callable[[], Evaluation | None]  # shows why and returns None when it fails
    clicked: bool


def render() -> None:
    page_setup("Evaluate", "Tie-aware metrics of support-sentence models on graded judgments, with "
               f"significance against a baseline. {relevance_rule()}")
    source = st.radio("Judgments", [SESSION, UPLOAD], horizontal=True, key="evaluate_source")
    options = _options()
    job = _from_session(options) if source == SESSION else _from_upload(options)
    last: tuple[tuple[Any, ...], Evaluation] | None = st.session_state.get(RESULT)
    if job is None:  # nothing to evaluate (no sign-in, no session, no file, no grades)
        st.session_state.pop(RESULT, None)
        return
    inputs = (source, *job.inputs)
    if job.clicked or (last is not None and last[0] != inputs):  # once evaluated, kept up to date
        st.session_state.pop(RESULT, None)
        last = None
        if not _ready(options):
            return
        with st.spinner("Scoring every model on the judged topics…"):
            evaluation = job.run()
        if evaluation is None:
            return
        last = st.session_state[RESULT] = (inputs, evaluation)
    if last is not None:
        show(last[1])


def _options() -> dict[str, Any]:
    """The models (pills: every chosen one stays in sight), the baseline, metrics, k and the ranker."""
    models = st.pills("Models", support_models(), selection_mode="multi", default=list(DEFAULT_SUPPORT_MODELS),
                      key="evaluate_models", format_func=model_title, width="stretch") or []
    left, right = st.columns(2)
    baseline = left.selectbox("Baseline", models, key="evaluate_baseline", format_func=model_title)
    rankers = offered_models()
    ranker = right.selectbox("Ranker (coverage curve, Ŝ_qe)", rankers, index=rankers.index(DEFAULT_RANKER),
                             key="evaluate_ranker", format_func=model_title)
    left, right = st.columns([3, 1])
    metrics = left.multiselect("Metrics", EVAL_METRICS, default=list(EVAL_METRICS), key="evaluate_metrics")
    k = int(right.number_input("k (each model's top-k)", 1, APP_MAX_K, DEFAULT_K, step=100, key="evaluate_k",
                               help="Each model's candidates are the sentences of its top-k."))
    used = any(is_learned(m) for m in (*models, ranker) if m)
    learned = _learned_picker(used)
    return {"models": list(models), "baseline": baseline, "metrics": list(metrics), "k": k, "ranker": ranker,
            "params": learned_params(learned if used else None)}


def _learned_picker(used: bool) -> str | None:
    """The stored ranker ``ltr.v1`` scores (in the URL as ``p.ltr.model`` while a learned ranker is chosen)."""
    if "evaluate_ltr_model" not in st.session_state:  # first run: from the link, a bad value named
        url = UrlReader()
        st.session_state["evaluate_ltr_model"] = learned_choice(url)
        st.session_state["evaluate_url_warnings"] = url.warnings
    show_warnings(st.session_state.pop("evaluate_url_warnings", ()))  # once: the link's, not the page's
    rankers = stored_rankers()
    if not rankers:
        return None
    if st.session_state.get("evaluate_ltr_model") not in rankers:
        st.session_state["evaluate_ltr_model"] = default_ranker(rankers)
    learned = st.selectbox("Learned ranker (scored as ltr.v1)", rankers, key="evaluate_ltr_model",
                           help="A stored ranker, by the name it was learned under.")
    if used and learned:
        if st.query_params.get(LTR_MODEL) != learned:
            st.query_params[LTR_MODEL] = learned
    elif LTR_MODEL in st.query_params:
        del st.query_params[LTR_MODEL]
    return str(learned) if learned is not None else None


def _key(options: dict[str, Any]) -> tuple[Any, ...]:
    return (tuple(options["models"]), options["baseline"], tuple(options["metrics"]), options["k"],
            options["ranker"], repr(options["params"]))


def learned_name(evaluation: Evaluation) -> str | None:
    """The stored ranker an evaluation scored as ``ltr.v1``, if any."""
    return evaluation.settings.get("params", {}).get("ltr.v1", {}).get("model")


def _ready(options: dict[str, Any]) -> bool:
    if not options["models"]:
        st.error("Choose at least one model.")
        return False
    if not options["metrics"]:
        st.error("Choose at least one metric.")
        return False
    return True


def _from_session(options: dict[str, Any]) -> Job | None:
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
    if name is None:
        return None
    rule: str = mid.selectbox("Adjudication", list(RULES), key="evaluate_rule",
                              help="majority or mean of the annotators' grades, or one annotator's; an item "
                              "adjudicated on the Admin page takes its adjudicated grade under majority and "
                              "mean.") or "majority"
    who = None
    if rule == "annotator":
        annotators: list[str] = list(admin.progress_by_annotator(name))
        if not annotators:
            st.info(f"Session {md(repr(name))} has no annotator yet.")
            return None
        who = right.selectbox("Annotator", annotators, key="evaluate_annotator")
    qrels = guarded("read the session's grades", admin.export_qrels, name, rule=rule, annotator=who, ids="internal")
    clicked = st.button("Evaluate", type="primary", key="evaluate_run", disabled=not qrels)
    if qrels is not None and not qrels:
        st.info(_no_grades(admin, name, who))
    learn_form(admin, name, store.session(name).index_path)
    if not qrels:
        return None
    inputs = (*_key(options), name, rule, who, hashlib.sha256(qrels.encode()).hexdigest())
    return Job(inputs, lambda: _evaluate_session(store, admin, name, rule, who, options), clicked)


def _no_grades(admin: Admin, name: str, who: str | None) -> str:
    """Why there is nothing to evaluate: this annotator has graded nothing, or nobody has."""
    session = md(repr(name))
    if who is not None:
        others = sum(p.graded for n, p in admin.progress_by_annotator(name).items() if n != who)
        also = f" (the others have {others} grade{'s' if others != 1 else ''})" if others else ""
        return f"{md(who)} has not graded any item of session {session} yet{also}: choose another annotator or rule."
    return f"Session {session} has no grades yet: nothing to evaluate."


def _evaluate_session(
    store: JudgmentStore, admin: Admin, name: str, rule: str, who: str | None, options: dict[str, Any]
) -> Evaluation | None:
    info = store.session(name)
    index = session_index(info.index_path)
    if index is None:
        st.error(f"The index of session {md(repr(name))} ({md(index_label(info.index_path))}) cannot be opened.")
        return None
    return guarded("evaluate the session", evaluate_session, admin, name, index, rule=rule, annotator=who,
                   **options)


def _from_upload(options: dict[str, Any]) -> Job | None:
    upload = st.file_uploader("qrels: 'query:text|LABEL 0 docno grade' lines (or sentence ids)", key="evaluate_qrels")
    if upload is None:
        st.info("Upload qrels exported from a session (they are evaluated on the current index).")
        return None
    scale = choose_scale(guarded_text(upload), upload.getvalue())
    clicked = st.button("Evaluate", type="primary", key="evaluate_run")
    inputs = (*_key(options), upload.name, scale, hashlib.sha256(upload.getvalue()).hexdigest())
    return Job(inputs, lambda: _evaluate_upload(upload, scale, options), clicked)


def _evaluate_upload(upload: Any, scale: str, options: dict[str, Any]) -> Evaluation | None:
    index = current_index()
    if index is None:
        return None
    with error_guard(f"evaluate {upload.name}"):
        qrels, _ = parse_scaled_qrels(uploaded_text(upload), scale, source=upload.name)
        return evaluate_judgments(index, qrels, **options)
    return None


def show(evaluation: Evaluation) -> None:
    """The means with significance marks, a bar chart, per-topic differences and the coverage curve;
    models by their display names."""
    st.subheader("Results")
    skipped = len(evaluation.skipped_topics)
    learned = learned_name(evaluation)
    baseline = model_title(evaluation.baseline, learned)
    st.caption(
        f"{len(evaluation.topics)} topics with a relevant sentence"
        + (f" ({skipped} judged topics without one are left out)" if skipped else "")
        + f" · baseline {md(baseline)} · * = both paired t-test and Wilcoxon p < 0.05"
    )
    st.dataframe(results_table(evaluation), width="stretch")
    chosen = st.selectbox("Metric", list(evaluation.metrics), key="evaluate_chart_metric")
    metric = chosen or evaluation.metrics[0]
    means = evaluation.means().reset_index(names="model")
    means["model"] = means["model"].map(lambda m: model_title(m, learned))
    st.bar_chart(means, x="model", y=metric, horizontal=True, sort=False)
    comparison = evaluation.comparison
    rows = comparison[comparison["metric"] == metric].set_index("model")
    rows.index = pd.Index([model_title(m, learned) for m in rows.index], name="model")
    with st.expander(f"p-values against {md(baseline)} on {metric}"):
        st.dataframe(rows[["mean", "diff", "p_ttest", "p_wilcoxon", "significant"]], width="stretch")
    if len(evaluation.models) > 1:
        st.subheader(f"Per-topic difference from {md(baseline)} ({metric})")
        differences = evaluation.differences(metric)
        differences.index = pd.Index([topic_label(t) for t in differences.index], name="topic")
        differences.columns = [model_title(m, learned) for m in differences.columns]
        st.bar_chart(differences, horizontal=True, stack=False)
        st.dataframe(differences.round(4), width="stretch")
    st.subheader("Coverage: topics with a relevant sentence among the candidates")
    st.caption("S_qe: the ranker's top-k sentences that mention the entity; Ŝ_qe: with ±2 context sentences "
               "(Blanco & Zaragoza, SIGIR 2010, Fig. 2).")
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
    )


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
    table.index = pd.Index([model_title(m, learned_name(evaluation)) for m in means.index], name="model")
    return table
