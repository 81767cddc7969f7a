"""What shards record of the spaCy pipeline that parsed them, and the rule that one index is parsed one way."""

from __future__ import annotations

from typing import Any

from sentret_core.errors import SentretError
from sentret_core.ingest.nlp import NORMALISATION


def pipeline_record(nlp: Any, model: str) -> dict[str, Any]:
    """What the shards and the index record of the pipeline that parsed them."""
    import spacy

    return {
        "model": model,
        "model_version": nlp.meta.get("version", ""),
        "pipeline": list(nlp.pipe_names),  # a plain list: it is pickled to and from Ray nodes too
        "spacy_version": str(spacy.__version__),
        "normalisation": NORMALISATION,
    }


def check_same_pipeline(before: dict[str, Any], now: dict[str, Any]) -> None:
    """Documents added to shards must be parsed as the others were."""
    if not before:
        return
    keys = ("model", "model_version", "pipeline", "normalisation")
    if any(before.get(key) != now.get(key) for key in keys):
        raise SentretError(
            f"the index was parsed with {before.get('model')} {before.get('model_version')}, not "
            f"{now.get('model')} {now.get('model_version')}: documents added must be parsed the same way "
            f"(pass --model {before.get('model')}, or index everything again)"
        )
