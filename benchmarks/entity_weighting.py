"""Entity ranking with every sentence of S_q counted once (Blanco & Zaragoza, SIGIR 2010, §3.1) against
weighting each by its match.

    nice -n 10 .venv/bin/python benchmarks/entity_weighting.py [--data ../shared/data] [--demo data/indexes/demo]
                                                               [--ks 100,1000] [--only squad,demo]
                                                               [--distractors none|demo]

Weightings (:mod:`sentret_core.support.weighting`): ``none`` (Blanco & Zaragoza), ``rank`` (w_i = 1/log2(i+1)),
``score`` (the first-stage score min-max normalised over S_q). Ranker BM25F at its defaults, entities by
KLD, labels as the app's default (all but CARDINAL and ORDINAL), k = 100 (the app's) and 1000 (the
library's). Nothing here is tuned: the three weightings are fixed formulas, measured once.

**SQuAD-support** (``squad/dev-v1.1-even.json``; no distractors, as ``sentret eval squad-support``, or
the demo corpus's 10,033 articles beside the paragraphs with ``--distractors demo``):

* entity ranking. squad-support's qrels judge support *sentences*, not entity rankings, so we judge
  entities by this rule: for a question, the relevant entities are its answer entities (the ``entity``
  of its topics); every other entity is not relevant. Per question: reciprocal rank of the first answer
  entity in the KLD ranking of the entities of S_q (0 if none is in S_q), and whether one is first (P@1)
  or in the top 5. Questions whose answer entities all carry an excluded label are left out; entities that
  restate the question (other than an answer) are set aside first, as the Explore page does.
* support sentences. The weighting changes E(q,e') and so eq. 7's ``sum-kld`` / ``avg-kld``: their
  tie-aware MAP and MRR on the benchmark's own qrels (the same computation as ``sentret eval``).

``p entity`` / ``p sum-kld``: two-tailed Wilcoxon signed-rank p-values against ``none`` of the per-question
reciprocal ranks and of sum-kld's per-topic MAP.

**Demo example queries** (``sentret_core/ui/queries/demo.txt`` on the demo index): an entity is *on topic*
for a query iff the demo corpus's own article(s) on the query's subject (``example_topics.json``, one or two
titles per query, chosen from the query's words alone) mention it (*strict*), or also iff the entity's own
demo article names the query's subject (*extended*; the file states both rules and when each was
written). Entities that restate the query are set aside first, as the Explore page does. Reported: P@1,
P@5 and P@10 of the KLD ranking, averaged over the queries. Caveat: the top sentences of S_q often
come from those very articles, so this judgment leans toward any weighting that favours the top of S_q;
SQuAD's judgment does not share that lean.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sentret_core import Index
from sentret_core.defaults import DEFAULT_K, EXPLORE_K
from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.benchmarks.base import Benchmark, Topic
from sentret_core.evaluation.runs import Evaluator
from sentret_core.evaluation.significance import wilcoxon_test
from sentret_core.support.context import QueryContext
from sentret_core.support.engine import entity_order, rank_entities
from sentret_core.support.restating import restates
from sentret_core.support.weighting import ENTITY_WEIGHTINGS, NONE, RANK, SCORE

QUERIES = Path(__file__).resolve().parents[1] / "sentret_core" / "ui" / "queries" / "demo.txt"
SUPPORT_MODELS = ("sum-kld", "avg-kld")
# Per example query: its subject's demo articles and the phrases that name it, with the rule stated there
TOPICS_FILE = Path(__file__).resolve().parent / "example_topics.json"
TOPICS: dict[str, dict[str, list[str]]] = json.loads(TOPICS_FILE.read_text(encoding="utf-8"))["queries"]
ALL = 1000  # entities ranked per query: all of them, in practice


# --- SQuAD-support
def squad(bench: Benchmark, k: int) -> pd.DataFrame:
    """Per weighting: entity-ranking MRR / P@1 / hit@5, and eq. 7's support MAP / MRR."""
    evaluator = Evaluator(bench, metrics=["map", "mrr"], k=k)
    by_question: dict[str, list[Topic]] = {}
    for topic in bench.topics:
        by_question.setdefault(topic.question, []).append(topic)
    rows = []
    per_weighting: dict[str, dict[str, np.ndarray]] = {}
    for weighting in ENTITY_WEIGHTINGS:
        clock = time.perf_counter()
        reciprocal: list[float] = []
        runs: dict[str, dict[str, dict[str, float]]] = {m: {} for m in SUPPORT_MODELS}
        for group in by_question.values():
            ctx = QueryContext.of(bench.index, evaluator.terms(group[0]), k=k, entity_weighting=weighting)
            answers = {int(t.entity) for t in group if t.entity is not None and ctx.allowed[t.entity]}
            if answers:
                ranked = ctx.stats.ids[entity_order(ctx, "kld")]
                ranked = ranked[[e in answers or not restates(bench.index, ctx.terms, int(e)) for e in ranked]]
                where = np.flatnonzero(np.isin(ranked, list(answers)))
                reciprocal.append(1.0 / (where[0] + 1) if len(where) else 0.0)
            for topic in group:
                assert topic.entity is not None
                for model in SUPPORT_MODELS:
                    ids, values = ctx.candidates(topic.entity, model)
                    runs[model][topic.id] = {bench.docids[int(s)]: float(v) for s, v in zip(ids, values)}
        rr = np.asarray(reciprocal)
        row = {"k": k, "weighting": weighting, "questions": len(rr), "entity MRR": rr.mean(),
               "entity P@1": (rr == 1).mean(), "entity hit@5": (rr >= 1 / 5).mean()}
        per_topic = {"entity": rr}
        for model in SUPPORT_MODELS:
            frame = evaluator.per_topic(runs[model]).sort_index()
            row[f"{model} MAP"], row[f"{model} MRR"] = frame["map"].mean(), frame["mrr"].mean()
            per_topic[model] = frame["map"].to_numpy()
        per_weighting[weighting] = per_topic
        for name in ("entity", "sum-kld"):  # "none" comes first: the baseline of the p-values
            p_value = wilcoxon_test(per_topic[name], per_weighting[NONE][name]) if weighting != NONE else np.nan
            row[f"p {name}"] = p_value
        row["seconds"] = time.perf_counter() - clock
        rows.append(row)
    score, rank = per_weighting[SCORE], per_weighting[RANK]
    between = {name: wilcoxon_test(score[name], rank[name]) for name in ("entity", "sum-kld")}
    print(f"score against rank: p entity {between['entity']:.3g}, p sum-kld {between['sum-kld']:.3g}")
    return pd.DataFrame(rows)


