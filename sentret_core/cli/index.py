"""``sentret index | info | verify``: build an index, show its counts, check its files (and the options
the spaCy pass shares with ``sentret parse`` and ``sentret add``)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

from sentret_core.cli.common import command
from sentret_core.cli.outputs import Files, declare, output


def json_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON object")

MAX_TOP = 10_000  # entities per label in `sentret info`


def register(sub: Any) -> None:
    _add_index(sub)
    _add_info(sub)
    _add_verify(sub)


def _add_index(sub: Any) -> None:
    p = command(
        sub, "index", "Index documents: a folder of .txt/.md, a .jsonl, a .csv, or 'demo'.", _run_index
    )
    p.add_argument(
        "source", help="folder, .jsonl or .csv file (.gz too), '-' for standard input, or 'demo' (Wikipedia "
        "vital-article summaries)"
    )
    p.add_argument("--out", required=True, help="the index folder to create")
    source_options(p)
    engine_options(p)
    p.add_argument("--force", action="store_true",
                   help="replace the index at --out (never a folder that is not an index)")
    json_option(p)
    declare(p, lambda args: Files([source_path(args.source)], output("--out", args.out, "index"), args.force))


def source_path(source: str) -> str | None:
    """The documents' path, or None for the built-in demo corpus (read from an installed package)."""
    return None if source == "demo" else source


def source_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default="auto", choices=["auto", "txt", "jsonl", "csv"],
                   help="the source's format (default: from its name; '-', standard input: jsonl)")
    p.add_argument("--encoding", default="utf-8", help="text encoding of the source files (default utf-8)")
    for field, usual in (("id", "id, doc_id, docno or _id"), ("text", "text, contents or body"), ("title", "title")):
        p.add_argument(f"--{field}-field", default=None, metavar="KEY",
                       help=f"JSONL key or CSV column of each document's {field} (default: {usual})")


def fields_of(args: argparse.Namespace) -> Any:
    from sentret_core.ingest.corpus import Fields

    return Fields(args.id_field, args.text_field, args.title_field)


def engine_options(p: argparse.ArgumentParser, model_default: str | None = None) -> None:
    """How the spaCy pass runs: here (--n-process) or on Ray (--engine ray)."""
    from sentret_core.defaults import DEFAULT_BATCH_SIZE, DEFAULT_PIPELINE

    p.add_argument("--engine", default="local", choices=["local", "ray"],
                   help="run the spaCy pass here (local, default) or on Ray (ray: pip install 'sentret[scale]')")
    p.add_argument("--n-process", type=int, default=2, help="local engine: spaCy worker processes (default 2)")
    p.add_argument("--address", default=None,
                   help="ray engine: the cluster to join ('auto', or the head node's HOST:PORT, e.g. 10.0.0.5:6379; "
                        "default: a local Ray)")
    p.add_argument("--num-workers", type=int, default=None,
                   help="ray engine: parsing actors, one CPU each (default: the CPUs Ray has)")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="documents per spaCy batch")
    p.add_argument("--model", default=model_default or DEFAULT_PIPELINE,
                   help=f"installed spaCy pipeline (default {model_default or DEFAULT_PIPELINE})")


def engine_of(args: argparse.Namespace, model: str | None = None) -> Any:
    from sentret_core.ingest.engine import Engine

    model = args.model if model is None else model
    return Engine(args.engine, model, args.n_process, args.batch_size, args.address, args.num_workers)


@contextlib.contextmanager
def progress_bar(source: str, verb: str) -> Iterator[Callable[[int, int], None]]:
    """A documents bar with words and words/s; a log file gets a line every 15 s, not a flood."""
    from tqdm import tqdm

    total = 10_033 if source == "demo" else None
    interval = 0.5 if sys.stderr.isatty() else 15.0
    with tqdm(total=total, unit="doc", desc=verb, file=sys.stderr, mininterval=interval) as bar:
        last = [0]

        def progress(documents: int, words: int) -> None:
            bar.update(documents - last[0])
            last[0] = documents
            rate = words / bar.format_dict["elapsed"] if bar.format_dict["elapsed"] else 0.0
            bar.set_postfix_str(f"{words:,} words, {rate:,.0f} words/s", refresh=False)

        yield progress


# sentences from which an index's default impact lists hold terms (in more than N/128 sentences and 16,384)
LISTS_HELP_FROM = 128 * 16_384


