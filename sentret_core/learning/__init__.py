"""Learning a ranker from a benchmark's training split or from a session's judgments:
topics to learn from, fitting with early stopping or cross-validation by topic, and the stored
artefact that ``ltr.v1`` reads."""

# Any use of this package registers ltr.v1 (models/ sits below it and cannot): learning a ranker and then
# scoring it, from the library, the CLI or the app, finds the model registered.
from sentret_core.learning import scorer as _scorer  # noqa: F401
