"""Building and caching a benchmark's index (the converters only describe the documents).

Indexes are built once per (input file content, options, converter version, index format,
spaCy pipeline) and cached under ``<cache>/<name>-<hash>/`` (default ``data/indexes/benchmarks``,
gitignored, or $SENTRET_BENCHMARK_CACHE); parsing the files themselves is cheap and done on
every load. Documents shared by many benchmark indexes (the demo corpus as distractors) are parsed
once per pipeline into shards, ``<cache>/<name>-shards-<hash>/``, that every such index starts from.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sentret_core.defaults import DEFAULT_PIPELINE
from sentret_core.evaluation.benchmarks.base import Log

if TYPE_CHECKING:  # imported where used: the CLI lists the benchmarks at start, without building anything
    from collections.abc import Callable

    from sentret_core.index.reader import Index
    from sentret_core.ingest.corpus import Document

    Documents = Iterable[Document] | Callable[[], Iterable[Document]]

CONVERTER_VERSION = 1
DEFAULT_CACHE = Path("data") / "indexes" / "benchmarks"
CACHE_ENV = "SENTRET_BENCHMARK_CACHE"



def cache_root(cache: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder: ``cache``, else $SENTRET_BENCHMARK_CACHE, else ``data/indexes/benchmarks``."""
    if cache is not None:
        return Path(cache)
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


def cache_key(name: str, data: Path, options: dict[str, Any], model: str = DEFAULT_PIPELINE) -> str:
    """``<name>-<hash>``: the hash of the input file's content, the options and the versions."""
    from sentret_core.index.format import FORMAT_VERSION, sha256_of

    recipe = {
        "benchmark": name,
        "file": sha256_of(data),
        "options": options,
        "converter": CONVERTER_VERSION,
        "index_format": FORMAT_VERSION,
        "model": model,
    }
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
    return f"{name}-{digest[:16]}"


def index_documents(
    documents: Iterable[Document],
    out: str | os.PathLike[str],
    *,
    source: str,
    model: str = DEFAULT_PIPELINE,
    n_process: int = 1,
) -> Index:
    """Index ``documents`` (``Document`` records, presegmented ones kept as given) into ``out``.

    Atomic like every build: an interrupted one leaves nothing, and an index another process
    finished first is kept.
    """
    from sentret_core.index.format import is_index
    from sentret_core.index.reader import Index
    from sentret_core.ingest.build import build_from_documents

    out = Path(out)
    if not is_index(out):
        build_from_documents(documents, out, source=source, model=model, n_process=n_process, force=True)
    return Index.load(out)


def cached_index(
    name: str,
    data: Path,
    options: dict[str, Any],
    documents: Documents,
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    model: str = DEFAULT_PIPELINE,
    log: Log | None = None,
    after: Path | None = None,
) -> Index:
    """Load the cached index of (``name``, ``data``, ``options``) or build it from ``documents``
    (an iterable, or a zero-argument callable returning one, called only when building); with ``after``
    (a shards folder, :func:`cached_shards`), the index of those shards followed by ``documents``."""
    from sentret_core.index.format import is_index
    from sentret_core.index.reader import Index
    from sentret_core.ingest.build import build_after_shards

    if after is not None:
        options = {**options, "after": after.name}
    out = cache_root(cache) / cache_key(name, data, options, model)
    if is_index(out):
        return Index.load(out)
    if log is not None:
        base = f" after {after.name}" if after is not None else ""
        log(f"indexing {name} from {data}{base} into {out} (once: later runs reuse it)")
    docs = documents() if callable(documents) else documents
    if after is None:
        return index_documents(docs, out, source=f"{name}:{data}", model=model, n_process=n_process)
    build_after_shards(after, docs, out, source=f"{name}:{data}", n_process=n_process, force=True)
    return Index.load(out)


def cached_shards(
    name: str,
    data: Path,
    documents: Documents,
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    model: str = DEFAULT_PIPELINE,
    log: Log | None = None,
) -> Path:
    """The parsed shards of ``documents`` (from the file ``data``), parsed once per pipeline and reused."""
    from sentret_core.ingest.build import parse_documents_into
    from sentret_core.ingest.targets import is_shards

    out = cache_root(cache) / cache_key(f"{name}-shards", data, {}, model)
    if not is_shards(out):
        if log is not None:
            log(f"parsing {name} from {data} into {out} (once per spaCy pipeline: later runs reuse it)")
        docs = documents() if callable(documents) else documents
        parse_documents_into(docs, out, source=f"{name}:{data}", model=model, n_process=n_process, force=True)
    return out