def print_built(summary: Any, verb: str = "indexed", as_json: bool = False) -> None:
    if as_json:
        fields = ("documents", "sentences", "words", "terms", "entities", "seconds")
        record = {"path": str(summary.path), **{f: getattr(summary, f) for f in fields}, "notes": list(summary.notes)}
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return
    for note in summary.notes:
        print(f"sentret: note: {note}", file=sys.stderr)
    if summary.sentences >= LISTS_HELP_FROM:
        print(f"sentret: note: a large index: `sentret train impacts {summary.path}` builds impact lists, so that a "
              "query pairing a frequent term with rarer ones reads a few thousand sentences, not millions (the same "
              "scores; docs/models.md)", file=sys.stderr)
    rate = f" ({summary.words_per_second:,.0f} words/s)" if verb == "indexed" else ""
    print(
        f"{verb} {summary.documents:,} documents, {summary.sentences:,} sentences, {summary.words:,} words, "
        f"{summary.terms:,} terms, {summary.entities:,} entities in {summary.seconds:.1f} s{rate} → {summary.path}"
    )


def _run_index(args: argparse.Namespace) -> int:
    from sentret_core.ingest.build import build_index

    with progress_bar(args.source, "indexing") as progress:
        summary = build_index(args.source, args.out, fmt=args.format, encoding=args.encoding, force=args.force,
                              fields=fields_of(args),
                              progress=progress, engine=engine_of(args))
    print_built(summary, as_json=args.json)
    return 0


def _add_info(sub: Any) -> None:
    p = command(sub, "info", "Counts of an index and its most frequent entities per label.", _run_info)
    p.add_argument("index", help="an index folder")
    p.add_argument("--top", type=int, default=5, help="entities shown per label (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _run_info(args: argparse.Namespace) -> int:
    from sentret_core.checks import check_int
    from sentret_core.index.overview import overview
    from sentret_core.index.reader import Index

    check_int("--top", args.top, 0, MAX_TOP)
    info = overview(Index.load(args.index), top=args.top)
    if args.json:
        print(json.dumps(info, indent=2, ensure_ascii=False))
        return 0
    counts = info["counts"]
    print(f"{info['path']}  (model {info['model']}, built {info['created']})")
    for key in ("documents", "sentences", "words", "terms", "entities", "mentions"):
        print(f"  {key:<10} {counts[key]:>12,}")
    print(f"  {'avsl':<10} {info['avsl']:>12.2f}")
    print("entities by label (sentences mentioning them):")
    for label, row in info["labels"].items():
        top = ", ".join(f"{e['text']} ({e['sf']})" for e in row["top"])
        print(f"  {label:<12} {row['entities']:>7,}  {top}")
    return 0


def _add_verify(sub: Any) -> None:
    p = command(
        sub, "verify",
        "Check an index: its manifest's own checksum, every file (artefacts included) against its sha256, "
        "array headers, matrix structure and counts.",
        _run_verify,
    )
    p.add_argument("index", help="an index folder")
    json_option(p)
    p.add_argument("--fix", action="store_true",
                   help="an index of an older sentret: once it verifies, add the checks its manifest lacks "
                        "(file sizes, array headers, block checksums, the manifest's own checksum)")


def _run_verify(args: argparse.Namespace) -> int:
    from sentret_core.index.format import read_manifest
    from sentret_core.index.reader import verify
    from sentret_core.index.upgrade import upgrade_manifest
    from sentret_core.index.validate import OLD_INDEX_NOTE, is_current

    if args.fix and upgrade_manifest(args.index):
        print(f"{args.index}: its manifest now records file sizes, array headers, block checksums and its own "
              "checksum")
    problems = verify(args.index)
    notes = [] if problems or is_current(read_manifest(args.index, strict=False)) else [
        OLD_INDEX_NOTE.format(path=args.index)]
    if args.json:
        print(json.dumps({"index": args.index, "ok": not problems, "problems": problems, "notes": notes}, indent=2))
        return 1 if problems else 0
    for problem in problems:
        print(f"{args.index}: {problem}", file=sys.stderr)
    if problems:
        return 1
    for note in notes:
        print(f"sentret: note: {note}", file=sys.stderr)
    print(f"{args.index}: ok")
    return 0
