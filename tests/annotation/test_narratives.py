"""Per-topic narratives (sentret_core.annotation.narratives): read from the topics' third column, given to
every entity a bare query is pooled with, stored with the session and shown while grading."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.schema import _NARRATIVES
from sentret_core.annotation.session_setup import build_pool, create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.topics import TopicLine, parse_topics
from sentret_core.errors import SentretError
from tests.annotation.downgrade import downgrade
from tests.conftest import judgments_env

PICASSO = "Picasso|PERSON"
NEED = "Why Picasso matters to the peace movement: his dove, his prizes, his congresses."


def test_the_topics_third_column_is_the_narrative() -> None:
    lines = parse_topics(f"picasso peace\t{PICASSO}\t  {NEED}  \nlennon religion\t\tWhat Lennon believed.\nwar\n")
    assert lines == [TopicLine("picasso peace", PICASSO, 1, NEED), TopicLine("lennon religion", None, 2,
                     "What Lennon believed."), TopicLine("war", None, 3, "")]
    with pytest.raises(SentretError, match="topics line 1: expected 'query<TAB>entity<TAB>narrative'"):
        parse_topics("a\tb\tc\td\n")
    with pytest.raises(SentretError, match="topics line 1: the narrative must be plain text"):
        parse_topics("a\tb\tbell \x07 here\n")
    with pytest.raises(SentretError, match="at most 2,000 characters"):
        parse_topics("a\tb\t" + "x" * 2_001 + "\n")


def test_a_bare_querys_narrative_goes_to_each_of_its_entities_unless_one_has_its_own(
    small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, "t")
    topics = f"picasso peace\t\tThe peace movement.\npicasso peace\t{PICASSO}\t{NEED}\nlennon religion\n"
    plan = build_pool(small_index, topics, depth=1, top_entities=2)
    peace = [t.entity for t in plan.topics if t.query == "picasso peace"]
    assert peace[-1] == PICASSO and len(peace) == 3  # the query's top two (in the order given), the named one
    assert plan.narratives == {("picasso peace", PICASSO): NEED,
                               **{("picasso peace", key): "The peace movement." for key in peace[:-1]}}
    with JudgmentStore(tmp_path / "j.db") as store:
        create_session(store, "s", small_index, (), plan=plan)
        assert store.narratives("s") == plan.narratives
        path = store.path
    downgrade(path, _NARRATIVES)
    with JudgmentStore(path, read_only=True) as old:  # a database from before narratives: none
        assert old.narratives("s") == {}


def test_the_grading_page_shows_what_the_topic_asks(
    small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = judgments_env(monkeypatch, tmp_path, small_index, "t")
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, f"picasso peace\t{PICASSO}\t{NEED} <b>bold?</b>", depth=1)
        store.admin("t").add_annotator("s", "alice", "alice-passphrase")
    script = "from sentret_core.ui.pages import annotate\nannotate.render()\n"
    app = AppTest.from_string(script, default_timeout=60).run()
    app.text_input(key="annotate_session").input("s")
    app.text_input(key="annotate_name").input("alice")
    app.text_input(key="annotate_passphrase").input("alice-passphrase")
    app = app.button[0].click().run()
    assert not app.exception and not app.error
    [topic] = [m.value for m in app.markdown if 'class="annotate-topic"' in m.value]
    assert f"<b>What it asks</b> &nbsp; {NEED} &lt;b&gt;bold?&lt;/b&gt;</p>" in topic  # shown as text
