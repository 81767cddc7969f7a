"""Benchmark converters (WikiQA, SQuAD support, TrecQA) and the evaluation driver.

Small files are written here; the real files in ../shared/data are used when present (they are
in CI) and the tests that need them skip with the reason otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.benchmarks.base import Benchmark
from sentret_core.evaluation.benchmarks.squad import load_squad_support, read_squad
from sentret_core.evaluation.benchmarks.trecqa import load_trecqa, read_trecqa
from sentret_core.evaluation.benchmarks.wikiqa import load_wikiqa
from sentret_core.evaluation.driver import evaluate_benchmark
from sentret_core.evaluation.evaluable import tuning_space
from sentret_core.evaluation.measures import evaluate
from sentret_core.evaluation.plan import plan
from sentret_core.evaluation.runs import Evaluator
from sentret_core.ingest.corpus import Document
from sentret_core.ingest.qa_files import read_wikiqa
from sentret_core.models import MODELS, get_model
from sentret_core.support.context import QueryContext
from sentret_core.support.entity_stats import entity_sentences
from tests.conftest import SHARED_DATA

WIKIQA_HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
Row = tuple[str, str, str, str, str, str, int]
GUERNICA = ("D1", "Guernica (painting)", ["Guernica is a large oil painting.",
            "Pablo Picasso painted it in 1937.", "It hangs in the Reina Sofia museum."])
WAR = ("D2", "Spanish Civil War", ["The Spanish Civil War ended in April 1939.",
       "Francisco Franco led the Nationalists.", "The war was over by the spring of 1939."])


def wikiqa_rows(qid: str, question: str, doc: tuple[str, str, list[str]], labels: list[int]) -> list[Row]:
    """One question's TSV rows: its document's sentences, SentenceID ``<doc>-<i>``, with labels."""
    doc_id, title, sentences = doc
    return [
        (qid, question, doc_id, title, f"{doc_id}-{i}", sentence, label)
        for i, (sentence, label) in enumerate(zip(sentences, labels))
    ]


# Three questions: Q1 and Q2 share document D1 (Q2 has no correct sentence), Q3 is about D2.
WIKIQA_ROWS = [
    *wikiqa_rows("Q1", "Who painted Guernica?", GUERNICA, [0, 1, 0]),
    *wikiqa_rows("Q2", "How big is Guernica?", GUERNICA, [0, 0, 0]),
    *wikiqa_rows("Q3", "When did the Spanish Civil War end?", WAR, [1, 0, 1]),
]


def write_wikiqa(path: Path, rows: Sequence[Row] = WIKIQA_ROWS) -> Path:
    path.write_text(
        WIKIQA_HEADER + "".join("\t".join(map(str, row)) + "\n" for row in rows), encoding="utf-8"
    )
    return path


SQUAD = {
    "version": "1.1",
    "data": [
        {
            "title": "Paris",
            "paragraphs": [
                {
                    "context": "Paris is the capital of France. The Eiffel Tower was built in 1889 by "
                    "Gustave Eiffel. Millions of tourists visit Paris every year.",
                    "qas": [
                        {"id": "q1", "question": "What is the capital of France?",
                         "answers": [{"answer_start": 0, "text": "Paris"}]},
                        {"id": "q2", "question": "When was the Eiffel Tower built?",
                         "answers": [{"answer_start": 62, "text": "1889"}]},
                        {"id": "q3", "question": "Who built the Eiffel Tower?",
                         "answers": [{"answer_start": 70, "text": "Gustave Eiffel"},
                                     {"answer_start": 70, "text": "Gustave Eiffel"},
                                     {"answer_start": 78, "text": "Eiffel"}]},
                    ],
                },
                {"context": "The Louvre is a museum in Paris.", "qas": []},
            ],
        },
        {
            "title": "Albert_Einstein",
            "paragraphs": [
                {
                    "context": "Albert Einstein was born in Germany in 1879. He developed the theory of "
                    "relativity. Einstein received the Nobel Prize in 1921.",
                    "qas": [
                        {"id": "q4", "question": "What did Einstein develop?",
                         "answers": [{"answer_start": 58, "text": "the theory of relativity"}]},
                        {"id": "q5", "question": "Where was Albert Einstein born?",
                         "answers": [{"answer_start": 28, "text": "Germany"}]},
                        {"id": "q6", "question": "When did Einstein receive the Nobel Prize?",
                         "answers": [{"answer_start": 121, "text": "1921"}]},
                        {"id": "q7", "question": "What prize did Einstein receive in 1921?",
                         "answers": [{"answer_start": 102, "text": "the Nobel Prize"}]},
                    ],
                }
            ],
        },
    ],
}


def write_squad(path: Path) -> Path:
    path.write_text(json.dumps(SQUAD), encoding="utf-8")
    return path


def _block(tag: str, tokens: list[str], answer: bool = False) -> str:
    n = len(tokens)
    lines = ["\t".join(tokens), "\t".join(["NN"] * n), "\t".join(["NMOD"] * n), "\t".join(["0"] * n),
             "\t".join(["-"] * n)]
    if answer:
        lines += [tokens[0], "0"]
    return f"<{tag}>\n" + "\n".join(lines) + f"\n</{tag}>\n"


TRECQA_QUESTIONS = [
    (
        "1.1",
        "Who founded Barnes & Noble ?",
        [
            ("positive", "Leonard Riggio founded the Barnes & Noble chain of stores ."),
            ("positive", "Riggio , who founded Barnes & Noble , bought the company in 1971 ."),
            ("negative", "Barnes & Noble sells books in many stores ."),
            ("negative", "The weather was cold in New York ."),
            ("negative", "Shares of Barnes & Noble fell on Monday ."),
        ],
    ),
    (
        "1.2",
        "When did the Berlin Wall fall ?",
        [
            ("positive", "The Berlin Wall fell in 1989 ."),
            ("negative", "The Berlin Wall divided the city ."),
            ("negative", "The wall was built in 1961 ."),
            ("negative", "Shares of Barnes & Noble fell on Monday ."),
        ],
    ),
    ("1.3", "What is the capital of Peru ?", [("negative", "Peru exports copper .")]),
]


def write_trecqa(path: Path, shuffle_seed: int | None = None) -> Path:
    parts = []
    for qid, question, candidates in TRECQA_QUESTIONS:
        order = list(candidates)
        if shuffle_seed is not None:
            random.Random(shuffle_seed).shuffle(order)
        body = _block("question", question.split())
        body += "".join(_block(tag, text.split(), tag == "positive") for tag, text in order)
        parts.append(f"<QApairs id='{qid}'>\n{body}</QApairs>\n")
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(parts)
    path.write_text("".join(parts), encoding="utf-8")
    return path


needs_shared_data = pytest.mark.skipif(
    not SHARED_DATA.exists(), reason="../shared/data is absent (a fresh clone has no benchmark data beside it)"
)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("benchmark-cache")


@pytest.fixture(scope="module")
def wikiqa(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Benchmark:
    path = write_wikiqa(tmp_path_factory.mktemp("wikiqa") / "tiny.tsv")
    return load_wikiqa(path, cache=cache)


@pytest.fixture(scope="module")
def squad(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Benchmark:
    path = write_squad(tmp_path_factory.mktemp("squad") / "tiny.json")
    return load_squad_support(path, cache=cache)


# --- WikiQA ------------------------------------------------------------------------------------


def test_wikiqa_documents_topics_and_qrels(wikiqa: Benchmark) -> None:
    index = wikiqa.index
    assert index.D == 2 and index.N == 6  # D1 deduplicated across Q1 and Q2
    assert list(index.documents["id"]) == ["D1", "D2"]
    assert index.titles == ["Guernica (painting)", "Spanish Civil War"]
    assert index.texts[1] == "Pablo Picasso painted it in 1937."  # kept exactly as given
    assert [t.id for t in wikiqa.topics] == ["Q1", "Q3"]  # Q2 has no correct sentence
    q1, q3 = wikiqa.topics
    assert q1.candidates is not None and q1.candidates.tolist() == [0, 1, 2]
    assert q3.candidates is not None and q3.candidates.tolist() == [3, 4, 5]
    assert q1.relevant == (1,) and q3.relevant == (3, 5)
    assert wikiqa.qrels == {"Q1": {"D1-0": 0, "D1-1": 1, "D1-2": 0}, "Q3": {"D2-0": 1, "D2-1": 0, "D2-2": 1}}
    assert wikiqa.docids == ["D1-0", "D1-1", "D1-2", "D2-0", "D2-1", "D2-2"]  # = the SentenceIDs
    assert wikiqa.scale == "binary" and wikiqa.stats["questions"] == 3


def test_wikiqa_gap_in_sentence_ids_keeps_positions(tmp_path: Path, cache: Path) -> None:
    rows: list[Row] = [
        ("Q9", "Where is the Louvre?", "D7", "Louvre", "D7-0", "The Louvre is a museum.", 0),
        ("Q9", "Where is the Louvre?", "D7", "Louvre", "D7-2", "The Louvre is in Paris.", 1),
    ]
    parsed = read_wikiqa(write_wikiqa(tmp_path / "gap.tsv", rows))
    assert parsed.documents["D7"] == ("Louvre", ["The Louvre is a museum.", "", "The Louvre is in Paris."])
    bench = load_wikiqa(tmp_path / "gap.tsv", cache=cache)
    assert bench.index.N == 3 and bench.index.texts[1] == ""
    assert bench.topics[0].candidates.tolist() == [0, 2]  # type: ignore[union-attr]
    assert bench.qrels["Q9"] == {"D7-0": 0, "D7-2": 1}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("Q1\tWho?\tD1\tT\tD1-0\tA sentence.", r"bad\.tsv:3: expected 7 tab-separated fields"),
        ("Q1\tWho?\tD1\tT\tD1-x\tA sentence.\t0", r"bad\.tsv:3: SentenceID 'D1-x' is not D1-<number>"),
        ("Q1\tWho?\tD1\tT\tD1-1\tA sentence.\t2", r"bad\.tsv:3: Label '2' must be 0 or 1"),
        ("Q1\tWho?\tD1\tT\tD1-0\tAnother text.\t0", r"bad\.tsv:3: SentenceID D1-0 has another text"),
    ],
)
def test_wikiqa_malformed_lines_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(WIKIQA_HEADER + "Q1\tWho?\tD1\tT\tD1-0\tA sentence.\t1\n" + line + "\n")
    with pytest.raises(SentretError, match=message):
        read_wikiqa(path)


def test_wikiqa_header_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "nohead.tsv").write_text("Q1\tWho?\tD1\tT\tD1-0\tA sentence.\t1\n")
    with pytest.raises(SentretError, match=r"nohead\.tsv:1: expected the WikiQA header"):
        read_wikiqa(tmp_path / "nohead.tsv")
    with pytest.raises(SentretError, match="no such file"):
        load_benchmark("wikiqa", tmp_path / "missing.tsv")


def test_doc_order_and_random_baselines_exact(wikiqa: Benchmark) -> None:
    """Hand computation. Q1: 3 candidates, relevant at position 1. Q3: 3 candidates, relevant
    at positions 0 and 2.

    doc-order: Q1 AP = RR = 1/2; Q3 ranks 1 and 3: AP = (1/1 + 2/3)/2 = 5/6, RR = 1.
    random (all tied): Q1 E[AP] = E[RR] = (1 + 1/2 + 1/3)/3 = 11/18.
    Q3 the non-relevant item is at rank 1, 2 or 3 with probability 1/3 each:
    E[AP] = ((1/2 + 2/3)/2 + (1 + 2/3)/2 + (1 + 1)/2)/3 = 29/36; E[RR] = 2/3 + 1/3 * 1/2 = 5/6.
    """
    report = evaluate_benchmark(wikiqa, ["tfisf.v1"], metrics=["map", "mrr"])
    doc_order = report.results["doc-order"].per_topic
    random_ = report.results["random"].per_topic
    assert doc_order.loc["Q1", ["map", "mrr"]].to_dict() == pytest.approx({"map": 1 / 2, "mrr": 1 / 2})
    assert doc_order.loc["Q3", ["map", "mrr"]].to_dict() == pytest.approx({"map": 5 / 6, "mrr": 1})
    assert random_.loc["Q1", ["map", "mrr"]].to_dict() == pytest.approx({"map": 11 / 18, "mrr": 11 / 18})
    assert random_.loc["Q3", ["map", "mrr"]].to_dict() == pytest.approx({"map": 29 / 36, "mrr": 5 / 6})
    means = report.results["random"].means()
    assert means["map"] == pytest.approx((11 / 18 + 29 / 36) / 2)
    # pessimistic / optimistic MAP bracket the tie-aware value: Q1 1/3..1, Q3 (1/2+2/3)/2..1
    assert means["map-pessimistic"] == pytest.approx((1 / 3 + 7 / 12) / 2)
    assert means["map-optimistic"] == pytest.approx(1.0)
    assert report.baseline == "doc-order" and list(report.results)[:2] == ["doc-order", "random"]


def test_non_matching_candidates_get_the_models_no_match_score(wikiqa: Benchmark) -> None:
    """A closed candidate set scores every candidate: a sum over matched terms (BM25, TF-ISF) gives 0 to
    one it does not reach, a smoothed language model its (finite) likelihood."""
    ev = Evaluator(wikiqa)
    run = ev.run("bm25.v1", None, ["Q1"])["Q1"]
    # terms "painted", "guernica": D1-2 matches neither, so it is not a bm25.v1 candidate: its score is 0
    assert min(run["D1-0"], run["D1-1"]) > 0 and run["D1-2"] == 0.0
    run = ev.run("tfisf.v1", None, ["Q3"])["Q3"]
    assert run["D2-1"] == 0.0 and min(run["D2-0"], run["D2-2"]) > 0
    run = ev.run("lm-dir.v1", None, ["Q1"])["Q1"]
    assert all(np.isfinite(list(run.values()))) and run["D1-2"] < min(run["D1-0"], run["D1-1"])


def test_a_model_without_a_no_match_score_leaves_candidates_unscored(
    wikiqa: Benchmark, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Only a model that registers no score for the sentences it does not reach leaves them -inf (tied at
    the bottom), and the exported run file leaves them out."""
    monkeypatch.setitem(MODELS, "bm25.v1", dataclasses.replace(get_model("bm25.v1"), closed=None))
    run = Evaluator(wikiqa).run("bm25.v1", None, ["Q1"])["Q1"]
    assert min(run["D1-0"], run["D1-1"]) > 0 and run["D1-2"] == -np.inf
    report = evaluate_benchmark(wikiqa, ["bm25.v1"], metrics=["map"])
    (written,) = [p for p in report.write_runs(tmp_path / "run.txt") if "bm25.v1" in p.name]
    lines = written.read_text().splitlines()
    assert "inf" not in written.read_text() and not any(" D1-2 " in line for line in lines if line.startswith("Q1 "))
    assert {line.split()[2] for line in lines if line.startswith("Q1 ")} == {"D1-0", "D1-1"}


