"""The candidates format: a user's own closed-candidate benchmark, and WikiQA/TrecQA through it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sentret_core.cli import main as cli
from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks import load_benchmark
from sentret_core.evaluation.benchmarks.candidates import read_candidates, write_candidates
from sentret_core.evaluation.benchmarks.wikiqa import wikiqa_candidates
from sentret_core.evaluation.driver import evaluate_benchmark
from sentret_core.ingest.qa_files import read_wikiqa
from tests.conftest import SHARED_DATA


def candidate(doc: str, position: int, text: str, label: int | None = None, title: str = "") -> dict[str, object]:
    found: dict[str, object] = {"doc": doc, "title": title or doc.upper(), "position": position, "text": text}
    return found if label is None else {**found, "label": label}


# Written by hand, as a user would: q1's candidates come from two documents, d2 only from position 3 on.
QUESTIONS = [
    {"id": "q1", "question": "Who painted Guernica?", "candidates": [
        candidate("d1", 0, "Guernica is a large oil painting.", 0),
        candidate("d1", 1, "Pablo Picasso painted it in 1937 in Paris.", 1),
        candidate("d1", 2, "It shows the bombing of a Basque town.", 0),
        candidate("d2", 3, "The artist lived in France for most of his life.", 0)]},
    {"id": "q2", "question": "When did the Spanish Civil War end?", "candidates": [
        candidate("d3", 0, "The Spanish Civil War began in 1936.", 0),
        candidate("d3", 1, "It ended in April 1939 with a Nationalist victory.", 1),
        candidate("d1", 2, "It shows the bombing of a Basque town.", 0)]},
    {"id": "q3", "question": "Unlabelled: nothing to evaluate here", "candidates": [
        candidate("d3", 1, "It ended in April 1939 with a Nationalist victory.")]},
]


def write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), "utf-8")
    return path


def test_a_hand_written_file_becomes_documents_topics_and_qrels(tmp_path: Path) -> None:
    bench = load_benchmark("candidates", write(tmp_path / "my.jsonl", QUESTIONS), cache=tmp_path / "cache")
    index = bench.index
    # d1 has 3 sentences, d2 4 (positions 0-2 are a gap, kept as empty sentences), d3 2: 9 in all
    assert list(index.documents["id"]) == ["d1", "d2", "d3"] and index.N == 9
    assert [t.id for t in bench.topics] == ["q1", "q2"] and bench.stats["questions"] == 3
    q1, q2 = bench.topics
    assert q1.candidates.tolist() == [0, 1, 2, 6] and q1.relevant == (1,)  # d2's position 3 is sentence 3+3
    assert q2.candidates.tolist() == [2, 7, 8] and q2.relevant == (8,)
    assert bench.qrels["q1"] == {"d1-0": 0, "d1-1": 1, "d1-2": 0, "d2-3": 0}
    assert bench.scale == "binary"


def test_sentret_eval_candidates_on_a_hand_written_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write(tmp_path / "my.jsonl", QUESTIONS)
    code = cli.main(["eval", "candidates", "--data", str(data), "--models", "bm25f.v1,tfisf.v1",
                     "--cache", str(tmp_path / "cache"), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    report = json.loads(out.out)
    assert report["benchmark"] == "candidates" and report["topics"] == 2
    # Tie-aware reciprocal rank under tfisf.v1 (terms are lower-cased words, not lemmas):
    # q1 "who painted guernica": sentence 0 matches "guernica", the relevant 1 matches "painted"; each term is
    # in one sentence, so both score log 2 · log 2 · log((9+1)/1.5): tied at ranks 1-2, expected RR (1 + 1/2)/2.
    # q2: sentence 7 matches "spanish civil war"; the relevant 8 ("ended" is not "end") matches nothing and
    # ties with sentence 2 at ranks 2-3: expected RR (1/2 + 1/3)/2. Mean: (0.75 + 0.41667)/2 = 0.58333.
    assert report["models"]["tfisf.v1"]["mean"]["mrr"] == pytest.approx((0.75 + (1 / 2 + 1 / 3) / 2) / 2)


@pytest.mark.parametrize(
    ("line", "message"),
    [("not json", "bad.jsonl:2: not valid JSON"),
     ('["a list"]', "bad.jsonl:2: expected a JSON object"),
     ({"id": "q9", "question": "x", "candidates": []}, 'bad.jsonl:2: "candidates" must be a non-empty list'),
     ({"id": "q1", "question": "x", "candidates": [candidate("d9", 0, "a")]}, "bad.jsonl:2: question id 'q1'"),
     ({"id": "q9", "question": "x", "candidates": [candidate("d9", -1, "a")]}, 'candidate 1: "position" must'),
     ({"id": "q9", "question": "x", "candidates": [candidate("d9", 0, "a", 7)]}, 'candidate 1: "label" must'),
     ({"id": "q9", "question": "x", "candidates": [candidate("d1", 0, "another text")]}, "has another text"),
     ({"id": "q9", "question": "x", "candidates": [candidate("d9", 0, "a"), candidate("d9", 0, "a")]},
      "candidate 2: document d9 position 0 is listed twice"),
     ({"id": "q 9", "question": "x", "candidates": [candidate("d9", 0, "a")]}, "without whitespace"),
     ({"question": "x", "candidates": [candidate("d9", 0, "a")]}, 'bad.jsonl:2: "id" must be a non-empty string')],
    ids=["json", "list", "empty", "dup-id", "position", "label", "text", "twice", "space", "no-id"],
)
def test_a_malformed_line_is_refused_with_its_number(tmp_path: Path, line: object, message: str) -> None:
    path = write(tmp_path / "bad.jsonl", [QUESTIONS[0], line])
    with pytest.raises(SentretError, match=message.replace("(", r"\(").replace("[", r"\[")):
        read_candidates(path)


def test_a_question_with_many_candidates_reads_in_linear_time(tmp_path: Path) -> None:
    # 50,000 candidates of one question: the duplicate check is a set per question. Compared pairwise
    # (the old reader) this took minutes (8,000 candidates: 7 CPU-s, growing as the square); a set reads it at once.
    many = [candidate("d", i, f"sentence {i}") for i in range(50_000)]
    path = write(tmp_path / "many.jsonl", [{"id": "q", "question": "sentence", "candidates": many}])
    started = time.process_time()
    found = read_candidates(path)
    assert len(found.questions[0].candidates) == 50_000 and len(found.documents["d"][1]) == 50_000
    assert time.process_time() - started < 30  # the set reads it in well under a second


def test_positions_that_leave_millions_of_empty_sentences_are_refused(tmp_path: Path) -> None:
    # 20 questions naming positions 0 and 100,000 of their own document: 40 sentences given, 20 × 99,999 gaps
    # (each an empty sentence of the index). Refused while reading, before any index is built.
    questions = [{"id": f"q{i}", "question": "x", "candidates": [candidate(f"d{i}", 0, "a", 1),
                                                                   candidate(f"d{i}", 100_000, "b", 0)]}
                 for i in range(20)]
    path = write(tmp_path / "sparse.jsonl", questions)
    with pytest.raises(SentretError, match=r"leave 1,999,980 empty sentences for the 40 sentences it gives"):
        read_candidates(path)
    # a document given from position 3 on (QUESTIONS' d2) or a few sentences apart stays fine
    assert read_candidates(write(tmp_path / "ok.jsonl", QUESTIONS)).documents["d2"][1][:3] == ["", "", ""]


def test_lone_surrogates_are_read_as_the_corpus_reader_reads_them(tmp_path: Path) -> None:
    # JSON may spell a lone surrogate ("\\ud800"), which no UTF-8 writer can encode: it becomes U+FFFD, and a
    # pair written as two escapes becomes its character, as in the corpus reader (ingest/corpus.py).
    line = ('{"id": "q\\ud800", "question": "who \\ud83d\\ude00", "candidates": [{"doc": "d\\udc00", '
            '"title": "T\\ud800", "position": 0, "text": "a \\udc00 b", "label": 1}]}')
    found = read_candidates(write(tmp_path / "s.jsonl", [line]))
    question = found.questions[0]
    assert (question.id, question.text) == ("q\ufffd", "who \U0001F600")
    assert found.documents == {"d\ufffd": ("T\ufffd", ["a \ufffd b"])}
    code = cli.main(["eval", "candidates", "--data", str(tmp_path / "s.jsonl"), "--models", "tfisf.v1",
                     "--cache", str(tmp_path / "cache"), "--json"])
    assert code == 0


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not beside the repository")
def test_wikiqa_through_the_candidates_format_gives_todays_numbers_for_every_model(tmp_path: Path) -> None:
    """WikiQA dev read by its converter, written as candidates JSONL and read back gives the very numbers
    of every model that the WikiQA loader of eebde01 (before the candidates format) gave: MAP to 6 places
    (the language models' since their finite scores, below)."""
    before = {"doc-order": 0.672789, "random": 0.411234, "tfisf.v1": 0.611698, "tfmix.v1": 0.597541,
              "idfdoc.v1": 0.614567, "tfmix-idfdoc.v1": 0.599106, "tfisf-con.v1": 0.5928,
              "tfisf-length.v1": 0.662741, "tfisf-con-length.v1": 0.659404, "bm25.v1": 0.562344,
              "bm25f.v1": 0.605377, "lm-jm.v1": 0.575099, "lm-dir.v1": 0.59569, "lm-3mm.v1": 0.561667,
              "lm-2s.v1": 0.575572, "lm-2si.v1": 0.647403, "lm-3mmpds.v1": 0.600505, "lm-class.v1": 0.5631,
              "lm-class.v2": 0.602096, "lm-trigger.v1": 0.600848, "lm-trigger.v2": 0.595738}
    # Now a language model scores every candidate with its smoothed likelihood, where commit eebde01 left
    # the candidates it did not reach at -inf (tied at the bottom). JM, 3MM and 2S rank as before: the weight
    # of their collection model (λ, 1-λ-γ, λ) is the same for every sentence, so the unreached candidates still
    # tie below the reached ones; Dirichlet-smoothed models (|s|-dependent) and p(d|s) now order them.
    before |= {"lm-dir.v1": 0.596461, "lm-2si.v1": 0.648612, "lm-3mmpds.v1": 0.585168, "lm-class.v1": 0.562763,
               "lm-class.v2": 0.601712, "lm-trigger.v1": 0.600403, "lm-trigger.v2": 0.595507}
    dev = SHARED_DATA / "wikiqa" / "WikiQA-dev.tsv"
    converted = tmp_path / "wikiqa-dev.jsonl"
    write_candidates(wikiqa_candidates(read_wikiqa(dev)), converted)
    models = [m for m in before if m not in ("doc-order", "random")]
    for name, path in (("wikiqa", dev), ("candidates", converted)):
        report = evaluate_benchmark(load_benchmark(name, path, cache=tmp_path / "cache"), models).to_dict()
        found = {m: round(v["mean"]["map"], 6) for m, v in report["models"].items()}
        assert found == before, name


TOWNS = ["Alder", "Birch", "Cedar", "Dover", "Elm", "Fenn", "Glen", "Hale", "Ivy", "Jura", "Kent", "Lune"]


def town_questions() -> list[dict[str, object]]:
    """Twelve questions as a user would write them: the answer shares only the town's name with the
    question, and each question also holds the first sentence of another town's document."""
    questions = []
    for i, town in enumerate(TOWNS):
        other = TOWNS[(i + 1) % len(TOWNS)]
        questions.append({"id": f"t{i}", "question": f"When was {town} founded?", "candidates": [
            candidate(other.lower(), 0, f"{other} is a small town with a harbour.", 0),
            candidate(town.lower(), 0, f"{town} is a small town with a harbour.", 0),
            candidate(town.lower(), 1, f"{town} was settled by farmers in {1700 + 7 * i}.", 1),
            candidate(town.lower(), 2, f"The church of {town} has a tall spire.", 0)]})
    return questions


def test_learn_then_eval_a_ranker_on_a_hand_written_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The end-to-end command: `sentret eval candidates --models embed.v1,bm25f.v1,ltr.v1 --param ltr.v1.model=…`."""
    monkeypatch.setenv("SENTRET_RANKERS", str(tmp_path / "rankers"))
    data = str(write(tmp_path / "towns.jsonl", town_questions()))
    cache = str(tmp_path / "cache")
    assert cli.main(["learn", "candidates", "--data", data, "--folds", "3", "--choose", "--learner", "linear",
                     "--out", "towns", "--cache", cache, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["train"]["topics"] == 12 and len(record["grid"]) >= 2  # --choose tried the linear grid
    code = cli.main(["eval", "candidates", "--data", data, "--models", "embed.v1,bm25f.v1,ltr.v1",
                     "--param", "ltr.v1.model=towns", "--metrics", "map,mrr", "--cache", cache, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    report = json.loads(out.out)
    assert report["topics"] == 12 and report["settings"]["artefacts"]["ltr.v1"]["model"] == record["reference"]
    means = {m: report["models"][m]["mean"]["map"] for m in ("embed.v1", "bm25f.v1", "ltr.v1")}
    assert all(0 < v <= 1 for v in means.values())
    # "settled by farmers" answers "founded": the learned ranker, trained on these very topics, finds it
    assert means["ltr.v1"] > means["bm25f.v1"]


def test_learn_with_other_documents_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--other-documents N` reaches the learner and is recorded; the CV score stays the closed sets' own."""
    monkeypatch.setenv("SENTRET_RANKERS", str(tmp_path / "rankers"))
    data = str(write(tmp_path / "towns.jsonl", town_questions()))
    common = ["learn", "candidates", "--data", data, "--folds", "3", "--learner", "linear",
              "--cache", str(tmp_path / "cache"), "--json"]
    assert cli.main([*common, "--out", "plain"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert cli.main([*common, "--out", "others", "--other-documents", "5"]) == 0
    others = json.loads(capsys.readouterr().out)
    assert plain["other_documents"] == 0 and others["other_documents"] == 5
    # more rows taught (other towns' sentences), the same topics scored
    assert others["train"]["examples"] != plain["train"]["examples"]
    assert others["metrics"]["cv"]["topics"] == plain["metrics"]["cv"]["topics"] == 12
    assert cli.main([*common, "--out", "bad", "--other-documents", "-2"]) == 2
    assert "other_documents is how many" in capsys.readouterr().err