# --- demo example queries
def example_queries() -> list[str]:
    lines = QUERIES.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def document_text(index: Index, doc: int) -> str:
    sentences = np.flatnonzero(np.asarray(index.sent_doc) == doc)
    return " ".join(index.texts[int(i)] for i in sentences)


def on_topic(index: Index, query: str) -> tuple[set[int], set[int]]:
    """The entities judged on topic for ``query``: (strict rule, extended rule)."""
    pages, phrases = TOPICS[query]["pages"], TOPICS[query]["subjects"]
    docs = [d for d, title in enumerate(index.titles) if title in pages]
    if len(docs) != len(pages):
        raise SystemExit(f"the demo index lacks an article of {pages}")
    sentences = np.flatnonzero(np.isin(np.asarray(index.sent_doc), docs))
    strict = set(np.asarray(index.G[sentences].indices).tolist())
    by_title = {title.lower(): d for d, title in enumerate(index.titles)}
    wanted = [p.lower() for p in phrases]
    extended = set(strict)
    for entity, text in enumerate(index.entity_texts):
        own = by_title.get(text.lower())
        if own is not None and any(p in document_text(index, own).lower() for p in wanted):
            extended.add(entity)
    return strict, extended


def demo(index: Index, k: int) -> tuple[pd.DataFrame, dict[str, dict[str, list[str]]]]:
    """Per weighting and rule: P@1, P@5, P@10 over the example queries; the top 5 of each query."""
    rows: list[dict[str, object]] = []
    tops: dict[str, dict[str, list[str]]] = {}
    queries = example_queries()
    if set(queries) != set(TOPICS):
        raise SystemExit(f"TOPICS and the example queries differ: {sorted(set(queries) ^ set(TOPICS))}")
    judged = {query: on_topic(index, query) for query in queries}
    for weighting in ENTITY_WEIGHTINGS:
        hits: list[list[list[bool]]] = [[], []]
        for query in queries:
            ctx = QueryContext.of(index, query, k=k, entity_weighting=weighting)
            ranked = rank_entities(ctx, "kld", ALL, None)
            kept = [e for e in ranked if not restates(index, ctx.terms, e.entity)][:10]
            for rule, good in enumerate(judged[query]):
                hits[rule].append([e.entity in good for e in kept] + [False] * (10 - len(kept)))
            strict, extended = judged[query]
            tops.setdefault(query, {})[weighting] = [
                f"{e.text}{'' if e.entity in strict else ' +' if e.entity in extended else ' ✗'}" for e in kept[:5]
            ]
        for rule, name in enumerate(("strict", "extended")):
            table = np.asarray(hits[rule], dtype=np.float64)
            rows.append({"k": k, "rule": name, "weighting": weighting, "queries": len(queries),
                         "P@1": table[:, 0].mean(), "P@5": table[:, :5].mean(), "P@10": table.mean()})
    return pd.DataFrame(rows).sort_values(["rule", "weighting"], kind="stable"), tops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--demo", type=Path, default=Path("data/indexes/demo"))
    parser.add_argument("--ks", default=f"{EXPLORE_K},{DEFAULT_K}")
    parser.add_argument("--only", default="squad,demo")
    parser.add_argument("--distractors", choices=["demo", "none"], default="none",
                        help="squad-support: add the demo corpus's documents to the collection")
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    parts = set(args.only.split(","))
    pd.set_option("display.width", 200)
    pd.set_option("display.precision", 3)
    if "demo" in parts:
        index = Index.load(args.demo)
        for k in ks:
            table, tops = demo(index, k)
            print(f"\n== demo example queries, k = {k}: on topic (strict) = mentioned in the query's demo article(s);"
                  " extended (+) = or the entity's own article names the query's subject; ✗ = neither")
            print(table.to_string(index=False))
            for query, by_weighting in tops.items():
                print(f"  {query}")
                for weighting, entities in by_weighting.items():
                    print(f"    {weighting:>5}: {' · '.join(entities)}")
    if "squad" in parts:
        distractors = None if args.distractors == "none" else args.distractors
        bench = load_benchmark("squad-support", args.data / "squad" / "dev-v1.1-even.json", distractors=distractors)
        for k in ks:
            print(f"\n== squad-support (even articles, distractors {args.distractors}), k = {k}: entity ranking "
                  "(answer entity) and eq. 7")
            print(squad(bench, k).to_string(index=False))


if __name__ == "__main__":
    main()
