"""Write tests/golden/scores.json: every registered model's scores on the test suite's small index.

    .venv/bin/python tests/golden/make_scores.py

Run it only when a change of scores is intended (a new model version, a fixed formula), and say so in
the commit: tests/test_golden_scores.py holds every other change to this file's numbers as a failure.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository: the tests package

QUERIES = ["Picasso and peace", "Spanish Civil War", "Lennon and religion", "who fought for the Republic",
           "when did the war end", "peace prize 1950", "George", "Guernica bombing town"]
SKIP = ("ltr.v1",)  # scores a stored ranker, not a formula: its own tests pin it


def golden(index: Any) -> dict[str, Any]:
    from sentret_core.models import list_models, score

    found: dict[str, Any] = {}
    for spec in list_models():
        if spec.name in SKIP:
            continue
        for query in QUERIES:
            scores = score(index, query, spec.name)
            values = [repr(float(v)) for v in scores.scores]
            found[f"{spec.name} | {query}"] = {"ids": scores.ids.tolist(), "scores": values}
    return found


def small_index(folder: Path) -> Any:
    from sentret_core import Index, build_index
    from tests.conftest import SMALL_DOCS, train_default_artefacts

    source = folder / "small.jsonl"
    source.write_text("".join(json.dumps(doc) + "\n" for doc in SMALL_DOCS))
    build_index(source, folder / "small", n_process=1)
    index = Index.load(folder / "small")
    train_default_artefacts(index)
    return index


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        data = golden(small_index(Path(tmp)))
    (HERE / "scores.json").write_text(json.dumps(data, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(data)} score lists to {HERE / 'scores.json'}")