def test_objective_equals_the_evaluated_mean(wikiqa: Benchmark, squad: Benchmark) -> None:
    for bench in (wikiqa, squad):
        ev = Evaluator(bench)
        topics = [t.id for t in bench.topics]
        for model in ("tfisf.v1", "bm25f.v1", "random", "doc-order"):
            frame = ev.per_topic(ev.run(model, None, topics), topics)
            for metric in ("map", "mrr", "p@1", "r-prec", "ndcg@10"):
                assert ev.objective(model, topics, metric)({}) == pytest.approx(
                    frame[metric].mean(), abs=1e-12
                )


def test_tuning_space_inserts_the_default() -> None:
    space = tuning_space("bm25f.v1")
    assert space["k1"][0] == 0.26 and 1.0 in space["k1"]  # the default is off the declared grid
    assert space["b_sentence"][0] is None
    assert tuning_space("tfisf.v1") == {} and tuning_space("random") == {}


def test_plan_validates_before_loading() -> None:
    request = plan("wikiqa", ["bm25", "tfisf.v1"], params={"bm25": {"k1": "0.9"}})
    assert request.models == ["doc-order", "random", "bm25.v1", "tfisf.v1"]
    assert request.params == {"bm25.v1": {"k1": "0.9"}} and request.baseline == "doc-order"
    assert plan("trecqa").baseline == "random"
    with pytest.raises(SentretError, match="unknown model 'nope'"):
        plan("wikiqa", ["nope"])
    with pytest.raises(SentretError, match="squad-support only"):
        plan("wikiqa", ["sum-kld"])
    with pytest.raises(SentretError, match="k1"):
        plan("wikiqa", ["bm25.v1"], params={"bm25.v1": {"k1": "-1"}})
    with pytest.raises(SentretError, match="unknown metric"):
        plan("wikiqa", metrics=["mapp"])


