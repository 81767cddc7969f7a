"""Write tests/golden/scores.json: every registered model's scores on the test suite's small index.

    .venv/bin/python tests/golden/make_scores.py            # every model
    .venv/bin/python tests/golden/make_scores.py bm25.v1    # only the models named

Run it only when a change of scores is intended (a new model version, a fixed formula), and say so in
the commit: tests/test_golden_scores.py holds every other change to this file's numbers as a failure.
A recorded list that the code still reproduces within the tolerance below is kept as it is, character
for character, so regenerating on another CPU rewrites only the lists that really changed.

The tolerance: numpy's SIMD paths (AVX-512 or AVX2 or none, chosen at run time by the CPU) may round a
sum or a log differently in the last bit, so a list agrees when every score is within ``ULPS`` units in
the last place of the list's largest magnitude (one ulp was the most seen between AVX-512 and numpy's
baseline kernel). The smallest change a model can make on purpose, a parameter moved by 1e-6 of its value,
moves a score by millions of ulps: the tolerance cannot hide it (``tests/test_golden_scores.py`` checks so).
The float32 dense models (BLAS mat-vecs, whose summation order the BLAS kernel chooses) agree within
``NEAR`` instead: 1e-6 relative, or 1e-7 absolute (two float32 steps at 1, the largest cosine), since a cosine
near 0 is the sum of terms each ≈ 1/dim and keeps their rounding, not its own size's (OpenBLAS's generic
kernel, OPENBLAS_CORETYPE=Prescott, moved an embed.v1 cosine of 0.0028 by 8e-9 against Haswell's).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
GOLDEN_FILE = HERE / "scores.json"
sys.path.insert(0, str(HERE.parents[1]))  # the repository: the tests package

QUERIES = ["Picasso and peace", "Spanish Civil War", "Lennon and religion", "who fought for the Republic",
           "when did the war end", "peace prize 1950", "George", "Guernica bombing town"]
SKIP = ("ltr.v1",)  # scores a stored ranker, not a formula: its own tests pin it
ULPS = 8  # units in the last place of a list's largest |score|
# float32 cosines through BLAS, (relative, absolute): embed.v1 and align.v1 within 1e-6 of each score;
# minilm.v1's sentence vectors are stored in float16, and a last-bit change of the float32 encoder on another
# CPU can round one of a vector's 384 components the other way (2^-11): at most about 1e-4 of a cosine
NEAR = {"embed.v1": (1e-6, 1e-7), "align.v1": (1e-6, 1e-7), "minilm.v1": (0.0, 1e-3)}


def key(model: str, query: str) -> str:
    return f"{model} | {query}"


def agrees(model: str, found: Mapping[str, Any], recorded: Mapping[str, Any]) -> bool:
    """Whether a list of scores (``{"ids": [...], "scores": [repr, ...]}``) is the recorded one: the same
    ids in the same order, every score within the tolerance of the module docstring."""
    if list(found["ids"]) != list(recorded["ids"]):
        return False
    got = np.array([float(v) for v in found["scores"]], dtype=np.float64)
    want = np.array([float(v) for v in recorded["scores"]], dtype=np.float64)
    if got.shape != want.shape:
        return False
    if not len(want):
        return True
    same_inf = np.isinf(got) == np.isinf(want)
    if not same_inf.all() or (got[np.isinf(want)] != want[np.isinf(want)]).any():
        return False
    got, want = got[np.isfinite(want)], want[np.isfinite(want)]
    if np.isnan(got).any():
        return False
    if model in NEAR:
        relative, absolute = NEAR[model]
        return bool(np.all(np.abs(got - want) <= relative * np.abs(want) + absolute))
    scale = float(np.max(np.abs(want))) if len(want) else 0.0
    return bool(np.all(np.abs(got - want) <= ULPS * np.spacing(scale)))


def golden(index: Any, models: Sequence[str] | None = None) -> dict[str, Any]:
    """The score lists of ``models`` (default: every registered one but ``SKIP``) on ``QUERIES``."""
    from sentret_core.models import list_models, score

    names = [spec.name for spec in list_models() if spec.name not in SKIP] if models is None else models
    found: dict[str, Any] = {}
    for name in names:
        for query in QUERIES:
            scores = score(index, query, name)
            found[key(name, query)] = {"ids": scores.ids.tolist(),
                                       "scores": [repr(float(v)) for v in scores.scores]}
    return found


def merge(recorded: Mapping[str, Any], found: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``recorded`` with each list of ``found`` that does not agree with it replaced (or added): the new
    file's content, and the keys that changed. A list that agrees stays as recorded, to the character."""
    merged = dict(recorded)
    changed = []
    for name, lists in found.items():
        model = name.split(" | ", 1)[0]
        if name not in recorded or not agrees(model, lists, recorded[name]):
            merged[name] = lists
            changed.append(name)
    return merged, changed


def small_index(folder: Path) -> Any:
    from sentret_core import Index, build_index
    from tests.conftest import SMALL_DOCS, train_default_artefacts

    source = folder / "small.jsonl"
    source.write_text("".join(json.dumps(doc) + "\n" for doc in SMALL_DOCS))
    build_index(source, folder / "small", n_process=1)
    index = Index.load(folder / "small")
    train_default_artefacts(index)
    return index


def main(argv: Sequence[str]) -> int:
    from sentret_core.models import list_models

    known = {spec.name for spec in list_models()} - set(SKIP)
    models = list(argv) or None
    unknown = sorted(set(models or ()) - known)
    if unknown:
        print(f"unknown models: {', '.join(unknown)}; registered: {', '.join(sorted(known))}", file=sys.stderr)
        return 2
    recorded = json.loads(GOLDEN_FILE.read_text(encoding="utf-8")) if GOLDEN_FILE.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        found = golden(small_index(Path(tmp)), models)
    merged, changed = merge(recorded, found)
    if models is None:  # models no longer registered leave the file
        merged = {k: v for k, v in merged.items() if k in found}
    GOLDEN_FILE.write_text(json.dumps(merged, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    dropped = sorted(set(recorded) - set(merged))
    print(f"{len(changed)} of {len(found)} score lists changed in {GOLDEN_FILE}"
          + (f"; {len(dropped)} dropped" if dropped else ""))
    for name in changed:
        print(f"  changed: {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
