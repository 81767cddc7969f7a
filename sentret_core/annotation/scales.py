"""One relevance rule, named on every scale grades are read or written in.

The store keeps grades 1-4 and a sentence is relevant iff graded at least
:data:`~sentret_core.defaults.RELEVANT_GRADE` (Blanco & Zaragoza, SIGIR 2010, §4). Qrels are written on the
``trec`` scale (each grade minus one: 0-3, so ``trec_eval -l 2``) or on ``1-4``; a file read
back may also be ``binary`` (0 non-relevant, 1 relevant). :func:`sniff_scale` guesses a file's
scale from the grades it holds, and says when the guess is ambiguous.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sentret_core.annotation.records import IMPORT_SCALES, SCALES
from sentret_core.defaults import DEFAULT_QRELS_SCALE, MAX_GRADE, RELEVANT_GRADE, TREC_OFFSET, TREC_RELEVANT_GRADE
from sentret_core.errors import SentretError
from sentret_core.evaluation.trec_io import Qrels, iter_qrels

AUTO = "auto"
# the order a sniff prefers a scale in when several fit: binary (only 0/1), then trec (the export default)
SNIFF_ORDER = ("binary", "trec", "1-4")
SCALE_NAMES = {"trec": "trec scale (0-3)", "1-4": "1-4 scale", "binary": "binary scale (0-1)"}


def relevance_rule() -> str:
    """The app's one sentence about relevance, shown on every page that shows metrics."""
    top = MAX_GRADE - TREC_OFFSET
    return (
        f"A sentence is relevant when graded {RELEVANT_GRADE} or {MAX_GRADE} (1-4 scale), i.e. "
        f"{TREC_RELEVANT_GRADE} or {top} on trec_eval's 0-3 scale (trec_eval -l {TREC_RELEVANT_GRADE})."
    )


def relevant_level(scale: str) -> int:
    """The smallest grade that is relevant on ``scale`` (trec 2, 1-4 3, binary 1)."""
    if scale not in IMPORT_SCALES:
        raise SentretError(f"unknown qrels scale {scale!r}; choose one of {tuple(IMPORT_SCALES)}")
    return min(g for g, stored in IMPORT_SCALES[scale].items() if stored >= RELEVANT_GRADE)


def scale_note(scale: str) -> str:
    """``trec scale (0-3), relevant ≥ 2 (trec_eval -l 2)``: a scale and its threshold, for people."""
    level = relevant_level(scale)
    return f"{SCALE_NAMES[scale]}, relevant ≥ {level} (trec_eval -l {level})"


@dataclass(frozen=True)
class ScaleReading:
    """How a file's grades are read: the ``scale`` chosen, the grades found, the scales they fit."""

    scale: str
    found: tuple[int, ...]
    fits: tuple[str, ...]  # every scale the grades fit, the chosen first
    chosen_by: str = AUTO  # "auto" (sniffed) or "given"

    @property
    def ambiguous(self) -> bool:
        return len(self.fits) > 1

    def sentence(self) -> str:
        """``values 0-3 found: read as trec scale, relevant ≥ 2`` (and the other readings, if any)."""
        how = "read as" if self.chosen_by == AUTO else "read as the chosen"
        text = f"values {_values(self.found)} found: {how} {self.scale} scale, relevant ≥ {relevant_level(self.scale)}"
        others = [s for s in self.fits if s != self.scale]
        if others:
            text += f" (they also fit the {' and the '.join(others)} scale: choose it if that is what the file uses)"
        return text


def _values(found: tuple[int, ...]) -> str:
    if not found:
        return "no"
    if len(found) > 2 and list(found) == list(range(found[0], found[-1] + 1)):
        return f"{found[0]}-{found[-1]}"
    return ", ".join(str(g) for g in found)


