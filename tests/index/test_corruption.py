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
from sentret_core.models.arrays.postings import postings
from sentret_core.support.engine import support
from tests.conftest import SMALL_DOCS, build_from_texts
from tests.index.conftest import BLOCK, hashed_blocks, term_in_block
from tests.index.test_resealed import reseal_index

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


# --- block digests: the postings are checked a block at a time, at their first read ------------------------


def test_the_build_records_block_digests_and_verify_checks_them(blocked: Path, tmp_path: Path) -> None:
    manifest = json.loads((blocked / "manifest.json").read_text())
    assert manifest["blocks"]["bytes"] == BLOCK
    size = (blocked / "XT.indices.npy").stat().st_size
    assert len(manifest["blocks"]["sha256"]["XT.indices.npy"]) == -(-size // BLOCK) > 5
    assert verify(blocked) == []
    copy = tmp_path / "idx"
    shutil.copytree(blocked, copy)
    # a manifest resealed with the whole file's sha256 right and one block's wrong
    reseal_index(copy, lambda m: m["blocks"]["sha256"]["XT.data.npy"].__setitem__(2, "0" * 64), blocks=False)
    assert verify(copy) == ["XT.data.npy: the checksum of its block 3 in manifest.json does not match the file"]
    post = postings(Index.load(copy))
    with pytest.raises(IndexFormatError, match=r"XT\.data\.npy: checksum mismatch \(block 3 of"):
        post(term_in_block(Index.load(copy), 2)[0])


def test_a_query_hashes_only_the_blocks_its_postings_read(blocked: Path) -> None:
    index = Index.load(blocked)
    term = term_in_block(index, 3)[0]
    assert hashed_blocks(index) == (0, hashed_blocks(index)[1])
    rows, _ = postings(index)(term)
    assert len(rows) > 1 and hashed_blocks(index)[0] == 1  # its one block of XT.indices, no other
    assert hashed_blocks(index, "XT.data.npy")[0] == 1
    postings(index)(term)
    assert hashed_blocks(index)[0] == 1  # each block is checked once
    fresh = Index.load(blocked)
    found = top_k(score(fresh, [fresh.vocab[term]], "tfisf.v1"), 5)
    hashed, total = hashed_blocks(fresh)
    assert len(found.ids) > 0 and hashed < total / 2  # a model's query too (it reads a few other terms' blocks)
    _ = fresh.XT  # a whole read checks the rest of the file, never a block again
    assert hashed_blocks(fresh) == (total, total)
    kernel = Index.load(blocked)  # a compiled scorer takes the arrays after the terms' slices are checked
    indptr, rows, vals = postings(kernel).arrays(np.array([term]))
    assert len(vals) == len(rows)
    assert hashed_blocks(kernel)[0] == 1 and len(rows) == int(indptr[-1])


def test_a_searchs_posting_blocks_are_checked_up_front_two_files_at_once(
    blocked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """search() checks its terms' blocks of XT.indices and XT.data before scoring, those of XT.data on another
    thread, each block once and no other; a damaged one raises there, as any read of it does."""
    from sentret_core.index import blocks
    from sentret_core.models import search

    hashed_on: dict[str, set[str]] = {}
    digests = blocks.block_digests

    def recorded(path: Path, block: int, only: list[int] | None = None) -> list[str]:
        hashed_on.setdefault(path.name, set()).add(threading.current_thread().name)
        return digests(path, block, only)

    monkeypatch.setattr(blocks, "block_digests", recorded)
    index = Index.load(blocked)
    first, second = term_in_block(index, 3)[0], term_in_block(index, 5, last=True)[0]
    want = top_k(score(Index.load(blocked), [index.vocab[first], index.vocab[second]], "bm25.v1"), 5)
    hashed_on.clear()
    got = search(index, [index.vocab[first], index.vocab[second]], "bm25.v1", 5)
    assert np.array_equal(got.ids, want.ids) and np.array_equal(got.scores, want.scores)
    assert hashed_blocks(index)[0] == hashed_blocks(index, "XT.data.npy")[0] == 2  # blocks 3 and 5 of each, once
    main_thread = threading.current_thread().name
    assert hashed_on["XT.indices.npy"] == {main_thread} and main_thread not in hashed_on["XT.data.npy"]
    search(index, [index.vocab[first]], "lm-2si.v1", 5)
    assert hashed_blocks(index)[0] == 2  # checked already: not again

    copy = tmp_path / "idx"
    shutil.copytree(blocked, copy)
    _damage(copy / "XT.data.npy", sum(term_in_block(index, 5, last=True)[1:]) // 2)
    damaged = Index.load(copy)
    for model in ("bm25f.v1", "lm-2si.v1", "tfisf.v1"):
        with pytest.raises(IndexFormatError, match=r"XT\.data\.npy: checksum mismatch \(block 6 of"):
            search(damaged, [index.vocab[first], index.vocab[second]], model, 5)


@pytest.mark.parametrize("file", ["XT.indices.npy", "XT.data.npy"])
def test_a_flipped_byte_in_one_block_of_the_postings_is_an_error_wherever_it_is_read(
    blocked: Path, tmp_path: Path, file: str
) -> None:
    copy = tmp_path / "idx"
    shutil.copytree(blocked, copy)
    index = Index.load(copy)
    damaged, lo, hi = term_in_block(index, 2)
    elsewhere = term_in_block(index, 5, last=True)[0]
    want = postings(Index.load(blocked))(elsewhere)
    _damage(copy / file, (lo + hi) // 2)
    index = Index.load(copy)  # the cheap checks cannot see a changed value
    got = postings(index)(elsewhere)  # another block: served, unchanged
    assert all(np.array_equal(a, b) for a, b in zip(got, want))
    for model in ("bm25.v1", "lm-2si.v1", "tfisf.v1"):
        with pytest.raises(IndexFormatError, match=rf"{file}: checksum mismatch \(block 3 of .*sentret verify"):
            score(index, [index.vocab[damaged], index.vocab[elsewhere]], model)
    with pytest.raises(IndexFormatError, match=rf"{file}: checksum mismatch"):
        _ = Index.load(copy).XT  # read whole
    assert verify(copy) == [f"{file}: checksum mismatch (the file was altered or corrupted)"]


def test_a_support_sentence_reads_only_its_blocks_of_the_term_sequences(blocked: Path, tmp_path: Path) -> None:
    """A support sentence's terms and character offsets are read a sentence at a time (``Index.occurrences``):
    the first request hashed the three files whole, 21 s at 75M. A damaged block is still never served."""
    index = Index.load(blocked)
    files = ("seq_terms.npy", "seq_char_start.npy", "seq_char_end.npy")
    total = hashed_blocks(index, files[0])[1]
    assert total > 5
    offset = validate.npy_header(blocked, files[1])[2]
    starts = offset + np.asarray(index.seq_indptr, dtype=np.int64) * np.asarray(index.array("seq_char_start")).itemsize
    fresh = Index.load(blocked)
    sentence = int(np.flatnonzero(starts[:-1] // BLOCK == 3)[0])
    want = np.asarray(fresh.occurrences("seq_char_start", sentence)).copy()
    assert [hashed_blocks(fresh, f)[0] for f in files[1:2]] == [1]
    assert len(want) == int(fresh.seq_indptr[sentence + 1] - fresh.seq_indptr[sentence]) > 0
    copy = tmp_path / "idx"
    shutil.copytree(blocked, copy)
    _damage(copy / files[1], int(starts[sentence]))
    damaged = Index.load(copy)
    elsewhere = int(np.flatnonzero(starts[:-1] // BLOCK == 5)[0])
    assert len(damaged.occurrences("seq_char_start", elsewhere)) > 0  # another block: served
    with pytest.raises(IndexFormatError, match=r"seq_char_start\.npy: checksum mismatch \(block 4 of"):
        damaged.occurrences("seq_char_start", sentence)
    assert np.array_equal(Index.load(blocked).occurrences("seq_char_start", sentence), want)
    requested = Index.load(blocked)
    frequent = int(np.argmax(np.diff(np.asarray(requested.array("XT.indptr")))))
    found = support(requested, [requested.vocab[frequent]], k=5, top_entities=2, per_entity=1)
    assert any(e.sentences for e in found.entities)
    assert all(0 < hashed_blocks(requested, f)[0] < total / 2 for f in files)


def test_a_large_term_sequence_is_checked_in_the_background_and_a_damaged_block_still_refused(
    blocked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.index import reader

    monkeypatch.setattr(reader, "CHECK_REST_FROM", 0)  # every file counts as large
    copy = tmp_path / "idx"
    shutil.copytree(blocked, copy)
    index = Index.load(copy)
    offset = validate.npy_header(copy, "seq_terms.npy")[2]
    starts = offset + np.asarray(index.seq_indptr, dtype=np.int64) * np.asarray(index.array("seq_terms")).itemsize
    damaged_sentence = int(np.flatnonzero(starts[:-1] // BLOCK == 4)[0])
    _damage(copy / "seq_terms.npy", int(starts[damaged_sentence]))
    index = Index.load(copy)
    index.occurrences("seq_terms", 0)  # block 1: checked now, the rest in the background
    background = index.slices("seq_terms")._background
    assert background is not None
    background.join(30)
    hashed, total = hashed_blocks(index, "seq_terms.npy")
    assert hashed == 5 < total  # it stopped at the damaged block (5th), which is never served
    with pytest.raises(IndexFormatError, match=r"seq_terms\.npy: checksum mismatch \(block 5 of"):
        index.occurrences("seq_terms", damaged_sentence)
    sound = Index.load(blocked)
    sound.occurrences("seq_terms", 0)
    sound.slices("seq_terms")._background.join(30)  # type: ignore[union-attr]
    assert hashed_blocks(sound, "seq_terms.npy") == (total, total)


def test_an_index_without_block_digests_checks_whole_files_and_needs_nothing(
    blocked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "idx"
    shutil.copytree(blocked, copy)
    reseal_index(copy, lambda m: m.pop("blocks"))  # as sentret wrote it before block digests
    index = Index.load(copy)
    term = index.vocab[term_in_block(index, 2)[0]]
    assert index.notes == () and index.file_blocks("XT.indices.npy") is None
    want = top_k(score(Index.load(blocked), [term], "bm25.v1"), 5)
    got = top_k(score(index, [term], "bm25.v1"), 5)
    assert np.array_equal(got.ids, want.ids) and np.array_equal(got.scores, want.scores)
    capsys.readouterr()
    assert main(["verify", str(copy)]) == 0 and "note" not in capsys.readouterr().err
    _damage(copy / "XT.data.npy", BLOCK * 5 + 7)  # far from the term's postings: the whole file is hashed
    with pytest.raises(IndexFormatError, match=r"XT\.data\.npy: checksum mismatch \(the file was altered"):
        score(Index.load(copy), [term], "bm25.v1")


def test_fix_adds_block_digests_to_an_index_without_them(
    blocked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentret_core.index import upgrade

    copy = tmp_path / "idx"
    shutil.copytree(blocked, copy)
    reseal_index(copy, lambda m: m.pop("blocks"))
    monkeypatch.setattr(upgrade, "BLOCK_BYTES", BLOCK)
    capsys.readouterr()
    assert main(["verify", "--fix", str(copy)]) == 0
    assert "now records file sizes, array headers, block checksums" in capsys.readouterr().out
    fixed, built = (json.loads((path / "manifest.json").read_text()) for path in (copy, blocked))
    assert fixed["blocks"] == built["blocks"] and validate.is_current(fixed)
    assert main(["verify", "--fix", str(copy)]) == 0 and "now records" not in capsys.readouterr().out


def test_a_scattered_array_is_read_at_random_and_its_checks_leave_the_page_cache_as_it_was(
    blocked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An array read a few values at a time (a sentence's terms): its mapping is marked for random reads (no
    read-around: the ``rr`` flag of its mapping in /proc/self/smaps), each block's values are checked on a copy
    read from the file, not through the mapping, and the page cache is told to drop the blocks checked."""
    from sentret_core.index import reader, sliced

    monkeypatch.setattr(reader, "CHECK_REST_FROM", 0)
    dropped: list[tuple[int, int, int]] = []
    real = sliced.os.posix_fadvise
    monkeypatch.setattr(sliced.os, "posix_fadvise",
                        lambda fd, lo, n, advice: dropped.append((lo, n, advice)) or real(fd, lo, n, advice))
    index = Index.load(blocked)
    parts = index.slices("seq_terms")
    checked: list[np.ndarray] = []
    values = parts.values
    parts.values = lambda part: checked.append(part) or values(part)  # type: ignore[method-assign]
    sentence = index.N // 2
    want = np.array(index.array("seq_terms")[int(index.seq_indptr[sentence]) : int(index.seq_indptr[sentence + 1])])
    assert np.array_equal(index.occurrences("seq_terms", sentence), want)
    assert parts._background is not None
    parts._background.join(30)
    assert parts.scattered and parts.ready.all()
    assert all(isinstance(part.base, bytes) for part in checked)  # copies read from the file
    every = np.concatenate(checked)
    assert np.array_equal(np.sort(every), np.sort(np.asarray(index.array("seq_terms"))))  # each value, once
    blocks = sorted({lo // BLOCK for lo, _, advice in dropped if advice == sliced.os.POSIX_FADV_DONTNEED})
    assert blocks == list(range(len(parts.ready)))
    if Path("/proc/self/smaps").exists():
        assert " rr" in mapping_flags(parts.array.ctypes.data)


def mapping_flags(address: int) -> str:
    """The VmFlags line of the mapping of this process that holds ``address`` (/proc/self/smaps)."""
    holds = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(" ", 1)[0]
        if "-" in head and ":" not in head:  # a mapping's first line: its address range
            lo, hi = (int(part, 16) for part in head.split("-"))
            holds = lo <= address < hi
        elif holds and line.startswith("VmFlags:"):
            return line
    raise AssertionError(f"no mapping holds {address:#x}")
