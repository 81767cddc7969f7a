"""Parsed shards: the spaCy pass's output as Parquet files, so an index can be built (and rebuilt) without it.

A shards folder holds ``part-NNNNN.parquet`` files and ``manifest.json``. A shard has one row per
document, in source order (``ordinal``), with its sentences nested (:data:`SCHEMA`): their text and
offsets, their terms with token and character positions, and their entity mentions. The manifest
records the pipeline that parsed them (an index is only built from shards of one pipeline), what
each shard holds (counts the build sizes its arrays by) and its sha256, and a checksum of itself.
Both engines (local ``nlp.pipe`` and Ray) write this same format.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sentret_core.defaults import SHARD_DOCUMENTS
from sentret_core.errors import SentretError
from sentret_core.index.safe_files import UnsafeFile, member, member_name_problem, read_json, spacy_model_problem
from sentret_core.index.validate import canonical_checksum, sha256_of, sha256_problem
from sentret_core.ingest.nlp import ParsedDocument

FORMAT = "sentret-shards"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"

MENTION = pa.struct([
    ("text", pa.string()), ("label", pa.string()),
    ("token_start", pa.int32()), ("token_end", pa.int32()), ("char_start", pa.int32()), ("char_end", pa.int32()),
])
SENTENCE = pa.struct([
    ("text", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
    ("terms", pa.list_(pa.string())), ("term_tokens", pa.list_(pa.int32())),
    ("term_char_start", pa.list_(pa.int32())), ("term_char_end", pa.list_(pa.int32())),
    ("mentions", pa.list_(MENTION)),
])
SCHEMA = pa.schema([
    ("ordinal", pa.int64()), ("id", pa.string()), ("title", pa.string()), ("n_words", pa.int64()),
    ("title_terms", pa.list_(pa.string())), ("sentences", pa.list_(SENTENCE)),
])
# what the build needs to know of each shard before reading it (array sizes)
SHARD_COUNTS = ("documents", "indexed_documents", "sentences", "term_occurrences", "title_term_occurrences",
                "mentions", "words")


def to_table(documents: Iterable[ParsedDocument], first_ordinal: int) -> pa.Table:
    """Parsed documents as one shard's rows."""
    rows = [
        {
            "ordinal": first_ordinal + i,
            "id": doc.id,
            "title": doc.title,
            "n_words": doc.n_words,
            "title_terms": doc.title_terms,
            "sentences": [
                {
                    "text": s.text, "start": s.start, "end": s.end, "terms": s.terms, "term_tokens": s.term_tokens,
                    "term_char_start": [a for a, _ in s.term_chars], "term_char_end": [b for _, b in s.term_chars],
                    "mentions": [m._asdict() for m in s.mentions],
                }
                for s in doc.sentences
            ],
        }
        for i, doc in enumerate(documents)
    ]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def shard_counts(table: pa.Table) -> dict[str, int]:
    """The counts the manifest records for a shard (documents without sentences are not indexed)."""
    sentences = table.column("sentences")
    n_sentences = pc.list_value_length(sentences).fill_null(0)
    indexed = pc.greater(n_sentences, 0)
    flat = pc.list_flatten(sentences)
    title_lengths = pc.list_value_length(table.column("title_terms")).fill_null(0)
    return {
        "documents": table.num_rows,
        "indexed_documents": _sum(pc.cast(indexed, pa.int64())),
        "sentences": _sum(n_sentences),
        "term_occurrences": _sum(pc.list_value_length(pc.struct_field(flat, "terms"))),
        "title_term_occurrences": _sum(pc.if_else(indexed, title_lengths, 0)),
        "mentions": _sum(pc.list_value_length(pc.struct_field(flat, "mentions"))),
        "words": _sum(table.column("n_words")),
    }


def _sum(values: Any) -> int:
    total = pc.sum(values).as_py()
    return int(total or 0)


