"""Learning a ranker from a benchmark's training split or from a session's judgments:
topics to learn from, fitting with early stopping or cross-validation by topic, and the stored
artefact that ``ltr.v1`` reads."""
