"""The Evaluate page's "Learn a ranker from these judgments" under AppTest, on a small graded session."""

from __future__ import annotations

import shutil

import numpy as np
from streamlit.testing.v1 import AppTest
from test_app_evaluate import SCRIPT, TOKEN, store  # noqa: F401  (the graded session fixture)

from sentret_core import Index
from sentret_core.annotation.store import JudgmentStore
from sentret_core.index import artefacts
from sentret_core.models import score
from sentret_core.ui.offered import offered_models


def signed_in() -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=120).run()
    app.text_input(key="evaluate_token").input(TOKEN)
    app.button[0].click().run()
    return app


def learn_button(app: AppTest):  # type: ignore[no-untyped-def]
    return next(b for b in app.button if b.label == "Learn")


def test_learn_a_ranker_from_a_session(store: JudgmentStore, small_index: Index) -> None:  # noqa: F811
    shutil.rmtree(artefacts.store_root() / "ltr")  # (conftest stores a default ranker for every test)
    assert "ltr.v1" not in offered_models()  # nothing learned yet: the app does not offer it
    app = signed_in()
    app.radio(key="evaluate_learn_learner").set_value("linear")
    app.number_input(key="evaluate_learn_folds").set_value(2)
    learn_button(app).click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any("cross-validated MAP" in s.value for s in app.success)
    weights = app.dataframe[0].value
    assert "weight (standardised feature)" in weights.columns and "answer_type" in set(weights["feature"])
    (record,) = artefacts.available(None, "ranker")
    assert record["name"] == "ltr" and record["learner"] == "linear" and record["train"]["session"] == "s"
    assert record["metrics"]["cv"]["topics"] >= 2
    # the learned model is now offered, and scores with its default name
    assert "ltr.v1" in offered_models()
    found = score(small_index, "picasso peace", "ltr.v1")
    assert len(found.ids) and np.isfinite(found.scores).all()
    # learning again under the same name is refused (others may be reading it); nothing is replaced
    app.text_input(key="evaluate_learn_name").input("ltr")
    learn_button(app).click().run()
    assert [e.value for e in app.error] and "exists already" in app.error[0].value
    assert artefacts.available(None, "ranker")[0]["sha256"] == record["sha256"]
