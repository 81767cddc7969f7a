"""Hostile calls to the public API and the CLI: how many fail clearly, crash, or pass when they should not.

    .venv/bin/python benchmarks/hostile_api.py [--index data/indexes/demo] [--verbose]

Every call is a case with what it should do:

* ``refuse`` — a bad argument: it must raise a documented error (:class:`SentretError`, which the
  argument errors of ``sentret_core.checks`` are) whose message names the argument;
* ``valid`` — a documented, allowed call (a numpy integer id, ``window=0``, an empty query): it must
  return normally;
* ``finite`` — it may refuse clearly or return, but what it returns holds no NaN.

Each outcome is counted as: **clear** (the documented error, naming the argument), **vague** (a
documented error whose message does not name the argument), **raw** (any other exception: a
traceback for the user), **accepted-bad** (a ``refuse`` case that returned), **ok** (a ``valid`` or
``finite`` case that returned a sound result) or **wrong-refusal** (a ``valid`` case that raised a
documented error). CLI cases run ``sentret_core.cli.main.main(argv)`` in-process with a strict UTF-8
stdout (as a terminal has) and count as raw when an exception escapes or "Traceback" is printed, as
**bug-message** when the CLI reports an internal error (exit 1) instead of a user error, and as clear
for exit 2 with one ``sentret: error:`` line (or argparse's usage error).

Runs on whatever ``sentret_core`` is importable, so the same script measures the code before a change
(``PYTHONPATH=/tmp/sentret-api-before``) and after it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


class Case(NamedTuple):
    group: str
    label: str
    call: Callable[[], Any]
    expect: str  # "refuse" | "valid" | "finite"
    names: tuple[str, ...]  # one of these must appear in the error message


def api_cases(index: Any, bench: Any) -> list[Case]:
    from sentret_core import explain, score, support, top_k
    from sentret_core.evaluation.driver import evaluate_benchmark
    from sentret_core.models import distribution

    q = "Picasso and peace"
    n, e = index.N, index.E
    s = score(index, q, "bm25.v1")
    cases: list[Case] = []

    def add(group: str, label: str, call: Callable[[], Any], expect: str = "refuse", *names: str) -> None:
        cases.append(Case(group, label, call, expect, names))

    # score: the query
    for label, text in [
        ("lone high surrogate", "\ud800"),
        ("lone low surrogate in words", "Picasso \udfff peace"),
        ("surrogate pair as two code points", "Picasso \ud83d\ude00 peace"),
        ("surrogate-escaped argv byte", "Picasso\udcff"),
    ]:
        add("score", f"query: {label}", lambda t=text: score(index, t, "bm25.v1"), "valid")
    for label, text in [
        ("NUL inside a word", "Pica\x00sso peace"),
        ("only control characters", "\x00\x01\x1b\x7f"),
        ("RTL override", "\u202ePicasso peace"),
        ("combining marks", "Pica\u0301sso\u0308 peace"),
        ("100k characters", "Picasso peace " * 7200),
        ("empty query", ""),
    ]:
        add("score", f"query: {label}", lambda t=text: score(index, t, "bm25.v1"), "valid")
    add("score", "query: int", lambda: score(index, 123, "bm25.v1"), "refuse", "query")
    add("score", "query: None", lambda: score(index, None, "bm25.v1"), "refuse", "query")
    add("score", "query: bytes", lambda: score(index, b"Picasso", "bm25.v1"), "refuse", "query")
    add("score", "query: list holding None", lambda: score(index, ["picasso", None], "bm25.v1"), "refuse", "query")
    add("score", "query: list holding an int", lambda: score(index, ["picasso", 3], "bm25.v1"), "refuse", "query")
    add("score", "index: a string", lambda: score("data/indexes/demo", q, "bm25.v1"), "refuse", "index")
    add("score", "index: None", lambda: score(None, q, "bm25.v1"), "refuse", "index")
    add("score", "model: unknown", lambda: score(index, q, "nosuch.v1"), "refuse", "model")
    add("score", "model: int", lambda: score(index, q, 5), "refuse", "model")
    add("score", "model: None", lambda: score(index, q, None), "refuse", "model")
    add("score", "model: a list", lambda: score(index, q, ["bm25.v1"]), "refuse", "model")
    add("score", "param: k1='abc'", lambda: score(index, q, "bm25.v1", k1="abc"), "refuse", "k1")
    add("score", "param: k1=NaN", lambda: score(index, q, "bm25.v1", k1=math.nan), "refuse", "k1")
    add("score", "param: k1=None", lambda: score(index, q, "bm25.v1", k1=None), "refuse", "k1")
    add("score", "param: k1=[1]", lambda: score(index, q, "bm25.v1", k1=[1]), "refuse", "k1")
    add("score", "param: unknown name", lambda: score(index, q, "bm25.v1", k9=1), "refuse", "k9")
    add("score", "param: lm-2s.v1 mu=2.2e-311", lambda: score(index, q, "lm-2s.v1", mu=2.2e-311), "finite", "mu")
    add("score", "param: lm-dir.v1 mu=-1", lambda: score(index, q, "lm-dir.v1", mu=-1), "refuse", "mu")

    # top_k
    add("top_k", "k=1.5", lambda: top_k(s, 1.5), "refuse", "k")
    add("top_k", "k='10'", lambda: top_k(s, "10"), "refuse", "k")
    add("top_k", "k=None", lambda: top_k(s, None), "refuse", "k")
    add("top_k", "k=NaN", lambda: top_k(s, math.nan), "refuse", "k")
    add("top_k", "k=True", lambda: top_k(s, True), "refuse", "k")
    add("top_k", "k=-1", lambda: top_k(s, -1), "refuse", "k")
    add("top_k", "k=10.0", lambda: top_k(s, 10.0), "refuse", "k")
    add("top_k", "scores: a list", lambda: top_k([1, 2, 3], 2), "refuse", "scores")
    add("top_k", "scores: None", lambda: top_k(None, 2), "refuse", "scores")
    add("top_k", "k=np.int64(5)", lambda: top_k(s, np.int64(5)), "valid")
    add("top_k", "k=0", lambda: top_k(s, 0), "valid")
    add("top_k", "k=2**63", lambda: top_k(s, 2**63), "valid")

    # explain
    for label, sid in [("N", n), ("N+10", n + 10), ("2**63", 2**63), ("NaN", math.nan), ("None", None),
                       ("-1", -1), ("1.5", 1.5), ("'3'", "3"), ("True", True), ("inf", math.inf),
                       ("'abc'", "abc"), ("np.float64(2.0)", np.float64(2.0))]:
        add("explain", f"sentence_id={label}", lambda sid=sid: explain(index, q, sid, "bm25.v1"), "refuse", "sentence")
    add("explain", "sentence_id=np.int64(3)", lambda: explain(index, q, np.int64(3), "bm25.v1"), "valid")
    add("explain", "sentence_id=np.int32(N-1)", lambda: explain(index, q, np.int32(n - 1), "bm25.v1"), "valid")
    add("explain", "query: lone surrogate", lambda: explain(index, "Picasso \ud800", 3, "bm25.v1"), "valid")
    add("explain", "query: None", lambda: explain(index, None, 3, "bm25.v1"), "refuse", "query")
    add("explain", "model: unknown", lambda: explain(index, q, 3, "nosuch.v1"), "refuse", "model")
    add("explain", "model: None", lambda: explain(index, q, 3, None), "refuse", "model")
    add("explain", "param: k1=-1", lambda: explain(index, q, 3, "bm25.v1", k1=-1), "refuse", "k1")

    # distribution
    for label, sid in [("N", n), ("N+10", n + 10), ("2**63", 2**63), ("NaN", math.nan), ("None", None),
                       ("-1", -1), ("1.5", 1.5), ("'3'", "3"), ("True", True)]:
        add("distribution", f"sentence_id={label}", lambda sid=sid: distribution(index, sid, "lm-dir.v1"),
            "refuse", "sentence")
    add("distribution", "sentence_id=np.int64(0)", lambda: distribution(index, np.int64(0), "lm-dir.v1"), "valid")
    add("distribution", "model: not an LM", lambda: distribution(index, 0, "bm25.v1"), "refuse", "bm25")
    add("distribution", "model: None", lambda: distribution(index, 0, None), "refuse", "model")
    add("distribution", "param: mu=-5", lambda: distribution(index, 0, "lm-dir.v1", mu=-5), "refuse", "mu")
    add("distribution", "lm-2s.v1 mu=2.2e-311", lambda: distribution(index, 0, "lm-2s.v1", mu=2.2e-311), "finite",
        "mu")

    # support
    def sup(**kwargs: Any) -> Any:
        return lambda: support(index, kwargs.pop("query", q), **kwargs)

    for name, bad in [("k", [1.5, "10", None, 0, True, MAX_K_PLUS]), ("window", [1.5, -1, None, "2", 11]),
                      ("per_entity", [1.5, None, 0, "3"]), ("top_entities", [1.5, "5", 0, None])]:
        for value in bad:
            add("support", f"{name}={value!r}", sup(**{name: value}), "refuse", name)
    add("support", "window=0 (no context, Blanco & Zaragoza Fig. 2)", sup(window=0), "valid")
    add("support", "k=np.int64(50)", sup(k=np.int64(50)), "valid")
    add("support", "entity_labels=[None]", sup(entity_labels=[None]), "refuse", "label")
    add("support", "entity_labels='PERSON' (a string)", sup(entity_labels="PERSON"), "refuse", "label")
    add("support", "entity_labels=['NOPE']", sup(entity_labels=["NOPE"]), "refuse", "label")
    add("support", "entity_labels=5", sup(entity_labels=5), "refuse", "label")
    add("support", "params={'bm25f.v1': None}", sup(params={"bm25f.v1": None}), "refuse", "params")
    add("support", "params=[1, 2]", sup(params=[1, 2]), "refuse", "params")
    add("support", "params={'nosuch.v1': {}}", sup(params={"nosuch.v1": {}}), "refuse", "nosuch")
    add("support", "params={'bm25f.v1': {'k1': 'x'}}", sup(params={"bm25f.v1": {"k1": "x"}}), "refuse", "k1")
    add("support", "params={5: {}}", sup(params={5: {}}), "refuse", "params")
    add("support", "models=[]", sup(models=[]), "refuse", "model")
    add("support", "models='bm25f.v1' (a string)", sup(models="bm25f.v1"), "refuse", "models")
    add("support", "models=[None]", sup(models=[None]), "refuse", "model")
    add("support", "ranker=None", sup(ranker=None), "refuse", "ranker")
    add("support", "ranker=5", sup(ranker=5), "refuse", "ranker")
    add("support", "entity_score=None", sup(entity_score=None), "refuse", "entity_score")
    add("support", "entity_score='nope'", sup(entity_score="nope"), "refuse", "entity score", "entity_score")
    for value in ([-1], [1.5], [None], [2**63], [e], "12", 5):
        add("support", f"entities={value!r}", sup(entities=value), "refuse", "entit")
    add("support", "entities=[np.int64(0)]", sup(entities=[np.int64(0)]), "valid")
    add("support", "query: lone surrogate", sup(query="Picasso \ud800 peace"), "valid")
    add("support", "query: only controls", sup(query="\x00\x01"), "valid")
    add("support", "query: None", sup(query=None), "refuse", "query")
    add("support", "query: 5", sup(query=5), "refuse", "query")
    add("support", "index: a string", lambda: support("data/indexes/demo", q), "refuse", "index")

    # the eval entry point
    if bench is not None:

        def ev(**kwargs: Any) -> Any:
            kwargs.setdefault("models", ["tfisf.v1"])
            kwargs.setdefault("metrics", ["map"])
            return lambda: evaluate_benchmark(kwargs.pop("bench", bench), **kwargs)

        for name, bad in [("k", [1.5, "10", None, 0]), ("window", [1.5, -1, None]), ("folds", [1, 1.5, "2"]),
                          ("seed", [None, 1.5, -1]), ("max_rounds", [0, None, 1.5])]:
            for value in bad:
                add("evaluate_benchmark", f"{name}={value!r}", ev(**{name: value}), "refuse", name)
        add("evaluate_benchmark", "models='tfisf.v1' (a string)", ev(models="tfisf.v1"), "refuse", "models")
        add("evaluate_benchmark", "models=[None]", ev(models=[None]), "refuse", "model")
        add("evaluate_benchmark", "metrics='map' (a string)", ev(metrics="map"), "refuse", "metrics")
        add("evaluate_benchmark", "metrics=[None]", ev(metrics=[None]), "refuse", "metric")
        add("evaluate_benchmark", "params={'tfisf.v1': None}", ev(params={"tfisf.v1": None}), "refuse", "params")
        add("evaluate_benchmark", "baseline=5", ev(baseline=5), "refuse", "baseline")
        add("evaluate_benchmark", "ranker=None", ev(ranker=None), "refuse", "ranker")
        add("evaluate_benchmark", "tune_metric=None", ev(tune_metric=None), "refuse", "tune_metric")
        add("evaluate_benchmark", "progress=5", ev(progress=5), "refuse", "progress")
        add("evaluate_benchmark", "bench=None", ev(bench=None), "refuse", "bench")
        add("evaluate_benchmark", "tune_on='x.tsv'", ev(tune_on="x.tsv"), "refuse", "tune_on")
        add("evaluate_benchmark", "window=0", ev(window=0), "valid")
        add("evaluate_benchmark", "folds=np.int64(2), seed=np.int64(1)",
            ev(folds=np.int64(2), seed=np.int64(1), models=["bm25.v1"], max_rounds=1), "valid")
    return cases


MAX_K_PLUS = 1_000_001


def cli_cases(index_path: str, wikiqa: str, tmp: Path) -> list[tuple[str, list[str], str]]:
    """(label, argv, expect) for ``sentret`` itself."""
    d, q = index_path, "Picasso and peace"
    w = ["eval", "wikiqa", "--data", wikiqa, "--models", "tfisf.v1", "--metrics", "map", "--cache", str(tmp / "c")]
    return [
        ("search: lone surrogate", ["search", d, "Picasso \ud800"], "valid"),
        ("search: surrogate-escaped argv byte, --json", ["search", d, "Picasso\udcff", "--json"], "valid"),
        ("search: NUL and controls", ["search", d, "\x00\x01\x1b"], "valid"),
        ("search: RTL and combining marks", ["search", d, "\u202ePica\u0301sso"], "valid"),
        ("search: 100k characters", ["search", d, "Picasso peace " * 7200, "--k", "3"], "valid"),
        ("search: --k 0", ["search", d, q, "--k", "0"], "refuse"),
        ("search: --k 1.5", ["search", d, q, "--k", "1.5"], "refuse"),
        ("search: unknown model", ["search", d, q, "--model", "nosuch.v1"], "refuse"),
        ("search: --param k1=abc", ["search", d, q, "--model", "bm25.v1", "--param", "k1=abc"], "refuse"),
        ("search: --param without =", ["search", d, q, "--param", "k1"], "refuse"),
        ("search: missing index", ["search", str(tmp / "nope"), q], "refuse"),
        ("support: lone surrogate", ["support", d, "Picasso \ud800 peace", "--k", "50"], "valid"),
        (
            "support: surrogate-escaped argv byte, --json",
            ["support", d, "Picasso\udcff", "--k", "50", "--json"],
            "valid",
        ),
        ("support: --labels NOPE", ["support", d, q, "--labels", "NOPE"], "refuse"),
        ("support: --k -5", ["support", d, q, "--k", "-5"], "refuse"),
        ("support: --per-entity 0", ["support", d, q, "--per-entity", "0"], "refuse"),
        ("support: --top-entities 5000", ["support", d, q, "--top-entities", "5000"], "refuse"),
        ("support: --models ,", ["support", d, q, "--models", ","], "refuse"),
        ("support: --param bm25f.v1.k1=nan", ["support", d, q, "--param", "bm25f.v1.k1=nan"], "refuse"),
        ("eval: missing data", ["eval", "wikiqa", "--data", str(tmp / "nope.tsv")], "refuse"),
        ("eval: --k 0", [*w, "--k", "0"], "refuse"),
        ("eval: --window -1", [*w, "--window", "-1"], "refuse"),
        ("eval: --window 11", [*w, "--window", "11"], "refuse"),
        ("eval: --folds 1", [*w, "--folds", "1"], "refuse"),
        ("eval: --seed -1 with --folds 2", [*w, "--folds", "2", "--seed", "-1", "--models", "bm25.v1"], "refuse"),
        ("eval: --max-rounds 0", [*w, "--max-rounds", "0"], "refuse"),
        ("eval: --n-process 0", [*w, "--n-process", "0"], "refuse"),
        ("eval: --metrics nope", [*w, "--metrics", "nope"], "refuse"),
        ("eval: --metrics ,", [*w, "--metrics", ","], "refuse"),
        ("eval: --run-out into a missing folder", [*w, "--run-out", str(tmp / "no" / "dir" / "r.trec")], "refuse"),
        ("eval: --data is a folder", ["eval", "wikiqa", "--data", str(tmp)], "refuse"),
    ]


def classify(case: Case) -> tuple[str, str]:
    from sentret_core.errors import SentretError

    try:
        result = case.call()
    except SentretError as err:
        message = str(err)
        if case.expect == "valid":
            return "wrong-refusal", message
        if case.names and not any(n.lower() in message.lower() for n in case.names):
            return "vague", message
        return "clear", message
    except Exception as err:  # what we count
        return "raw", f"{type(err).__name__}: {err}"
    if case.expect == "refuse":
        return "accepted-bad", type(result).__name__
    if case.expect == "finite" and _has_nan(result):
        return "accepted-bad", "NaN in the result"
    return "ok", type(result).__name__


def _has_nan(result: Any) -> bool:
    values = getattr(result, "scores", result)
    try:
        return bool(np.isnan(np.asarray(values, dtype=float)).any())
    except (TypeError, ValueError):
        return False


def run_cli(argv: list[str]) -> tuple[int | None, str, str, BaseException | None]:
    from sentret_core.cli.main import main

    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict")  # as a UTF-8 terminal
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="backslashreplace")  # as Python's stderr
    code: int | None = None
    escaped: BaseException | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 2
        except Exception as exc:  # what we count
            escaped = exc
        with contextlib.suppress(Exception):
            out.flush()
            err.flush()
    return (
        code,
        out_bytes.getvalue().decode("utf-8", "replace"),
        err_bytes.getvalue().decode("utf-8", "replace"),
        escaped,
    )


def classify_cli(argv: list[str], expect: str) -> tuple[str, str]:
    code, out, err, escaped = run_cli(argv)
    if escaped is not None:
        return "raw", f"{type(escaped).__name__}: {escaped}"
    if "Traceback" in err:
        return "raw", err.strip().splitlines()[-1]
    last = err.strip().splitlines()[-1] if err.strip() else ""
    if code == 0:
        return ("ok" if expect == "valid" else "accepted-bad"), out[:80].replace("\n", " ")
    if code == 2:
        return ("wrong-refusal" if expect == "valid" else "clear"), last
    if code == 1:
        return "bug-message", last
    return "raw", f"exit {code}: {last}"


def tiny_wikiqa(tmp: Path) -> Path:
    header = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
    rows = [
        ("Q1", "Who painted Guernica?", "D1", "Guernica", "D1-0", "Guernica is a large oil painting.", 0),
        ("Q1", "Who painted Guernica?", "D1", "Guernica", "D1-1", "Pablo Picasso painted it in 1937.", 1),
        ("Q2", "When did the war end?", "D2", "War", "D2-0", "The Spanish Civil War ended in April 1939.", 1),
        ("Q2", "When did the war end?", "D2", "War", "D2-1", "Francisco Franco led the Nationalists.", 0),
        ("Q3", "Where did Picasso live?", "D3", "Picasso", "D3-0", "Picasso lived in France.", 1),
        ("Q3", "Where did Picasso live?", "D3", "Picasso", "D3-1", "He painted every day.", 0),
    ]
    path = tmp / "tiny.tsv"
    path.write_text(header + "".join("\t".join(map(str, r)) + "\n" for r in rows), encoding="utf-8")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=str(ROOT / "data" / "indexes" / "demo"))
    parser.add_argument("--verbose", action="store_true", help="print every case and its outcome")
    args = parser.parse_args()

    import sentret_core
    from sentret_core import Index
    from sentret_core.evaluation.benchmarks import load_benchmark

    print(f"sentret_core from {Path(sentret_core.__file__).parent}")
    index = Index.load(args.index)
    counts: dict[str, Counter[str]] = {}
    rows: list[tuple[str, str, str, str]] = []
    split: Counter[tuple[bool, str]] = Counter()  # (a valid call?, outcome)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        wikiqa = tiny_wikiqa(tmp)
        bench = load_benchmark("wikiqa", wikiqa, cache=tmp / "cache")
        for case in api_cases(index, bench):
            outcome, detail = classify(case)
            counts.setdefault(case.group, Counter())[outcome] += 1
            split[case.expect == "valid", outcome] += 1
            rows.append((case.group, case.label, outcome, detail))
        for label, argv, expect in cli_cases(args.index, str(wikiqa), tmp):
            outcome, detail = classify_cli(argv, expect)
            group = "cli " + argv[0]
            counts.setdefault(group, Counter())[outcome] += 1
            split[expect == "valid", outcome] += 1
            rows.append((group, label, outcome, detail))
    if args.verbose:
        for group, label, outcome, detail in rows:
            print(f"{outcome:>13}  {group:<18} {label:<45} {detail[:110]!r}")
        print()
    kinds = ["clear", "vague", "raw", "bug-message", "accepted-bad", "wrong-refusal", "ok"]
    print(f"{'entry point':<20}" + "".join(f"{k:>14}" for k in kinds) + f"{'calls':>8}")
    total: Counter[str] = Counter()
    for group, counter in counts.items():
        total.update(counter)
        print(f"{group:<20}" + "".join(f"{counter[k]:>14}" for k in kinds) + f"{sum(counter.values()):>8}")
    print(f"{'total':<20}" + "".join(f"{total[k]:>14}" for k in kinds) + f"{sum(total.values()):>8}")
    for valid, what in ((False, "hostile calls (bad arguments)"), (True, "valid calls (documented as allowed)")):
        mine = {k: n for (v, k), n in split.items() if v == valid}
        print(f"{sum(mine.values())} {what}: " + ", ".join(f"{n} {k}" for k, n in sorted(mine.items())))
    print(f"{sum(total.values())} calls in {time.perf_counter() - started:.1f} s; raw tracebacks: {total['raw']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