def sniff_scale(grades: Iterable[int]) -> ScaleReading:
    """The scale a file's ``grades`` are on: only 0/1 → binary, 0-3 → trec, 1-4 → 1-4; values
    that fit several (e.g. only 1-3) take the first of :data:`SNIFF_ORDER` and are ``ambiguous``."""
    found = tuple(sorted(set(grades)))
    if not found:
        raise SentretError("no judgments: the file holds no qrels line")
    fits = tuple(s for s in SNIFF_ORDER if set(found) <= set(IMPORT_SCALES[s]))
    if not fits:
        raise SentretError(
            f"values {_values(found)} found: they fit no scale (trec 0-3, 1-4 or binary 0-1)"
        )
    return ScaleReading(fits[0], found, fits)


def read_scale(grades: Iterable[int], scale: str = AUTO) -> ScaleReading:
    """``scale`` checked against ``grades``, or sniffed from them when it is ``auto``."""
    if scale == AUTO:
        return sniff_scale(grades)
    if scale not in IMPORT_SCALES:
        raise SentretError(f"unknown qrels scale {scale!r}; choose {AUTO} or one of {tuple(IMPORT_SCALES)}")
    found = tuple(sorted(set(grades)))
    outside = [g for g in found if g not in IMPORT_SCALES[scale]]
    if outside:
        raise SentretError(
            f"grade {outside[0]} is not on the {scale} scale ({', '.join(map(str, sorted(IMPORT_SCALES[scale])))}); "
            "choose the scale the file uses (trec 0-3, 1-4 or binary 0-1)"
        )
    fits = (scale, *(s for s in SNIFF_ORDER if s != scale and set(found) <= set(IMPORT_SCALES[s])))
    return ScaleReading(scale, found, fits, chosen_by="given")


def sniff_or_default(grades: Iterable[int]) -> ScaleReading | None:
    """The sniffed reading, or None when the grades fit no scale: the caller then reads the file on
    the default scale, so that the parser names the first line off it."""
    try:
        return sniff_scale(grades)
    except SentretError:
        return None


def qrels_grades(lines: Iterable[str]) -> list[int]:
    """The grades of qrels lines (the fourth field of every line that is not blank or ``#``);
    a line whose grade is not an integer is skipped here and refused by the parser."""
    grades = []
    for line in lines:
        fields = line.split()
        if len(fields) == 4 and not line.lstrip().startswith("#"):
            try:
                grades.append(int(fields[3]))
            except ValueError:
                continue
    return grades


def parse_scaled_qrels(text: str, scale: str = AUTO, *, source: str = "<qrels>") -> tuple[Qrels, ScaleReading]:
    """Qrels text read on ``scale`` (sniffed when ``auto``): grades 1-4, and how they were read.

    This is how Evaluate reads an uploaded file: a session's export on either scale gives the
    session's own grades back. A grade off the scale is refused naming its line."""
    lines = list(iter_qrels(text.splitlines(), source=source))
    sniffed = scale == AUTO
    if sniffed:  # grades on no scale: read on the default one, so that the line is named below
        scale = getattr(sniff_or_default(line.grade for line in lines), "scale", DEFAULT_QRELS_SCALE)
    if scale not in IMPORT_SCALES:
        raise SentretError(f"unknown qrels scale {scale!r}; choose {AUTO} or one of {tuple(IMPORT_SCALES)}")
    mapping = IMPORT_SCALES[scale]
    qrels: dict[str, dict[str, int]] = {}
    for line in lines:
        if line.grade not in mapping:
            raise SentretError(
                f"{source}:{line.number}: grade {line.grade} is not on the {scale} scale "
                f"({', '.join(map(str, mapping))}); choose the scale the file uses (trec 0-3, 1-4 or binary 0-1)"
            )
        judged = qrels.setdefault(line.topic, {})
        if line.docid in judged:
            raise SentretError(
                f"{source}:{line.number}: document {line.docid!r} is judged twice for topic {line.topic!r}"
            )
        judged[line.docid] = mapping[line.grade]
    reading = read_scale((line.grade for line in lines), scale)
    return qrels, ScaleReading(reading.scale, reading.found, reading.fits) if sniffed else reading


def export_note(scale: str) -> str:
    """What an export on ``scale`` means, e.g. for the CLI's standard error."""
    if scale not in SCALES:
        raise SentretError(f"unknown qrels scale {scale!r}; choose one of {tuple(SCALES)}")
    return f"qrels on the {scale_note(scale)}"
