"""The Evaluate page's "Learn a ranker from these judgments" under AppTest: refused on a session too small to
learn from, and learned on ten teaching topics, beside the single models with a verdict."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.index import artefacts
from sentret_core.models import score
from sentret_core.ui.offered import offered_models
from tests.conftest import build_from_texts, judgments_env
from tests.sign_in_util import sign_in_handle
from tests.ui.test_app_evaluate import SCRIPT, TOKEN, store  # noqa: F401  (the small graded session fixture)

# its tests score ltr.v1 under its default ranker name, or count on the app offering it
pytestmark = pytest.mark.usefixtures("default_ranker")

NAMES = ["Alice Moreau", "Bruno Keller", "Carla Diaz", "Daniel Novak", "Elena Rossi", "Felix Wagner",
         "Greta Olsen", "Hugo Lambert", "Irene Costa", "Jonas Berg"]
CITIES = ["Lyon", "Zurich", "Seville", "Prague", "Turin", "Munich", "Oslo", "Nantes", "Porto", "Bergen"]


@pytest.fixture
def bakers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[JudgmentStore, Index]]:
    """Ten topics "when did X found a bakery" × X, each with its founding sentence graded 4 and X's two
    other sentences graded 1: ten topics that teach (a relevant and a non-relevant judged sentence)."""
    docs = [{"id": f"p{i}", "title": name, "text": f"{name} was born in {CITIES[i]}. {name} founded a bakery in "
             f"{1950 + i}. {name} later moved to Paris."} for i, name in enumerate(NAMES)]
    index = build_from_texts(tmp_path, docs, "bakers")
    db = judgments_env(monkeypatch, tmp_path, index, TOKEN)
    with JudgmentStore(db) as opened:
        topics = "\n".join(f"when did {name} found a bakery\t{name}|PERSON" for name in NAMES)
        create_session(opened, "s", index, topics, depth=3)
        handle = sign_in_handle(opened, TOKEN, "s", "ann")
        while (item := handle.next_item()) is not None:
            handle.grade(item.item_id, 4 if "founded" in item.text else 1)
        yield opened, index


def signed_in() -> AppTest:
    app = AppTest.from_string(SCRIPT, default_timeout=120).run()
    app.text_input(key="evaluate_token").input(TOKEN)
    app.button[0].click().run()
    return app


def learn_button(app: AppTest):  # type: ignore[no-untyped-def]
    return next(b for b in app.button if b.label == "Learn")


def test_learning_from_too_little_is_refused_with_how_many_more(store: JudgmentStore) -> None:  # noqa: F811
    shutil.rmtree(artefacts.store_root() / "ltr")
    app = signed_in()
    app.radio(key="evaluate_learn_learner").set_value("linear")
    learn_button(app).click().run()
    assert not app.exception
    [message] = [e.value for e in app.error]
    assert message.startswith("too little to learn from: learning needs at least 10 training topics") and (
        "Judge 10 more such topics." in message)  # 5 folds (the default) × 2
    assert artefacts.available(None, "ranker") == []  # nothing stored


def test_learn_a_ranker_from_a_session(bakers: tuple[JudgmentStore, Index]) -> None:
    _, index = bakers
    shutil.rmtree(artefacts.store_root() / "ltr")  # (conftest stores a default ranker for every test)
    assert "ltr.v1" not in offered_models()  # nothing learned yet: the app does not offer it
    app = signed_in()
    app.radio(key="evaluate_learn_learner").set_value("linear")
    app.number_input(key="evaluate_learn_folds").set_value(2)
    learn_button(app).click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any("cross-validated MAP" in s.value and "over 10 topics." in s.value for s in app.success)
    assert any(i.value.startswith("Verdict: ") and " on 10 topics " in i.value for i in app.info)
    beside = app.dataframe[0].value
    assert beside["model"].iloc[0] == "this ranker" and {"doc-order", "bm25f.v1"} <= set(beside["model"])
    weights = app.dataframe[1].value
    assert "weight (standardised feature)" in weights.columns and "answer_type" in set(weights["feature"])
    (record,) = artefacts.available(None, "ranker")
    assert record["name"] == "ltr" and record["learner"] == "linear" and record["train"]["session"] == "s"
    assert record["metrics"]["cv"]["topics"] == 10 and record["comparison"]["topics"] == 10
    # the learned model is now offered, and scores with its default name
    assert "ltr.v1" in offered_models()
    found = score(index, "when did Alice Moreau found a bakery", "ltr.v1")
    assert len(found.ids) and np.isfinite(found.scores).all()
    # learning again under the same name is refused (others may be reading it); nothing is replaced
    app.text_input(key="evaluate_learn_name").input("ltr")
    learn_button(app).click().run()
    assert [e.value for e in app.error] and "exists already" in app.error[0].value
    assert artefacts.available(None, "ranker")[0]["sha256"] == record["sha256"]
