"""Sessions: topics and entity keys, pooling (every model's top-n, seeded order), agreement, evaluation.

The pooling and evaluation tests run on a corpus written here in which "Picasso" (PERSON) is
mentioned in seven sentences, so the models rank its candidates differently; the rankings are
read off the index first (preconditions) and every expected metric is computed by hand from them.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.annotation.agreement_summary import agreement_summary
from sentret_core.annotation.judged_eval import evaluate_judgments, evaluate_session
from sentret_core.annotation.records import ADMIN_TOKEN_ENV, RECORDED_BEFORE, EntityRanking, Judgment, PoolSettings
from sentret_core.annotation.session_setup import build_pool, create_session, topic_seed
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.topics import (
    TopicLine,
    entity_key,
    find_entity,
    judgments_db_path,
    parse_topics,
    split_entity_key,
)
from sentret_core.defaults import DEFAULT_SUPPORT_MODELS, EXPLORE_ENTITY_WEIGHTING, EXPLORE_K
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import topic_id
from sentret_core.models import score, top_k
from sentret_core.support.context import QueryContext
from sentret_core.support.engine import support
from sentret_core.support.restating import split_restating
from tests.conftest import build_from_texts

DOCS = [
    {"id": "picasso", "title": "Pablo Picasso", "text": (
        "Pablo Picasso was a Spanish painter who spent most of his life in France. "
        "Picasso painted Guernica in 1937 as a protest against the bombing of the town. "
        "In 1944 Picasso joined the French Communist Party. "
        "Picasso attended the World Congress of Intellectuals in Defense of Peace in Poland. "
        "His dove became a symbol of the peace movement. "
        "Picasso received the Lenin Peace Prize in 1962."
    )},
    {"id": "guernica", "title": "Guernica (painting)", "text": (
        "Guernica is a large oil painting by Picasso. "
        "The painting shows the suffering caused by war and violence. "
        "Picasso refused to let the painting go to Spain while Franco ruled. "
        "Today Guernica hangs in the Reina Sofia museum in Madrid."
    )},
    {"id": "dove", "title": "Dove of peace", "text": (
        "The dove is a symbol of peace in many cultures. "
        "Picasso drew a dove for the poster of the peace congress in Paris in 1949. "
        "Louis Aragon chose the lithograph by Picasso for the peace poster. "
        "Peace activists still print the dove of Picasso on banners."
    )},
    {"id": "war", "title": "Spanish Civil War", "text": (
        "The Spanish Civil War was fought from 1936 to 1939. "
        "Franco led the Nationalists against the Republic. "
        "Artists such as Picasso supported the Republic during the war. "
        "The war ended with a Nationalist victory and no peace for the defeated."
    )},
]
QUERY = "picasso peace"
PICASSO = "Picasso|PERSON"
GUERNICA = "Guernica|PERSON"
TOKEN = "sessions-test-token"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    built = build_from_texts(tmp_path_factory.mktemp("sessions"), DOCS)
    # Preconditions read off the index (en_core_web_sm 3.8.0): Picasso/PERSON in 7 sentences,
    # Picasso/WORK_OF_ART in 3, and each model's ranking of Picasso's candidates for QUERY.
    sf = dict(zip(zip(built.entities.text, built.entities.label), built.entities.sf))
    assert sf[("Picasso", "PERSON")] == 7 and sf[("Picasso", "WORK_OF_ART")] == 3
    return built


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JudgmentStore:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    return JudgmentStore(tmp_path / "j.sqlite")


def ranking(index: Index, model: str, entity: str = PICASSO) -> list[int]:
    ctx = QueryContext.of(index, QUERY)
    return [int(s) for s in ctx.ranked_candidates(find_entity(index, entity), model)[0]]


# --------------------------------------------------------------------------- topics and entity keys


def test_parse_topics_lines_comments_repeats_and_errors() -> None:
    text = "# a comment\npicasso peace\tPicasso|PERSON\n\n  spanish   war \npicasso peace\tPicasso|PERSON\n"
    assert parse_topics(text) == [
        TopicLine("picasso peace", "Picasso|PERSON", 2),
        TopicLine("spanish war", None, 4),
    ]
    with pytest.raises(SentretError, match="line 2: expected 'query<TAB>entity<TAB>narrative'"):
        parse_topics("ok\na\tb\tc\td")
    with pytest.raises(SentretError, match="line 1: the query is empty"):
        parse_topics("\tPicasso")
    with pytest.raises(SentretError, match="no topics"):
        parse_topics("# nothing\n\n")


def test_entity_keys_name_text_and_label(index: Index) -> None:
    assert entity_key("Picasso", "PERSON") == PICASSO
    assert split_entity_key(PICASSO) == ("Picasso", "PERSON")
    assert split_entity_key("Picasso") == ("Picasso", None)
    assert split_entity_key("rock|roll") == ("rock|roll", None)  # a label is upper case
    person = index.entity_index[("Picasso", "PERSON")]
    work = index.entity_index[("Picasso", "WORK_OF_ART")]
    assert find_entity(index, PICASSO) == person
    assert find_entity(index, "Picasso|WORK_OF_ART") == work
    assert find_entity(index, "picasso") == person  # plain text: the label mentioned in most sentences
    with pytest.raises(SentretError, match=r"no entity 'Picasso\|GPE'.*Picasso\|PERSON"):
        find_entity(index, "Picasso|GPE")
    with pytest.raises(SentretError, match="no entity 'Matisse'"):
        find_entity(index, "Matisse")


def test_db_path_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SENTRET_JUDGMENTS_DB", raising=False)
    assert judgments_db_path() == Path("data/judgments/sentret.sqlite")
    monkeypatch.setenv("SENTRET_JUDGMENTS_DB", str(tmp_path / "x.sqlite"))
    assert judgments_db_path() == tmp_path / "x.sqlite"


# --------------------------------------------------------------------------- pooling


def test_pool_is_the_union_of_every_models_top_n(index: Index) -> None:
    models = ("bm25f.v1", "lm-2si.v1", "tfisf.v1", "bm25.v1")
    tops = {m: ranking(index, m)[:2] for m in models}
    # Preconditions: the models disagree on the top 2 (tfisf ties four sentences and breaks by id).
    assert tops == {"bm25f.v1": [11, 12], "lm-2si.v1": [12, 11], "tfisf.v1": [3, 5], "bm25.v1": [3, 11]}
    plan = build_pool(index, f"{QUERY}\t{PICASSO}", models=models, depth=2, seed=3)
    (topic,) = plan.topics
    assert topic.ranked == {m: tuple(ids) for m, ids in tops.items()}
    pooled = set(topic.pooled)
    assert pooled == {3, 5, 11, 12}
    for ids in tops.values():
        assert set(ids) <= pooled
    assert len(plan.items) == 4 and plan.notes == ()
    assert plan.settings.models == models and plan.settings.depth == 2 and plan.settings.seed == 3
    for item in plan.items:  # snapshots of the text and the document title
        assert item.query == QUERY and item.entity == PICASSO
        assert item.text == index.texts[item.sentence_id]
        assert item.title == index.titles[int(index.sent_doc[item.sentence_id])]
    assert topic.topic_id == topic_id(QUERY, PICASSO) == "picasso%20peace:Picasso|PERSON"



def test_pooling_reports_each_query_once_it_is_done_left_out_ones_too(index: Index) -> None:
    reported: list[tuple[int, int]] = []
    text = f"{QUERY}\t{PICASSO}\n{QUERY}\t{GUERNICA}\nthe of and\t{PICASSO}"  # the last: stop words only
    plan = build_pool(index, text, depth=2, progress=lambda done, total: reported.append((done, total)))
    assert reported == [(1, 2), (2, 2)]  # two queries (the first asked for two entities)
    assert len(plan.topics) == 2 and any("'the of and'" in note for note in plan.notes)

def test_pool_order_depends_only_on_the_seed(index: Index) -> None:
    text = f"{QUERY}\t{PICASSO}\n{QUERY}\tGuernica|PERSON"
    first = build_pool(index, text, depth=3, seed=1)
    again = build_pool(index, text, depth=3, seed=1)
    reordered = build_pool(index, text, depth=3, seed=1, models=tuple(reversed(DEFAULT_SUPPORT_MODELS)))
    other = build_pool(index, text, depth=3, seed=2)
    ids = [(i.entity, i.sentence_id) for i in first.items]
    assert ids == [(i.entity, i.sentence_id) for i in again.items]
    assert ids == [(i.entity, i.sentence_id) for i in reordered.items]  # the models' order does not matter
    assert sorted(ids) == sorted((i.entity, i.sentence_id) for i in other.items)
    assert ids != [(i.entity, i.sentence_id) for i in other.items]
    # items are grouped by topic, topics in the order given
    assert [i.entity for i in first.items] == sorted((i.entity for i in first.items), key=[PICASSO,
                                                     "Guernica|PERSON"].index)
    assert topic_seed(1, "a") == topic_seed(1, "a") != topic_seed(2, "a")


def test_a_query_alone_stands_for_its_top_entities(index: Index) -> None:
    """Its top entities by Explore's rule: those that only restate the query are left out (each sentence of
    S_q counted once, where "Picasso" ranks first on this corpus)."""
    unweighted = EntityRanking(weighting="none")
    plan = build_pool(index, QUERY, depth=1, top_entities=3, ranking=unweighted)
    found = support(index, QUERY, k=EXPLORE_K, top_entities=20, models=("bm25f.v1",), per_entity=1)
    ranked = [entity_key(e.entity.text, e.entity.label) for e in found.entities]
    kept, restating = split_restating(index, found.terms, found.entities)
    keys = [entity_key(e.entity.text, e.entity.label) for e in kept[:3]]
    # precondition: "Picasso" (PERSON and WORK_OF_ART) restates "picasso peace" and ranks first
    assert ranked[0] == PICASSO and {PICASSO, "Picasso|WORK_OF_ART"} <= {
        entity_key(e.entity.text, e.entity.label) for e in restating
    }
    assert [t.entity for t in plan.topics] == keys and len(keys) == 3 and PICASSO not in keys
    assert (QUERY, PICASSO) in plan.set_aside
    assert any(PICASSO in note and "only restates the query" in note for note in plan.notes)
    assert plan.pairs == [(QUERY, key) for key in keys]
    # named in the topics, a restating entity is pooled
    named = build_pool(index, f"{QUERY}\t{PICASSO}\n{QUERY}", depth=1, top_entities=3, ranking=unweighted)
    assert named.pairs == [(QUERY, PICASSO), *((QUERY, key) for key in keys)]


def test_the_entity_ranking_is_chosen_recorded_and_explained(index: Index, tmp_path: Path) -> None:
    """A bare query's entities follow the ranking given (Explore's by default); the session records it, and a
    session stored before rankings were recorded reads as the library's defaults of the time (k = 1000, unweighted)."""
    plan = build_pool(index, QUERY, depth=1, top_entities=2)
    explore = support(index, QUERY, k=EXPLORE_K, entity_weighting=EXPLORE_ENTITY_WEIGHTING, top_entities=20,
                      models=("bm25f.v1",), per_entity=1)  # the Explore page's ranking
    kept, _ = split_restating(index, explore.terms, explore.entities)
    assert [t.entity for t in plan.topics] == [entity_key(e.entity.text, e.entity.label) for e in kept[:2]]
    by_rarity = EntityRanking(k=5, score="rarity", weighting="none")
    plan = build_pool(index, QUERY, depth=1, top_entities=2, ranking=by_rarity)
    found = support(index, QUERY, k=5, entity_score="rarity", entity_weighting="none", top_entities=20,
                    models=("bm25f.v1",), per_entity=1)
    kept, _ = split_restating(index, found.terms, found.entities)
    assert [t.entity for t in plan.topics] == [entity_key(e.entity.text, e.entity.label) for e in kept[:2]]
    assert plan.settings.ranking == by_rarity
    assert by_rarity.describe() == "entities by rarity over the top 5 sentences of bm25f.v1, each sentence once"
    assert EntityRanking().describe() == ("entities by kld over the top 100 sentences of bm25f.v1, sentences "
                                          "weighted by score")
    with JudgmentStore(tmp_path / "j.sqlite") as store:
        info, _ = create_session(store, "s", index, QUERY, plan=plan)
        assert store.session("s").settings.ranking == by_rarity == info.settings.ranking
    old = PoolSettings.from_json('{"models": ["bm25f.v1"], "depth": 3, "seed": 1}')
    assert old.ranking == RECORDED_BEFORE and (RECORDED_BEFORE.k, RECORDED_BEFORE.weighting) == (1000, "none")
    assert PoolSettings.from_json(plan.settings.to_json()) == plan.settings
    with pytest.raises(SentretError, match="entity score"):
        build_pool(index, QUERY, ranking=EntityRanking(score="fame"))
    with pytest.raises(SentretError, match="EntityRanking"):
        build_pool(index, QUERY, ranking={"k": 5})  # type: ignore[arg-type]


