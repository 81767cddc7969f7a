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

# Ŝ_q adds ±2 sentences of context inside the document (seed 002 §3; BM25F's context field).
DEFAULT_WINDOW = 2
MAX_WINDOW = 10

# The support models shown side by side, and pooled in annotation sessions.
DEFAULT_SUPPORT_MODELS: tuple[str, ...] = ("bm25f.v1", "lm-2si.v1", "tfisf.v1")

# Graded judgments are 1-4; a sentence is relevant iff its grade is at least 3 (SPEC "Evaluation").
RELEVANT_GRADE = 3
# The grade a benchmark's answer sentence gets when converted to graded qrels (squad-support).
ANSWER_GRADE = 4

# Entity labels that are numbers rather than things, left out of entity rankings by default.
DEFAULT_EXCLUDED_LABELS: frozenset[str] = frozenset({"CARDINAL", "ORDINAL"})
