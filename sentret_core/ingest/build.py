"""Building an index: documents → spaCy pass → parsed shards → arrays and tables → a folder, atomically.

Every build goes through shards (:mod:`sentret_core.ingest.shards`), kept inside the index in
``shards/``, so documents can be added later without parsing the others again: :func:`add_documents`
parses only the new ones into a new shard and builds the whole index again from all shards, which
gives exactly what a build from scratch would.

A build writes into a hidden temporary folder beside the target and renames it into place only when
everything (manifest last) is written: an interrupted or failed build never leaves a half-written
index, and an existing index is replaced only with ``force`` (or by an add, once the new one is
whole). SIGTERM, SIGINT and SIGHUP remove the folder and stop the spaCy workers before the process
ends (interrupt.py); a later build removes folders whose build was killed outright (staging.py).
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sentret_core._version import __version__
from sentret_core.errors import CorpusError, SentretError
from sentret_core.index.format import MANIFEST, SHARDS, is_index, read_manifest, write_manifest
from sentret_core.ingest.assemble import assemble
from sentret_core.ingest.corpus import Document, Fields, Skipped
from sentret_core.ingest.engine import Engine
from sentret_core.ingest.interrupt import cleanup_on_signals, signals_deferred
from sentret_core.ingest.nlp import DEFAULT_BATCH_SIZE, DEFAULT_PIPELINE
from sentret_core.ingest.parse import Progress, open_source, parse_into, refuse_known
from sentret_core.ingest.resume import parse_resumably, source_identity
from sentret_core.ingest.shards import (
    SHARD_DOCUMENTS,
    ShardWriter,
    document_ids,
    link_shards,
    read_shards_manifest,
    schema_problem,
)
from sentret_core.ingest.staging import disk_full, folder_size, make_staging, release, write_error
from sentret_core.ingest.targets import check_not_the_source, check_only_ours, check_target, is_shards, replace

T = TypeVar("T")


@dataclass(frozen=True)
class BuildSummary:
    path: Path
    documents: int
    sentences: int
    words: int
    terms: int
    entities: int
    seconds: float
    notes: tuple[str, ...] = ()  # what was left out or cleaned up, to tell the user

    @property
    def words_per_second(self) -> float:
        return self.words / self.seconds if self.seconds else 0.0


def build_index(
    source: str | Path,
    out: str | Path,
    *,
    fmt: str = "auto",
    encoding: str = "utf-8",
    fields: Fields | None = None,
    model: str = DEFAULT_PIPELINE,
    n_process: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
    force: bool = False,
    progress: Progress | None = None,
    engine: Engine | None = None,
) -> BuildSummary:
    """Index the documents of ``source`` (``"demo"``, a folder, JSONL or CSV) into the folder ``out``.

    ``engine`` (default: the local one with ``model``, ``n_process`` and ``batch_size``) runs the spaCy pass.
    """
    engine = engine or Engine("local", model, n_process, batch_size)
    engine.check()
    if str(source) != "demo":
        check_not_the_source(Path(out), Path(source))
    check_target(Path(out), force, is_index, "an index")
    skipped = Skipped()
    documents = open_source(source, fmt, encoding, skipped, fields)
    summary = _build(documents, Path(out), str(source), engine, progress)
    return dataclasses.replace(summary, notes=(*summary.notes, *skipped.notes(source)))


def build_from_documents(
    documents: Iterable[Document],
    out: str | Path,
    *,
    source: str,
    model: str = DEFAULT_PIPELINE,
    n_process: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
    force: bool = False,
    progress: Progress | None = None,
) -> BuildSummary:
    """Index a stream of :class:`Document` records (presegmented ones kept as given) into ``out``.

    ``source`` is what the manifest records as the documents' origin.
    """
    engine = Engine("local", model, n_process, batch_size)
    engine.check()
    check_target(Path(out), force, is_index, "an index")
    return _build(documents, Path(out), source, engine, progress)


def parse_documents_into(
    documents: Iterable[Document],
    out: str | Path,
    *,
    source: str,
    model: str = DEFAULT_PIPELINE,
    n_process: int = 2,
    force: bool = False,
) -> dict[str, Any]:
    """Parse a stream of :class:`Document` records into a shards folder ``out``; return its manifest."""
    engine = Engine("local", model, n_process, DEFAULT_BATCH_SIZE)
    engine.check()
    out = Path(out)
    check_target(out, force, is_shards, "a shards folder")

    def fill(tmp: Path) -> dict[str, Any]:
        writer = ShardWriter(tmp, {})
        parse_into(writer, documents, engine)
        return writer.finish([source])

    manifest, _, _ = _staged(out, fill)
    return manifest


def build_after_shards(
    base: str | Path,
    documents: Iterable[Document],
    out: str | Path,
    *,
    source: str,
    n_process: int = 2,
    force: bool = False,
    progress: Progress | None = None,
) -> BuildSummary:
    """Index the documents already parsed in the shards folder ``base`` followed by ``documents`` (parsed
    now, with ``base``'s pipeline) into ``out``: ``base``'s documents are never parsed again."""
    base, out = Path(base), Path(out)
    manifest = _checked_shards(base)
    check_not_the_source(out, base)
    check_target(out, force, is_index, "an index")
    engine = Engine("local", manifest["pipeline"]["model"], n_process, DEFAULT_BATCH_SIZE)
    engine.check()

    return _summary(out, *_staged(out, _after(base, manifest, documents, engine, progress, source)))


def _after(base: Path, manifest: dict[str, Any], documents: Iterable[Document], engine: Engine,
           progress: Progress | None, source: str) -> Callable[[Path], dict[str, Any]]:
    """What a staging folder is filled with: ``base``'s shards (linked), then ``documents`` parsed into more."""

    def fill(tmp: Path) -> dict[str, Any]:
        link_shards(base, tmp / SHARDS, manifest)
        writer = ShardWriter(tmp / SHARDS, manifest["pipeline"], keep=manifest["shards"])
        parse_into(writer, documents, engine, progress)
        return _assemble(tmp, writer.finish([*manifest["sources"], source]))

    return fill


def build_from_shards(shards: str | Path, out: str | Path, *, force: bool = False) -> BuildSummary:
    """Build the index of the parsed shards in ``shards`` (from ``sentret parse``) into ``out``."""
    shards, out = Path(shards), Path(out)
    manifest = _checked_shards(shards)
    check_not_the_source(out, shards)
    check_target(out, force, is_index, "an index")

    def fill(tmp: Path) -> dict[str, Any]:
        link_shards(shards, tmp / SHARDS, manifest)
        return _assemble(tmp, manifest)

    return _summary(out, *_staged(out, fill))


def add_documents(
    index: str | Path,
    source: str | Path,
    *,
    fmt: str = "auto",
    encoding: str = "utf-8",
    fields: Fields | None = None,
    engine: Engine | None = None,
    progress: Progress | None = None,
    carry: Callable[[Path, Path], list[str]] | None = None,
) -> BuildSummary:
    """Add the documents of ``source`` to the index at ``index``: parse only them into a new shard, then
    build the index again from all its shards (global statistics stay exact). A document whose id is
    already in the index stops the add before anything changes; the old index stays until the new one
    is whole. Trained artefacts (word classes, trigger tables) describe the old index and are not kept,
    but for those ``carry`` writes into the new one: called with the old index and the new (complete, not
    yet in place), it returns the names it carried (``sentret add`` passes
    :func:`sentret_core.models.training.sentence_vectors.carry_vectors`). ``engine`` runs the spaCy pass; its
    model, when empty, is the one the index was parsed with.
    """
    index = Path(index)
    read_manifest(index)
    shards = index / SHARDS
    if not (shards / MANIFEST).is_file():
        raise SentretError(
            f"{index}: this index has no parsed shards (an older sentret built it), so documents cannot be added; "
            "index everything again with `sentret index`"
        )
    manifest = _checked_shards(shards)
    pipeline = manifest["pipeline"]
    engine = engine or Engine(model="")
    if not engine.model:
        engine = dataclasses.replace(engine, model=pipeline["model"])
    engine.check()
    if str(source) != "demo":
        check_not_the_source(index, Path(source))
    check_only_ours(index)  # the add replaces the folder: a user's own file in it stops it now, not after the parse
    skipped = Skipped()
    known = set(document_ids(shards, manifest))
    documents = refuse_known(open_source(source, fmt, encoding, skipped, fields), known, str(index))

    trained = sorted(p.name for p in (index / "artefacts").glob("*") if p.is_dir())
    fill = _after(shards, manifest, documents, engine, progress, str(source))
    carried: list[str] = []

    def fill_and_carry(tmp: Path) -> dict[str, Any]:
        counts = fill(tmp)
        if carry is not None:
            carried.extend(carry(index, tmp))
        return counts

    summary = _summary(index, *_staged(index, fill_and_carry))
    notes = [*summary.notes, *skipped.notes(source)]
    if carried:
        notes.append(f"{index}: kept {', '.join(carried)} (the added sentences encoded)")
    trained = [name for name in trained if name not in carried]
    if trained:
        notes.append(f"{index}: the trained artefacts ({', '.join(trained)}) described the old documents and were "
                     f"not kept; train them again with `sentret train <name> {index}`")
    return dataclasses.replace(summary, notes=tuple(notes))


def parse_source(
    source: str | Path,
    out: str | Path,
    *,
    fmt: str = "auto",
    encoding: str = "utf-8",
    fields: Fields | None = None,
    engine: Engine | None = None,
    force: bool = False,
    progress: Progress | None = None,
    shard_documents: int = SHARD_DOCUMENTS,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Parse ``source`` into a shards folder ``out`` (``sentret parse``); return its manifest and notes.

    A parse that stopped partway (failed, interrupted, killed) is gone on from: the same call parses only
    the documents its finished shards do not hold (:mod:`sentret_core.ingest.resume`).
    """
    engine = engine or Engine()
    engine.check()
    if isinstance(shard_documents, bool) or not isinstance(shard_documents, int) or shard_documents < 1:
        raise SentretError(f"shard_documents={shard_documents!r}: must be a whole number of at least 1",
                           arguments=("shard_documents",))
    out = Path(out)
    if str(source) != "demo":
        check_not_the_source(out, Path(source))
    check_target(out, force, is_shards, "a shards folder")
    skipped = Skipped()
    documents = open_source(source, fmt, encoding, skipped, fields)
    identity = source_identity(str(source), fmt, encoding, engine, shard_documents, fields)
    manifest, notes = parse_resumably(out, str(source), documents, engine, progress, identity, shard_documents)
    return manifest, (*notes, *skipped.notes(source))


def _build(documents: Iterable[Document], out: Path, source: str, engine: Engine, progress: Progress | None
           ) -> BuildSummary:
    def fill(tmp: Path) -> dict[str, Any]:
        writer = ShardWriter(tmp / SHARDS, {})
        parse_into(writer, documents, engine, progress)
        return _assemble(tmp, writer.finish([source]))

    return _summary(out, *_staged(out, fill))


def _checked_shards(folder: Path) -> dict[str, Any]:
    """The shards manifest of ``folder``, each shard's schema checked there (its footer only), so that a
    foreign Parquet file is named where the user keeps it, not in a staging copy."""
    manifest = read_shards_manifest(folder)
    for shard in manifest["shards"]:
        problem = schema_problem(folder / shard["file"])
        if problem is not None:
            raise SentretError(f"{folder}: shard {shard['file']} {problem}; parse the source again")
    return manifest


def _assemble(tmp: Path, shards_manifest: dict[str, Any]) -> dict[str, Any]:
    """The index files in ``tmp`` from the shards in ``tmp/shards``, then its manifest; return the counts."""
    totals = shards_manifest["counts"]
    if totals["sentences"] == 0:
        raise CorpusError(f"{' + '.join(shards_manifest['sources'])}: the documents hold no sentences")
    counts = dict(assemble(tmp / SHARDS, shards_manifest, tmp), words=totals["words"])
    pipeline = shards_manifest["pipeline"]
    write_manifest(tmp, {
        "sentret_version": __version__, **{key: pipeline[key] for key in ("spacy_version", "model", "model_version",
                                                                         "pipeline", "normalisation")},
        "source": " + ".join(shards_manifest["sources"]), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "counts": counts,
    })
    return counts


def _staged(out: Path, fill: Callable[[Path], T]) -> tuple[T, float, list[str]]:
    """Run ``fill`` on a new staging folder beside ``out``, then move it into place (replacing ``out``).

    Returns what ``fill`` returned, the seconds it all took and notes on stale folders removed.
    """
    started = time.perf_counter()
    with cleanup_on_signals():
        tmp, notes = make_staging(out)
        try:
            result = fill(tmp)
            with signals_deferred():  # the old folder goes only once the new one is in place
                release(tmp)
                replace(tmp, out)
        except BaseException as exc:
            full = isinstance(exc, OSError) and disk_full(exc)
            written = folder_size(tmp) if full else 0
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, OSError) and full:
                raise write_error(exc, out, written) from None
            raise
    return result, time.perf_counter() - started, notes


def _summary(out: Path, counts: dict[str, Any], seconds: float, notes: list[str]) -> BuildSummary:
    return BuildSummary(
        out, counts["documents"], counts["sentences"], counts["words"], counts["terms"], counts["entities"],
        seconds, tuple(notes),
    )