def test_a_previewed_plan_is_what_is_stored(index: Index, tmp_path: Path) -> None:
    plan = build_pool(index, QUERY, depth=2, top_entities=2)
    with JudgmentStore(tmp_path / "j.sqlite") as store:
        info, stored = create_session(store, "s", index, QUERY, plan=plan)
        assert stored is plan and list(info.entities) == plan.pairs and info.n_items == len(plan.items)
        other = build_from_texts(tmp_path, DOCS[:1], name="other")
        with pytest.raises(SentretError, match="preview it again"):
            create_session(store, "t", other, QUERY, plan=plan)


def test_pool_errors_are_clear(index: Index) -> None:
    with pytest.raises(SentretError, match="no entity 'Nobody'"):
        build_pool(index, f"{QUERY}\tNobody")
    with pytest.raises(SentretError, match=r"no-such-model"):
        build_pool(index, QUERY, models=["no-such-model"])
    with pytest.raises(SentretError, match="pool depth"):
        build_pool(index, QUERY, depth=0)
    with pytest.raises(SentretError, match="nothing to grade"):
        build_pool(index, "zebra unicorn")  # no query term in the index


def test_a_topic_without_candidates_is_left_out_with_a_note(index: Index) -> None:
    # Madrid is mentioned once, in a sentence without "picasso" or "peace": TF-ISF (sentence
    # field only) does not retrieve it (BM25F would, through its context field)
    plan = build_pool(index, f"{QUERY}\t{PICASSO}\n{QUERY}\tMadrid|GPE", depth=1, models=["tfisf.v1"])
    assert [t.entity for t in plan.topics] == [PICASSO]
    assert plan.notes and "Madrid|GPE" in plan.notes[0]