@needs_shared_data
def test_wikiqa_real_topic_counts(cache: Path) -> None:
    data = SHARED_DATA / "wikiqa"
    dev, train = read_wikiqa(data / "WikiQA-dev.tsv"), read_wikiqa(data / "WikiQA-train.tsv")
    assert len(dev.questions) == 296 and sum(any(q.labels) for q in dev.questions) == 126
    assert len(train.questions) == 2118 and sum(any(q.labels) for q in train.questions) == 873
    assert sum(len(q.positions) for q in dev.questions) == 2733
    bench = load_wikiqa(data / "WikiQA-dev.tsv", cache=cache)
    assert len(bench.topics) == 126 and len(bench.qrels) == 126
    assert bench.index.D == 293
    # every candidate's index sentence is the file's sentence (modulo surrounding whitespace)
    rows = [line.split("\t") for line in (data / "WikiQA-dev.tsv").read_text().splitlines()[1:]]
    texts = {row[4]: row[5].strip() for row in rows}
    assert all(bench.index.texts[s] == texts[bench.docids[s]] for s in range(bench.index.N))


# --- TrecQA ------------------------------------------------------------------------------------


def test_trecqa_reader_handles_raw_ampersands(tmp_path: Path) -> None:
    questions = read_trecqa(write_trecqa(tmp_path / "tiny.xml"))
    assert [q.id for q in questions] == ["1.1", "1.2", "1.3"]
    assert questions[0].text == "Who founded Barnes & Noble ?"
    assert questions[0].candidates[0] == ("Leonard Riggio founded the Barnes & Noble chain of stores .", 1)
    assert [label for _, label in questions[1].candidates] == [1, 0, 0, 0]


