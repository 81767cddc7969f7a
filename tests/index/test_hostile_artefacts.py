"""Resealed artefacts: word classes and trigger tables whose content is hostile but whose
hashes were rewritten to match. Each is loaded and scored in a forked child (a SIGSEGV shows as its
exit status), which must get one SentretError saying what is wrong; ``verify`` must report it too."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sentret_core.index import artefacts
from sentret_core.index.reader import Index, verify
from sentret_core.models import score
from sentret_core.models.training.classes import load_classes, train_classes
from sentret_core.models.training.triggers import load_triggers, train_triggers
from tests.conftest import SMALL_DOCS, build_from_texts
from tests.learning.test_hostile_rankers import forked

Change = Callable[[dict[str, np.ndarray], dict[str, Any]], None]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small index with word classes (3 classes) and trigger tables (every pair kept)."""
    index = build_from_texts(tmp_path_factory.mktemp("hostile-artefacts"), SMALL_DOCS)
    train_classes(index, classes=3, min_count=1)
    train_triggers(index, min_count=1)
    assert load_triggers(index).tables["inside"].nnz > 0 and load_triggers(index).tables["across"].nnz > 0
    return Path(index.path)


def resealed(pristine: Path, tmp_path: Path, name: str, change: Change) -> Path:
    """A copy of the index whose artefact ``name`` is changed by ``change`` and sealed again: its
    content hash and record checksum recomputed as the artefact writer computes them."""
    copy = Path(shutil.copytree(pristine, tmp_path / "idx"))
    folder = copy / artefacts.FOLDER / name
    with np.load(folder / artefacts.ARRAYS) as data:
        arrays = {key: np.array(data[key]) for key in data.files}
    record = json.loads((folder / artefacts.META).read_text())
    change(arrays, record)
    np.savez(folder / artefacts.ARRAYS, **arrays)  # type: ignore[arg-type]
    record["sha256"] = artefacts.content_hash(arrays)
    record["checksum"] = artefacts.record_checksum(record)
    (folder / artefacts.META).write_text(json.dumps(record))
    return copy


def setting(key: str, at: int, value: Any) -> Change:
    def change(arrays: dict[str, np.ndarray], record: dict[str, Any]) -> None:
        arrays[key][at] = value

    return change


def recording(key: str, value: Any) -> Change:
    def change(arrays: dict[str, np.ndarray], record: dict[str, Any]) -> None:
        record[key] = value

    return change


def replacing(key: str, make: Callable[[np.ndarray], np.ndarray]) -> Change:
    def change(arrays: dict[str, np.ndarray], record: dict[str, Any]) -> None:
        arrays[key] = make(arrays[key])

    return change


def _classes_used(path: Path) -> None:
    index = Index.load(path)
    load_classes(index)
    score(index, "Picasso war", "lm-class.v1")


def _triggers_used(path: Path) -> None:
    index = Index.load(path)
    load_triggers(index)
    score(index, "Picasso war", "lm-trigger.v1")
    score(index, "who painted Guernica", "lm-trigger.v2")


def _shape_lie(arrays: dict[str, np.ndarray], record: dict[str, Any]) -> None:
    record["shapes"]["inside"] = [10**9, 10**9]


# case → (artefact, how it is made hostile, what the error must say)
CASES: dict[str, tuple[str, Change, str]] = {
    "class-id-too-large": ("classes", setting("classes", 0, 1000), "class id outside 0..2"),
    "class-id-negative": ("classes", setting("classes", 0, -1), "class id outside 0..2"),
    "n-classes-huge": ("classes", recording("n_classes", 10**12), "not a count from 1 to"),
    "n-classes-not-a-number": ("classes", recording("n_classes", "many"), "not a count from 1 to"),
    "classes-too-short": ("classes", replacing("classes", lambda a: a[:-1]), "classes is not integers of shape"),
    "classes-as-floats": ("classes", replacing("classes", lambda a: a.astype(np.float64)), "not integers"),
    "column-too-large": ("triggers", setting("inside.indices", 0, 10**6), "inside has a column index outside"),
    "column-negative": ("triggers", setting("across.indices", 0, -5), "across has a column index outside"),
    "row-pointer-past-end": ("triggers", setting("inside.indptr", -1, 10**9), "row pointers do not run"),
    "row-pointer-backwards": ("triggers", setting("inside.indptr", 1, -3), "row pointers do not run"),
    "nan-count": ("triggers", setting("inside.data", 0, np.nan), "count that is negative or not finite"),
    "shape-lie": ("triggers", _shape_lie, "table inside has shape [1000000000, 1000000000]"),
    "indptr-missing": ("triggers", replacing("qa.indptr", lambda a: a[:0]), "qa.indptr is not integers"),
    "asked-negative": ("triggers", setting("asked", 0, -1.0), "asked is not"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_resealed_hostile_artefact_is_a_clear_error_at_load_and_in_verify(
    pristine: Path, tmp_path: Path, case: str
) -> None:
    name, change, says = CASES[case]
    copy = resealed(pristine, tmp_path, name, change)
    kind, message = forked(_classes_used if name == "classes" else _triggers_used, copy)
    assert kind == "SentretError", (kind, message)
    assert f"artefact {name!r}" in message and "damaged" in message and says in message, message
    found = [problem for problem in verify(copy) if problem.startswith(f"{artefacts.FOLDER}/{name}:")]
    assert len(found) == 1 and says in found[0], verify(copy)


def test_a_pristine_copy_loads_scores_and_verifies(pristine: Path, tmp_path: Path) -> None:
    copy = resealed(pristine, tmp_path, "triggers", lambda arrays, record: None)  # resealing alone changes nothing
    assert forked(_classes_used, copy) == ("ok", "")
    assert forked(_triggers_used, copy) == ("ok", "")
    assert verify(copy) == []
