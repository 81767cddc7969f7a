"""The command line's conventions for a corpus: ``-`` is standard input (and process substitution works),
gzip files are read decompressed whatever their name, and ``--id-field/--text-field/--title-field`` name a
JSONL key or CSV column of one's own."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.errors import CorpusError, SentretError
from sentret_core.evaluation.topics_file import read_topics
from sentret_core.ingest.corpus import Fields, read_corpus

DOCS = [{"doc": "guernica", "name": "Guernica", "body": "Pablo Picasso painted Guernica in 1937."},
        {"doc": "war", "name": "Spanish Civil War", "body": "The Spanish Civil War ended in 1939."}]
OWN = Fields(id="doc", text="body", title="name")


def jsonl(records: list[dict[str, str]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def documents(path: Path | str, fmt: str = "auto", fields: Fields | None = OWN) -> list[tuple[str, str, str]]:
    return [(d.id, d.title, d.text) for d in read_corpus(path, fmt, fields=fields)]


EXPECTED = [("guernica", "Guernica", DOCS[0]["body"]), ("war", "Spanish Civil War", DOCS[1]["body"])]


def test_gzip_files_are_read_decompressed(tmp_path: Path) -> None:
    (tmp_path / "docs.jsonl.gz").write_bytes(gzip.compress(jsonl(DOCS)))
    assert documents(tmp_path / "docs.jsonl.gz") == EXPECTED  # the format from the name under .gz
    (tmp_path / "docs.csv").write_text("doc,name,body\n" + "".join(f"{d['doc']},{d['name']},{d['body']}\n"
                                                                   for d in DOCS), "utf-8")
    (tmp_path / "docs.csv.gz").write_bytes(gzip.compress((tmp_path / "docs.csv").read_bytes()))
    assert documents(tmp_path / "docs.csv.gz") == documents(tmp_path / "docs.csv") == EXPECTED
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.md.gz").write_bytes(gzip.compress(b"# Guernica\n\nPicasso painted it.\n"))
    assert documents(folder, fields=None) == [("a.md.gz", "Guernica", "Picasso painted it.")]
    (tmp_path / "cut.jsonl.gz").write_bytes(gzip.compress(jsonl(DOCS))[:-12])
    with pytest.raises(CorpusError, match="a damaged or cut-short gzip file"):
        documents(tmp_path / "cut.jsonl.gz")


def test_own_keys_and_columns_are_read_and_a_missing_one_is_named(tmp_path: Path) -> None:
    (tmp_path / "docs.jsonl").write_bytes(jsonl(DOCS))
    assert documents(tmp_path / "docs.jsonl") == EXPECTED
    with pytest.raises(CorpusError, match=r'line 1: the object has no "text_en" \(--text-field\) string'):
        documents(tmp_path / "docs.jsonl", fields=Fields(text="text_en"))
    with pytest.raises(CorpusError, match=r'line 1: the object has no "uid" \(--id-field\)'):
        documents(tmp_path / "docs.jsonl", fields=Fields(id="uid", text="body"))
    (tmp_path / "docs.csv").write_text("doc,name,body\nguernica,Guernica,Picasso.\n", "utf-8")
    with pytest.raises(CorpusError, match=r"the CSV header has no column 'heading' \(--title-field\)"):
        documents(tmp_path / "docs.csv", fields=Fields(text="body", title="heading"))
    with pytest.raises(CorpusError, match="a text file has none"):
        documents(tmp_path / "docs.csv", "txt", fields=Fields(text="body"))


def python(code: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", code, *args], input=stdin, capture_output=True, timeout=120)


READ = ("import sys; from sentret_core.ingest.corpus import Fields, read_corpus\n"
        "print([d.id for d in read_corpus(sys.argv[1], sys.argv[2], fields=Fields('doc', 'body', 'name'))])")


def test_standard_input_is_a_corpus_and_a_topics_file() -> None:
    done = python(READ, "-", "auto", stdin=jsonl(DOCS))  # JSONL unless --format says otherwise
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == "['guernica', 'war']"
    done = python(READ, "-", "auto", stdin=gzip.compress(jsonl(DOCS)))  # gzip on standard input too
    assert done.stdout.decode().strip() == "['guernica', 'war']", done.stderr
    text = ("import sys; from sentret_core.ingest.corpus import read_corpus\n"
            "print([(d.id, d.title) for d in read_corpus('-', 'txt')])")
    done = python(text, stdin=b"# Guernica\n\nPicasso painted it.\n")
    assert done.stdout.decode().strip() == "[('stdin', 'Guernica')]", done.stderr
    topics = "from sentret_core.evaluation.topics_file import read_topics; print(read_topics('-'))"
    done = python(topics, stdin=b"t1\tpicasso peace\n")
    assert "BatchTopic(id='t1', query='picasso peace', entity=None)" in done.stdout.decode(), done.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash for process substitution")
def test_process_substitution_is_a_corpus(tmp_path: Path) -> None:
    (tmp_path / "docs.jsonl.gz").write_bytes(gzip.compress(jsonl(DOCS)))
    script = f'{sys.executable} -c "$1" <(zcat {tmp_path / "docs.jsonl.gz"}) jsonl'
    done = subprocess.run(["bash", "-c", script, "bash", READ], capture_output=True, timeout=120)
    assert done.stdout.decode().strip() == "['guernica', 'war']", done.stderr


def test_a_topics_file_may_be_gzipped(tmp_path: Path) -> None:
    (tmp_path / "t.tsv.gz").write_bytes(gzip.compress(b"t1\tpicasso\n"))
    assert [t.id for t in read_topics(tmp_path / "t.tsv.gz")] == ["t1"]
    (tmp_path / "bad.tsv.gz").write_bytes(b"\x1f\x8bnot gzip at all")
    with pytest.raises(SentretError, match="cannot read"):
        read_topics(tmp_path / "bad.tsv.gz")


def test_sentret_index_reads_a_gzipped_stream_with_its_own_keys(tmp_path: Path) -> None:
    out = tmp_path / "idx"
    done = subprocess.run(
        [sys.executable, "-m", "sentret_core", "index", "-", "--out", str(out), "--n-process", "1",
         "--id-field", "doc", "--text-field", "body", "--title-field", "name"],
        input=gzip.compress(jsonl(DOCS)), capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    index = Index.load(out)
    assert list(index.documents["id"]) == ["guernica", "war"]
    assert list(index.documents["title"]) == ["Guernica", "Spanish Civil War"]
