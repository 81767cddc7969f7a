"""``sentret parse | build | add``: the spaCy pass into shards, an index from shards, documents added to an index."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sentret_core.cli.common import command
from sentret_core.cli.index import (
    engine_of,
    engine_options,
    fields_of,
    json_option,
    print_built,
    progress_bar,
    source_options,
    source_path,
)
from sentret_core.cli.outputs import Files, declare, output
from sentret_core.defaults import SHARD_DOCUMENTS

OWN_MODEL = "the index's own"


def register(sub: Any) -> None:
    p = command(sub, "parse",
                "Run the spaCy pass over documents into parsed shards (Parquet); `sentret build` indexes them.",
                _run_parse)
    p.add_argument("source", help="folder, .jsonl or .csv file (.gz too), '-' for standard input, or 'demo'")
    p.add_argument("--out", required=True, help="the shards folder to create")
    source_options(p)
    engine_options(p)
    p.add_argument("--shard-documents", type=int, default=SHARD_DOCUMENTS, metavar="N",
                   help=f"documents per shard (default {SHARD_DOCUMENTS:,}); a parse that stops keeps its finished "
                        "shards, and the same command run again goes on from them")
    p.add_argument("--force", action="store_true", help="replace the shards at --out (never anything else)")
    json_option(p)
    declare(p, lambda args: Files([source_path(args.source)], output("--out", args.out, "shards"), args.force))

    p = command(sub, "build", "Build an index from parsed shards (no spaCy: seconds, not hours).", _run_build)
    p.add_argument("shards", help="a shards folder made by `sentret parse`")
    p.add_argument("--out", required=True, help="the index folder to create")
    p.add_argument("--force", action="store_true", help="replace the index at --out (never anything else)")
    declare(p, lambda args: Files([args.shards], output("--out", args.out, "index"), args.force))
    json_option(p)

    p = command(sub, "add",
                "Add documents to an index: parse only them, then rebuild the index from all its shards "
                "(ids already in the index are refused; the old index stays until the new one is complete).",
                _run_add)
    p.add_argument("index", help="an index folder built by `sentret index` or `sentret build`")
    p.add_argument("source", help="folder, .jsonl or .csv file (.gz too) of the new documents, or '-'")
    source_options(p)
    engine_options(p, model_default=OWN_MODEL)
    json_option(p)
    declare(p, lambda args: Files([args.index, args.source], output("INDEX", args.index, "index", home=args.index)))


def _run_parse(args: argparse.Namespace) -> int:
    from sentret_core.ingest.build import parse_source

    with progress_bar(args.source, "parsing") as progress:
        manifest, notes = parse_source(args.source, args.out, fmt=args.format, encoding=args.encoding,
                                       fields=fields_of(args), engine=engine_of(args), force=args.force,
                                       progress=progress, shard_documents=args.shard_documents)
    counts = manifest["counts"]
    if args.json:
        print(json.dumps({"path": args.out, "counts": counts, "shards": len(manifest["shards"]), "notes": list(notes)},
                         indent=2, ensure_ascii=False))
        return 0
    for note in notes:
        print(f"sentret: note: {note}", file=sys.stderr)
    print(f"parsed {counts['documents']:,} documents, {counts['sentences']:,} sentences, {counts['words']:,} words "
          f"into {len(manifest['shards'])} shard(s) → {args.out}")
    return 0


def _run_build(args: argparse.Namespace) -> int:
    from sentret_core.ingest.build import build_from_shards

    print_built(build_from_shards(args.shards, args.out, force=args.force), "built", as_json=args.json)
    return 0


def _run_add(args: argparse.Namespace) -> int:
    from sentret_core.ingest.build import add_documents
    from sentret_core.models.training.sentence_vectors import carry_vectors

    model = "" if args.model == OWN_MODEL else args.model  # "": the model the index was parsed with
    with progress_bar(args.source, "adding") as progress:
        summary = add_documents(args.index, args.source, fmt=args.format, encoding=args.encoding,
                                fields=fields_of(args), engine=engine_of(args, model), progress=progress,
                                carry=carry_vectors)
    print_built(summary, "now", as_json=args.json)
    return 0