def test_trecqa_collection_and_topics(tmp_path: Path, cache: Path) -> None:
    bench = load_trecqa(write_trecqa(tmp_path / "tiny.xml"), cache=cache)
    assert bench.index.N == 9 and bench.index.D == 9  # the shared sentence is indexed once
    assert [t.id for t in bench.topics] == ["1.1", "1.2"]  # 1.3 has no positive candidate
    assert all(n == 1 for n in bench.index.doc_nsent) and set(bench.index.titles) == {""}
    shared = next(s for s in range(9) if bench.index.texts[s].startswith("Shares"))
    assert bench.docids[shared] in bench.qrels["1.1"] and bench.docids[shared] in bench.qrels["1.2"]
    # ids follow the text's hash, not the file: positives are not the lowest ids
    first = bench.topics[0]
    assert first.candidates is not None and list(first.relevant) != first.candidates[:2].tolist()


def _metrics(bench: Benchmark) -> dict[str, dict[str, float]]:
    report = evaluate_benchmark(bench, ["tfisf.v1", "bm25.v1", "lm-2si.v1"], metrics=["map", "mrr", "p@1"])
    return {name: result.means() for name, result in report.results.items()}


def test_trecqa_shuffled_file_gives_identical_metrics(tmp_path: Path, cache: Path) -> None:
    plain = load_trecqa(write_trecqa(tmp_path / "plain.xml"), cache=cache)
    shuffled = load_trecqa(write_trecqa(tmp_path / "shuffled.xml", shuffle_seed=7), cache=cache)
    assert plain.docids == shuffled.docids and plain.qrels == shuffled.qrels
    assert _metrics(plain) == _metrics(shuffled)
    metrics = _metrics(plain)
    assert metrics["doc-order"] == metrics["random"]  # no document order: doc-order ties everything


