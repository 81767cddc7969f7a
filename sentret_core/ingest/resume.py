"""A parse that goes on where it stopped: the shards it finished count (``sentret parse`` run again).

:func:`parse_resumably` writes into ``.<out>.parsing`` beside ``out``. After every shard it rewrites that
folder's shards manifest, so the folder is at every moment a valid shards folder of the documents parsed
so far, with what they were parsed from (:func:`source_identity`). A parse that fails, is stopped or is
killed leaves the folder; the same command run again checks it (the manifest's checksum, each shard's
size and sha256, the same source, model and shard size), skips the documents its shards hold and parses
only the rest, into the very shards an uninterrupted parse writes (shards are cut every
``shard_documents`` documents of the source's order). The folder becomes ``out`` only once the parse is
whole. A stopped parse of other input is discarded, with a note.

The record also holds a SHA-256 of every kept document's id, title and text, in order: a document edited
since (a file whose size and time were kept, a JSONL line changed in place) is found when the same command
runs again, and the resume is refused with the document named by position, never parsed from its old text.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import itertools
import json
import logging
import os
import shutil
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from sentret_core.errors import SentretError
from sentret_core.index.validate import sha256_problem
from sentret_core.ingest.corpus import DEMO, DEMO_PACKAGE, Document, Fields
from sentret_core.ingest.engine import Engine
from sentret_core.ingest.interrupt import cleanup_on_signals, signals_deferred
from sentret_core.ingest.parse import Progress, parse_into
from sentret_core.ingest.shards import MANIFEST as SHARDS_MANIFEST
from sentret_core.ingest.shards import ShardWriter, read_shards_manifest, write_shards_manifest
from sentret_core.ingest.staging import OWNER, claim, disk_full, owner_of, release, remove_stale, running_owner
from sentret_core.ingest.targets import replace
from sentret_core.ingest.textfile import STDIN

log = logging.getLogger(__name__)
KIND = "sentret-parse-partial"


class SourceDigest:
    """SHA-256 over the documents read so far, in order, with its value after each of them kept until the
    shard that ends there is recorded (the engine reads ahead of the shards it has written)."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self._count = 0
        self._after: deque[tuple[int, str]] = deque()

    def read(self, documents: Iterator[Document]) -> Iterator[Document]:
        for doc in documents:
            self._hash.update(json.dumps([doc.id, doc.title, doc.text, doc.sentences]).encode() + b"\n")
            self._count += 1
            self._after.append((self._count, self._hash.hexdigest()))
            yield doc

    def after(self, count: int) -> str | None:
        """The digest of the first ``count`` documents (None: not read); earlier values are dropped."""
        while self._after and self._after[0][0] < count:
            self._after.popleft()
        return self._after[0][1] if self._after and self._after[0][0] == count else None


@dataclass
class Partial:
    """The folder a parse writes into, and the stopped parse it goes on from (None: from the start)."""

    folder: Path
    kept: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)

    @property
    def documents(self) -> int:
        return int(self.kept["counts"]["documents"]) if self.kept else 0


def partial_folder(out: Path) -> Path:
    return out.with_name(f".{out.name}.parsing")


def source_identity(source: str, fmt: str, encoding: str, engine: Engine, shard_documents: int,
                    fields: Fields | None = None) -> dict[str, Any]:
    """What a stopped parse must have read, and parsed with, for its shards to count now."""
    identity: dict[str, Any] = {
        "format": fmt, "encoding": encoding, "model": engine.model, "model_version": _model_version(engine.model),
        "spacy_version": _version("spacy"), "shard_documents": shard_documents,
        **({"fields": list(fields)} if fields and fields != Fields() else {}),
    }
    if source == DEMO:
        return {**identity, "source": DEMO, "files": _version(DEMO_PACKAGE)}
    if source == STDIN:  # a stream read once: a stopped parse of it is never gone on from
        return {**identity, "source": STDIN, "files": os.urandom(16).hex()}
    path = Path(source).resolve()
    return {**identity, "source": str(path), "files": _listing(path)}


