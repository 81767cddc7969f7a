"""Shared fixtures: the real spaCy model and small indexes built from texts written here."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from sentret_core import Index, build_index
from sentret_core.ingest.nlp import load_pipeline

TESTS = Path(__file__).resolve().parent
SHARED_DATA = TESTS.parents[1] / "shared" / "data"

# Hypothesis runs the same examples on every machine and every run: a failure reproduces. Two budgets: the
# full one where SENTRET_PROPERTIES=full (`make test`, `make test-any-cpu`, so CI), and a tenth of it in the
# loop while editing (`make test-fast`, a bare pytest), which keeps every property but not its every example.
FULL_PROPERTIES = os.environ.get("SENTRET_PROPERTIES") == "full"
FAST_SHARE, FAST_LEAST = 10, 10
settings.register_profile("sentret", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("sentret-fast", settings.get_profile("sentret"), max_examples=FAST_LEAST * 2)
settings.load_profile("sentret" if FULL_PROPERTIES else "sentret-fast")


def examples(full: int) -> int:
    """A property test's ``max_examples``: ``full`` in the full run, a tenth of it (at least 10) in the loop."""
    return full if FULL_PROPERTIES else max(FAST_LEAST, full // FAST_SHARE)


# Which tests are slow is listed here, by module (its path under tests/, without .py); each entry says why
# (tests/README.md explains the markers). The times are from `pytest -m "not browser" --durations=0` on 2
# shared cores at load 5-8. `make test-fast` leaves the slow ones out; `make test` runs them. Every module
# under browser/ is marked `browser`.
SLOW_MODULES: dict[str, str] = {
    "test_wheel_app": "builds the wheel and installs it with spaCy into a fresh virtualenv (52 s)",
    "index/test_resealed": "runs the resealed hostile-artefact benchmark in subprocesses (49 s)",
    "ingest/test_ray_engine": "starts a Ray cluster, kills one of its workers (60 s)",
    "models/test_minilm_ray": "starts a local Ray twice and encodes on its actors (25 s)",
    "ingest/test_ray_cluster": "starts a two-node Ray cluster with `ray start` in a network namespace (40 s)",
    "annotation/test_durability": "spawns writer processes and kills them (33 s)",
    "index/test_corruption": "damages every file of an index in turn (20 s)",
    "ingest/test_shards": "parses in worker processes and builds indexes shard by shard (23 s)",
    "learning/test_hostile_rankers": "hundreds of mutated and crafted rankers (18 s)",
    "ingest/test_build_safety": "builds in subprocesses, signalled and killed (22 s)",
    "ingest/test_resume": "parses stopped, killed and interrupted, then gone on from (17 s)",
    "annotation/test_store_access": "other processes hold the database's locks (14 s)",
    "ui/test_example_queries": "every example query under every model (8 s)",
    "annotation/test_throttle": "guesses from several processes at once (9 s)",
    "ui/test_app_upload": "builds indexes from uploaded files (13 s)",
    "index/test_index": "builds and rebuilds indexes (6 s)",
    "ingest/test_nlp": "runs spaCy's own API over the corpus (3 s)",
    "cli/test_eval": "evaluates benchmarks through the CLI (3 s)",
    "cli/test_judgments": "judgment commands through the CLI (3 s)",
    "cli/test_errors": "starts the CLI as a real process (16 s)",
    "learning/test_regularise": "cross-validates learners (3 s)",
    "annotation/test_adjudication": "sessions, judgments and the admin page (6 s)",
    "index/test_hostile_artefacts": "reseals damaged artefacts and verifies them (3 s)",
    "models/test_training_running": "trains in another process (2 s)",
    "models/test_memory_flat": "makes a 1M-sentence index and runs 600 queries in another process (20 s)",
}
SLOW_PREFIXES: dict[str, str] = {
    "ui/test_app_": "Streamlit's AppTest runs the whole page script at every step (0.2-5 s a test, 85 s in all)",
}
SLOW_TESTS: dict[str, str] = {  # "module::test" (every parametrisation of it)
    "evaluation/test_benchmarks::test_wikiqa_real_topic_counts": "reads the real WikiQA files (27 s)",
    "evaluation/test_benchmarks::test_squad_min_candidates_and_distractors": "reads the real SQuAD file (4 s)",
    "evaluation/test_candidates::test_learn_then_eval_a_ranker_on_a_hand_written_file": "learns a ranker in the "
    "CLI (8 s)",
    "models/test_properties::test_explain_total_equals_score_for_any_parameters": "every model under generated "
    "parameters (12 s; the test at the defaults stays fast)",
    "models/test_pruning::test_search_is_top_k_of_score": "generated queries over every pruned model (5 s)",
    "test_packaging::test_the_sdist_installs_without_a_c_compiler_and_scores_as_the_kernels_do": "builds a wheel "
    "from the sdist, installs it and scores in two other processes (10 s)",
}


def is_slow(module: str, test: str) -> bool:
    return module in SLOW_MODULES or module.startswith(tuple(SLOW_PREFIXES)) or f"{module}::{test}" in SLOW_TESTS


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.relative_to(TESTS).with_suffix("").as_posix()
        if module.startswith("browser/"):
            item.add_marker(pytest.mark.browser)
        if is_slow(module, getattr(item, "originalname", item.name)):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _private_data_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the real data/: every test gets its own judgments database, an empty ranker store and
    feature cache."""
    monkeypatch.setenv("SENTRET_JUDGMENTS_DB", str(tmp_path_factory.mktemp("judgments") / "sentret.sqlite"))
    monkeypatch.setenv("SENTRET_RANKERS", str(tmp_path_factory.mktemp("rankers")))  # nor data/rankers/
    monkeypatch.setenv("SENTRET_FEATURE_CACHE", str(tmp_path_factory.mktemp("features")))  # nor data/cache/


@pytest.fixture
def default_ranker(_private_data_dirs: None) -> None:
    """A ranker stored under ltr.v1's default name ("ltr") in this test's ranker store."""
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
    """The artefacts lm-class.v1, lm-trigger.v1 and minilm.v1 read by default, trained as `make run` trains
    the demo's."""
    from sentret_core.models.training.classes import train_classes
    from sentret_core.models.training.sentence_vectors import train_minilm
    from sentret_core.models.training.triggers import train_triggers

    train_classes(index)
    train_triggers(index)
    train_minilm(index)


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
    from sentret_core.learning.features import feature_names
    from sentret_core.learning.learners import Ranker
    from sentret_core.learning.store import save

    names = feature_names(("bm25.v1",))
    coef = np.linspace(-1.0, 1.0, len(names))  # every feature counts
    arrays = {"mean": np.zeros(len(names)), "scale": np.ones(len(names)), "coef": coef, "intercept": np.zeros(1)}
    save("ltr", Ranker("linear", names, arrays), first_stage="bm25.v1", depth=100, scorers=("bm25.v1",), meta={})


def at_once(calls: Sequence[Callable[[], object]]) -> None:
    """Run every call in a thread of its own, all released together (a barrier), and wait for them all."""
    start = threading.Barrier(len(calls))

    def run(call: Callable[[], object]) -> None:
        start.wait()
        call()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