@pytest.mark.slow
@needs_shared_data
def test_trecqa_real_dev_shuffled_identical(tmp_path: Path, cache: Path) -> None:
    source = SHARED_DATA / "trecqa" / "DEV.xml"
    text = source.read_text()
    rng = random.Random(3)

    def shuffle(match: re.Match[str]) -> str:
        blocks = re.findall(r"<(?:positive|negative)>\n.*?</(?:positive|negative)>\n", match.group(2), re.S)
        head = match.group(2)[: match.group(2).index("</question>") + len("</question>\n")]
        rng.shuffle(blocks)
        return f"<QApairs id='{match.group(1)}'>{head}{''.join(blocks)}</QApairs>"

    shuffled = re.sub(r"<QApairs id='([^']*)'>(.*?)</QApairs>", shuffle, text, flags=re.S)
    assert shuffled != text
    (tmp_path / "DEV-shuffled.xml").write_text(shuffled)
    questions = read_trecqa(source)
    assert len(questions) == 82 and sum(any(label for _, label in q.candidates) for q in questions) == 78
    tsv = {q.id: q.candidates for q in read_trecqa(SHARED_DATA / "trecqa" / "DEV.tsv")}
    assert all(tsv[q.id] == q.candidates for q in questions if q.id in tsv)
    a = load_trecqa(source, cache=cache)
    b = load_trecqa(tmp_path / "DEV-shuffled.xml", cache=cache)
    assert len(a.topics) == 78 and a.qrels == b.qrels
    assert _metrics(a) == _metrics(b)


