"""Shared fixtures: the real spaCy model and small indexes built from texts written here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from sentret_core import Index, build_index
from sentret_core.ingest.nlp import load_pipeline

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# Hypothesis runs the same examples on every machine and every run: a failure reproduces.
settings.register_profile("sentret", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("sentret")


@pytest.fixture(autouse=True)
def _private_judgments_db(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the real data/judgments/: every test gets its own judgments database."""
    monkeypatch.setenv("SENTRET_JUDGMENTS_DB", str(tmp_path_factory.mktemp("judgments") / "sentret.sqlite"))
    monkeypatch.setenv("SENTRET_RANKERS", str(tmp_path_factory.mktemp("rankers")))  # nor data/rankers/
    store_default_ranker()


@pytest.fixture(autouse=True)
def _keep_main_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streamlit's AppTest runs its script as ``__main__`` and leaves it in sys.modules; a later
    ``spawn`` child would re-run that script (from_function's takes arguments it never gets)."""
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])


# A tiny corpus about the papers' own examples; every sentence is written here.
SMALL_DOCS = [
    {
        "id": "civil-war",
        "title": "Spanish Civil War",
        "text": (
            "The Spanish Civil War was fought from 1936 to 1939. "
            "Francisco Franco led the Nationalists against the Republic. "
            "The International Brigades were volunteers who fought for the Republic. "
            "Many foreign writers, including George Orwell, joined the war. "
            "The war ended in April 1939 with a Nationalist victory."
        ),
    },
    {
        "id": "picasso",
        "title": "Pablo Picasso",
        "text": (
            "Pablo Picasso was a Spanish painter who lived in France. "
            "In 1937 Picasso painted Guernica after the bombing of the town during the war. "
            "In 1944 Picasso joined the French Communist Party and attended a peace conference in Poland. "
            "He received the Stalin Peace Prize in 1950."
        ),
    },
    {
        "id": "lennon",
        "title": "John Lennon",
        "text": (
            "John Lennon was an English singer and songwriter. "
            "Lennon sang about peace and imagined a world without religion. "
            "George Harrison became interested in Indian religion and mysticism."
        ),
    },
]


@pytest.fixture(scope="session")
def nlp():  # type: ignore[no-untyped-def]
    return load_pipeline()


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "small.jsonl"
    path.write_text("".join(json.dumps(doc) + "\n" for doc in SMALL_DOCS))
    return path


@pytest.fixture(scope="session")
def small_index(small_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Index:
    out = tmp_path_factory.mktemp("indexes") / "small"
    build_index(small_corpus, out, n_process=1)
    index = Index.load(out)
    train_default_artefacts(index)
    return index


def train_default_artefacts(index: Index) -> None:
    """The artefacts lm-class.v1 and lm-trigger.v1 read by default, trained as `make run` trains the demo's."""
    from sentret_core.models.training.classes import train_classes
    from sentret_core.models.training.triggers import train_triggers

    train_classes(index)
    train_triggers(index)


def build_from_texts(tmp_path: Path, docs: list[dict[str, str]], name: str = "idx") -> Index:
    """Index ``docs`` (dicts with id, title, text) into ``tmp_path/name`` and load it."""
    source = tmp_path / f"{name}.jsonl"
    source.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    build_index(source, tmp_path / name, n_process=1)
    return Index.load(tmp_path / name)


def judgments_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, index: Index, token: str) -> Path:
    """Point the app at ``index``, a fresh judgments database (returned) and the admin ``token``."""
    from sentret_core.annotation.records import ADMIN_TOKEN_ENV

    db = tmp_path / "judgments.sqlite"
    monkeypatch.setenv("SENTRET_JUDGMENTS_DB", str(db))
    monkeypatch.setenv(ADMIN_TOKEN_ENV, token)
    monkeypatch.setenv("SENTRET_INDEX", str(index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(index.path.parent))
    return db


def store_default_ranker() -> None:
    """A stored ranker under ltr.v1's default name, so that tests over every model can score ltr.v1."""
    from sentret_core.models.ltr.features import feature_names
    from sentret_core.models.ltr.learners import Ranker
    from sentret_core.models.ltr.store import save

    names = feature_names(("bm25.v1",))
    coef = np.linspace(-1.0, 1.0, len(names))  # every feature counts
    arrays = {"mean": np.zeros(len(names)), "scale": np.ones(len(names)), "coef": coef, "intercept": np.zeros(1)}
    save("ltr", Ranker("linear", names, arrays), first_stage="bm25.v1", depth=100, scorers=("bm25.v1",), meta={})
