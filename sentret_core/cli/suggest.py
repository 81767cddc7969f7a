"""``sentret judgments suggest``: give a session's pooled sentences suggested grades, from a model or a file.

    sentret judgments suggest DB --session NAME --model MODEL [--index DIR] [--source NAME]
    sentret judgments suggest DB --session NAME --file FILE --format qrels|jsonl [--scale ...] [--source NAME]

Annotators see a suggestion beside the sentence (and may hide it); it never counts as a grade
(:mod:`sentret_core.annotation.suggestions`). ``--index`` defaults to the index the session was pooled from.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sentret_core.cli.outputs import Files, declare, output


def register(commands: Any, sub: Callable[..., argparse.ArgumentParser], add_token: Callable[[Any], None]) -> None:
    """Add ``suggest`` to the ``judgments`` sub-commands (``sub`` adds DB and --session)."""
    p = sub(commands, "suggest", "Suggested grades for a session's sentences, from a model or a file: shown to "
            "annotators, never counted as a grade.", _suggest)
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--model", help="a support model: its ranking of each topic's sentences, by quarter 4-1")
    where.add_argument("--file", help="qrels or JSONL grades ('-' for standard input)")
    p.add_argument("--format", choices=("qrels", "jsonl"), default=None, help="the --file's format")
    p.add_argument("--scale", default="auto", choices=("auto", "trec", "1-4", "binary"),
                   help="qrels grades: auto (sniffed), trec 0-3, 1-4 or binary")
    p.add_argument("--index", default=None, help="--model: the index (default: the session's)")
    p.add_argument("--source", default=None, help="the suggestions' name (default: the model's or the file's)")
    add_token(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    declare(p, lambda args: Files([f for f in (args.file, args.index) if f and f != "-"],
                                  output("DB", args.db, "database")))


def _suggest(args: argparse.Namespace) -> int:
    from sentret_core.annotation.io import parse_jsonl_lines, parse_qrels_lines
    from sentret_core.annotation.records import IMPORT_SCALES
    from sentret_core.annotation.scales import AUTO, qrels_grades, sniff_or_default
    from sentret_core.annotation.suggestions import add_suggestions, file_suggestions, model_suggestions
    from sentret_core.cli.judgments_access import admin_of, open_store, read_file
    from sentret_core.errors import SentretError
    from sentret_core.index.reader import Index

    if args.file is not None and args.format is None:
        raise SentretError("--file needs --format qrels or jsonl")
    with open_store(args.db) as store:
        admin = admin_of(store, args)
        if args.model is not None:
            index = Index.load(args.index or store.session(args.session).index_path)
            grades = model_suggestions(admin, args.session, index, args.model)
            source = args.source or args.model
        else:
            text = read_file(args.file, args.format)
            lines = text.splitlines()
            if args.format == "qrels":
                scale = args.scale if args.scale != AUTO else getattr(sniff_or_default(qrels_grades(lines)), "scale",
                                                                      "trec")
                parsed = parse_qrels_lines(lines, "suggestions", IMPORT_SCALES[scale], scale)
            else:
                parsed = parse_jsonl_lines(lines)
            grades = file_suggestions(admin, args.session, parsed)
            source = args.source or (Path(args.file).name if args.file != "-" else "standard input")
        count = add_suggestions(admin, args.session, source, grades)
    if args.json:
        print(json.dumps({"session": args.session, "source": source, "suggestions": count}, ensure_ascii=False))
    else:
        print(f"stored {count} suggestion(s) from {source!r} in session {args.session!r}", file=sys.stderr)
    return 0
