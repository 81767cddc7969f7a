"""Every default the library, the CLI and the app share, in one place (SPEC "Entity support")."""

from __future__ import annotations

# Sentence ranker that builds S_q, and the model `score()` uses when none is named: BM25F with
# context is seed 002's best support scorer and what the app, the CLI and sessions start from.
DEFAULT_RANKER = "bm25f.v1"

# |S_q|: seed 002 uses 1000 (and 4000) on 75M sentences. The app starts lower because k = 1000 is
# a few percent of a corpus of tens of thousands of sentences and the entity list drifts to the generic.
DEFAULT_K = 1000
EXPLORE_K = 100
MAX_K = 1_000_000

# How each sentence of S_q counts in the entity statistics (sentret_core.support.weighting): "none" is
# seed 002's (every sentence once), the library's and the CLI's default so that the paper's statistics and
# eq. 7's evaluations reproduce as before. The app's first screen weighs each sentence by its min-max
# normalised first-stage score: on squad-support (answer entity as the relevant entity) it lifts the entity
# MRR from 0.086 to 0.417 at k = 100 (rank discount: 0.392) and sum-kld's MAP from 0.872 to 0.910, and on
# the demo's example queries P@1 from 0.8 to 0.9 (benchmarks/entity_weighting.py).
DEFAULT_ENTITY_WEIGHTING = "none"
EXPLORE_ENTITY_WEIGHTING = "score"

# Ŝ_q adds ±2 sentences of context inside the document (seed 002 §3; BM25F's context field).
DEFAULT_WINDOW = 2
MAX_WINDOW = 10

# The support models shown side by side, and pooled in annotation sessions.
DEFAULT_SUPPORT_MODELS: tuple[str, ...] = ("bm25f.v1", "lm-2si.v1", "tfisf.v1")

# Graded judgments are 1-4; a sentence is relevant iff its grade is at least 3 (SPEC "Evaluation").
RELEVANT_GRADE = 3
MAX_GRADE = 4
# The same rule on trec_eval's 0-3 scale (each grade minus one): `trec_eval -l 2`.
TREC_OFFSET = 1
TREC_RELEVANT_GRADE = RELEVANT_GRADE - TREC_OFFSET
# The scale qrels are written in unless another is named: trec (0-3) or 1-4 (as stored).
DEFAULT_QRELS_SCALE = "trec"
# The grade a benchmark's answer sentence gets when converted to graded qrels (squad-support).
ANSWER_GRADE = 4

# Entity labels that are numbers rather than things, left out of entity rankings by default.
DEFAULT_EXCLUDED_LABELS: frozenset[str] = frozenset({"CARDINAL", "ORDINAL"})

# Training on the app's How it works page (an admin action): K and the exchange passes are capped so
# that one training is minutes, not hours, on the server everyone shares (issue 29). The exchange
# algorithm's cost grows with K × passes; seed 001's best K was 100. `sentret train` is not capped.
APP_MAX_CLASSES = 500
APP_MAX_PASSES = 50

# A query's length: a model's cost grows with its terms (lm-class.* and lm-trigger.* took 31-40 s on a
# 10,000-term query, issue 29), so a query is refused past these. A search query is a few words
# (seed 002's topics, SQuAD's questions: well under 100 terms); 1,000 characters bound the tokenizer's work.
MAX_QUERY_CHARS = 1_000
MAX_QUERY_TERMS = 100