# --------------------------------------------------------------------------- agreement


def _judgment(annotator: str, sentence: int, grade: int) -> Judgment:
    return Judgment("s", "q:e", "q", "e", sentence, sentence, "", "", annotator, "person", grade, None,
                    "", "")


def test_agreement_summary_by_hand() -> None:
    # A grades 1,2,3,4 and B 1,2,3,3, three times over (12 shared items): observed agreement 3/4;
    # chance = Σ p_A(c)·p_B(c) = ¼·¼ + ¼·¼ + ¼·½ + ¼·0 = ¼; κ = (¾ - ¼) / (1 - ¼) = 2/3.
    judgments = [_judgment("A", s, (1, 2, 3, 4)[s % 4]) for s in range(12)]
    judgments += [_judgment("B", s, (1, 2, 3, 3)[s % 4]) for s in range(12)]
    judgments.append(_judgment("C", 0, 1))  # C shares one item with each
    summary = agreement_summary(judgments, resamples=200)
    assert summary.annotators == ("A", "B", "C")
    assert (summary.items, summary.shared, summary.complete) == (12, 12, 1)
    pairs = {(a, b): kappa for a, b, kappa in summary.pairs}
    ab = pairs[("A", "B")]
    assert ab.n == 12 and ab.value == pytest.approx(2 / 3) and ab.note is None
    assert ab.low is not None and ab.high is not None and ab.low <= 2 / 3 <= ab.high <= 1.0
    # one shared item: no κ at all (not a bare κ of -0.333 from one item), but its n
    assert pairs[("A", "C")] == (None, 1, None, None, "too few shared items (n = 1 < 10)")
    assert pairs[("A", "C")].text() == "— (too few shared items (n = 1 < 10))"
    assert summary.fleiss.value is None and summary.fleiss.n == 1 and "n = 1 < 10" in str(summary.fleiss.note)
    assert summary.alpha.n == 12 and summary.alpha.value is not None and -1 <= summary.alpha.value <= 1
    assert summary.to_dict()["cohen_kappa"][0] == {
        "a": "A", "b": "B", "value": pytest.approx(2 / 3), "n": 12, "ci95": [ab.low, ab.high], "note": None
    }
    assert agreement_summary([]).notes == ("no judgments yet",)
    lone = agreement_summary([_judgment("A", 0, 3)])
    assert lone.fleiss.value is None and "at least two annotators" in lone.notes[0]