def parse_resumably(out: Path, source: str, documents: Iterator[Document], engine: Engine,
                    progress: Progress | None, identity: dict[str, Any],
                    shard_documents: int) -> tuple[dict[str, Any], list[str]]:
    """Parse ``documents`` into the shards folder ``out`` by way of its partial folder; return the
    manifest and notes (stale folders removed, a stopped parse discarded or gone on from)."""
    with cleanup_on_signals():
        partial = open_partial(out, identity)
        kept = partial.kept
        writer = ShardWriter(partial.folder, kept["pipeline"] if kept else {}, keep=kept["shards"] if kept else None,
                             shard_documents=shard_documents)
        digest = SourceDigest()
        writer.on_shard = lambda table: _record(partial.folder, writer, source, identity, table, digest)
        documents = digest.read(documents)
        try:
            if kept:
                documents = _skip_parsed(documents, partial, source, digest)
                log.info("going on from the stopped parse in %s: its %s documents are parsed already",
                         partial.folder, f"{partial.documents:,}")
                partial.notes.append(f"went on from the stopped parse in {partial.folder}: its "
                                     f"{partial.documents:,} documents were not parsed again")
                progress = _counting_from(partial.documents, progress)
            parse_into(writer, documents, engine, progress)
            manifest = writer.finish([source])
            with signals_deferred():  # the old folder goes only once the new one is in place
                release(partial.folder)
                replace(partial.folder, out)
        except BaseException as exc:
            raise _stopped(partial.folder, writer, exc, out) from None
    return manifest, partial.notes


