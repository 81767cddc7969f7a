"""``sentret search | support``: rank sentences for a query; entities with their support sentences."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sentret_core.cli.common import command, param_pairs
from sentret_core.defaults import (
    DEFAULT_ENTITY_SCORE,
    DEFAULT_ENTITY_WEIGHTING,
    DEFAULT_EXCLUDED_LABELS,
    DEFAULT_K,
    DEFAULT_PER_ENTITY,
    DEFAULT_RANKER,
    DEFAULT_SUPPORT_ENTITIES,
    DEFAULT_SUPPORT_MODELS,
    MAX_K,
)


def register(sub: Any) -> None:
    _add_search(sub)
    _add_support(sub)


def _add_search(sub: Any) -> None:
    p = command(sub, "search", "Rank the sentences of an index for a query under one model.", _run_search)
    p.add_argument("index", help="an index folder")
    p.add_argument("query")
    p.add_argument("--model", default=DEFAULT_RANKER, help="a registered model (see `sentret models`)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a model parameter")
    p.add_argument("--k", type=int, default=10, help="how many sentences (default 10)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _run_search(args: argparse.Namespace) -> int:
    from sentret_core.checks import check_int, clean_text
    from sentret_core.index.reader import Index
    from sentret_core.models import search

    check_int("--k", args.k, 1, MAX_K)
    query = clean_text(args.query).text  # what search() searches for, and what we print
    index = Index.load(args.index)
    found = search(index, args.query, args.model, args.k, **param_pairs(args.param, qualified=False))
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
            "query": query,
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
    p = command(sub, "support", what, _run_support)
    p.add_argument("index", help="an index folder")
    p.add_argument("query")
    p.add_argument("--ranker", default=DEFAULT_RANKER, help="the sentence scorer that gives S_q")
    p.add_argument("--k", type=int, default=DEFAULT_K, help="|S_q|: top sentences the entities come from")
    p.add_argument("--entity-score", default=DEFAULT_ENTITY_SCORE,
                   choices=["kld", "frequency", "rarity", "combination"])
    p.add_argument("--entity-weighting", default=DEFAULT_ENTITY_WEIGHTING, choices=["none", "rank", "score"],
                   help="how each sentence of S_q counts in the entity scores: none (Blanco & Zaragoza), "
                   "its rank or its score")
    p.add_argument("--labels", default=None, help="entity labels to keep, comma-separated (default: all but "
                   f"{' and '.join(sorted(DEFAULT_EXCLUDED_LABELS))})")
    p.add_argument("--models", default=",".join(DEFAULT_SUPPORT_MODELS), help="support models, comma-separated")
    p.add_argument("--top-entities", type=int, default=DEFAULT_SUPPORT_ENTITIES)
    p.add_argument("--per-entity", type=int, default=DEFAULT_PER_ENTITY, help="support sentences per entity and model")
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
        params=param_pairs(args.param, qualified=True), entity_weighting=args.entity_weighting,
    )
    if args.json:
        print(result.to_json(indent=2))
        return 0
    print(f"query: {result.query}  (terms: {' '.join(result.terms) or 'none'})  ranker {result.ranker}, "
          f"k={result.k}: |S_q| = {result.n_top}, |Ŝ_q| = {result.n_context}")
    if result.reason:
        print(f"no entities: {result.reason}")
    for es in result.entities:
        e = es.entity
        print(f"\n{e.rank:>2}. {e.text} ({e.label})  {result.entity_score} {e.score:.4f}  "
              f"|S_qe| {e.frequency}  |Ŝ_qe| {e.context_frequency}")
        for model, sentences in es.sentences.items():
            print(f"    ── {model} ({es.candidates[model]} candidates)")
            for s in sentences:
                lines = textwrap.wrap(f"[{s.title}] {s.text}", width=96)
                print(f"      {s.rank}. {s.score:8.3f}  " + "\n                  ".join(lines))
            if not sentences:
                print("      (no candidate sentence)")
    return 0
