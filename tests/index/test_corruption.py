"""Damaged indexes: never a crash, never a silently different result, always a clear error.

The corruption matrix is benchmarks/hostile_index.py run on a copy of the small index: every file
× {flip, huge value, scramble, header dtype, header shape, truncate half, truncate to zero, delete}
(parquet files: footer byte and footer length instead of the two header edits) and 34 edits of
manifest.json; each case loads and queries in its own forked process, whose exit status is checked
for a signal.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index, score, top_k
from sentret_core.cli.main import main
from sentret_core.errors import IndexFormatError
from sentret_core.index import validate
from sentret_core.index.reader import verify
from tests.conftest import SMALL_DOCS, build_from_texts

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "benchmarks" / "hostile_index.py"


def test_the_corruption_matrix(small_index: Index, tmp_path: Path) -> None:
    copy = tmp_path / "small"
    shutil.copytree(small_index.path, copy, ignore=shutil.ignore_patterns(".lock"))
    out = tmp_path / "cases.json"
    done = subprocess.run(
        [sys.executable, str(HOSTILE), "--index", str(copy), "--fork", "--workers", "2", "--quiet",
         "--timeout", "60", "--json", str(out)],
        capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    cases = json.loads(out.read_text())
    files = sorted(p.name for p in copy.iterdir() if p.suffix in (".npy", ".parquet"))
    assert len(files) == 28 and len(cases) == 28 * 8 + 34
    for case in cases:
        where = f"{case['file']} / {case['mutation']}: {case['outcome']} {case['message']}"
        assert case["changed"], where  # every mutation changes the file
        assert case["exit"] >= 0, where  # never a signal
        assert case["outcome"] in ("IndexFormatError", "identical"), where  # never wrong, never a traceback
        assert case["verify_caught"], where  # and `sentret verify` catches every one
        if case["outcome"] == "IndexFormatError":  # the message names the file
            assert case["file"] in case["message"], where
            if case["file"] != "manifest.json":
                assert "run `sentret verify" in case["message"], where


def _damage(file: Path, where: int = -1) -> None:
    data = bytearray(file.read_bytes())
    data[where] ^= 0xFF
    file.write_bytes(bytes(data))


def test_a_file_no_query_reads_is_caught_by_load_verify_and_at_its_first_read(tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, SMALL_DOCS)
    _damage(index.path / "sent_start.npy")  # a character offset: in bounds, read only to draw a sentence
    loaded = Index.load(index.path)  # the cheap checks cannot see a changed offset…
    top_k(score(loaded, "Picasso peace", "bm25f.v1"), 3)
    with pytest.raises(IndexFormatError, match=r"sent_start\.npy: checksum mismatch.*sentret verify"):
        _ = loaded.sent_start  # …its first read can
    with pytest.raises(IndexFormatError, match=r"sent_start\.npy: checksum mismatch"):
        Index.load(index.path, verify=True)
    assert verify(index.path) == ["sent_start.npy: checksum mismatch (the file was altered or corrupted)"]


def test_verify_catches_edits_of_the_manifest_and_of_artefacts(small_index: Index, tmp_path: Path) -> None:
    copy = tmp_path / "small"
    shutil.copytree(small_index.path, copy)
    assert verify(copy) == []
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["source"] = "elsewhere"  # changes no result, but it is not what was built
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert verify(copy) == ["manifest.json: its checksum does not match its content (it was edited or damaged)"]
    assert main(["verify", str(copy)]) == 1
    with pytest.raises(IndexFormatError, match=r"manifest\.json: its checksum does not match"):
        Index.load(copy)
    shutil.copy(small_index.path / "manifest.json", copy / "manifest.json")
    record = copy / "artefacts" / "classes" / "artefact.json"
    meta = json.loads(record.read_text())
    meta["created"] = 0
    record.write_text(json.dumps(meta))
    [problem] = verify(copy)
    assert problem.startswith("artefacts/classes:") and "does not match its own checksum" in problem


def _make_old(path: Path) -> dict:
    """The manifest as sentret wrote it before index validation: no sizes, headers, checksum or title count."""
    manifest = json.loads((path / "manifest.json").read_text())
    for key in ("sizes", "arrays", "checksum"):
        del manifest[key]
    del manifest["counts"]["title_term_occurrences"]
    (path / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return manifest


def test_an_older_index_loads_with_a_note_its_counts_are_still_checked_and_fix_upgrades_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = build_from_texts(tmp_path, SMALL_DOCS)
    expected = top_k(score(index, "Picasso peace", "lm-dir.v1"), 5)
    manifest = _make_old(index.path)
    old = Index.load(index.path)
    assert len(old.notes) == 1 and "sentret verify --fix" in old.notes[0]
    assert np.array_equal(top_k(score(old, "Picasso peace", "lm-dir.v1"), 5).scores, expected.scores)
    assert verify(index.path) == []
    # without a checksum the manifest's counts are checked against the arrays
    for key, value in (("term_occurrences", 0), ("sentences", manifest["counts"]["sentences"] + 1),
                       ("mentions", 0), ("entities", 1)):
        edited = json.loads(json.dumps(manifest))
        edited["counts"][key] = value
        (index.path / "manifest.json").write_text(json.dumps(edited))
        with pytest.raises(IndexFormatError, match="sentret verify"):
            Index.load(index.path)
        assert verify(index.path), key
        capsys.readouterr()
        assert main(["verify", "--fix", str(index.path)]) == 2
        assert "cannot fix a damaged index" in capsys.readouterr().err
    (index.path / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["verify", "--fix", str(index.path)]) == 0
    assert "now records file sizes" in capsys.readouterr().out
    fixed = json.loads((index.path / "manifest.json").read_text())
    assert validate.is_current(fixed) and fixed["checksum"] == validate.canonical_checksum(fixed)
    assert Index.load(index.path).notes == ()


def test_the_cheap_checks_name_the_file_and_the_problem(tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, SMALL_DOCS)
    indptr = index.path / "title.indptr.npy"
    original = indptr.read_bytes()
    values = np.load(indptr)
    values[0] = np.iinfo(values.dtype).max  # a huge first value: scipy would read out of bounds
    np.save(indptr, values)
    with pytest.raises(IndexFormatError, match=r"title\.indptr\.npy: checksum|title\.indptr\.npy does not start at 0"):
        Index.load(index.path)
    manifest = json.loads((index.path / "manifest.json").read_text())
    for key in ("sizes", "arrays", "checksum"):
        del manifest[key]
    (index.path / "manifest.json").write_text(json.dumps(manifest))  # only the structure can tell now
    with pytest.raises(IndexFormatError, match=r"title\.indptr\.npy does not start at 0; run `sentret verify"):
        Index.load(index.path)
    indptr.write_bytes(original)
    Index.load(index.path)
    (index.path / "title.data.npy").unlink()  # was once read as all ones
    with pytest.raises(IndexFormatError, match=r"title\.data\.npy is missing"):
        Index.load(index.path)


# --- the app: a damaged index is refused, the previous one kept ------------------------------------


def _text(value: str) -> str:
    """A message as the page shows it, without its Markdown escapes."""
    return value.replace("\\", "")


def state_script() -> None:
    import streamlit as st

    from sentret_core.ui.state import current_index

    index = current_index()
    st.session_state["shown"] = None if index is None else str(index.path)


@pytest.fixture
def two_indexes(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    good, bad = tmp_path / "good", tmp_path / "bad"
    for target in (good, bad):
        shutil.copytree(small_index.path, target)
    monkeypatch.setenv("SENTRET_INDEX", str(good))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(tmp_path))
    return good, bad


def test_the_app_refuses_a_damaged_index_and_keeps_the_previous_one(two_indexes: tuple[Path, Path]) -> None:
    good, bad = two_indexes
    _damage(bad / "sent_end.npy")  # passes the cheap checks at load; the background check fails it
    app = AppTest.from_function(state_script, default_timeout=60).run()
    assert not app.exception and not app.error
    assert app.session_state["shown"] == str(good)
    app.session_state["index_path"] = str(bad)
    app.run()
    assert not app.exception
    [error] = [_text(e.value) for e in app.error]
    assert f"The index {bad} is damaged and is not used" in error and "sent_end.npy: checksum mismatch" in error
    assert app.session_state["shown"] == str(good) and app.session_state["index_path"] == str(good)
    assert any(f"Keeping the index {good} open" in _text(i.value) for i in app.info)
    # one the cheap checks refuse at load is refused the same way
    worse = good.parent / "worse"
    shutil.copytree(good, worse)
    (worse / "X.data.npy").write_bytes(b"")
    app.session_state["index_path"] = str(worse)
    app.run()
    assert any("X.data.npy is 0 bytes" in _text(e.value) for e in app.error)
    assert app.session_state["shown"] == str(good)


def test_the_app_says_a_check_is_running_and_acts_on_its_result(
    two_indexes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.ui import index_check

    good, bad = two_indexes
    release = threading.Event()

    def slow_verify(path: Path) -> list[str]:
        release.wait(30)
        return ["X.data.npy: checksum mismatch (the file was altered or corrupted)"] if Path(path) == bad else []

    monkeypatch.setattr(index_check, "verify", slow_verify)
    monkeypatch.setattr(index_check, "WAIT", 0.0)
    release.set()  # the good one passes at once
    app = AppTest.from_function(state_script, default_timeout=60).run()
    index_check.check(good).done.wait(10)
    app.run()
    assert app.session_state["shown"] == str(good) and not app.error
    release.clear()
    app.session_state["index_path"] = str(bad)
    app.run()  # in use while its check runs, with a note
    assert app.session_state["shown"] == str(bad) and not app.error
    assert any("Checking every file of the index" in _text(c.value) for c in app.caption)
    release.set()
    index_check.check(bad).done.wait(10)
    app.run()
    assert any(f"The index {bad} is damaged" in _text(e.value) for e in app.error)
    assert app.session_state["shown"] == str(good)