def open_partial(out: Path, identity: dict[str, Any]) -> Partial:
    """The partial folder of ``out``, owned by this process: the stopped parse in it when it checks out
    and read ``identity``, else a new empty one."""
    folder = partial_folder(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    notes = remove_stale(out.parent)
    if folder.is_symlink() or (folder.exists() and owner_of(folder, KIND) is None):
        raise SentretError(f"{folder}: is in the way of the folder this parse writes into (it is not a stopped "
                           "sentret parse); move it or choose another --out")
    if folder.exists():
        pid = running_owner(folder, KIND)
        if pid is not None and pid != os.getpid():
            raise SentretError(f"{out}: another sentret parse (pid {pid}) is writing it in {folder}; "
                               "wait for it to end or stop it")
        kept, why = _checked(folder, identity)
        if kept is not None:
            _remove_unlisted(folder, kept)
            claim(folder, KIND)
            return Partial(folder, kept, notes)
        shutil.rmtree(folder)
        if why:
            notes.append(f"discarded the stopped parse in {folder}: {why}")
    folder.mkdir()
    claim(folder, KIND)
    return Partial(folder, None, notes)


def _checked(folder: Path, identity: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(the stopped parse's manifest, "") when its record and every shard check out; else (None, why)."""
    if not (folder / SHARDS_MANIFEST).exists():
        return None, ""  # stopped before its first shard: nothing to keep
    try:
        manifest = read_shards_manifest(folder)
    except SentretError as err:
        return None, str(err).removeprefix(f"{folder}: ")
    resume = manifest.get("resume")
    before = resume.get("identity") if isinstance(resume, dict) else None
    if not isinstance(before, dict):
        return None, "it holds no record of what it parsed"
    changed = sorted(key for key in identity.keys() | before.keys() if identity.get(key) != before.get(key))
    if changed:
        return None, f"it parsed other input or with other settings ({', '.join(changed)} differ)"
    for shard in manifest["shards"]:
        problem = sha256_problem(folder, shard["file"], shard["sha256"])
        if problem is not None:
            return None, f"shard {problem}"
    return manifest, ""


def _skip_parsed(documents: Iterator[Document], partial: Partial, source: str,
                 digest: SourceDigest) -> Iterator[Document]:
    """``documents`` after those the stopped parse holds, once the last of them is found where it was and
    all of them as they were (``digest`` reads them; a record made before digests compares ids only)."""
    assert partial.kept is not None
    last_id = partial.kept["resume"]["last_id"]
    tail = deque(enumerate(itertools.islice(documents, partial.documents), 1), maxlen=1)  # streams, keeps one
    seen, last = tail[0] if tail else (0, None)
    if seen < partial.documents or last is None or last.id != last_id:
        found = f"{last.id!r}" if last is not None and seen == partial.documents else "missing"
        raise SentretError(
            f"{source}: its document {partial.documents:,} is {found}, where the stopped parse in "
            f"{partial.folder} read {last_id!r}: the source changed; remove that folder to parse from the start"
        )
    recorded = partial.kept["resume"].get("digest")
    if recorded is not None and digest.after(partial.documents) != recorded:
        raise SentretError(
            f"{source}: one of its first {partial.documents:,} documents, which the stopped parse in "
            f"{partial.folder} kept, was edited since; remove that folder to parse from the start"
        )
    return documents


def _counting_from(done: int, progress: Progress | None) -> Progress | None:
    """``progress`` told the documents of the whole parse, the ``done`` ones already parsed included (a bar
    goes on from where it stopped); the words are this run's, so a words/s rate stays true."""
    if progress is None:
        return None
    report = progress
    return lambda documents, words: report(done + documents, words)


def _record(folder: Path, writer: ShardWriter, source: str, identity: dict[str, Any], table: pa.Table,
            digest: SourceDigest) -> None:
    """After each shard: the folder's manifest, with what a re-run needs to go on from here."""
    done = sum(int(shard["documents"]) for shard in writer.shards)
    resume = {"identity": identity, "last_id": table.column("id")[-1].as_py(), "digest": digest.after(done)}
    write_shards_manifest(folder, writer.pipeline, writer.shards, [source], extra={"resume": resume})


def _stopped(folder: Path, writer: ShardWriter, exc: BaseException, out: Path) -> BaseException:
    """What a parse that ends with ``exc`` leaves: the shards it finished (said in a warning), or nothing."""
    if not writer.shards:
        shutil.rmtree(folder, ignore_errors=True)
        return exc
    kept = sum(int(shard["documents"]) for shard in writer.shards)
    where = f"the {kept:,} documents parsed so far are kept in {folder}: the same command goes on from there"
    if isinstance(exc, OSError) and disk_full(exc):
        return SentretError(f"{out}: the disk is full; {where} once there is space")
    log.warning("%s", where)
    return exc


def _remove_unlisted(folder: Path, manifest: dict[str, Any]) -> None:
    """Drop what a killed parse left half-written (a shard not yet in the manifest, a temporary file)."""
    keep = {SHARDS_MANIFEST, OWNER, *(shard["file"] for shard in manifest["shards"])}
    for path in folder.iterdir():
        if path.name not in keep:
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def _listing(path: Path) -> str:
    """A file's size and modification time, or a digest of a folder's files' names, sizes and times."""
    if not path.is_dir():
        stat = path.stat()
        return f"{stat.st_size}:{stat.st_mtime_ns}"
    digest = hashlib.sha256()
    for here, folders, files in os.walk(path):
        folders.sort()
        for name in sorted(files):
            file = Path(here, name)
            try:
                stat = file.stat()
            except OSError:
                continue
            digest.update(f"{file.relative_to(path)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode(errors="replace"))
    return digest.hexdigest()


def _model_version(model: str) -> str:
    """The installed version of a spaCy pipeline named as a package, or read from a folder's meta.json."""
    meta = Path(model) / "meta.json"
    if meta.is_file():
        try:
            return str(json.loads(meta.read_text(encoding="utf-8")).get("version", ""))
        except (OSError, ValueError, AttributeError):
            return ""
    return _version(model)


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return ""