class ShardWriter:
    """Writes parsed documents as shards into ``folder``; :meth:`finish` writes the manifest.

    ``keep`` lists shards already in the folder (an index's, when documents are added); new
    shards are numbered after them and new documents' ordinals continue theirs.
    """

    def __init__(self, folder: Path, pipeline: dict[str, Any], keep: list[dict[str, Any]] | None = None,
                 shard_documents: int = SHARD_DOCUMENTS) -> None:
        self.folder = folder
        self.pipeline = pipeline
        self.shards = list(keep or [])
        self.next_ordinal = self.shards[-1]["last_ordinal"] + 1 if self.shards else 0
        self._buffer: list[ParsedDocument] = []
        self.shard_documents = shard_documents
        self.on_shard: Callable[[pa.Table], None] | None = None  # called with each shard once it is written
        folder.mkdir(parents=True, exist_ok=True)

    def add(self, doc: ParsedDocument) -> None:
        self._buffer.append(doc)
        if len(self._buffer) >= self.shard_documents:
            self.flush()

    def flush(self) -> None:
        if self._buffer:
            self.write(to_table(self._buffer, self.next_ordinal))
            self._buffer = []

    def write(self, table: pa.Table) -> None:
        """One shard from rows in :data:`SCHEMA` whose ordinals continue the folder's (none: no shard)."""
        if table.num_rows == 0:
            return
        table = table.cast(SCHEMA)
        name = f"part-{len(self.shards):05d}.parquet"
        file = self.folder / name
        pq.write_table(table, file)
        ordinals = table.column("ordinal")
        self.shards.append({
            "file": name, **shard_counts(table),
            "first_ordinal": pc.min(ordinals).as_py(), "last_ordinal": pc.max(ordinals).as_py(),
            "size": file.stat().st_size, "sha256": sha256_of(file),
        })
        self.next_ordinal = self.shards[-1]["last_ordinal"] + 1
        if self.on_shard is not None:
            self.on_shard(table)

    def finish(self, sources: list[str]) -> dict[str, Any]:
        self.flush()
        return write_shards_manifest(self.folder, self.pipeline, self.shards, sources)


