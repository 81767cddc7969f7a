"""When there is enough to learn from, and which topics count (a ranker once learned from six
judgments scored every sentence alike, and its CV MAP counted topics with nothing relevant).

* A topic with no relevant sentence is left out of learning and of every score (as ``sentret eval`` and
  the Evaluate page leave it out), and counted.
* A topic *teaches* when it has a relevant sentence and a non-relevant one: judged non-relevant, or (for a
  benchmark, whose unjudged candidates are non-relevant by its protocol) a candidate that is not relevant.
  Learning needs at least :data:`MIN_TOPICS` teaching topics, and :data:`MIN_PER_FOLD` per fold of
  cross-validation (or in the development set), so that every fold is fitted and tested on something.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.learning.examples import LearningTopic

MIN_TOPICS = 8
MIN_PER_FOLD = 2


@dataclass(frozen=True)
class Usable:
    """The topics kept (every one with a relevant sentence) and what was set apart, with counts."""

    topics: tuple[LearningTopic, ...]
    teaching: int  # of ``topics``: with a relevant and a non-relevant sentence
    without_relevant: int  # left out entirely

    def describe(self) -> dict[str, int]:
        return {"topics": len(self.topics), "teaching": self.teaching, "without_relevant": self.without_relevant}


def usable_topics(topics: Sequence[LearningTopic], unjudged_non_relevant: bool) -> Usable:
    """``topics`` without those that have no relevant sentence; how many of the rest teach."""
    kept, teaching, dropped = [], 0, 0
    for topic in topics:
        relevant = [s for s, grade in topic.grades.items() if grade > 0]
        if not relevant:
            dropped += 1
            continue
        kept.append(topic)
        judged_non = any(grade <= 0 for grade in topic.grades.values())
        other = unjudged_non_relevant and topic.candidates is not None and bool(
            len(np.setdiff1d(topic.candidates, np.asarray(relevant, dtype=np.int64))))
        teaching += judged_non or other
    return Usable(tuple(kept), teaching, dropped)


def check_enough(usable: Usable, *, folds: int | None = None, what: str = "training") -> None:
    """Refuse to learn from too little, saying how many more teaching topics are needed."""
    need = MIN_PER_FOLD if what != "training" else max(MIN_TOPICS, MIN_PER_FOLD * (folds or 0))
    if usable.teaching >= need:
        return
    rule = f"{need} {what} topics with a relevant and a non-relevant sentence"
    why = f" ({folds} folds need {MIN_PER_FOLD} each)" if folds and need == MIN_PER_FOLD * folds else ""
    dropped = f"; {usable.without_relevant} more have no relevant sentence" if usable.without_relevant else ""
    raise SentretError(
        f"too little to learn from: learning needs at least {rule}{why}, and there are {usable.teaching}"
        f"{dropped}. Judge {need - usable.teaching} more such topic{'s' if need - usable.teaching != 1 else ''}."
    )
