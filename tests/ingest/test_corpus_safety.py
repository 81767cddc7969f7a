"""Corpus readers on hostile or careless input: UTF-16, broken CSV quoting, records without text, symlinks."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from sentret_core.errors import CorpusError
from sentret_core.ingest import corpus
from sentret_core.ingest.corpus import Document, read_corpus

TEXTS = {"a.txt": "# Café\n\nPicasso painted Guernica.\n", "b.txt": "Franco ruled Spain.\n"}
DOCS = [Document("a.txt", "Café", "Picasso painted Guernica."), Document("b.txt", "Franco ruled Spain.",
        "Franco ruled Spain.")]
JSONL = '{"id": "x", "title": "Ünïcode", "text": "Lennon sang about peace."}\n'
CSV = 'id,title,text\n1,Ünïcode,"Lennon sang about peace, and religion."\n'

# (encoding asked for, BOM written, codec of the bytes)
UTF16 = [
    ("utf-16", codecs.BOM_UTF16_LE, "utf-16-le"),
    ("utf-16", codecs.BOM_UTF16_BE, "utf-16-be"),
    ("utf-16", b"", "utf-16-le"),
    ("utf-16", b"", "utf-16-be"),
    ("utf-16-le", b"", "utf-16-le"),
    ("utf-16-le", codecs.BOM_UTF16_LE, "utf-16-le"),
    ("UTF-16BE", codecs.BOM_UTF16_BE, "utf-16-be"),
]


@pytest.mark.parametrize(("encoding", "bom", "codec"), UTF16,
                         ids=[f"{e}-{'bom' if b else 'no-bom'}-{c[-2:]}" for e, b, c in UTF16])
def test_utf16_is_read_in_every_format_when_asked_for(tmp_path: Path, encoding: str, bom: bytes, codec: str) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in TEXTS.items():
        (folder / name).write_bytes(bom + text.encode(codec))
    assert list(read_corpus(folder, encoding=encoding)) == DOCS
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_bytes(bom + JSONL.encode(codec))
    assert list(read_corpus(jsonl, encoding=encoding)) == [Document("x", "Ünïcode", "Lennon sang about peace.")]
    table = tmp_path / "c.csv"
    table.write_bytes(bom + CSV.encode(codec))
    [doc] = read_corpus(table, encoding=encoding)
    assert doc == Document("1", "Ünïcode", "Lennon sang about peace, and religion.")


def test_utf16_read_as_utf8_says_which_encoding_to_pass(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + "Picasso painted Guernica.".encode("utf-16-le"))
    with pytest.raises(CorpusError, match=r"a\.txt: UTF-16 text .*pass --encoding utf-16"):
        list(read_corpus(path))


def test_binary_stays_binary_and_a_wrong_bom_is_named(tmp_path: Path) -> None:
    png = tmp_path / "image.txt"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00")
    with pytest.raises(CorpusError, match=r"image\.txt: looks like a binary file"):
        list(read_corpus(png, encoding="utf-16"))
    other = tmp_path / "other.txt"
    other.write_bytes(codecs.BOM_UTF16_BE + "Text.".encode("utf-16-be"))
    with pytest.raises(CorpusError, match=r"other\.txt: its byte-order mark says the other byte order"):
        list(read_corpus(other, encoding="utf-16-le"))


def test_a_utf8_bom_does_not_hide_the_csv_header(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes(codecs.BOM_UTF8 + CSV.encode("utf-8"))
    assert [d.id for d in read_corpus(path)] == ["1"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # the quote opened on line 3 swallows lines 4 and 5: two records silently merged before
        ('id,title,text\n1,One,First.\n2,Two,"Unclosed text\n3,Three,Third.\n4,Four,Fourth.\n',
         r"line 3: a quoted field opened in this record is never closed"),
        ('id,title,text\n1,One,"Unclosed text\n2,Two,"Second."\n', r"line 2: malformed CSV record"),
        ('id,title,text\n1,One,First.\n\n3,Three,Third.,extra\n', r"line 4: 4 fields where the header has 3"),
    ],
    ids=["quote-open-to-the-end", "quote-closed-later", "extra-field"],
)
def test_broken_csv_quoting_is_an_error_naming_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "broken.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CorpusError, match=rf"broken\.csv, {message}"):
        list(read_corpus(path))


def test_records_without_text_are_counted_and_named(tmp_path: Path) -> None:
    table = tmp_path / "c.csv"
    table.write_text('id,title,text\n1,One,First.\n2,Two,\n3,Three,"  "\n\n5,Five,Fifth.\n', encoding="utf-8")
    skipped = corpus.Skipped()
    assert [d.id for d in read_corpus(table, skipped=skipped)] == ["1", "5"]
    assert skipped.notes(table) == [f"{table}: skipped 2 records without text (line 3, line 4)"]

    lines = [{"id": i, "text": "" if i % 2 else f"Text {i}."} for i in range(14)]
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    skipped = corpus.Skipped()
    assert len(list(read_corpus(jsonl, skipped=skipped))) == 7
    assert skipped.notes("c.jsonl") == [
        "c.jsonl: skipped 7 records without text (line 2, line 4, line 6, line 8, line 10 and 2 more)"
    ]

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "blank.txt").write_text(" \n\n")
    (folder / "heading-only.md").write_text("# Just a title\n")
    (folder / "real.txt").write_text("Real text.")
    skipped = corpus.Skipped()
    assert [d.id for d in read_corpus(folder, skipped=skipped)] == ["real.txt"]
    assert skipped.without_text == ["blank.txt", "heading-only.md"]

    empty = tmp_path / "empty.csv"
    empty.write_text("id,title,text\n1,One,\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"no documents with text found \(skipped 1 record without text \(line 2\)\)"):
        list(read_corpus(empty))


def test_links_leading_outside_the_folder_are_not_followed_and_are_named(tmp_path: Path) -> None:
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.txt").write_text("The password is swordfish.")
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "real.txt").write_text("Picasso painted Guernica.")
    (folder / "secret.txt").symlink_to(outside / "secret.txt")
    (folder / "sub" / "escape").symlink_to(outside, target_is_directory=True)
    (folder / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (folder / "alias.txt").symlink_to(folder / "sub" / "real.txt")  # inside: read
    (folder / "loop").symlink_to(folder, target_is_directory=True)  # inside: never entered
    skipped = corpus.Skipped()
    docs = list(read_corpus(folder, skipped=skipped))
    assert [d.id for d in docs] == ["alias.txt", "sub/real.txt"]
    assert all("swordfish" not in d.text for d in docs)
    assert sorted(skipped.links) == ["dangling.md", "secret.txt", "sub/escape"]
    assert skipped.notes(folder) == [
        f"{folder}: did not follow 3 links leading outside the folder (dangling.md, secret.txt, sub/escape)"
    ]
    only_links = tmp_path / "only-links"
    only_links.mkdir()
    (only_links / "secret.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(CorpusError, match=r"no \.txt or \.md files in this folder \(did not follow 1 link"):
        list(read_corpus(only_links))
