"""The judgments store: schema and migration, grading, undo, resume, pooling, export/import."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core.annotation.annotator import AnnotatorHandle
from sentret_core.annotation.auth import admin_token, hash_passphrase
from sentret_core.annotation.pooling import adjudicate, pool
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, JUDGMENT_FIELDS, PoolItem, PoolSettings, Progress
from sentret_core.annotation.schema import MIGRATIONS, SCHEMA_VERSION
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import split_topic_id, topic_id
from tests.conftest import examples

TOKEN = "admin-token-for-tests"
SETTINGS = PoolSettings(("bm25.v1", "tfisf.v1"), depth=3, seed=7)
QUERY = "who founded apple"
ENTITIES = ("Steve Jobs", "Steve Wozniak")


def make_items() -> list[PoolItem]:
    """Two entities × three sentences: six items, in this order."""
    return [
        PoolItem(QUERY, entity, sid, f"{entity} sentence {sid}.", f"Doc {sid}")
        for entity in ENTITIES
        for sid in (10, 11, 12)
    ]


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    return TOKEN


@pytest.fixture
def store(tmp_path: Path, token: str) -> Iterator[JudgmentStore]:
    with JudgmentStore(tmp_path / "judgments.db") as opened:
        opened.create_session("s", "/indexes/demo", make_items(), SETTINGS)
        yield opened


def secret_for(name: str) -> str:
    return f"{name}-passphrase-1"


def join(store: JudgmentStore, name: str = "ann", session: str = "s") -> AnnotatorHandle:
    """The admin adds ``name`` to ``session`` (once, with :func:`secret_for`); ``name`` signs in."""
    try:
        store.admin(TOKEN).add_annotator(session, name, secret_for(name))
    except SentretError as err:
        if "already has an annotator" not in str(err):
            raise
    return store.sign_in(session, name, secret_for(name))


def count(store: JudgmentStore, table: str) -> int:
    return int(store._conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def counts(store: JudgmentStore) -> dict[str, int]:
    tables = ("sessions", "pool_items", "annotators", "judgments", "history", "skips")
    return {table: count(store, table) for table in tables}


# --------------------------------------------------------------------------- schema


def test_connection_settings_and_schema_version(store: JudgmentStore) -> None:
    pragma = {
        name: store._conn.execute(f"PRAGMA {name}").fetchone()[0]
        for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout", "user_version")
    }
    assert pragma["journal_mode"] == "wal"
    assert pragma["synchronous"] == 2  # FULL
    assert pragma["foreign_keys"] == 1
    assert pragma["busy_timeout"] >= 10_000
    assert pragma["user_version"] == SCHEMA_VERSION == len(MIGRATIONS) >= 5  # v5: web sessions, guidelines, flags


def test_a_v1_database_is_migrated_without_losing_rows(tmp_path: Path, token: str) -> None:
    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO sessions VALUES (1, 'old', '/idx', '[]', '[]', ?, ?, 1, '2024-01-01')",
        (SETTINGS.to_json(), hash_passphrase("pw")),
    )
    conn.executemany(
        "INSERT INTO pool_items VALUES (?, 1, 'q', 'e', ?, ?, 'text', 'title')",
        [(1, 100, 0), (2, 101, 1)],
    )
    conn.execute("INSERT INTO annotators VALUES (1, 1, 'ann', 'person', '2024-01-01')")
    conn.execute("INSERT INTO judgments VALUES (1, 1, 1, 1, 4, '2024-01-01', '2024-01-01')")
    conn.execute(
        "INSERT INTO history (session_id, item_id, annotator_id, action, old_grade, new_grade, at)"
        " VALUES (1, 1, 1, 'set', NULL, 4, '2024-01-01')"
    )
    conn.commit()
    conn.close()

    with JudgmentStore(path) as store:
        assert store._conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert counts(store) == {
            "sessions": 1, "pool_items": 2, "annotators": 1, "judgments": 1, "history": 1,
            "skips": 0,
        }
        with pytest.raises(SentretError, match="wrong name or passphrase"):
            store.sign_in("old", "ann", "pw")  # the shared passphrase signs nobody in any more
        secret = store.admin(TOKEN).new_secret("old", "ann")  # the admin gives "ann" a secret
        handle = store.sign_in_with_token("old", secret.token)
        assert handle.annotator == "ann"
        [kept] = handle.my_judgments()
        assert (kept.sentence_id, kept.grade, kept.note) == (100, 4, None)
        handle.grade(2, 3, note="added after the migration")
        assert handle.undo() is not None and handle.undo() is not None  # v1 history undoes too
        assert handle.my_judgments() == []
        assert store.check() == []
    with JudgmentStore(path) as again:  # opening a current database migrates nothing
        assert count(again, "history") == 4
        assert again.sign_in("old", "ann", secret.passphrase).annotator == "ann"


def test_refuses_newer_foreign_and_non_database_files(tmp_path: Path) -> None:
    newer = tmp_path / "newer.db"
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SentretError, match="newer"):
        JudgmentStore(newer)
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(SentretError, match="not a sentret judgments database"):
        JudgmentStore(foreign)
    text = tmp_path / "notes.txt"
    text.write_text("this is not a database at all, just some text " * 50)
    with pytest.raises(SentretError, match="not a judgments database"):
        JudgmentStore(text)


def test_history_is_append_only_and_grades_are_checked(store: JudgmentStore) -> None:
    join(store).grade(1, 3)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store._conn.execute("UPDATE history SET new_grade = 4")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store._conn.execute("DELETE FROM history")
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        store._conn.execute("UPDATE judgments SET grade = 5")
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        store._conn.execute(
            "INSERT INTO judgments (session_id, item_id, annotator_id, grade, created_at,"
            " updated_at) VALUES (1, 1, 1, 2, 'now', 'now')"
        )
    assert count(store, "history") == 1


# --------------------------------------------------------------------------- sessions


def test_create_session_records_the_settings(store: JudgmentStore) -> None:
    info = store.session("s")
    assert info.settings == SETTINGS
    assert info.queries == (QUERY,)
    assert info.entities == tuple((QUERY, e) for e in ENTITIES)
    assert (info.index_path, info.is_open, info.n_items) == ("/indexes/demo", True, 6)
    assert [s.name for s in store.sessions()] == ["s"]
    stored = store._conn.execute("SELECT passphrase_hash FROM sessions").fetchone()[0]
    assert stored == ""  # no shared passphrase: each annotator has their own secret


@pytest.mark.parametrize(
    ("name", "items", "message"),
    [
        ("s", make_items(), "already exists"),
        ("  ", make_items(), "session name"),
        ("t", [], "at least one item"),
        ("t", make_items() + make_items()[:1], "item 7 repeats"),
        ("t", [PoolItem(QUERY, "", 1)], "entity of item 1"),
        ("t", [PoolItem(QUERY, "E", 1.5)], "sentence id"),  # type: ignore[arg-type]
    ],
)
def test_create_session_rejects_bad_input_and_writes_nothing(
    store: JudgmentStore, name: str, items: list[PoolItem], message: str
) -> None:
    before = counts(store)
    with pytest.raises(SentretError, match=message):
        store.create_session(name, "/idx", items, SETTINGS)
    assert counts(store) == before


def test_pool_settings_declare_their_range() -> None:
    with pytest.raises(ValueError, match=r"\[1, ∞\); got 0"):
        PoolSettings(("bm25",), depth=0, seed=1)
    assert PoolSettings.from_json(SETTINGS.to_json()) == SETTINGS


# --------------------------------------------------------------------------- grading


def test_grade_set_change_and_no_op(store: JudgmentStore, token: str) -> None:
    handle = join(store)
    handle.grade(1, 2)
    handle.grade(1, 4, note="  names the founders  ")
    handle.grade(1, 4, note="names the founders")  # unchanged: no history row
    [judgment] = handle.my_judgments()
    assert (judgment.grade, judgment.note, judgment.sentence_id) == (4, "names the founders", 10)
    history = store.admin(token).history("s")
    assert [(h.action, h.old_grade, h.new_grade) for h in history] == [
        ("set", None, 2),
        ("change", 2, 4),
    ]


@pytest.mark.parametrize("bad", [0, 5, "3", 3.0, True, None])
def test_bad_grades_are_refused(store: JudgmentStore, bad: object) -> None:
    handle = join(store)
    before = counts(store)
    with pytest.raises(SentretError, match="1 \\(non-relevant\\)"):
        handle.grade(1, bad)  # type: ignore[arg-type]
    assert counts(store) == before


def test_unknown_item_is_refused(store: JudgmentStore, token: str) -> None:
    store.create_session("other", "/idx", [PoolItem("q", "e", 1)], SETTINGS)
    handle = join(store)
    with pytest.raises(SentretError, match="item 7 is not in session 's'"):
        handle.grade(7, 3)  # item 7 belongs to session "other"
    with pytest.raises(SentretError, match="item 99"):
        handle.skip(99)


def test_undo_walks_back_through_this_annotators_actions(store: JudgmentStore, token: str) -> None:
    handle = join(store)
    assert handle.undo() is None
    handle.grade(1, 2, note="first")
    handle.grade(2, 3)
    handle.grade(1, 4)
    undone = handle.undo()  # 1: 4 → 2 (note restored)
    assert undone is not None and undone.item_id == 1
    grades = {j.sentence_id: (j.grade, j.note) for j in handle.my_judgments()}
    assert grades == {10: (2, "first"), 11: (3, None)}
    handle.undo()  # 2: removed
    handle.undo()  # 1: removed
    assert handle.my_judgments() == [] and handle.undo() is None
    actions = [(h.action, h.old_grade, h.new_grade) for h in store.admin(token).history("s")]
    assert actions[3:] == [("undo", 4, 2), ("undo", 3, None), ("undo", 2, None)]
    assert store.check() == []


def test_next_item_resumes_where_the_annotator_stopped(tmp_path: Path, token: str) -> None:
    path = tmp_path / "resume.db"
    with JudgmentStore(path) as store:
        store.create_session("s", "/idx", make_items(), SETTINGS)
        handle = join(store)
        first = handle.next_item()
        assert first is not None and (first.item_id, first.position) == (1, 0)
        handle.grade(1, 3)
        handle.skip(2)
        handle.grade(3, 1)
    with JudgmentStore(path) as store:  # a new process signs in again
        handle = join(store)
        assert handle.progress() == Progress(total=6, graded=2, skipped=1)
        order: list[int] = []
        while (item := handle.next_item()) is not None and len(order) < 10:
            order.append(item.item_id)
            handle.grade(item.item_id, 2)
        assert order == [4, 5, 6, 2]  # the skipped item comes back after the others
        assert handle.progress() == Progress(total=6, graded=6, skipped=0)


def test_skipped_items_cycle_in_the_order_they_were_skipped(store: JudgmentStore) -> None:
    handle = join(store)
    for item in (1, 2, 3, 4):
        handle.skip(item)
    handle.grade(5, 3)
    handle.grade(6, 3)
    assert handle.next_item().item_id == 1  # type: ignore[union-attr]
    handle.skip(1)  # skipped again: goes behind 2, 3, 4
    assert [handle.next_item().item_id] == [2]  # type: ignore[union-attr]
    handle.grade(2, 4)
    assert handle.next_item().item_id == 3  # type: ignore[union-attr]
    with pytest.raises(SentretError, match="already graded"):
        handle.skip(2)
    handle.undo()  # un-grading item 2 puts it back in the normal order
    assert handle.next_item().item_id == 2  # type: ignore[union-attr]


def test_closed_session_takes_no_grades(store: JudgmentStore, token: str) -> None:
    handle = join(store)
    handle.grade(1, 3)
    admin = store.admin(token)
    admin.close_session("s")
    before = counts(store)
    with pytest.raises(SentretError, match="closed"):
        handle.grade(2, 3)
    with pytest.raises(SentretError, match="closed"):
        handle.undo()
    with pytest.raises(SentretError, match="closed"):
        store.sign_in("s", "ann", secret_for("ann"))
    assert counts(store) == before
    assert handle.my_judgments()[0].grade == 3  # reading stays possible
    admin.reopen_session("s")
    handle.grade(2, 3)
    assert admin.progress_by_annotator("s") == {"ann": Progress(6, 2, 0)}


# --------------------------------------------------------------------------- admin token


def test_admin_token_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, "from-env")
    assert admin_token() == "from-env"
    monkeypatch.delenv(ADMIN_TOKEN_ENV)
    generated = admin_token()
    assert len(generated) >= 32 and admin_token() == generated  # generated once, then cached


def test_admin_refuses_a_wrong_token(store: JudgmentStore, token: str) -> None:
    for wrong in ("", "admin-token-for-test", TOKEN + " ", None):
        with pytest.raises(SentretError, match="wrong admin token"):
            store.admin(wrong, client=repr(wrong))  # type: ignore[arg-type]  # one client each: 1 failure
    assert store.admin(TOKEN).all_judgments("s") == []


# --------------------------------------------------------------------------- pooling


RUNS = {"bm25": [5, 3, 9, 1, 7], "lm": [3, 8, 2, 5], "tfisf": [4, 4, 6]}


def test_pool_is_the_union_of_every_models_top_depth() -> None:
    pooled = pool(RUNS, depth=2, seed=1)
    assert sorted(pooled) == [3, 4, 5, 8]  # {5, 3} ∪ {3, 8} ∪ {4}
    assert len(set(pooled)) == len(pooled)
    assert pool(RUNS, depth=2, seed=1) == pooled  # deterministic with the seed
    reordered = {name: RUNS[name] for name in reversed(list(RUNS))}
    assert pool(reordered, depth=2, seed=1) == pooled  # independent of the models' order
    assert sorted(pool(RUNS, depth=100, seed=3)) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert pool({"m": range(50)}, 50, seed=1) != pool({"m": range(50)}, 50, seed=2)


@settings(max_examples=examples(60), deadline=None)
@given(
    runs=st.dictionaries(
        st.text(min_size=1, max_size=5), st.lists(st.integers(0, 40), max_size=15), max_size=4
    ),
    depth=st.integers(1, 20),
    seed=st.integers(),
)
def test_pool_properties(runs: dict[str, list[int]], depth: int, seed: int) -> None:
    pooled = pool(runs, depth, seed)
    assert len(pooled) == len(set(pooled))
    for ranking in runs.values():
        assert set(ranking[:depth]) <= set(pooled)
    assert set(pooled) == {sid for ranking in runs.values() for sid in ranking[:depth]}
    assert pool(dict(reversed(list(runs.items()))), depth, seed) == pooled


def test_pool_rejects_a_bad_depth() -> None:
    with pytest.raises(SentretError, match="depth"):
        pool(RUNS, depth=0, seed=1)


# --------------------------------------------------------------------------- topic ids, rules


def test_topic_id_escapes_whitespace_percent_and_colon() -> None:
    assert topic_id("who founded apple", "Steve Jobs") == "who%20founded%20apple:Steve%20Jobs"
    assert topic_id("100% a:b", "x\ty\u00a0z") == "100%25%20a%3Ab:x%09y%C2%A0z"


@given(st.text(min_size=1), st.text(min_size=1))
def test_topic_id_round_trips(query: str, entity: str) -> None:
    topic = topic_id(query, entity)
    assert len(topic.split()) == 1 and topic.count(":") == 1
    assert split_topic_id(topic) == (query, entity)


@pytest.mark.parametrize(
    ("grades", "majority", "mean"),
    [
        ([3], 3, 3),
        ([2, 3], 2, 3),  # tie → lower; mean 2.5 → 3 (half up)
        ([1, 2, 2], 2, 2),  # mean 5/3
        ([1, 4, 4, 1], 1, 3),  # tie → lower; mean 2.5 → 3
        ([1, 1, 2], 1, 1),  # mean 4/3
        ([3, 4, 4], 4, 4),  # mean 11/3
    ],
)
def test_adjudication_rules_by_hand(grades: list[int], majority: int, mean: int) -> None:
    assert adjudicate(grades, "majority") == majority
    assert adjudicate(grades, "mean") == mean


# --------------------------------------------------------------------------- export / import


def graded(store: JudgmentStore) -> None:
    """ann1, ann2, ann3 grade the first three items (sentences 10, 11, 12 of Steve Jobs)."""
    grades = {"ann1": (4, 1, 3), "ann2": (3, 2, 3), "ann3": (3, 2, 1)}
    for name, values in grades.items():
        handle = join(store, name)
        for item, grade in zip((1, 2, 3), values):
            handle.grade(item, grade, note=f"{name} on {item}" if grade == 4 else None)


def test_export_qrels_by_rule(store: JudgmentStore, token: str) -> None:
    graded(store)
    admin = store.admin(token)
    topic = "who%20founded%20apple:Steve%20Jobs"
    # sentence 10: (4, 3, 3) → majority 3, mean 10/3 → 3
    # sentence 11: (1, 2, 2) → majority 2, mean 5/3 → 2
    # sentence 12: (3, 3, 1) → majority 3, mean 7/3 → 2
    assert admin.export_qrels("s", scale="1-4", ids="internal") == f"{topic} 0 10 3\n{topic} 0 11 2\n{topic} 0 12 3\n"
    assert admin.export_qrels("s", rule="mean", scale="1-4", ids="internal") == (
        f"{topic} 0 10 3\n{topic} 0 11 2\n{topic} 0 12 2\n"
    )
    assert admin.export_qrels("s", rule="annotator", annotator="ann1", scale="1-4", ids="internal") == (
        f"{topic} 0 10 4\n{topic} 0 11 1\n{topic} 0 12 3\n"
    )
    # the default trec scale writes grade − 1: 0 non-relevant … 3 very relevant
    assert admin.export_qrels("s", ids="internal") == f"{topic} 0 10 2\n{topic} 0 11 1\n{topic} 0 12 2\n"
    with pytest.raises(SentretError, match=r"items without a docno .* export internal ids instead"):
        admin.export_qrels("s")  # these items were made by hand, with no docno and no index to name them
    assert admin.export_qrels("s", rule="annotator", annotator="ANN1 ", ids="internal") == (
        f"{topic} 0 10 3\n{topic} 0 11 0\n{topic} 0 12 2\n"
    )  # names are matched case-folded and trimmed
    with pytest.raises(SentretError, match="unknown qrels scale"):
        admin.export_qrels("s", scale="0-3")
    with pytest.raises(SentretError, match="no annotator named"):
        admin.export_qrels("s", rule="annotator", annotator="nobody")
    with pytest.raises(SentretError, match="unknown adjudication rule"):
        admin.export_qrels("s", rule="median")


def test_export_csv_has_every_field(store: JudgmentStore, token: str) -> None:
    graded(store)
    rows = list(csv.DictReader(io.StringIO(store.admin(token).export_csv("s"))))
    assert tuple(rows[0]) == JUDGMENT_FIELDS
    assert len(rows) == 9
    first = rows[0]
    assert first["annotator"] == "ann1" and first["grade"] == "4"
    assert first["note"] == "ann1 on 1" and first["text"] == "Steve Jobs sentence 10."
    assert first["title"] == "Doc 10" and first["topic_id"].endswith(":Steve%20Jobs")


def test_jsonl_export_reimported_gives_equal_judgments(
    store: JudgmentStore, token: str, tmp_path: Path
) -> None:
    graded(store)
    join(store, "ann1").undo()  # history beyond the final state is not exported
    exported = store.admin(token).export_jsonl("s")
    assert all(set(json.loads(line)) == set(JUDGMENT_FIELDS) for line in exported.splitlines())
    with JudgmentStore(tmp_path / "copy.db") as copy:
        copy.create_session("s", "/indexes/demo", make_items(), SETTINGS)
        admin = copy.admin(token)
        assert admin.import_jsonl("s", exported.splitlines()) == 8
        # every person's grades go to an import annotator "<name> (imported)", timestamps kept
        expected = [
            j._replace(annotator=f"{j.annotator} (imported)", annotator_kind="import")
            for j in store.admin(token).all_judgments("s")
        ]
        assert admin.all_judgments("s") == expected
        assert admin.import_jsonl("s", io.StringIO(exported)) == 0  # nothing changes twice
        assert copy.check() == []
        assert {(a.name, a.kind) for a in admin.annotators("s")} == {
            ("ann1 (imported)", "import"), ("ann2 (imported)", "import"), ("ann3 (imported)", "import")
        }
        again = admin.export_jsonl("s")  # an import annotator's grades re-import under its own name
        with JudgmentStore(tmp_path / "third.db") as third:
            third.create_session("s", "/indexes/demo", make_items(), SETTINGS)
            assert third.admin(token).import_jsonl("s", again.splitlines()) == 8
            assert third.admin(token).all_judgments("s") == expected


def test_jsonl_round_trip_keeps_notes_and_flags(store: JudgmentStore, token: str, tmp_path: Path) -> None:
    ann = join(store, "ann")
    ann.grade(1, 4, "a long sentence, but it says why", flagged=True)
    ann.grade(2, 1)
    ann.grade(3, 2, "unsure")
    ann.flag(3)
    exported = store.admin(token).export_jsonl("s")
    lines = [json.loads(line) for line in exported.splitlines()]
    assert [(j["grade"], j["note"], j["flagged"]) for j in lines] == [
        (4, "a long sentence, but it says why", True), (1, None, False), (2, "unsure", True)]
    with JudgmentStore(tmp_path / "copy.db") as copy:
        copy.create_session("s", "/indexes/demo", make_items(), SETTINGS)
        admin = copy.admin(token)
        assert admin.import_jsonl("s", exported.splitlines()) == 3
        back = [json.loads(line) for line in admin.export_jsonl("s").splitlines()]
        assert [{**j, "annotator": "ann (imported)", "annotator_kind": "import"} for j in lines] == back
        # a flag changed in the file is a change; the same file again changes nothing
        lines[1]["flagged"] = True
        changed = [json.dumps({**j, "annotator": "ann (imported)", "annotator_kind": "import"}) for j in lines]
        assert admin.import_jsonl("s", changed) == 1 and admin.import_jsonl("s", changed) == 0
        assert [j.flagged for j in admin.all_judgments("s")] == [True, True, True]
        with pytest.raises(SentretError, match="JSONL line 1: flagged must be true or false; got 'yes'"):
            admin.import_jsonl("s", [json.dumps({**lines[0], "flagged": "yes"})])


def test_qrels_export_reimported_gives_equal_judgments(store: JudgmentStore, token: str) -> None:
    graded(store)
    admin = store.admin(token)
    qrels = admin.export_qrels("s", rule="annotator", annotator="ann2", ids="internal")
    store.create_session("copy", "/idx", make_items(), SETTINGS)
    assert admin.import_qrels("copy", qrels.splitlines(), annotator="trec") == 3
    assert admin.export_qrels("copy", rule="annotator", annotator="trec", ids="internal") == qrels
    imported = admin.all_judgments("copy")
    assert {j.annotator_kind for j in imported} == {"import"}
    with pytest.raises(SentretError, match="wrong name or passphrase"):
        store.sign_in("copy", "trec", "pw")  # nobody signs in as an import annotator


def test_qrels_grade_map_translates_other_scales(store: JudgmentStore, token: str) -> None:
    topic = topic_id(QUERY, "Steve Wozniak")
    lines = [f"{topic} 0 10 0", f"{topic} Q0 11 1", "# a comment", "", f"{topic} 0 12 2"]
    admin = store.admin(token)
    assert admin.import_qrels("s", lines, "binary", grade_map={0: 1, 1: 3, 2: 4}) == 3
    assert [j.grade for j in admin.all_judgments("s")] == [1, 3, 4]


TOPIC = topic_id(QUERY, "Steve Jobs")


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        (f"{TOPIC} 0 12", "qrels line 3: expected 4 fields"),
        (f"{TOPIC} 0 twelve 3", "line 3: .*sentence twelve.* is not in the pool"),  # a docno that names no item
        (f"{TOPIC} 0 12 three", "qrels line 3: grade 'three' is not an integer"),
        (f"{TOPIC} 0 12 0", "qrels line 3: grade 0 is not on the 1-4 scale"),
        (f"{QUERY.replace(' ', '_')} 0 12 3", "qrels line 3: topic .* is not '<query>:<entity>'"),
        (f"{TOPIC} 0 99 3", "line 3: .*sentence 99.* is not in the pool"),
        (f"{TOPIC} 0 10 3", "line 3: repeats the judgment of line 1"),
    ],
)
def test_malformed_qrels_name_the_line_and_write_nothing(
    store: JudgmentStore, token: str, bad_line: str, message: str
) -> None:
    lines = [f"{TOPIC} 0 10 4", f"{TOPIC} 0 11 2", bad_line, f"{TOPIC} 0 13 1"]
    before = counts(store)
    with pytest.raises(SentretError, match=message):
        store.admin(token).import_qrels("s", lines, "trec", scale="1-4")
    assert counts(store) == before


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ('{"query": ', "JSONL line 2: not valid JSON"),
        ("[1, 2]", "JSONL line 2: expected a JSON object"),
        ('{"query": "q"}', "JSONL line 2: missing field.*entity"),
        (
            json.dumps({"query": QUERY, "entity": "Steve Jobs", "sentence_id": 11,
                        "annotator": "a", "grade": 7}),
            "JSONL line 2: a grade must be",
        ),
        (
            json.dumps({"query": QUERY, "entity": "Steve Jobs", "sentence_id": 11,
                        "annotator": "a", "grade": 2, "created_at": "yesterday"}),
            "JSONL line 2: timestamp",
        ),
    ],
)
def test_malformed_jsonl_names_the_line_and_writes_nothing(
    store: JudgmentStore, token: str, bad_line: str, message: str
) -> None:
    good = {"query": QUERY, "entity": "Steve Jobs", "sentence_id": 10, "annotator": "a", "grade": 3}
    before = counts(store)
    with pytest.raises(SentretError, match=message):
        store.admin(token).import_jsonl("s", [json.dumps(good), bad_line])
    assert counts(store) == before


def test_import_cannot_write_into_a_persons_grades(store: JudgmentStore, token: str) -> None:
    join(store)
    before = counts(store)
    with pytest.raises(SentretError, match="line 1: 'ANN' is a person annotator"):
        store.admin(token).import_qrels("s", [f"{TOPIC} 0 10 3"], " ANN")
    assert counts(store) == before
