"""Hostile command-line and corpus input gets one clear message, at once.

Before: ``--encoding nope`` on the demo started the whole parse, ``hex``/``rot13`` gave a LookupError
traceback, a named pipe with no writer blocked forever, deep JSON a RecursionError, a 5,000-digit id a
ValueError, lone surrogates and non-UTF-8 file names a UnicodeEncodeError, symlink loops a RuntimeError,
a NUL byte after the first 8 KiB of a CSV was indexed, absurd ``--k``/``--top``/``--remove ''`` were
accepted, and ``--address ''`` started a Ray of its own.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.cli import main as cli
from sentret_core.errors import CorpusError, SentretError
from sentret_core.ingest import textfile
from sentret_core.ingest.corpus import read_corpus


def run(argv: Sequence[object], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main([str(a) for a in argv])
    return code, capsys.readouterr().err


def one_message(code: int, err: str) -> str:
    assert code == 2 and "Traceback" not in err and err.count("sentret: error:") == 1, err
    return err


@pytest.mark.parametrize("encoding", ["nope", "hex", "rot13", ""])
def test_an_encoding_that_is_not_a_text_encoding_is_refused_before_any_work(
    encoding: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    code, err = run(["parse", "demo", "--out", tmp_path / "shards", "--encoding", encoding], capsys)
    assert "encoding" in one_message(code, err)
    assert time.monotonic() - started < 5 and not (tmp_path / "shards").exists()  # no model was loaded


def test_a_named_pipe_nothing_writes_to_is_refused_after_a_bounded_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(textfile, "PIPE_WAIT_S", 0.2)
    pipe = tmp_path / "docs.jsonl"
    os.mkfifo(pipe)
    with pytest.raises(CorpusError, match="named pipe that nothing wrote to"):
        list(read_corpus(pipe))


def test_a_named_pipe_with_a_writer_is_read(tmp_path: Path) -> None:
    pipe = tmp_path / "docs.jsonl"
    os.mkfifo(pipe)

    def write() -> None:
        with open(pipe, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"id": "a", "text": "Picasso painted Guernica."}) + "\n")

    writer = threading.Thread(target=write)
    writer.start()
    assert [d.id for d in read_corpus(pipe)] == ["a"]
    writer.join(timeout=5)


def test_a_device_is_not_a_corpus(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="not a file"):
        list(read_corpus("/dev/zero", fmt="jsonl"))


@pytest.mark.parametrize(
    ("line", "message"),
    [("[" * 100_000 + "]" * 100_000, "nested too deeply"),
     ('{"id": ' + "9" * 5000 + ', "text": "x"}', "number too long"),
     ('{"id": {"a": 1}, "text": "x"}', '"id" must be a string or a number')],
    ids=["deep", "5000-digit-id", "object-id"],
)
def test_hostile_jsonl_lines_are_refused_with_their_line_number(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "ok", "text": "fine"}\n' + line + "\n", "utf-8")
    with pytest.raises(CorpusError, match=f"line 2: .*{message}"):
        list(read_corpus(path))


def test_lone_surrogates_become_replacement_characters_and_pairs_are_joined(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    # JSON escapes make lone surrogates ("\ud800") and a pair written as two escapes ("\ud83d\ude00" = 😀)
    path.write_text('{"id": "a\\ud800", "title": "t\\udfff", "text": "x \\ud83d\\ude00 y \\udc00"}\n', "utf-8")
    [doc] = read_corpus(path)
    assert (doc.id, doc.title, doc.text) == ("a\ufffd", "t\ufffd", "x \U0001f600 y \ufffd")
    for field in doc[:3]:
        field.encode("utf-8")  # what Parquet and the terminal need


def test_a_file_name_that_is_not_utf8_gets_an_id_that_is(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.txt"), "w", encoding="utf-8") as handle:
        handle.write("Picasso lived in Paris.\n")
    [doc] = read_corpus(folder)
    assert doc.id == "caf\\xe9.txt"


def test_symlink_loops_are_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "real.txt").write_text("Picasso lived in Paris.\n", "utf-8")
    (folder / "a.txt").symlink_to(folder / "b.txt")
    (folder / "b.txt").symlink_to(folder / "a.txt")
    assert [d.id for d in read_corpus(folder)] == ["real.txt"]
    with pytest.raises(CorpusError, match="no such file or folder"):
        list(read_corpus(folder / "a.txt"))


def test_a_nul_byte_after_the_first_block_of_a_csv_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "docs.csv"
    rows = "".join(f"{i},title {i},Picasso painted picture number {i}.\n" for i in range(400))  # > 8 KiB
    assert len(rows) > textfile.SNIFF_BYTES
    path.write_text("id,title,text\n" + rows + "401,bad,a\x00b\n", "utf-8")
    with pytest.raises(CorpusError, match="line 402: holds a NUL character"):
        list(read_corpus(path))


@pytest.mark.parametrize("source", [None, "", 42])
def test_read_corpus_refuses_a_source_that_is_no_path(source: object) -> None:
    with pytest.raises(CorpusError, match="the source must be"):
        list(read_corpus(source))  # type: ignore[arg-type]


def test_absurd_numbers_and_names_on_the_command_line(small_index: Index, capsys: pytest.CaptureFixture[str]) -> None:
    index = small_index.path
    assert "--k must be" in one_message(*run(["search", index, "picasso", "--k", 10**23], capsys))
    assert "--top must be" in one_message(*run(["info", index, "--top", -1], capsys))
    assert "artefact name ''" in one_message(*run(["artefacts", index, "--remove", ""], capsys))


def test_an_empty_ray_address_is_refused_before_ray_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["parse", "demo", "--out", tmp_path / "s", "--engine", "ray", "--address", ""], capsys)
    assert "--address '' is empty" in one_message(code, err)


def test_a_library_error_names_the_python_argument_and_the_cli_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sentret_core.ingest.engine import Engine

    with pytest.raises(SentretError, match=r"^n_process=0 and batch_size=8: each must be at least 1$") as raised:
        Engine(n_process=0, batch_size=8).check()
    assert raised.value.arguments == ("n_process", "batch_size")
    code, err = run(["parse", "demo", "--out", tmp_path / "s", "--n-process", 0, "--batch-size", 8], capsys)
    assert one_message(code, err).strip().endswith("--n-process 0 and --batch-size 8: each must be at least 1")
    assert not (tmp_path / "s").exists()


def test_a_ray_client_address_is_refused_before_ray_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["parse", "demo", "--out", tmp_path / "s", "--engine", "ray", "--address", "ray://head:10001"],
                    capsys)
    assert "sentret does not go through Ray Client (ray://)" in one_message(code, err)
    assert not (tmp_path / "s").exists()


def test_a_ray_address_where_nothing_listens_fails_at_once() -> None:
    from sentret_core.ingest.ray_engine import _check_reachable

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(SentretError, match="cannot reach the Ray cluster"):
        _check_reachable(f"127.0.0.1:{port}")
    assert time.monotonic() - started < 6
    with pytest.raises(SentretError, match="expected HOST:PORT"):
        _check_reachable("no-port-here")


def test_a_model_that_is_an_installed_package_but_no_spacy_pipeline_is_refused_before_loading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(["parse", "demo", "--out", tmp_path / "s", "--model", "numpy"], capsys)
    message = one_message(code, err)
    assert "--model numpy: spaCy model 'numpy' is an installed package but not a spaCy pipeline" in message
    assert not (tmp_path / "s").exists()
