"""``sentret train classes|triggers|minilm|impacts INDEX`` and ``sentret artefacts INDEX``: the explicit steps
that write (and list, and remove) the named artefacts the class and trigger LMs and minilm.v1 read, and the
impact lists BM25F and the LMs read where they help."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from sentret_core.cli.common import PROGRESS_S, command, every
from sentret_core.cli.outputs import Files, declare, inputs_of, output
from sentret_core.defaults import ANN_MIN_SENTENCES


def register(sub: Any) -> None:
    train = command(sub, "train", "Train a named artefact of an index (word classes, trigger tables, sentence "
                    "vectors, impact lists).", _no_kind)
    kinds = train.add_subparsers(title="artefact kinds", metavar="KIND")
    classes = command(kinds, "classes", "Word classes by the exchange algorithm (lm-class.v1, .v2).", _run_classes)
    _common(classes, "classes")
    classes.add_argument("--classes", type=int, default=100, help="number of classes K (default 100)")
    classes.add_argument("--min-count", type=int, default=3, help="words seen fewer times are not clustered (3)")
    classes.add_argument("--iterations", type=int, default=20, help="exchange passes at most (default 20)")
    classes.add_argument("--seed", type=int, default=0, help="seed of the order of the passes (default 0)")
    classes.add_argument("--rare", choices=("assign", "shared"), default="assign",
                         help="rare words: each to its best class, or one shared class")
    triggers = command(kinds, "triggers", "Trigger tables of Momtazi & Klakow, IP&M 2015, §5-6 (lm-trigger.v1, .v2).",
                       _run_triggers)
    _common(triggers, "triggers")
    triggers.add_argument("--qa-pairs", metavar="FILE", help="question/answer pairs for the QA and NE tables "
                          "(a WikiQA TSV, or question<TAB>answer lines)")
    triggers.add_argument("--min-count", type=int, default=2, help="prune corpus pairs seen fewer times (2)")
    triggers.add_argument("--qa-min-count", type=int, default=1, help="prune QA pairs seen fewer times (1)")
    triggers.add_argument("--processes", type=int, default=1, help="spaCy processes for the QA answers")
    minilm = command(kinds, "minilm", "Sentence vectors of every sentence by the MiniLM encoder (minilm.v1); "
                     "resumable: run again after an interruption and it goes on where it stopped.", _run_minilm)
    _common(minilm, "minilm", sources=False)
    minilm.add_argument("--batch-size", type=int, default=32, help="sentences encoded at once (default 32)")
    minilm.add_argument("--engine", default="local", choices=["local", "ray"],
                        help="where to encode: this process, or a pool of Ray actors (pip install 'sentret[scale]')")
    minilm.add_argument("--address", default=None,
                        help="ray: the cluster to join as HOST:PORT or 'auto' (default: start Ray here)")
    minilm.add_argument("--num-workers", type=int, default=None,
                        help="ray: encoding actors, one CPU each (default: one per CPU of the cluster)")
    minilm.add_argument("--ann", action=argparse.BooleanOptionalAction, default=None,
                        help="build a nearest-neighbour graph of the vectors, minilm.v1's first stage on a large "
                             f"index (default: from {ANN_MIN_SENTENCES:,} sentences on)")
    impacts = command(kinds, "impacts", "Impact lists of the most frequent terms (bm25f.v1, tfisf.v1 and the LMs): "
                      "a query pairing such a term with rarer ones reads a few thousand of its sentences, the same "
                      "top k; and "
                      "the largest counts of every term of many postings, which the LMs' and TF-ISF's pruning read.",
                      _run_impacts)
    impacts.add_argument("index", help="an index folder")
    impacts.add_argument("--models", help="comma-separated models, with their default parameters "
                         "(default bm25f.v1,lm-2si.v1,tfisf.v1)")
    impacts.add_argument("--length", type=int, help="sentences per list: a top k of up to half of it is read "
                         "from them (default 16384)")
    impacts.add_argument("--share", type=int, help="a term in more than N/SHARE sentences is listed (default 128)")
    impacts.add_argument("--json", action="store_true", help="print the lists' record as JSON")
    _force(impacts)
    declare(impacts, lambda args: _artefact(args, _impacts_name()))
    listing = command(sub, "artefacts", "List (or remove) the trained artefacts of an index.", _run_artefacts)
    listing.add_argument("index", help="an index folder")
    listing.add_argument("--remove", metavar="NAME", help="delete the artefact NAME")
    listing.add_argument("--json", action="store_true", help="print the records as JSON")


def _common(parser: argparse.ArgumentParser, kind: str, sources: bool = True) -> None:
    parser.add_argument("index", help="an index folder")
    parser.add_argument("--name", default=kind, help=f"artefact name (default {kind!r}, what the model reads)")
    if sources:
        parser.add_argument("--source", action="append", default=[], metavar="INDEX",
                            help="another index whose statistics are added (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the trained artefact's record as JSON")
    _force(parser)
    declare(parser, lambda args: _artefact(args, args.name))


def _force(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true", help="replace an artefact of that name (default: refuse)")


def _artefact(args: argparse.Namespace, name: str) -> Files:
    """An artefact is written inside its index (replaced only with ``--force``), never over what it reads."""
    from sentret_core.index import artefacts

    written = output("--name", name, "artefact", artefacts.folder_of(args.index, name), home=args.index)
    return Files(inputs_of(args, "index", "source", "qa_pairs"), written, args.force)


def _impacts_name() -> str:
    from sentret_core.models.arrays.impacts import NAME

    return NAME


def _no_kind(args: argparse.Namespace) -> int:
    from sentret_core.errors import SentretError

    raise SentretError("say what to train: `sentret train classes INDEX`, `sentret train triggers INDEX`, "
                       "`sentret train minilm INDEX` or `sentret train impacts INDEX`")


def _run_classes(args: argparse.Namespace) -> int:
    from sentret_core.index.reader import Index
    from sentret_core.models.training.classes import train_classes

    clock = time.perf_counter()
    index = Index.load(args.index)
    with _marked(index, "classes"):  # the app says "training in the background" meanwhile
        cmap = train_classes(index, name=args.name, sources=args.source, classes=args.classes,
                             min_count=args.min_count, iterations=args.iterations, seed=args.seed,
                             rare=args.rare, progress=_shares("classes"))
    if args.json:
        return _print_record(args, "classes", time.perf_counter() - clock)
    print(f"{args.index}: word classes {args.name}@{cmap.key[:12]}: {cmap.n_classes} classes, "
          f"{cmap.stats['passes']} passes in {time.perf_counter() - clock:.1f} s")
    return 0


def _run_triggers(args: argparse.Namespace) -> int:
    from sentret_core.index.reader import Index
    from sentret_core.models.training.triggers import TABLES, train_triggers

    clock = time.perf_counter()
    index = Index.load(args.index)
    with _marked(index, "triggers"):
        tables = train_triggers(index, args.qa_pairs, name=args.name, sources=args.source,
                                min_count=args.min_count, qa_min_count=args.qa_min_count,
                                n_process=args.processes)
    if args.json:
        return _print_record(args, "triggers", time.perf_counter() - clock)
    pairs = ", ".join(f"{name} {tables.pairs(name):,}" for name in TABLES)
    print(f"{args.index}: trigger tables {args.name}@{tables.key[:12]} ({pairs} pairs) "
          f"in {time.perf_counter() - clock:.1f} s")
    return 0


def _run_minilm(args: argparse.Namespace) -> int:
    from sentret_core.errors import SentretError
    from sentret_core.index.reader import Index
    from sentret_core.models.minilm.ann import ARRAY as GRAPH
    from sentret_core.models.training.sentence_vectors import KIND, RayOptions, train_minilm

    if args.engine != "ray" and (args.address is not None or args.num_workers is not None):
        raise SentretError("--address and --num-workers are for --engine ray")
    if args.num_workers is not None and args.num_workers < 1:
        raise SentretError(f"--num-workers must be at least 1 (got {args.num_workers})")
    ray = RayOptions(args.address, args.num_workers) if args.engine == "ray" else None
    clock = time.perf_counter()
    index = Index.load(args.index)
    with _marked(index, KIND):
        made = train_minilm(index, name=args.name, batch_size=args.batch_size, ann=args.ann,
                            progress=every(PROGRESS_S, "train", "encoded", "sentences"), ray=ray)
    if args.json:
        return _print_record(args, KIND, time.perf_counter() - clock)
    seconds = time.perf_counter() - clock
    graph = ", with a nearest-neighbour graph" if GRAPH in made.arrays else ""
    print(f"{args.index}: sentence vectors {made.reference} of {index.N:,} sentences ({made.meta['model']}, "
          f"{made.meta['dim']} dimensions, float16{graph}) in {seconds:.1f} s")
    return 0


def _shares(what: str) -> Any:
    """A ``progress(share, doing)`` callback that says how far training is, on stderr, once per pass."""
    def say(share: float, doing: str) -> None:
        print(f"sentret train {what}: {share:.0%} ({doing})", file=sys.stderr, flush=True)

    return say


def _run_impacts(args: argparse.Namespace) -> int:
    from sentret_core.index.reader import Index
    from sentret_core.models.arrays.impacts import KIND, NAME
    from sentret_core.models.training.impacts import train_impacts

    clock = time.perf_counter()
    index = Index.load(args.index)
    with _marked(index, KIND):
        given = {"length": args.length, "share": args.share}
        if args.models is not None:
            given["models"] = [m.strip() for m in args.models.split(",") if m.strip()]
        lists = train_impacts(index, **{key: value for key, value in given.items() if value is not None})
    if args.json:
        return _print_record(argparse.Namespace(index=args.index, name=NAME), KIND, time.perf_counter() - clock)
    print(f"{args.index}: impact lists {lists.reference} of {len(lists.arrays['terms'])} terms for "
          f"{', '.join(lists.meta['models'])}, and the maxima of {len(lists.arrays['maxima/terms'])} terms, "
          f"in {time.perf_counter() - clock:.1f} s")
    return 0


def _marked(index: Any, kind: str) -> Any:
    """Hold the index's training marker (sentret_core.models.training.running) while ``kind`` trains."""
    from sentret_core.models.training.running import expected_seconds, training

    return training(index.path, [kind], expected_seconds(index.manifest, [kind]))


def _print_record(args: argparse.Namespace, kind: str, seconds: float) -> int:
    from sentret_core.index import artefacts

    [record] = [r for r in artefacts.available(args.index, kind) if r["name"] == args.name]
    print(json.dumps({**record, "seconds": seconds}, indent=2, ensure_ascii=False, default=str))
    return 0


def _run_artefacts(args: argparse.Namespace) -> int:
    from sentret_core.index import artefacts
    from sentret_core.index.format import read_manifest

    read_manifest(args.index)  # a clear error if it is not an index
    if args.remove is not None:
        artefacts.remove(args.index, args.remove)
        print(f"{args.index}: removed artefact {args.remove}")
        return 0
    records = artefacts.available(args.index)
    if args.json:
        print(json.dumps(records, indent=2, ensure_ascii=False, default=str))
        return 0
    if not records:
        print(f"{args.index}: no artefacts (train one with `sentret train classes|triggers {args.index}`)")
    for r in records:
        params = ", ".join(f"{k}={v}" for k, v in r.get("params", {}).items())
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(r.get("created", 0))))
        print(f"{r['name']:<20} {r['kind']:<9} {str(r.get('sha256', ''))[:12]}  {created}  {params}")
    return 0
