"""Imports that used to crash or forge, and the qrels scale.

Every bad import is one clear SentretError naming the line, and the database is byte-for-byte the
same table contents afterwards. Imported grades belong to import annotators only, and a person's
timestamps come from the server only. Exported qrels are read back with ir_measures (pytrec_eval,
i.e. trec_eval's own code) and give the app's relevance.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import ir_measures
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ir_measures import AP, P, Qrel, ScoredDoc

from sentret_core.annotation.io import MAX_JSONL_LINE, MAX_QRELS_LINE
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, PoolItem, PoolSettings
from sentret_core.annotation.store import JudgmentStore
from sentret_core.defaults import RELEVANT_GRADE
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import topic_id
from tests.conftest import examples

TOKEN = "imports-admin-token"
TOPIC = topic_id("q", "e")
TABLES = ("sessions", "pool_items", "annotators", "judgments", "history", "skips", "annotator_log")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgmentStore]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    with JudgmentStore(tmp_path / "imports.db") as opened:
        opened.create_session("s", "/idx", [PoolItem("q", "e", sid, f"s{sid}") for sid in range(6)],
                              PoolSettings())
        yield opened


def snapshot(store: JudgmentStore) -> dict[str, list[tuple[object, ...]]]:
    return {t: store._conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in TABLES}


def record(**fields: object) -> dict[str, object]:
    return {"query": "q", "entity": "e", "sentence_id": 1, "annotator": "x", "grade": 3, **fields}


GOOD = json.dumps(record(sentence_id=0))


# --------------------------------------------------------------------------- qrels


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (f"{TOPIC} 0 99999999999999999999 1", r"qrels line 2: sentence id has 20 digits; it must lie in \[0, 2\*\*63"),
        (f"{TOPIC} 0 9223372036854775808 1", "qrels line 2: the sentence id must be an integer from 0 to 92233"),
        (f"{TOPIC} 0 -1 1", "qrels line 2: the sentence id must be an integer from 0"),
        (f"{TOPIC} 0 1 {'9' * 25}", "qrels line 2: grade has 25 digits"),
        (f"{TOPIC} 0 {'9' * 5000} 1", "qrels line 2: 5,008 characters, over the limit of 4,000 per line"),
        (f"{TOPIC} 0 ٣ 1", "qrels line 2: sentence id '٣' is not an integer"),  # a non-ASCII digit
        (f"{TOPIC} 0 1 4", r"qrels line 2: grade 4 is not on the trec scale \(0, 1, 2, 3\)"),
        (f"{TOPIC} 0 1 {'x' * MAX_QRELS_LINE}", f"qrels line 2: {MAX_QRELS_LINE + len(TOPIC) + 5:,} characters, over"),
        (f"{topic_id('q' * 201, 'e')} 0 1 1", r"qrels line 2: topic .* \(each at most 200 characters\)"),
        (f"{TOPIC}\ud800 0 1 1", "qrels line 2: not valid Unicode text"),
    ],
)
def test_bad_qrels_lines_are_one_message_and_write_nothing(store: JudgmentStore, line: str, message: str) -> None:
    before = snapshot(store)
    with pytest.raises(SentretError, match=message):
        store.admin(TOKEN).import_qrels("s", [f"{TOPIC} 0 0 1", line], "gold")
    assert snapshot(store) == before


def test_the_largest_id_is_accepted_up_to_the_pool_check(store: JudgmentStore) -> None:
    with pytest.raises(SentretError, match=r"line 1: .*sentence 9223372036854775807.* is not in the pool"):
        store.admin(TOKEN).import_qrels("s", [f"{TOPIC} 0 9223372036854775807 1"], "gold")


# --------------------------------------------------------------------------- JSONL


DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"query": "q", "entity": "e", "sentence_id": ' + "9" * 5000 + ', "annotator": "x", "grade": 3}',
         "JSONL line 2: a number with 5000 characters"),
        (json.dumps(record())[:-1] + ', "position": ' + "1" * 5000 + "}", "JSONL line 2: a number with 5000"),
        (json.dumps(record(sentence_id=2**63)), "JSONL line 2: sentence_id must be an integer from 0 to 92233"),
        (json.dumps(record(sentence_id=-5)), "JSONL line 2: sentence_id must be an integer from 0"),
        (json.dumps(record(sentence_id="1")), "JSONL line 2: sentence_id must be an integer"),
        (json.dumps(record(sentence_id=1.0)), "JSONL line 2: sentence_id must be an integer"),
        (DEEP, "JSONL line 2: nested 5000 deep"),
        (json.dumps(record())[:-1] + f', "title": {DEEP}' + "}", "JSONL line 2: nested 5001 deep"),
        (json.dumps(record(note=[[1]])), "JSONL line 2: nested 3 deep"),
        (json.dumps(record(note=["a"])), "JSONL line 2: a note must be text"),
        ('{"query": "q", "entity": "e", "sentence_id": 1, "annotator": "x", "grade": 3, "grade": 4}',
         "JSONL line 2: the key 'grade' appears twice"),
        (json.dumps(record(grade=float("nan"))), "JSONL line 2: NaN is not a number JSON allows"),
        (json.dumps(record(grade=True)), "JSONL line 2: a grade must be"),
        (json.dumps(record(annotator="a" * 195)), "JSONL line 2: the annotator name must be at most 189"),
        (json.dumps(record(annotator="ali\u200bce")), "JSONL line 2: the annotator name must not contain"),
        (json.dumps(record(query="q" * 201)), "JSONL line 2: the query must be at most 200"),
        (json.dumps(record(created_at="2024-01-01T00:00:00")), "JSONL line 2: timestamp .* has no time zone"),
        (json.dumps(record(created_at="3024-01-01T00:00:00+00:00")), "JSONL line 2: timestamp .* is in the future"),
        (json.dumps(record(updated_at="2024-01-01T00:00:00+00:00" + " " * 60)), "JSONL line 2: timestamp .*not ISO"),
        (json.dumps(record(note="n" * MAX_JSONL_LINE)), f"JSONL line 2: {MAX_JSONL_LINE + 89:,} characters, over"),
        (json.dumps(record(annotator_kind="admin")), "JSONL line 2: annotator_kind must be"),
        (json.dumps(record(query="\ud800")), "JSONL line 2: the query must be .* without .* lone surrogates"),
        (json.dumps(record(note="a\udc00")), "JSONL line 2: a note must be valid Unicode text"),
        (json.dumps(record(annotator="\udc00x")), "JSONL line 2: the annotator name must not contain"),
        ("{\"query\": \"\ud800\"}", "JSONL line 2: not valid Unicode text"),  # a raw lone surrogate
    ],
)
def test_bad_jsonl_lines_are_one_message_and_write_nothing(store: JudgmentStore, line: str, message: str) -> None:
    before = snapshot(store)
    with pytest.raises(SentretError, match=message):
        store.admin(TOKEN).import_jsonl("s", [GOOD, line])
    assert snapshot(store) == before


def test_a_float_overflow_is_no_grade(store: JudgmentStore) -> None:
    with pytest.raises(SentretError, match="JSONL line 1: a grade must be"):
        store.admin(TOKEN).import_jsonl("s", [json.dumps(record())[:-1].replace('"grade": 3', '"grade": 1e999') + "}"])


def test_imports_never_overwrite_a_persons_grades_or_forge_their_times(store: JudgmentStore) -> None:
    admin = store.admin(TOKEN)
    alice = store.sign_in("s", "alice", admin.add_annotator("s", "alice").passphrase)
    started = datetime.now(timezone.utc)
    alice.grade(2, 4)
    [mine] = alice.my_judgments()
    stamp = datetime.fromisoformat(mine.created_at)
    assert started - timedelta(seconds=5) <= stamp <= datetime.now(timezone.utc)  # the server's clock
    forged = {"query": "q", "entity": "e", "sentence_id": 1, "annotator": "Alice", "annotator_kind": "person",
              "grade": 1, "created_at": "2001-01-01T00:00:00+00:00", "updated_at": "2001-01-01T00:00:00+00:00"}
    assert admin.import_jsonl("s", [json.dumps(forged)]) == 1
    # Alice's grade is untouched; the forged line became the grade of an import annotator
    assert alice.my_judgments() == [mine]
    by = {(j.annotator, j.annotator_kind): j for j in admin.all_judgments("s")}
    assert set(by) == {("alice", "person"), ("Alice (imported)", "import")}
    assert by[("Alice (imported)", "import")].created_at == "2001-01-01T00:00:00.000000+00:00"
    # an import annotator's name may not be a person's: refused, nothing written
    admin.add_annotator("s", "gold")
    before = snapshot(store)
    with pytest.raises(SentretError, match="line 1: 'GOLD' is a person annotator of session 's'"):
        admin.import_qrels("s", [f"{TOPIC} 0 2 0"], "GOLD ")
    impostor = dict(forged, annotator="gold", annotator_kind="import")
    with pytest.raises(SentretError, match="line 1: 'gold' is a person annotator"):
        admin.import_jsonl("s", [json.dumps(impostor)])
    assert snapshot(store) == before
    history = admin.history("s")
    assert all(datetime.fromisoformat(h.at) > stamp - timedelta(seconds=5) for h in history)  # server times


def test_the_admin_page_shows_a_bad_import_as_one_message(
    store: JudgmentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SENTRET_JUDGMENTS_DB", str(store.path))
    app = AppTest.from_string("from sentret_core.ui.pages import admin\nadmin.render()\n", default_timeout=60).run()
    app.text_input(key="admin_token").input(TOKEN)
    app = app.button[0].click().run()
    app.radio(key="admin_import_format").set_value("jsonl").run()
    big = '{"query": "q", "entity": "e", "sentence_id": ' + "9" * 5000 + ', "annotator": "x", "grade": 3}\n'
    app.file_uploader(key="admin_import_file_jsonl").set_value(("big.jsonl", big.encode(), "application/jsonl"))
    app.run()
    before = snapshot(store)
    app.button(key="admin_import").click().run()
    assert not app.exception
    errors = [e.value.replace("\\", "") for e in app.error]  # shown as escaped Markdown
    assert errors == ["JSONL line 1: a number with 5000 characters (at most 20)"]
    assert snapshot(store) == before


def test_cli_import_of_an_overflowing_id_exits_2(store: JudgmentStore, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from sentret_core.cli import main as cli

    qrels = tmp_path / "big.qrels"
    qrels.write_text(f"{TOPIC} 0 99999999999999999999 1\n")
    code = cli.main(["judgments", "import", str(store.path), "--session", "s", "--format", "qrels", str(qrels),
                     "--annotator", "gold"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [
        "sentret: error: qrels line 1: sentence id has 20 digits; it must lie in [0, 2**63 − 1]"
    ]


# --------------------------------------------------------------------------- the trec scale


def test_exported_qrels_read_by_ir_measures_give_the_apps_relevance(store: JudgmentStore) -> None:
    """Sentences 0-3 graded 1 (non-relevant), 2 (fairly), 3 (relevant), 4 (very relevant)."""
    admin = store.admin(TOKEN)
    alice = store.sign_in("s", "alice", admin.add_annotator("s", "alice").passphrase)
    for item, grade in zip((1, 2, 3, 4), (1, 2, 3, 4)):
        alice.grade(item, grade)
    app_relevant = {str(j.sentence_id) for j in admin.all_judgments("s") if j.grade >= RELEVANT_GRADE}
    assert app_relevant == {"2", "3"}
    qrels = list(ir_measures.read_trec_qrels(admin.export_qrels("s", ids="internal")))
    assert {(q.doc_id, q.relevance) for q in qrels} == {("0", 0), ("1", 1), ("2", 2), ("3", 3)}
    assert {q.doc_id for q in qrels if q.relevance >= 2} == app_relevant  # trec_eval -l 2
    # A run ranking the non-relevant sentence 0 first, then 2, then 1, then 3.
    run = [ScoredDoc(TOPIC, doc, score) for doc, score in (("0", 4.0), ("2", 3.0), ("1", 2.0), ("3", 1.0))]
    # P@1 with trec_eval's default level (rel ≥ 1): sentence 0 is non-relevant, so 0.0 — with the old
    # 1-4 export, grade 1 counted as relevant and P@1 was 1.0.
    old = list(ir_measures.read_trec_qrels(admin.export_qrels("s", scale="1-4", ids="internal")))
    assert ir_measures.calc_aggregate([P @ 1], qrels, run)[P @ 1] == 0.0
    assert ir_measures.calc_aggregate([P @ 1], old, run)[P @ 1] == 1.0
    # At level 2 (trec) the app's relevance: relevant 2 and 3 at ranks 2 and 4:
    # AP = (1/2 + 2/4) / 2 = 0.5; P@2 = 1/2. The same numbers as on the 1-4 export at level 3.
    at2 = ir_measures.calc_aggregate([AP(rel=2), P(rel=2) @ 2], qrels, run)
    at3 = ir_measures.calc_aggregate([AP(rel=3), P(rel=3) @ 2], old, run)
    assert at2[AP(rel=2)] == pytest.approx(0.5) and at2[P(rel=2) @ 2] == pytest.approx(0.5)
    assert (at3[AP(rel=3)], at3[P(rel=3) @ 2]) == (at2[AP(rel=2)], at2[P(rel=2) @ 2])
    # the trec file read back by the importer gives the grades the app stored
    admin.import_qrels("s", [f"{q.query_id} 0 {q.doc_id} {q.relevance}" for q in qrels], "copy")
    copied = {j.sentence_id: j.grade for j in admin.all_judgments("s") if j.annotator == "copy"}
    assert copied == {0: 1, 1: 2, 2: 3, 3: 4}
    assert isinstance(qrels[0], Qrel)


def test_two_lines_for_one_import_annotator_and_item_are_refused(store: JudgmentStore) -> None:
    # "x" (a person) arrives as "x (imported)": a line of the import annotator "X (imported)" on the
    # same item would overwrite it within one import
    first = record(annotator="x", annotator_kind="person")
    second = record(annotator="X (imported)", annotator_kind="import", grade=1)
    before = snapshot(store)
    with pytest.raises(SentretError, match="line 2: repeats the judgment of line 1"):
        store.admin(TOKEN).import_jsonl("s", [json.dumps(first), json.dumps(second)])
    assert snapshot(store) == before


# --------------------------------------------------------------------------- any input at all

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=6),
    max_leaves=20,
)
FIELDS = st.fixed_dictionaries(
    {}, optional={"query": JSON | st.just("q"), "entity": JSON | st.just("e"), "sentence_id": JSON | st.integers(0, 8),
                  "annotator": JSON | st.just("x"), "grade": JSON | st.integers(0, 5), "note": JSON,
                  "annotator_kind": JSON | st.sampled_from(["person", "import"]), "created_at": JSON},
)


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(max_size=60) | FIELDS.map(json.dumps) | JSON.map(json.dumps), max_size=4))
def test_any_jsonl_is_imported_or_refused_with_one_message(store: JudgmentStore, lines: list[str]) -> None:
    before = snapshot(store)
    try:
        store.admin(TOKEN).import_jsonl("s", lines)
    except SentretError as err:
        assert str(err) and "\n" not in str(err)
        assert snapshot(store) == before
    assert {a.kind for a in store.admin(TOKEN).annotators("s")} <= {"import"}  # never a person


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(max_size=40) | st.tuples(st.sampled_from([TOPIC, "a:b", "x"]), st.text(max_size=3),
                                                        st.integers() | st.text(max_size=25), st.integers(-2, 6))
                      .map(lambda t: " ".join(map(str, t))), max_size=4))
def test_any_qrels_are_imported_or_refused_with_one_message(store: JudgmentStore, lines: list[str]) -> None:
    before = snapshot(store)
    try:
        store.admin(TOKEN).import_qrels("s", lines, "gold")
    except SentretError as err:
        assert str(err) and snapshot(store) == before
