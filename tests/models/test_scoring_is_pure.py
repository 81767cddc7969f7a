"""Scoring is a pure function of (index, query, parameters): it never writes into the index folder,
and the trained models read their artefacts by name instead of training on first use."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sentret_core.errors import SentretError
from sentret_core.index.reader import Index, verify
from sentret_core.models import distribution, explain, list_models, score, top_k
from sentret_core.models.training import used
from sentret_core.support.engine import support
from tests.conftest import SMALL_DOCS, build_from_texts, train_default_artefacts

# its tests score ltr.v1 under its default ranker name, or count on the app offering it
pytestmark = pytest.mark.usefixtures("default_ranker")

QUERIES = ("spanish civil war", "picasso peace", "war war painting", "zyzzyva")


def folder_state(path: Path) -> dict[str, str]:
    """Every file and folder under ``path`` with the sha256 of its bytes."""
    state = {}
    for item in sorted(path.rglob("*")):
        key = str(item.relative_to(path))
        state[key] = hashlib.sha256(item.read_bytes()).hexdigest() if item.is_file() else "folder"
    return state


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    index = build_from_texts(Path(tmp_path_factory.mktemp("pure")), SMALL_DOCS)
    train_default_artefacts(index)
    return Path(index.path)


def test_scoring_explaining_and_support_leave_the_index_folder_byte_identical(trained: Path) -> None:
    before = folder_state(trained)
    assert any(name.startswith("artefacts/classes/") for name in before)
    index = Index.load(trained)  # a fresh load: nothing memoised yet
    for spec in list_models():
        for query in QUERIES:
            found = score(index, query, spec.name)
            for sentence in top_k(found, 3).ids.tolist():
                explain(index, query, sentence, spec.name)
                if spec.distribution is not None:
                    distribution(index, sentence, spec.name)
    support(index, "spanish civil war", models=("lm-class.v1", "lm-trigger.v1", "bm25f.v1"))
    assert folder_state(trained) == before
    assert verify(trained) == []


def test_the_same_inputs_give_the_same_scores_whatever_was_trained_before(trained: Path) -> None:
    first = {spec.name: score(Index.load(trained), "spanish war", spec.name) for spec in list_models()}
    index = Index.load(trained)
    for spec in reversed(list_models()):  # another order, another history
        again = score(index, "spanish war", spec.name)
        assert again.ids.tolist() == first[spec.name].ids.tolist()
        assert again.scores.tolist() == first[spec.name].scores.tolist()


def test_an_untrained_index_gets_an_error_and_no_files(tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, SMALL_DOCS)
    before = folder_state(Path(index.path))
    for model, kind in (("lm-class.v1", "classes"), ("lm-trigger.v1", "triggers")):
        with pytest.raises(SentretError, match=f"no {kind} artefact named '{kind}'"):
            score(index, "spanish civil war", model)
        with pytest.raises(SentretError, match=f"sentret train {kind}"):
            explain(index, "spanish civil war", 0, model)
    assert folder_state(Path(index.path)) == before
    assert used(index, "lm-class.v1") == {"classes": "classes@missing"}


def test_a_run_can_name_the_artefact_it_read(trained: Path) -> None:
    index = Index.load(trained)
    classes = used(index, "lm-class.v1")["classes"]
    tables = used(index, "lm-trigger.v1")["tables"]
    assert classes.startswith("classes@") and len(classes) == len("classes@") + 12
    assert tables.startswith("triggers@") and used(index, "bm25f.v1") == {}