def write_shards_manifest(folder: Path, pipeline: dict[str, Any], shards: list[dict[str, Any]],
                          sources: list[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest of ``shards`` in ``folder``, replaced atomically; ``extra`` adds keys (a parse's progress)."""
    totals = {key: sum(int(s[key]) for s in shards) for key in SHARD_COUNTS}
    manifest: dict[str, Any] = {
        **(extra or {}), "format": FORMAT, "format_version": FORMAT_VERSION, "pipeline": pipeline,
        "sources": sources, "shards": shards, "counts": totals,
    }
    manifest["checksum"] = canonical_checksum(manifest)
    tmp = folder / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    os.replace(tmp, folder / MANIFEST)
    return manifest


def read_shards_manifest(folder: str | Path) -> dict[str, Any]:
    """A shards folder's manifest, checked against its own checksum; each shard a regular file inside
    the folder at its recorded size, its records numbers, the spaCy model it names a spaCy pipeline."""
    folder = Path(folder)
    file = folder / MANIFEST
    try:
        manifest = read_json(file)
    except FileNotFoundError:
        raise SentretError(f"{folder}: not a shards folder (no {MANIFEST}); make one with `sentret parse`") from None
    except UnsafeFile as err:
        raise SentretError(f"{folder}: {MANIFEST} {err} (it is damaged); parse the source again") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SentretError(f"{folder}: not a shards folder ({MANIFEST} is not one); make one with `sentret parse`")
    if manifest.get("format_version") != FORMAT_VERSION:
        version = str(manifest.get("format_version"))[:40]
        raise SentretError(f"{folder}: shards format version {version} is not supported "
                           f"(this sentret reads version {FORMAT_VERSION}); parse the source again")
    if manifest.get("checksum") != canonical_checksum(manifest):
        raise SentretError(f"{folder}: {MANIFEST} does not match its checksum (it was edited or damaged)")
    problem = _records_problem(manifest)
    if problem is not None:
        raise SentretError(f"{folder}: {MANIFEST} {problem}; parse the source again")
    for shard in manifest["shards"]:
        try:
            size = member(folder, shard["file"]).stat().st_size
        except FileNotFoundError:
            size = -1
        except (UnsafeFile, OSError) as err:
            raise SentretError(f"{folder}: {MANIFEST} lists {err}; parse the source again") from None
        if size != shard["size"]:
            raise SentretError(f"{folder}: shard {shard['file']} is missing or damaged; parse the source again")
    return manifest


def _records_problem(manifest: dict[str, Any]) -> str | None:
    """What is wrong with the records of a manifest whose checksum matches (a resealed one), or None."""
    shards, counts, pipeline = manifest.get("shards"), manifest.get("counts"), manifest.get("pipeline")
    if not isinstance(shards, list) or not isinstance(counts, dict) or not isinstance(pipeline, dict):
        return "lacks its shards, counts or pipeline"
    numbers = (*SHARD_COUNTS, "first_ordinal", "last_ordinal", "size")
    for shard in shards:
        if not isinstance(shard, dict) or not isinstance(shard.get("sha256"), str):
            return "holds a shard record that is not one"
        if any(type(shard.get(key)) is not int or shard[key] < 0 for key in numbers):
            return f"records a shard's counts that are not counts ({str(shard.get('file'))[:80]!r})"
        name_problem = member_name_problem(shard.get("file"))
        if name_problem is not None:
            return f"lists {name_problem}"
    if any(counts.get(key) != sum(shard[key] for shard in shards) for key in SHARD_COUNTS):
        return "records totals that are not the sums of its shards' counts"
    return spacy_model_problem(pipeline.get("model"))


def schema_problem(path: Path) -> str | None:
    """Why the Parquet file at ``path`` is not a shard (its schema, names and types nested, is not
    :data:`SCHEMA`), or None; only its footer is read."""
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as err:
        return f"cannot be read as Parquet ({type(err).__name__})"
    if not schema.remove_metadata().equals(SCHEMA):
        differ = [f.name for f in SCHEMA if f.name not in schema.names or schema.field(f.name).type != f.type]
        extra = [name for name in schema.names if name not in SCHEMA.names]
        what = ", ".join([*differ, *extra][:4]) or "field order or nullability"
        return f"is not a shard of sentret (its columns differ: {what})"
    return None


def _null_problem(values: pa.Array | pa.ChunkedArray, where: str) -> str | None:
    """The first column (nested fields included) holding a null: no shard sentret writes has one."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    for chunk in chunks:
        if chunk.null_count:
            return f"holds a null in {where}"
        if pa.types.is_list(chunk.type):
            found = _null_problem(chunk.flatten(), where)
        elif pa.types.is_struct(chunk.type):
            found = next(filter(None, (_null_problem(chunk.field(i), f"{where}.{chunk.type.field(i).name}")
                                       for i in range(chunk.type.num_fields))), None)
        else:
            found = None
        if found is not None:
            return found
    return None


def read_shard(folder: Path, shard: dict[str, Any]) -> pa.Table:
    """One shard's rows in ordinal order, checked against the manifest's sha256, :data:`SCHEMA` (before
    its rows are read), no nulls, and the counts the manifest records of it."""
    try:
        path = member(folder, shard["file"])
    except (UnsafeFile, OSError) as err:
        raise SentretError(f"{folder}: {MANIFEST} lists {err}; parse the source again") from None
    if sha256_of(path) != shard["sha256"]:
        raise SentretError(f"{folder}: shard {shard['file']} does not match its checksum; parse the source again")
    problem = schema_problem(path)
    if problem is None:
        try:
            table = pq.read_table(path, schema=SCHEMA)
        except (OSError, pa.ArrowException) as err:
            raise SentretError(f"{folder}: shard {shard['file']} cannot be read ({type(err).__name__}); "
                               "parse the source again") from None
        problem = next(filter(None, (_null_problem(table.column(f.name), f.name) for f in SCHEMA)), None)
    if problem is None and shard_counts(table) != {key: shard[key] for key in SHARD_COUNTS}:
        problem = "holds other counts than its manifest records"
    if problem is not None:
        raise SentretError(f"{folder}: shard {shard['file']} {problem}; parse the source again")
    ordinals = table.column("ordinal").to_numpy()
    if len(ordinals) > 1 and not (ordinals[1:] > ordinals[:-1]).all():
        table = table.take(pc.sort_indices(table, [("ordinal", "ascending")]))
    return table


def document_ids(folder: Path, manifest: dict[str, Any]) -> Iterator[str]:
    for shard in manifest["shards"]:
        path = folder / shard["file"]
        problem = schema_problem(path)
        if problem is not None:
            raise SentretError(f"{folder}: shard {shard['file']} {problem}; parse the source again")
        ids = pq.read_table(path, columns=["id"]).column("id")
        if ids.null_count:
            raise SentretError(f"{folder}: shard {shard['file']} holds a document without an id; "
                               "parse the source again")
        yield from ids.to_pylist()


def shards_problems(folder: Path) -> list[str]:
    """For ``sentret verify``: every problem of the parsed shards in ``folder`` (an index's ``shards/``):
    its manifest, each shard's sha256, schema, nulls and counts; nothing when the index has no shards
    (an older sentret's)."""
    if not (folder / MANIFEST).exists():
        return []
    try:
        manifest = read_shards_manifest(folder)
    except SentretError as err:
        return [f"{folder.name}/{str(err).removeprefix(f'{folder}: ')}"]
    problems = []
    for shard in manifest["shards"]:
        problem = sha256_problem(folder, shard["file"], shard["sha256"])
        if problem is None:
            try:  # its schema, nulls and counts, as a build reads it
                read_shard(folder, shard)
            except SentretError as err:
                problem = str(err).removeprefix(f"{folder}: shard ").removesuffix("; parse the source again")
        if problem is not None:
            problems.append(f"{folder.name}/{problem}")
    return problems


def link_shards(source: Path, target: Path, manifest: dict[str, Any]) -> None:
    """The shard files and manifest of ``source`` in ``target``: hard links (shards are never
    modified in place), copies across file systems."""
    target.mkdir(parents=True, exist_ok=True)
    for name in [*(s["file"] for s in manifest["shards"]), MANIFEST]:
        try:
            os.link(source / name, target / name)
        except OSError:
            shutil.copy2(source / name, target / name)