# --------------------------------------------------------------------------- evaluation


def test_evaluation_of_hand_made_judgments(index: Index) -> None:
    bm25f, lm, tfisf = (ranking(index, m) for m in ("bm25f.v1", "lm-2si.v1", "tfisf.v1"))
    assert bm25f[:2] == [11, 12] and lm[:2] == [12, 11]
    tf = dict(zip(*(QueryContext.of(index, QUERY).ranked_candidates(find_entity(index, PICASSO), "tfisf.v1"))))
    assert tfisf[:4] == [3, 5, 11, 12] and len({tf[s] for s in (3, 5, 11, 12)}) == 1  # a 4-way tie on top
    assert tf[1] < tf[3]
    tid = topic_id(QUERY, PICASSO)
    # Sentence 11 is very relevant (4: gain 7), 12 fairly relevant (2: gain 1), 3 and 5 not (1).
    qrels = {tid: {"11": 4, "12": 2, "3": 1, "5": 1}}
    result = evaluate_judgments(index, qrels, baseline="lm-2si.v1", metrics=["mrr", "p@1", "map", "ndcg@10"])
    means = result.means()
    # bm25f: 11 first -> RR = AP = P@1 = 1, and its DCG is the ideal one.
    assert means.loc["bm25f.v1"].tolist() == pytest.approx([1.0, 1.0, 1.0, 1.0])
    # lm-2si: 12 then 11 -> RR = AP = 1/2, P@1 = 0,
    # NDCG = (1/log2 2 + 7/log2 3) / (7/log2 2 + 1/log2 3) = 5.41651 / 7.63093 = 0.70981.
    ndcg_lm = (1 + 7 / math.log2(3)) / (7 + 1 / math.log2(3))
    assert means.loc["lm-2si.v1"].tolist() == pytest.approx([0.5, 0.0, 0.5, ndcg_lm])
    # tfisf ties 3, 5, 11, 12 at ranks 1-4 (tie-aware): E[RR] = E[AP] = (1 + 1/2 + 1/3 + 1/4) / 4
    # = 25/48, P@1 = 1/4, and each of ranks 1-4 holds the mean gain (7 + 1) / 4 = 2:
    # NDCG = 2 (1 + 1/log2 3 + 1/2 + 1/log2 5) / 7.63093 = 0.67137.
    ndcg_tf = 2 * (1 + 1 / math.log2(3) + 1 / 2 + 1 / math.log2(5)) / (7 + 1 / math.log2(3))
    assert means.loc["tfisf.v1"].tolist() == pytest.approx([25 / 48, 0.25, 25 / 48, ndcg_tf])
    assert round(ndcg_lm, 5) == 0.70981 and round(ndcg_tf, 5) == 0.67137
    # per-topic differences from the baseline, and the comparison table
    diff = result.differences("mrr")
    assert list(diff.columns) == ["bm25f.v1", "tfisf.v1"]
    assert diff.loc[tid].tolist() == pytest.approx([0.5, 25 / 48 - 0.5])
    row = result.comparison.set_index(["model", "metric"]).loc[("bm25f.v1", "mrr")]
    assert row["diff"] == pytest.approx(0.5) and math.isnan(row["p_ttest"])  # one topic: no test
    # coverage: sentence 11's rank in bm25f's full ranking of the query (S_qe), or of a neighbour (Ŝ_qe)
    full = top_k(score(index, QUERY, "bm25f.v1"), index.N)
    ranks = {int(s): r for r, s in enumerate(full.ids, start=1)}
    first = ranks[11]
    around = min(ranks.get(n, math.inf) for n in index.neighbours(11, 2).tolist())
    coverage = result.coverage
    assert 1 < first < 10_000 and around <= first
    assert coverage.loc[coverage.index >= first, "S_qe"].eq(1.0).all()
    assert coverage.loc[coverage.index < first, "S_qe"].eq(0.0).all()
    assert coverage.loc[coverage.index >= around, "Ŝ_qe"].eq(1.0).all()
    assert (coverage["Ŝ_qe"] >= coverage["S_qe"]).all()
    assert result.to_dict()["means"]["bm25f.v1"]["mrr"] == 1.0