# --- SQuAD support -----------------------------------------------------------------------------


def test_squad_topics(squad: Benchmark) -> None:
    index = squad.index
    assert index.D == 3 and index.titles[0] == "Paris" and index.titles[2] == "Albert Einstein"
    by_question = {t.question: t for t in squad.topics}
    # q4's answer is no entity; q3's third answer "Eiffel" is not an entity of its own
    assert sorted(by_question) == ["q1", "q2", "q3", "q5", "q6", "q7"]
    assert squad.stats["questions"] == 7 and squad.stats["questions_without_entity_answer"] == 1
    entities = index.entities

    def entity(question: str) -> tuple[str, str]:
        e = by_question[question].entity
        assert e is not None
        return str(entities["text"].iloc[e]), str(entities["label"].iloc[e])

    assert entity("q1") == ("Paris", "GPE") and entity("q3") == ("Gustave Eiffel", "PERSON")
    assert entity("q7")[0] == "Nobel Prize"  # "the Nobel Prize" normalised like the entity key
    assert index.texts[by_question["q1"].relevant[0]] == "Paris is the capital of France."
    assert index.texts[by_question["q2"].relevant[0]].startswith("The Eiffel Tower was built")
    assert index.texts[by_question["q6"].relevant[0]].startswith("Einstein received")
    topic = by_question["q1"]
    assert topic.id == "q1:Paris/GPE" and squad.qrels[topic.id] == {"a00p000-0": 4}
    assert squad.scale == "graded"


