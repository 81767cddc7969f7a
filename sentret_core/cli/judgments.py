"""``sentret judgments …``: create assessment sessions, manage annotators, export and import judgments,
measure agreement.

Wired into ``cli.py`` through :func:`register`; heavy imports happen inside the commands only.

    sentret judgments create DB --session NAME --index DIR --topics FILE [--pool-depth N]
                             [--models a,b,c] [--top-entities N] [--seed S] [--graders K] [--overlap PCT]
                             [--ranker M] [--k K] [--entity-score S] [--entity-weighting W]
                             [--guidelines FILE] [--shared-order] [--annotators a,b] [--preview]
    sentret judgments annotators DB --session NAME [--add NAME] [--add-reviewer NAME] [--add-admin NAME]
                             [--role NAME ROLE] [--new-secret NAME]
                             [--rename OLD NEW] [--disable NAME] [--enable NAME] [--remove NAME]
    sentret judgments export DB --session NAME --format qrels|csv|jsonl|topics|label-studio|hf-jsonl
                             [--scale trec|1-4] [--ids docno|internal] [--adjudicate majority|mean|ANNOTATOR]
                             [--out FILE]
    sentret judgments import DB --session NAME --format qrels|jsonl|label-studio|hf-jsonl FILE [--annotator NAME]
                             [--scale auto|trec|1-4|binary]
    sentret judgments agreement DB --session NAME [--json]

The topics file holds one ``query<TAB>entity`` per line (entity key ``text|LABEL`` or plain
text; without an entity, the query's top entities). Each annotator added (``--annotators`` or
``annotators --add``) gets a personal secret, printed once: a sign-in link (``--url``, default
http://localhost:8501) and a passphrase.

**Admin token.** ``annotators``, ``export``, ``import`` and ``agreement`` (and ``create`` with
``--annotators``) read or write every annotator's grades or secrets, so they need the admin token:
``$SENTRET_ADMIN_TOKEN`` or ``--token``. When the variable is set, ``--token`` must match it. When it
is not, the token given is this process's token: the CLI opens the database file directly, so whoever
can read or write the file can administer it anyway — the token only guards against mistakes, and
file permissions are the real boundary.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from sentret_core import defaults
from sentret_core.cli import suggest
from sentret_core.cli.common import PROGRESS_S, every, write_output
from sentret_core.cli.judgments_access import admin_of, open_store, read_file
from sentret_core.cli.outputs import Files, declare, output

if TYPE_CHECKING:
    pass

DEFAULT_URL = "http://localhost:8501"
FORMATS_OUT = ("qrels", "csv", "jsonl", "topics", "label-studio", "hf-jsonl")
FORMATS_IN = ("qrels", "jsonl", "label-studio", "hf-jsonl")


def register(sub: Any) -> None:
    """Add the ``judgments`` command and its sub-commands to the ``sentret`` sub-parsers ``sub``."""
    what = "Assessment sessions: create one from (query, entity) topics, export, import, agreement."
    parser: argparse.ArgumentParser = sub.add_parser("judgments", help=what, description=what)
    parser.set_defaults(run=lambda args: _usage(parser))
    commands = parser.add_subparsers(title="judgments commands", metavar="ACTION")

    create = _sub(commands, "create", "Pool the topics' candidate sentences into a new session.", _create)
    create.add_argument("--index", required=True, help="the index folder the candidates come from")
    create.add_argument("--topics", required=True, help="'query<TAB>entity<TAB>narrative' lines (entity and "
                        "narrative optional; the narrative, what the topic asks, is shown while grading)")
    create.add_argument("--pool-depth", type=int, default=10, help="top-n of each model pooled (default 10)")
    create.add_argument("--models", default=",".join(defaults.DEFAULT_SUPPORT_MODELS),
                        help="pooling models, comma-separated")
    create.add_argument("--top-entities", type=int, default=5, help="entities per bare query (default 5)")
    create.add_argument("--seed", type=int, default=0, help="shuffle seed, recorded (default 0)")
    create.add_argument("--ranker", default=defaults.DEFAULT_RANKER, help="a bare query's S_q: the sentence scorer "
                        "its entities come from (default %(default)s, as the Explore page)")
    create.add_argument("--k", type=int, default=defaults.EXPLORE_K,
                        help="|S_q| (default %(default)s, as the Explore page)")
    create.add_argument("--entity-score", default=defaults.DEFAULT_ENTITY_SCORE,
                        choices=["kld", "frequency", "rarity", "combination"],
                        help="how a bare query's entities are ranked (default %(default)s)")
    create.add_argument("--entity-weighting", default=defaults.EXPLORE_ENTITY_WEIGHTING,
                        choices=["none", "rank", "score"], help="how each sentence of S_q counts in the entity "
                        "scores (default %(default)s, as the Explore page; none is Blanco & Zaragoza's)")
    create.add_argument("--guidelines", default=None, metavar="FILE",
                        help="the annotators' guidelines, a UTF-8 text file shown on their grading page")
    create.add_argument("--graders", type=int, default=0,
                        help="annotators per shared item (default 0: every annotator)")
    create.add_argument("--overlap", type=int, default=100,
                        help="percent of the items shared by --graders annotators; the rest are split, one "
                        "annotator each (default 100)")
    create.add_argument("--shared-order", action="store_true",
                        help="every annotator in the session's order (default: each in their own shuffled order)")
    create.add_argument("--annotators", default="", help="annotators to add, comma-separated (secrets printed)")
    create.add_argument("--preview", action="store_true",
                        help="print the pooled (query, entity) pairs and store nothing")
    _url(create)
    add_token_option(create)
    create.add_argument("--json", action="store_true", help="print one JSON object")
    declare(create, lambda args: Files([args.index, args.topics, *([args.guidelines] if args.guidelines else [])],
                                       output("DB", args.db, "database")))

    people = _sub(commands, "annotators", "List a session's annotators; add, rename, disable or remove them.",
                  _annotators)
    people.add_argument("--add", action="append", default=[], metavar="NAME", help="add an annotator (repeatable)")
    people.add_argument("--add-reviewer", action="append", default=[], metavar="NAME",
                        help="add a reviewer: adjudicates disagreements, does not grade")
    people.add_argument("--add-admin", action="append", default=[], metavar="NAME",
                        help="add an admin of this session only (signs in with a personal secret)")
    people.add_argument("--role", nargs=2, action="append", default=[], metavar=("NAME", "ROLE"),
                        help="give a person the role annotator, reviewer or admin (they are signed out)")
    people.add_argument("--new-secret", action="append", default=[], metavar="NAME",
                        help="give an annotator a new link and passphrase (the old ones stop working)")
    people.add_argument("--rename", nargs=2, action="append", default=[], metavar=("OLD", "NEW"))
    people.add_argument("--disable", action="append", default=[], metavar="NAME")
    people.add_argument("--enable", action="append", default=[], metavar="NAME")
    people.add_argument("--remove", action="append", default=[], metavar="NAME",
                        help="remove an annotator: their grades count nowhere, but stay in the history")
    _url(people)
    add_token_option(people)
    people.add_argument("--json", action="store_true", help="print one JSON object")

    export = _sub(commands, "export", "Write a session's judgments as qrels, CSV or JSONL, or its topics for "
                  "`sentret run` (their qids are the qrels' topic ids).", _export)
    export.add_argument("--format", required=True, choices=FORMATS_OUT)
    export.add_argument("--scale", default=defaults.DEFAULT_QRELS_SCALE, choices=("trec", "1-4"),
                        help=f"qrels grades: trec 0 non-relevant … 3 (relevant ≥ {defaults.TREC_RELEVANT_GRADE}); "
                        f"1-4 as stored (relevant ≥ {defaults.RELEVANT_GRADE}); default {defaults.DEFAULT_QRELS_SCALE}")
    export.add_argument("--adjudicate", default="majority", metavar="RULE",
                        help="qrels only: majority (default), mean, or an annotator's name")
    export.add_argument("--ids", default="docno", choices=("docno", "internal"),
                        help="qrels only: name a sentence by its docno, <document id>-<position>, as `sentret run` "
                             "does (default), or by the index's internal id, which a rebuild changes")
    export.add_argument("--out", default=None, help="the file to write (default: standard output)")
    export.add_argument("--force", action="store_true",
                        help="replace an earlier export of the same format (never a file of another kind)")
    add_token_option(export)
    declare(export, lambda args: Files([args.db], output("--out", args.out, args.format), args.force,
                                       databases=[args.db]))

    imp = _sub(commands, "import", "Add judgments to a session from qrels or JSONL.", _import)
    imp.add_argument("--format", required=True, choices=FORMATS_IN)
    imp.add_argument("file", help="the qrels or JSONL file ('-' for standard input)")
    imp.add_argument("--annotator", default=None, help="qrels: the import annotator the grades belong to")
    imp.add_argument("--scale", default="auto", choices=("auto", "trec", "1-4", "binary"),
                     help="qrels grades: auto (default: sniffed from the values, and said), trec 0-3, 1-4, "
                     "or binary 0 non-relevant / 1 relevant")
    add_token_option(imp)
    imp.add_argument("--json", action="store_true", help="print one JSON object")
    declare(imp, lambda args: Files([args.file], output("DB", args.db, "database")))

    agree = _sub(commands, "agreement", "Cohen's κ per pair, Fleiss' κ and Krippendorff's α.", _agreement)
    agree.add_argument("--json", action="store_true", help="print one JSON object")
    add_token_option(agree)
    suggest.register(commands, _sub, add_token_option)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _sub(commands: Any, name: str, what: str, run: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = commands.add_parser(name, help=what, description=what)
    p.set_defaults(run=run)
    p.add_argument("db", metavar="DB", help="the judgments database (SQLite; created if missing)")
    p.add_argument("--session", required=True, help="the session's name")
    return p


def _url(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", default=DEFAULT_URL, help=f"the app's address, for sign-in links (default {DEFAULT_URL})")


def add_token_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--token", default=None, help="the admin token (default: $SENTRET_ADMIN_TOKEN)")


def _create(args: argparse.Namespace) -> int:
    from sentret_core.annotation.item_order import ItemOrder
    from sentret_core.annotation.records import EntityRanking
    from sentret_core.annotation.session_setup import check_guidelines, create_session
    from sentret_core.index.reader import Index

    order = ItemOrder(args.overlap, args.graders, not args.shared_order, args.seed)  # checked before the pool
    topics = read_file(args.topics, "topics")
    guidelines = check_guidelines(read_file(args.guidelines, "guidelines")) if args.guidelines else ""
    args.ranking = EntityRanking(args.ranker, args.k, args.entity_score, args.entity_weighting)
    index = Index.load(args.index)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    names = [n for n in args.annotators.split(",") if n.strip()]
    if args.preview:
        return _preview(index, topics, models, args)
    with open_store(args.db, create=True) as store:
        admin = admin_of(store, args) if names else None  # checked before anything is written
        info, plan = create_session(
            store, args.session, index, topics, order=order, guidelines=guidelines, ranking=args.ranking,
            models=models, depth=args.pool_depth, seed=args.seed, top_entities=args.top_entities,
            progress=every(PROGRESS_S, "judgments create", "pooled", "queries", quiet_when_quick=True),
        )
        secrets = [admin.add_annotator(info.name, name) for name in names] if admin else []
    for note in plan.notes:
        print(f"sentret: left out {note}", file=sys.stderr)
    if args.json:
        _print_json({"session": info.name, "items": info.n_items, "pairs": len(plan.topics),
                     "queries": len(info.queries), "models": list(info.settings.models), "depth": info.settings.depth,
                     "seed": info.settings.seed, "ranking": info.settings.ranking.to_dict(), "order": order.describe(),
                     "annotators": _secret_records(secrets, args.url)})
        return 0
    print(f"created session {info.name!r}: {info.n_items} items over {len(plan.topics)} (query, entity) "
          f"pairs from {len(info.queries)} queries; models {', '.join(info.settings.models)}, depth "
          f"{info.settings.depth}, seed {info.settings.seed}; {order.describe()}; a bare query's "
          f"{info.settings.ranking.describe()}")
    _print_secrets(secrets, args.url)
    if not secrets:
        print("add annotators with `sentret judgments annotators DB --session NAME --add NAME`")
    return 0


def _preview(index: Any, topics: str, models: list[str], args: argparse.Namespace) -> int:
    """The pairs a session would pool (restating entities left out as Explore does), nothing stored."""
    from sentret_core.annotation.session_setup import build_pool, topic_label

    plan = build_pool(index, topics, models=models, depth=args.pool_depth, seed=args.seed,
                      top_entities=args.top_entities, ranking=args.ranking,
                      progress=every(PROGRESS_S, "judgments create", "pooled", "queries", quiet_when_quick=True))
    for note in plan.notes:
        print(f"sentret: left out {note}", file=sys.stderr)
    if args.json:
        _print_json({"session": args.session, "items": len(plan.items), "stored": False,
                     "ranking": plan.settings.ranking.to_dict(),
                     "pairs": [{"topic": topic_label(t.topic_id), "items": len(t.pooled),
                                "narrative": plan.narratives.get((t.query, t.entity), "")} for t in plan.topics]})
        return 0
    for topic in plan.topics:
        n = len(topic.pooled)
        print(f"{topic_label(topic.topic_id)}\t{n} item{'s' if n != 1 else ''}")
    print(f"preview of session {args.session!r}: {len(plan.items)} items over {len(plan.topics)} (query, entity) "
          f"pairs; a bare query's {plan.settings.ranking.describe()}; nothing stored (run again without "
          "--preview to create it)")
    return 0


def _print_json(record: dict[str, Any]) -> None:
    print(json.dumps(record, indent=2, ensure_ascii=False))


def _secret_records(secrets: list[Any], url: str) -> list[dict[str, str]]:
    """Each new secret, shown this once (only its hash is stored)."""
    from sentret_core.annotation.identity import sign_in_link

    return [{"name": s.name, "link": sign_in_link(url, s), "passphrase": s.passphrase} for s in secrets]


def _print_secrets(secrets: list[Any], url: str) -> None:
    from sentret_core.annotation.identity import sign_in_link

    for secret in secrets:
        print(f"annotator {secret.name!r}: link {sign_in_link(url, secret)}  passphrase {secret.passphrase}")
    if secrets:
        print("each secret is shown this once: only its hash is stored")


def _annotators(args: argparse.Namespace) -> int:
    with open_store(args.db) as store:
        admin = admin_of(store, args)
        store.session(args.session)  # the session exists
        secrets = []
        for role, names in (("annotator", args.add), ("reviewer", args.add_reviewer), ("admin", args.add_admin)):
            secrets += [admin.add_annotator(args.session, name, role=role) for name in names]
        for name, role in args.role:
            admin.set_role(args.session, name, role)
        for name in args.new_secret:
            secrets.append(admin.new_secret(args.session, name))
        for old, new in args.rename:
            admin.rename_annotator(args.session, old, new)
        for name in args.disable:
            admin.disable_annotator(args.session, name)
        for name in args.enable:
            admin.enable_annotator(args.session, name)
        for name in args.remove:
            admin.remove_annotator(args.session, name)
        people = admin.annotators(args.session)
    if args.json:
        _print_json({"session": args.session, "new_secrets": _secret_records(secrets, args.url),
                     "annotators": [{"name": w.name, "role": w.role, "status": w.status, "graded": w.graded}
                                    for w in people]})
        return 0
    _print_secrets(secrets, args.url)
    print(f"session {args.session!r}: {len(people)} annotator(s)")
    for who in people:
        print(f"  {who.name}  {who.role}  {who.status}  {who.graded} graded")
    return 0


def _export(args: argparse.Namespace) -> int:
    from sentret_core.annotation.interchange import exporters
    from sentret_core.errors import SentretError

    with open_store(args.db, read_only=True) as store:
        admin = admin_of(store, args)
        if args.format == "qrels":
            rule = args.adjudicate
            if rule in ("majority", "mean"):
                text = admin.export_qrels(args.session, rule=rule, scale=args.scale, ids=args.ids)
            else:
                text = admin.export_qrels(args.session, rule="annotator", annotator=rule, scale=args.scale,
                                          ids=args.ids)
        elif args.adjudicate != "majority" or args.scale != defaults.DEFAULT_QRELS_SCALE or args.ids != "docno":
            raise SentretError("--adjudicate, --scale and --ids apply to --format qrels only")
        else:
            text = exporters(admin)[args.format](args.session)
    if args.format == "qrels":
        from sentret_core.annotation.scales import export_note

        print(f"sentret: {export_note(args.scale)}", file=sys.stderr)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    write_output(args.out, text)
    print(f"wrote {text.count(chr(10))} lines to {args.out}", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    from sentret_core.annotation.interchange import jsonl_lines
    from sentret_core.annotation.scales import AUTO, qrels_grades, sniff_or_default
    from sentret_core.errors import SentretError

    if args.format == "qrels" and not args.annotator:
        raise SentretError("importing qrels needs --annotator NAME, the import annotator of the grades")
    if args.format != "qrels" and (args.annotator or args.scale != AUTO):
        raise SentretError(f"--annotator and --scale apply to qrels only: {args.format} names its annotators")
    text = read_file(args.file, args.format)
    with open_store(args.db) as store:
        admin = admin_of(store, args)
        if args.format == "qrels":
            lines = text.splitlines()
            reading = sniff_or_default(qrels_grades(lines)) if args.scale == AUTO else None
            scale = args.scale if reading is None else reading.scale  # auto, unsniffed: the parser names the line
            changed = admin.import_qrels(args.session, lines, args.annotator, scale=scale)
            if reading is not None:  # said once the import has worked: an error stays the one message
                print(f"sentret: {reading.sentence()} (--scale to choose another)", file=sys.stderr)
        else:
            changed = admin.import_jsonl(args.session, jsonl_lines(args.format, text))
    if args.json:
        _print_json({"file": args.file, "session": args.session, "changed": changed,
                     "scale": scale if args.format == "qrels" else None})
        return 0
    print(f"imported {args.file}: {changed} judgment(s) added or changed in session {args.session!r}")
    return 0


def _agreement(args: argparse.Namespace) -> int:
    from sentret_core.annotation.agreement_summary import agreement_summary

    with open_store(args.db, read_only=True) as store:
        admin = admin_of(store, args)
        summary = agreement_summary(admin.all_judgments(args.session))
    if args.json:
        print(json.dumps({"session": args.session, **summary.to_dict()}, indent=2, ensure_ascii=False))
        return 0

    print(f"session {args.session!r}: {len(summary.annotators)} annotators, {summary.items} judged items, "
          f"{summary.shared} shared by two or more, {summary.complete} graded by everyone")
    for a, b, kappa in summary.pairs:
        print(f"  Cohen's κ  {a} × {b}: {kappa.text()}; same grade on {summary.percent_of(a, b).text()}")
    print(f"  Fleiss' κ: {summary.fleiss.text()}")
    print(f"  Krippendorff's α (ordinal): {summary.alpha.text()}")
    for note in summary.notes:
        print(f"  note: {note}")
    return 0