def test_evaluation_with_two_topics_tests_significance(index: Index) -> None:
    qrels = {
        topic_id(QUERY, PICASSO): {"11": 4, "12": 1, "3": 1},
        topic_id(QUERY, GUERNICA): {str(s): 3 for s in ranking(index, "bm25f.v1", GUERNICA)},
        topic_id(QUERY, "Franco|PERSON"): {"8": 1},  # no relevant sentence: skipped
    }
    result = evaluate_judgments(index, qrels, models=["tfisf.v1", "bm25f.v1"], metrics=["mrr"])
    assert result.baseline == "tfisf.v1" and len(result.topics) == 2
    assert result.skipped_topics == (topic_id(QUERY, "Franco|PERSON"),)
    row = result.comparison.set_index(["model", "metric"]).loc[("bm25f.v1", "mrr")]
    assert 0.0 <= row["p_ttest"] <= 1.0 and 0.0 <= row["p_wilcoxon"] <= 1.0


def test_evaluation_errors(index: Index) -> None:
    tid = topic_id(QUERY, PICASSO)
    with pytest.raises(SentretError, match=r"1 docno.s. name no sentence of the index .*'doc-1'"):
        evaluate_judgments(index, {tid: {"doc-1": 3}})
    with pytest.raises(SentretError, match="not in this index"):
        evaluate_judgments(index, {tid: {"999": 3}})
    with pytest.raises(SentretError, match="nothing to evaluate"):
        evaluate_judgments(index, {tid: {"11": 1}})
    with pytest.raises(SentretError, match="no entity"):
        evaluate_judgments(index, {topic_id(QUERY, "Nobody|PERSON"): {"11": 3}})
    with pytest.raises(SentretError, match="is not of the form"):
        evaluate_judgments(index, {"no-colon": {"11": 3}})


def test_session_round_trip_and_index_check(index: Index, store: JudgmentStore, small_index: Index) -> None:
    info, plan = create_session(store, "s", index, f"{QUERY}\t{PICASSO}", depth=2, seed=0)
    assert info.n_items == len(plan.items) == 4 and info.index_path == str(index.path)
    handle = store.sign_in("s", "ann", store.admin(TOKEN).add_annotator("s", "ann").passphrase)
    while (item := handle.next_item()) is not None:
        handle.grade(item.item_id, 4 if item.sentence_id == 11 else 1)
    admin = store.admin(TOKEN)
    assert admin.export_qrels("s").splitlines()[0].startswith(topic_id(QUERY, PICASSO) + " 0 ")
    result = evaluate_session(admin, "s", index, metrics=["mrr"])
    assert result.means().loc["bm25f.v1", "mrr"] == 1.0
    with pytest.raises(SentretError, match="does not hold the sentences session 's' was pooled from"):
        evaluate_session(admin, "s", small_index, metrics=["mrr"])
