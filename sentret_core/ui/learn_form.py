"""The Evaluate page's "Learn a ranker from these judgments": fit ltr.v1's ranker on a session's
adjudicated grades with cross-validation by topic, and say what it learned."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from sentret_core.defaults import RELEVANT_GRADE
from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.learning.enough import check_enough
from sentret_core.learning.learn import Data, learn
from sentret_core.learning.topics import session_topics
from sentret_core.ui.judgments import session_index
from sentret_core.ui.state import error_guard, index_label

if TYPE_CHECKING:
    from sentret_core.annotation.admin import Admin

LEARNERS = {"lambdamart": "LambdaMART (LightGBM)", "linear": "Linear (logistic regression): weights you can read"}


def learn_form(admin: Admin, session: str, index_path: str) -> None:
    taken = {str(r["name"]) for r in artefacts.available(None, "ranker")}
    with st.expander("Learn a ranker from these judgments"):
        st.caption(f"Fits ltr.v1 on this session's adjudicated grades on the 1-4 scale (relevant ≥ {RELEVANT_GRADE}), "
                   "cross-validated by topic: "
                   "each fold's ranker never sees its test topics. It then appears as the ltr.v1 column in "
                   "Explore and in How it works.")
        with st.form("evaluate_learn"):
            name = st.text_input("Name", value="ltr" if "ltr" not in taken else "", key="evaluate_learn_name",
                                 help="ltr.v1 reads the ranker named 'ltr' unless told otherwise")
            learner = st.radio("Learner", list(LEARNERS), format_func=LEARNERS.__getitem__, horizontal=True,
                               key="evaluate_learn_learner")
            folds = int(st.number_input("Cross-validation folds", 2, 10, 5, key="evaluate_learn_folds"))
            if not st.form_submit_button("Learn"):
                return
        with error_guard("learn a ranker"):
            name = artefacts.check_name(name.strip())
            if name in taken:
                raise SentretError(f"a ranker named {name!r} exists already: choose a new name (others may use it)")
            index = session_index(index_path)
            if index is None:
                raise SentretError(f"the session's index {index_label(index_path)} cannot be opened")
            data = Data(index, session_topics(admin, session, index), {"session": session}, unjudged_non_relevant=False)
            check_enough(data.usable(), folds=folds)  # before any feature is computed
            bar = st.progress(0.0, text="Learning…")

            def show(text: str, share: float) -> None:
                bar.progress(min(share, 1.0), text)

            result = learn(name, data, folds=folds, learner=str(learner), progress=show)
            cv, comparison = result.metrics["cv"], result.comparison
            left_out = result.usable.get("without_relevant", 0)
            st.success(f"Learned {result.learned.reference}: cross-validated MAP {cv['map']:.4f}, MRR "
                       f"{cv['mrr']:.4f} over {cv['topics']:.0f} topic{'s' if cv['topics'] != 1 else ''}"
                       + (f" ({left_out} without a relevant sentence left out)." if left_out else "."))
            if comparison is not None:
                st.info(f"Verdict: {comparison.verdict}.")
                rows = [{"model": "this ranker", **comparison.ranker}] + [
                    {"model": m, **v} for m, v in sorted(comparison.baselines.items(), key=lambda kv: -kv[1]["map"])]
                st.dataframe(pd.DataFrame(rows).rename(columns={"map": "MAP", "mrr": "MRR"}), hide_index=True)
            ranker = result.learned.ranker
            values = ranker.weights() if ranker.learner == "linear" else ranker.importance()
            column = "weight (standardised feature)" if ranker.learner == "linear" else "gain"
            frame = pd.DataFrame({"feature": list(values), column: list(values.values())})
            st.dataframe(frame.sort_values(column, key=abs, ascending=False), hide_index=True)