def test_squad_min_candidates_and_distractors(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_squad(tmp_path / "tiny.json")
    kept = load_squad_support(path, min_candidates=3, cache=cache)
    assert [t.question for t in kept.topics] == ["q1"]  # Paris: 3 sentences mention it
    assert kept.stats["topics_below_min_candidates"] == 5

    def demo() -> list[Document]:
        return [Document("Berlin", "Berlin", "Berlin is a city in Germany. Paris is far away.")]

    monkeypatch.setattr("sentret_core.evaluation.benchmarks.squad.read_demo", demo)
    mixed = load_squad_support(path, distractors="demo", cache=cache)
    assert mixed.index.D == 4 and mixed.index.titles[0] == "Berlin"  # the shared distractors come first
    assert [t.id for t in mixed.topics] == [t.id for t in load_squad_support(path, cache=cache).topics]
    assert mixed.index.path != load_squad_support(path, cache=cache).index.path  # cached apart
    with pytest.raises(SentretError, match="unknown distractors"):
        load_squad_support(path, distractors="web", cache=cache)


def test_squad_candidates_follow_the_support_engine(squad: Benchmark) -> None:
    ev = Evaluator(squad, ranker="bm25.v1", k=1000)
    runs = dict(zip(["bm25f.v1", "sum-kld", "position"], ev.runs(
        [("bm25f.v1", None), ("sum-kld", None), ("position", None)])))
    for topic in squad.topics:
        assert topic.entity is not None
        ctx = QueryContext.of(squad.index, ev.terms(topic), ranker="bm25.v1", k=1000)
        own = QueryContext.of(squad.index, ev.terms(topic), ranker="bm25f.v1", k=1000)
        for model, engine_ctx, engine_model in (
            ("bm25f.v1", own, "bm25f.v1"),
            ("sum-kld", ctx, "sum-kld"),
            ("position", ctx, "position"),
        ):
            ids, scores = engine_ctx.candidates(topic.entity, engine_model)
            expected = {squad.docids[int(s)]: float(v) for s, v in zip(ids, scores)}
            assert runs[model][topic.id] == expected


def test_squad_baselines_rank_the_context_set(squad: Benchmark) -> None:
    """q1 "What is the capital of France?": bm25.v1 retrieves only sentence 0 of the Paris
    paragraph; Ŝ_q adds its neighbours (sentences 1, 2), of which 0 and 2 mention Paris. doc-order
    ranks the relevant sentence 0 first (AP 1); random ties the two: E[AP] = (1 + 1/2)/2."""
    report = evaluate_benchmark(squad, ["bm25.v1"], metrics=["map"], ranker="bm25.v1")
    doc_order = report.results["doc-order"].per_topic["map"]
    random_ = report.results["random"].per_topic["map"]
    assert doc_order["q1:Paris/GPE"] == pytest.approx(1.0)
    assert random_["q1:Paris/GPE"] == pytest.approx(0.75)
    assert report.results["random"].run["q1:Paris/GPE"] == {"a00p000-0": 0.0, "a00p000-2": 0.0}


def test_coverage_first_hits(squad: Benchmark) -> None:
    ev = Evaluator(squad, ranker="bm25.v1")
    hits = ev.first_hits()
    q1 = "q1:Paris/GPE"
    assert hits["S_qe"][q1] == 1.0 and hits["Ŝ_qe"][q1] == 1.0
    # q6 "When did Einstein receive the Nobel Prize?": its sentence matches, so it has a rank,
    # and a context hit can only come earlier
    for topic in squad.topics:
        plain, context = hits["S_qe"][topic.id], hits["Ŝ_qe"][topic.id]
        assert plain is None or (context is not None and context <= plain)
    curve = ev.coverage([1, 10, 100])
    assert list(curve.columns) == ["S_qe", "Ŝ_qe"] and (curve["Ŝ_qe"] >= curve["S_qe"]).all()


@pytest.mark.slow
@needs_shared_data
def test_squad_real_file(tmp_path: Path, cache: Path) -> None:
    source = SHARED_DATA / "squad" / "dev-v1.1-even.json"
    paragraphs = read_squad(source)
    assert len(paragraphs) == 1023 and sum(len(p.questions) for p in paragraphs) == 5397
    # index the first three articles of the real file (the whole file takes ~15 s to index)
    data = json.loads(source.read_text(encoding="utf-8"))
    subset = tmp_path / "squad-first3.json"
    subset.write_text(json.dumps({"version": data["version"], "data": data["data"][:3]}), encoding="utf-8")
    bench = load_squad_support(subset, cache=cache)
    n_questions = sum(len(qa["qas"]) for article in data["data"][:3] for qa in article["paragraphs"])
    assert bench.stats["questions"] == n_questions
    assert n_questions / 3 < len(bench.topics) < n_questions  # about half the answers are entities
    # every relevant sentence mentions the answer entity and contains one of the gold answers
    answers = {q.id: {a.text for a in q.answers} for p in read_squad(subset) for q in p.questions}
    for topic in bench.topics:
        assert topic.entity is not None
        for s in topic.relevant:
            assert bench.index.G[s, topic.entity] == 1
            assert any(answer in bench.index.texts[s] for answer in answers[topic.question])
    frame = evaluate(bench.qrels, {}, ["map"], scale="graded")
    assert len(frame) == len(bench.topics)


def test_an_evaluation_trains_missing_default_artefacts_explicitly_and_records_them(wikiqa: Benchmark) -> None:
    notes: list[str] = []
    report = evaluate_benchmark(wikiqa, ["lm-class.v1", "lm-trigger.v1", "tfisf.v1"], metrics=["map"],
                                progress=notes.append)
    recorded = report.to_dict()["settings"]["artefacts"]
    assert set(recorded) == {"lm-class.v1", "lm-trigger.v1"}
    assert recorded["lm-class.v1"]["classes"].startswith("classes@")
    assert recorded["lm-trigger.v1"]["tables"].startswith("triggers@")
    trained = [n for n in notes if n.startswith("training the")]  # an explicit, reported step
    assert len(trained) == 2 and "classes artefact 'classes'" in trained[0] and "triggers" in trained[1]
    again: list[str] = []
    evaluate_benchmark(wikiqa, ["lm-class.v1"], metrics=["map"], progress=again.append)
    assert not [n for n in again if n.startswith("training the")]  # the artefact is reused
    with pytest.raises(SentretError, match="no classes artefact named 'mine'"):
        evaluate_benchmark(wikiqa, ["lm-class.v1"], params={"lm-class.v1": {"classes": "mine"}}, metrics=["map"])


def test_a_learned_ranker_is_given_each_topics_entity(squad: Benchmark) -> None:
    from sentret_core.learning.store import save
    from sentret_core.models import score, top_k
    from tests.learning.test_learners import one_feature_ranker

    # a ranker that reads only an entity feature: without the topic's entity every score would be 0
    save("by-other-top", one_feature_ranker("e:other_top"), first_stage="bm25.v1", depth=100,
         scorers=("bm25.v1",), meta={})
    ev = Evaluator(squad)
    run = ev.run("ltr.v1", {"model": "by-other-top"})
    for topic in squad.topics:
        assert topic.entity is not None
        found = top_k(score(squad.index, ev.terms(topic), "ltr.v1", model="by-other-top", entity=topic.entity), ev.k)
        mentions = set(entity_sentences(squad.index, topic.entity).tolist())
        expected = {squad.docids[s]: v for s, v in zip(found.ids.tolist(), found.scores.tolist()) if s in mentions}
        assert run[topic.id] == pytest.approx(expected)
    assert any(v > 0 for ranked in run.values() for v in ranked.values())
