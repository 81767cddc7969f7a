"""One relevance scale, named everywhere.

Before: Admin exported qrels on the trec scale (0-3) while Evaluate's upload read every file as
1-4 (relevant iff grade ≥ 3), so a session's own export gave other numbers than the session, or
"nothing to evaluate". Now an upload's scale is sniffed (and can be chosen), and the export of a
session, on either scale, re-imported or uploaded, gives exactly the session's numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from sentret_core import Index
from sentret_core.annotation.judged_eval import evaluate_judgments, evaluate_session
from sentret_core.annotation.records import IMPORT_SCALES, SCALES
from sentret_core.annotation.scales import (
    parse_scaled_qrels,
    qrels_grades,
    read_scale,
    relevance_rule,
    relevant_level,
    scale_note,
    sniff_scale,
)
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.defaults import RELEVANT_GRADE, TREC_RELEVANT_GRADE
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import parse_qrels
from tests.conftest import build_from_texts, judgments_env
from tests.sign_in_util import sign_in_handle

TOKEN = "scales-test-token"
MODELS = ("bm25f.v1", "tfisf.v1")


# ----------------------------------------------------------------------------- the rule


def test_one_rule_derived_from_one_default() -> None:
    assert (RELEVANT_GRADE, TREC_RELEVANT_GRADE) == (3, 2)  # trec = 1-4 minus one
    assert relevance_rule() == (
        "A sentence is relevant when graded 3 or 4 (1-4 scale), i.e. 2 or 3 on trec_eval's 0-3 scale "
        "(trec_eval -l 2)."
    )
    # the threshold of each scale is the grade its scale maps onto RELEVANT_GRADE
    assert [relevant_level(s) for s in ("trec", "1-4", "binary")] == [2, 3, 1]
    assert SCALES["trec"] == {1: 0, 2: 1, 3: 2, 4: 3} and IMPORT_SCALES["binary"] == {0: 1, 1: 3}
    assert scale_note("trec") == "trec scale (0-3), relevant ≥ 2 (trec_eval -l 2)"
    assert scale_note("1-4") == "1-4 scale, relevant ≥ 3 (trec_eval -l 3)"
    with pytest.raises(SentretError, match="unknown qrels scale"):
        relevant_level("0-10")


# ----------------------------------------------------------------------------- sniffing


@pytest.mark.parametrize(
    ("grades", "scale", "fits"),
    [
        ([0, 1, 2, 3], "trec", ("trec",)),  # a 0 and a 2 or 3: only trec
        ([0, 2], "trec", ("trec",)),
        ([3, 0, 3], "trec", ("trec",)),
        ([1, 2, 3, 4], "1-4", ("1-4",)),  # a 4 and no 0: only 1-4
        ([4], "1-4", ("1-4",)),
        ([2, 4], "1-4", ("1-4",)),
        ([0, 1], "binary", ("binary", "trec")),  # only 0/1: binary, but trec could be meant
        ([0], "binary", ("binary", "trec")),
        ([1], "binary", ("binary", "trec", "1-4")),
        ([1, 2, 3], "trec", ("trec", "1-4")),  # the ambiguous case: trec (the export default) first
        ([2, 3], "trec", ("trec", "1-4")),
    ],
)
def test_sniffing_and_its_boundaries(grades: list[int], scale: str, fits: tuple[str, ...]) -> None:
    reading = sniff_scale(grades)
    assert (reading.scale, reading.fits, reading.ambiguous) == (scale, fits, len(fits) > 1)


def test_the_sentences_say_what_was_read() -> None:
    assert sniff_scale([0, 1, 2, 3]).sentence() == "values 0-3 found: read as trec scale, relevant ≥ 2"
    assert sniff_scale([1, 2, 3, 4]).sentence() == "values 1-4 found: read as 1-4 scale, relevant ≥ 3"
    assert sniff_scale([1, 2, 3]).sentence() == (
        "values 1-3 found: read as trec scale, relevant ≥ 2 "
        "(they also fit the 1-4 scale: choose it if that is what the file uses)"
    )
    assert sniff_scale([0, 1]).sentence().startswith("values 0, 1 found: read as binary scale, relevant ≥ 1")
    assert read_scale([1, 2, 3], "1-4").sentence().startswith(
        "values 1-3 found: read as the chosen 1-4 scale, relevant ≥ 3 (they also fit the trec scale"
    )


@pytest.mark.parametrize(
    ("grades", "scale", "message"),
    [
        ([0, 4], "auto", "values 0, 4 found: they fit no scale"),  # 0 is not 1-4, 4 is not trec
        ([5], "auto", "values 5 found: they fit no scale"),
        ([-1, 0], "auto", "fit no scale"),
        ([], "auto", "no judgments"),
        ([0, 1, 2], "1-4", "grade 0 is not on the 1-4 scale"),
        ([2], "binary", "grade 2 is not on the binary scale"),
        ([1], "0-10", "unknown qrels scale"),
    ],
)
def test_grades_off_every_scale_are_refused(grades: list[int], scale: str, message: str) -> None:
    with pytest.raises(SentretError, match=message):
        read_scale(grades, scale)


def test_qrels_grades_reads_the_fourth_field_of_judgment_lines() -> None:
    lines = ["t:e 0 1 3", "# t:e 0 2 9", "", "t:e 0 3", "t:e 0 4 x", "t:e Q0 5 0"]
    assert qrels_grades(lines) == [3, 0]


# ----------------------------------------------------------------------------- the session's own numbers


# Two documents where one topic, (peace painting, Picasso), has six candidate sentences that the
# models rank differently: the metrics are not all 1.0, so a misread grade changes them.
DOCS = [
    {"id": "a", "title": "Picasso and peace", "text": (
        "Pablo Picasso painted a dove for the peace congress in Paris. "
        "Picasso gave the peace dove to the World Peace Council. Many painters admired Picasso and his painting. "
        "In 1950 Picasso received a peace prize for his painting of doves. The weather in Paris was mild that spring. "
        "Picasso said that painting is a weapon for peace.")},
    {"id": "b", "title": "Guernica", "text": (
        "Picasso painted Guernica in 1937 after the bombing. "
        "The painting toured Europe to raise money for peace. Picasso kept Guernica out of Spain for decades. "
        "Critics called the painting by Picasso a plea for peace.")},
]
TOPICS = "peace painting\tPicasso|PERSON\npeace painting\tParis|GPE\npeace painting\tGuernica|PERSON\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_from_texts(tmp_path_factory.mktemp("scales"), DOCS)


@pytest.fixture
def store(index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    """A session graded 4, 3, 2, 1, 4, 3, … in its order: every grade is used, so its trec export
    holds 3s, 2s, 1s and 0s."""
    db = judgments_env(monkeypatch, tmp_path, index, TOKEN)
    with JudgmentStore(db) as opened:
        info, plan = create_session(opened, "s", index, TOPICS, depth=10)
        assert [len(t.pooled) for t in plan.topics] == [6, 2, 2] and info.n_items == 10
        handle = sign_in_handle(opened, TOKEN, "s", "ann")
        position = 0
        while (item := handle.next_item()) is not None:
            handle.grade(item.item_id, 4 - position % 4)
            position += 1
        yield opened


def means(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    return {str(m): {str(k): float(v) for k, v in row.items()} for m, row in frame.iterrows()}


@pytest.mark.parametrize("scale", ["trec", "1-4"])
def test_an_export_uploaded_gives_the_sessions_numbers(
    store: JudgmentStore, index: Index, scale: str
) -> None:
    admin = store.admin(TOKEN)
    session = evaluate_session(admin, "s", index, models=MODELS)
    exported = admin.export_qrels("s", scale=scale)
    grades = sorted({int(line.split()[3]) for line in exported.splitlines()})
    assert grades == ([0, 1, 2, 3] if scale == "trec" else [1, 2, 3, 4])  # every grade, so no ambiguity
    qrels, reading = parse_scaled_qrels(exported, source="s.qrels")  # sniffed, as Evaluate's upload does
    assert reading.scale == scale and not reading.ambiguous
    uploaded = evaluate_judgments(index, qrels, models=MODELS)
    assert uploaded.topics == session.topics and uploaded.skipped_topics == session.skipped_topics
    assert means(uploaded.means()) == means(session.means())
    assert 0 < session.means().loc["bm25f.v1", "map"] < 1  # a real comparison, not of zeros or ones


def test_a_trec_file_with_3s_is_not_read_as_1_4(store: JudgmentStore, index: Index) -> None:
    """The regression guarded: trec grades 2 (the app's "relevant", stored 3) counted as not relevant."""
    admin = store.admin(TOKEN)
    session = evaluate_session(admin, "s", index, models=MODELS)
    exported = admin.export_qrels("s", scale="trec")
    as_before = evaluate_judgments(index, parse_qrels(exported), models=MODELS)  # grades taken as 1-4
    assert means(as_before.means()) != means(session.means())  # what Evaluate's upload showed
    read = evaluate_judgments(index, parse_scaled_qrels(exported, "trec")[0], models=MODELS)
    assert means(read.means()) == means(session.means())
    # the same file read on the wrong scale (chosen by hand) is refused: 0 is not a 1-4 grade
    with pytest.raises(SentretError, match="grade 0 is not on the 1-4 scale"):
        parse_scaled_qrels(exported, "1-4")


@pytest.mark.parametrize("scale", ["trec", "1-4"])
def test_an_export_reimported_gives_the_sessions_numbers(
    store: JudgmentStore, index: Index, scale: str
) -> None:
    admin = store.admin(TOKEN)
    session = evaluate_session(admin, "s", index, models=MODELS)
    exported = admin.export_qrels("s", scale=scale)
    assert admin.import_qrels("s", exported.splitlines(), "gold", scale="auto") == len(exported.splitlines())
    ann = {(j.topic_id, j.sentence_id): j.grade for j in admin.all_judgments("s") if j.annotator == "ann"}
    gold = {(j.topic_id, j.sentence_id): j.grade for j in admin.all_judgments("s") if j.annotator == "gold"}
    assert gold == ann
    again = evaluate_session(admin, "s", index, rule="annotator", annotator="gold", models=MODELS)
    assert means(again.means()) == means(session.means())


def test_an_upload_off_every_scale_names_its_line() -> None:
    # 0 fits only trec/binary and 4 only 1-4: no scale fits, so the file is read on the default
    # trec scale and the first line off it is named
    with pytest.raises(SentretError, match=r"x.qrels:3: grade 4 is not on the trec scale \(0, 1, 2, 3\)"):
        parse_scaled_qrels("a:b 0 1 0\n\na:b 0 2 4\n", source="x.qrels")
    qrels, reading = parse_scaled_qrels("a:b 0 1 0\na:b 0 2 3\n")  # trec 0 and 3 are stored 1 and 4
    assert qrels == {"a:b": {"1": 1, "2": 4}} and reading.chosen_by == "auto" and reading.scale == "trec"
    qrels, reading = parse_scaled_qrels("a:b 0 1 1\na:b 0 2 3\n", "1-4")  # chosen: taken as they are
    assert qrels == {"a:b": {"1": 1, "2": 3}} and reading.chosen_by == "given"
