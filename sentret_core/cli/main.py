"""The ``sentret`` command: thin over the library, heavy imports only inside each command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return EXIT_USAGE
    from sentret_core.errors import SentretError

    try:
        return int(args.run(args) or 0)
    except SentretError as err:
        print(f"sentret: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("sentret: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sentret", description="Entity support sentences.")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for register in COMMANDS:
        register(sub)
    return parser


def _command(
    sub: Any, name: str, help: str, run: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help)
    parser.set_defaults(run=run)
    return parser


# --- index / info / verify ------------------------------------------------------------------


def _add_index(sub: Any) -> None:
    from sentret_core.ingest.nlp import DEFAULT_BATCH_SIZE, DEFAULT_MODEL

    p = _command(
        sub, "index", "Index documents: a folder of .txt/.md, a .jsonl, a .csv, or 'demo'.", _run_index
    )
    p.add_argument(
        "source", help="folder, .jsonl or .csv file, or 'demo' (Wikipedia vital-article summaries)"
    )
    p.add_argument("--out", required=True, help="the index folder to create")
    p.add_argument("--format", default="auto", choices=["auto", "txt", "jsonl", "csv"])
    p.add_argument("--encoding", default="utf-8", help="text encoding of the source files (default utf-8)")
    p.add_argument("--n-process", type=int, default=2, help="spaCy worker processes (default 2)")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="documents per spaCy batch")
    p.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"installed spaCy pipeline (default {DEFAULT_MODEL})"
    )
    p.add_argument("--force", action="store_true", help="replace an existing index or folder at --out")


def _run_index(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from sentret_core.ingest.build import build_index

    total = 10_033 if args.source == "demo" else None
    interval = 0.5 if sys.stderr.isatty() else 15.0  # a log file gets a line every 15 s, not a flood
    with tqdm(total=total, unit="doc", desc="indexing", file=sys.stderr, mininterval=interval) as bar:
        last = [0]

        def progress(documents: int, words: int) -> None:
            bar.update(documents - last[0])
            last[0] = documents
            rate = words / bar.format_dict["elapsed"] if bar.format_dict["elapsed"] else 0.0
            bar.set_postfix_str(f"{words:,} words, {rate:,.0f} words/s", refresh=False)

        summary = build_index(
            args.source,
            args.out,
            fmt=args.format,
            encoding=args.encoding,
            model=args.model,
            n_process=args.n_process,
            batch_size=args.batch_size,
            force=args.force,
            progress=progress,
        )
    print(
        f"indexed {summary.documents:,} documents, {summary.sentences:,} sentences, {summary.words:,} words, "
        f"{summary.terms:,} terms, {summary.entities:,} entities in {summary.seconds:.1f} s "
        f"({summary.words_per_second:,.0f} words/s) → {summary.path}"
    )
    return 0


def _add_info(sub: Any) -> None:
    p = _command(sub, "info", "Counts of an index and its most frequent entities per label.", _run_info)
    p.add_argument("index", help="an index folder")
    p.add_argument("--top", type=int, default=5, help="entities shown per label (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _run_info(args: argparse.Namespace) -> int:
    from sentret_core.index.overview import overview
    from sentret_core.index.reader import Index

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
    p = _command(sub, "verify", "Check every file of an index against its manifest's sha256.", _run_verify)
    p.add_argument("index", help="an index folder")


def _run_verify(args: argparse.Namespace) -> int:
    from sentret_core.index.reader import verify

    problems = verify(args.index)
    for problem in problems:
        print(f"{args.index}: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"{args.index}: ok")
    return 0


# --- search / support -----------------------------------------------------------------------


def _param_pairs(items: Sequence[str], *, qualified: bool) -> dict[str, Any]:
    """``name=value`` (or ``model.name=value`` when ``qualified``) pairs; values stay strings."""
    from sentret_core.errors import SentretError

    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SentretError(f"--param {item!r}: expected {'model.' if qualified else ''}name=value")
        if qualified:
            model, dot, name = key.rpartition(".")
            if not dot or not model:
                raise SentretError(f"--param {item!r}: expected model.name=value, e.g. bm25f.v1.k1=0.9")
            parsed.setdefault(model, {})[name] = value
        else:
            parsed[key] = value
    return parsed


def _add_search(sub: Any) -> None:
    p = _command(sub, "search", "Rank the sentences of an index for a query under one model.", _run_search)
    p.add_argument("index", help="an index folder")
    p.add_argument("query")
    p.add_argument("--model", default="bm25f.v1", help="a registered model (see `sentret models`)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a model parameter")
    p.add_argument("--k", type=int, default=10, help="how many sentences (default 10)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _run_search(args: argparse.Namespace) -> int:
    from sentret_core.index.reader import Index
    from sentret_core.models import score, top_k

    index = Index.load(args.index)
    if args.k < 1:
        from sentret_core.errors import SentretError

        raise SentretError(f"--k must be at least 1 (got {args.k})")
    found = top_k(score(index, args.query, args.model, **_param_pairs(args.param, qualified=False)), args.k)
    hits = [
        {
            "rank": rank,
            "sentence": int(sentence),
            "score": float(value),
            "title": index.titles[int(index.sent_doc[sentence])],
            "text": index.texts[int(sentence)],
        }
        for rank, (sentence, value) in enumerate(zip(found.ids, found.scores), start=1)
    ]
    if args.json:
        result = {
            "query": args.query,
            "terms": list(found.terms),
            "model": found.model,
            "params": found.params.to_dict(),
            "reason": found.reason,
            "hits": hits,
        }
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(f"{found.model}  terms: {' '.join(found.terms) or '(none)'}")
    if found.reason:
        print(f"no results: {found.reason}")
    for hit in hits:
        print(f"{hit['rank']:>3}. {hit['score']:9.4f}  [{hit['title']}] {hit['text']}")
    return 0


def _add_support(sub: Any) -> None:
    what = "Entities of a query with their best support sentences per model."
    p = _command(sub, "support", what, _run_support)
    p.add_argument("index", help="an index folder")
    p.add_argument("query")
    p.add_argument("--ranker", default="bm25f.v1", help="the sentence scorer that gives S_q")
    p.add_argument("--k", type=int, default=1000, help="|S_q|: top sentences the entities come from")
    p.add_argument("--entity-score", default="kld", choices=["kld", "frequency", "rarity", "combination"])
    p.add_argument("--labels", default=None, help="entity labels to keep, comma-separated (default: all but "
                   "CARDINAL and ORDINAL)")
    p.add_argument("--models", default="bm25f.v1,lm-2si.v1,tfisf.v1", help="support models, comma-separated")
    p.add_argument("--top-entities", type=int, default=20)
    p.add_argument("--per-entity", type=int, default=3, help="support sentences per entity and model")
    p.add_argument("--param", action="append", default=[], metavar="MODEL.NAME=VALUE")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _run_support(args: argparse.Namespace) -> int:
    import textwrap

    from sentret_core.index.reader import Index
    from sentret_core.support.engine import support

    result = support(
        Index.load(args.index), args.query, ranker=args.ranker, k=args.k, entity_score=args.entity_score,
        entity_labels=args.labels.split(",") if args.labels else None, top_entities=args.top_entities,
        models=[m.strip() for m in args.models.split(",") if m.strip()], per_entity=args.per_entity,
        params=_param_pairs(args.param, qualified=True),
    )  # fmt: skip
    if args.json:
        print(result.to_json(indent=2))
        return 0
    print(f"query: {result.query}  (terms: {' '.join(result.terms) or 'none'})  ranker {result.ranker}, "
          f"k={result.k}: |S_q| = {result.n_top}, |Ŝ_q| = {result.n_context}")  # fmt: skip
    if result.reason:
        print(f"no entities: {result.reason}")
    for es in result.entities:
        e = es.entity
        print(f"\n{e.rank:>2}. {e.text} ({e.label})  {result.entity_score} {e.score:.4f}  "
              f"|S_qe| {e.frequency}  |Ŝ_qe| {e.context_frequency}")  # fmt: skip
        for model, sentences in es.sentences.items():
            print(f"    ── {model} ({es.candidates[model]} candidates)")
            for s in sentences:
                lines = textwrap.wrap(f"[{s.title}] {s.text}", width=96)
                print(f"      {s.rank}. {s.score:8.3f}  " + "\n                  ".join(lines))
            if not sentences:
                print("      (no candidate sentence)")
    return 0


def _add_models(sub: Any) -> None:
    p = _command(sub, "models", "List the registered sentence scorers and their parameters.", _run_models)
    p.add_argument("--json", action="store_true")


def _run_models(args: argparse.Namespace) -> int:
    from sentret_core.models import list_models

    rows = [
        {
            "name": spec.name,
            "display_name": spec.display_name,
            "paper": spec.paper,
            "params": {p.name: {"default": p.default, "allowed": p.allowed(), "description": p.description}
                       for p in spec.param_specs()},
        }
        for spec in list_models()
    ]  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
        return 0
    for spec in list_models():
        params = ", ".join(f"{p.name}={p.default}" for p in spec.param_specs()) or "no parameters"
        print(f"{spec.name:<20} {spec.display_name:<34} {params}")
    return 0


def _add_eval(sub: Any) -> None:
    from sentret_core.cli.eval import register

    register(sub)


def _add_judgments(sub: Any) -> None:
    from sentret_core.cli.judgments import register

    register(sub)


COMMANDS: list[Callable[[Any], None]] = [
    _add_index,
    _add_info,
    _add_verify,
    _add_search,
    _add_support,
    _add_models,
    _add_eval,
    _add_judgments,
]

if __name__ == "__main__":
    raise SystemExit(main())
