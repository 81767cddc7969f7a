"""Words for what the pages show: the entity table's columns (with Blanco & Zaragoza's symbols), the learned
ranker's features, and the notes on scores that are not comparable across models."""

from __future__ import annotations

from sentret_core.defaults import EXPLORE_K
from sentret_core.models import get_model

# Blanco & Zaragoza, SIGIR 2010, §3: S_q the top k sentences, Ŝ_q with ±2 context sentences
COLUMN_HELP = {
    "rank": "The entity's place under the chosen entity score (1 = most important to the query).",
    "entity": "The entity as the corpus names it; its label is the kind of entity spaCy found.",
    "label": "The kind of entity spaCy's named-entity recogniser found (PERSON, ORG, GPE = a country or city, …).",
    "|S_qe|": "|S_qe|: how many of the top k sentences for the query (S_q) mention the entity. "
              "This is also the frequency score, E_freq = |S_qe|.",
    "|Ŝ_qe|": "|Ŝ_qe|: how many sentences of Ŝ_q — S_q plus the 2 sentences before and after each — mention it.",
    "rarity": "Rarity, E_rarity = log(|S| / sentences of the whole corpus mentioning e): high for an entity "
              "rare in the corpus, whatever the query.",
    "combination": "Combination, E_comb = |S_qe| · E_rarity: frequent near the query and rare overall.",
    "KLD": "KLD, E_KLD = P(e|q)·log(P(e|q) / P(e|S)) with P(e|q) = |S_qe|/|S_q| and P(e|S) the entity's share "
           "of all sentences: how much more often the entity appears near the query than in the corpus. "
           "The best entity score of Blanco & Zaragoza (SIGIR 2010).",
    "frequency": "Frequency, E_freq = |S_qe|: how many of the top k sentences mention the entity.",
}
COLUMN_TITLES = {"kld": "KLD", "frequency": "frequency", "rarity": "rarity", "combination": "combination"}
WEIGHTING_NAMES = {"score": "its score", "rank": "its rank", "none": "all alike (Blanco & Zaragoza)"}
WEIGHTING_HELP = ("How much a sentence's entities count in the entity scores: by how well the sentence matches "
                  "the query (its first-stage score, min-max normalised over S_q, or 1/log2(rank+1)), or all "
                  "alike (the unweighted statistics of Blanco & Zaragoza, SIGIR 2010).")
HIGHER_IS_BETTER = "Higher is better: the table is sorted by this score and the bar shows it."
NOT_COMPARABLE = (
    "Scores of different models are on unrelated scales (BM25F around 10, a language model's log-likelihood "
    "around −16, TF-ISF around 7): compare the order of sentences across columns, not their numbers."
)
ALL_KLD_ZERO = (
    "Every KLD here is 0: in a small corpus the top k sentences are (almost) the whole corpus, so no entity "
    "is more frequent near the query than overall. Lower k (try {k}) or rank by frequency or combination."
)
WHAT_IT_IS = (
    "An entity support sentence says why an entity matters to a query (Blanco & Zaragoza, SIGIR 2010): for the "
    "query \u201cSpanish Civil War\u201d, \u201cFrancisco Franco led the Nationalists against the Republic\u201d "
    "supports Francisco Franco. sentret finds the entities of a query's best sentences and, for each, the sentences "
    "that say why, under several models side by side."
)
SHARE_OF_CORPUS = 100  # S_q about 1% of the corpus: near the query, yet enough sentences to count entities in


def suggested_k(n_sentences: int) -> int:
    """k for a corpus of ``n_sentences``: about 1% of it, at least 10, at most Explore's default."""
    return max(10, min(EXPLORE_K, n_sentences // SHARE_OF_CORPUS))


def k_help(n_sentences: int) -> str:
    return (f"How many of the ranker's best sentences S_q holds. This corpus has {n_sentences:,} sentences: "
            f"k ≈ {suggested_k(n_sentences):,} keeps S_q near the query; a k close to the corpus's size makes "
            "every entity look as frequent near the query as anywhere (KLD 0).")


NEGATIVE_BARS = (
    "A language model's contributions are log-probabilities, below 0: a taller bar (further below 0) "
    "is worse, a shorter one better."
)
POSITIVE_BARS = "Higher is better: a taller bar adds more to the sentence's score."

# the learned ranker's fixed features (sentret_core.learning.features), in words
FEATURE_WORDS = {
    "position": "position in the document (0 = first sentence)",
    "inv_position": "closeness to the document's start, 1/(1+position)",
    "first": "is the document's first sentence",
    "length": "sentence length, log(1+words)",
    "relative_position": "position relative to the document's length (0 first, 1 last)",
    "last": "is the document's last sentence",
    "coverage": "share of the query's words in the sentence",
    "idf_overlap": "share of the query's words, weighted by rarity (idf)",
    "title_match": "share of the query's words in the document's title",
    "entities": "entities the sentence mentions",
    "top_entities": "of them, among the query's 10 best entities (by KLD)",
    "entity_kld": "best KLD among the sentence's entities",
    "answer_type": "mentions an entity of the kind the question asks for (who → person, when → date, …)",
    "e:position": "the chosen entity's position score (Blanco & Zaragoza, SIGIR 2010, eq. 8)",
    "e:other_top": "other top-10 entities the sentence mentions besides the chosen one",
    "e:kld": "the chosen entity's KLD",
    "e:frequency": "the chosen entity's |S_qe|",
    "e:rarity": "the chosen entity's rarity",
}
SCORER_PARTS = {
    "score": "score (scaled 0-1 over the candidates)",
    "rank": "rank, 1/(1+rank)",
    "doc_rank": "rank within its document, 1/(1+rank)",
    "finite": "likelihood of every candidate (scaled 0-1)",
}


def feature_label(name: str) -> str:
    """A learned ranker's feature in words: ``bm25f.v1:rank`` → "BM25F: rank, 1/(1+rank)"."""
    if name in FEATURE_WORDS:
        return FEATURE_WORDS[name]
    model, sep, part = name.rpartition(":")
    if sep and part in SCORER_PARTS:
        try:
            title = get_model(model).display_name
        except Exception:  # a stored ranker may name a scorer this version no longer has
            title = model
        return f"{title}: {SCORER_PARTS[part]}"
    return name


def feature_glossary(names: list[str]) -> list[tuple[str, str]]:
    """(feature in words, its code name) for each of ``names``, for a glossary under a chart."""
    return [(feature_label(n), n) for n in names]


def took_text(computed_ms: float, served_ms: float) -> str:
    """The request's time: a result from the page's cache says so, beside the time it was computed in."""
    if served_ms < computed_ms / 2:
        return f"{served_ms:.1f} ms from the cache (computed in {computed_ms:.1f} ms)"
    return f"{computed_ms:.1f} ms"


def ranks_text(ranks: list[int]) -> str:
    """"rank 3" or "ranks 1, 3 and 4"."""
    words = [str(r) for r in ranks]
    listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    return f"rank{'s' if len(words) > 1 else ''} {listed}"
