"""Which registered scorers the app offers: a learned ranker (ltr.v1) only once one is stored; and which
of them still lack the trained artefact they read (shown as "not trained yet", or as "training in the
background" while a training of it runs; never trained on use)."""

from __future__ import annotations

import threading
from pathlib import Path

from sentret_core.index import artefacts
from sentret_core.models import get_model, list_models
from sentret_core.support.registry import support_model, support_model_names, title
from sentret_core.ui.url import UrlReader

LTR = "ltr.v1"
LTR_MODEL = "p.ltr.model"  # the stored ranker ltr.v1 reads (its ``model`` parameter), by name


def offered_models() -> list[str]:
    learned = bool(stored_rankers())
    return [spec.name for spec in list_models() if spec.family != "ltr" or learned]


def support_models() -> list[str]:
    return [*offered_models(), *support_model_names()]


def is_learned(name: str) -> bool:
    """Whether ``name`` is a learned ranker's scorer (``ltr.v1``), which reads a stored ranker by name."""
    return support_model(name) is None and get_model(name).family == "ltr"


def model_title(name: str, learned: str | None = None) -> str:
    """A model's display name; a learned ranker's with the stored ranker it reads: "Learned ranker (ltr)"."""
    return f"{title(name)} ({learned})" if learned and is_learned(name) else title(name)


def stored_rankers() -> list[str]:
    """The names of the stored learned rankers (what ``ltr.v1``'s ``model`` may be), sorted."""
    return sorted({str(record["name"]) for record in artefacts.available(None, "ranker")})


def default_ranker(names: list[str]) -> str | None:
    """The ranker used until one is chosen: ``ltr.v1``'s default name when stored, else the first."""
    from sentret_core.learning.scorer import DEFAULT_RANKER_NAME

    return DEFAULT_RANKER_NAME if DEFAULT_RANKER_NAME in names else (names[0] if names else None)


def untrained(model: str, index_path: str) -> str | None:
    """The kind of trained artefact ``model`` reads by default and ``index_path`` lacks (e.g.
    ``"classes"``), or ``None`` when it has every one (or needs none)."""
    names = _trained(index_path)
    for spec in get_model(model).param_specs():
        if spec.artefact is None or spec.artefact == "ranker":
            continue
        if (str(spec.artefact), str(spec.default)) not in names:
            return str(spec.artefact)
    return None


def untrained_label(model: str, index_path: str) -> str:
    """What ``model``'s name in a list adds while it cannot run: "" (it can), " — training in the
    background" (its artefact is being trained now) or " — not trained yet (classes)". It does not count
    down: Streamlit keeps a list's choice by its labels, so a label changes only when the state does."""
    from sentret_core.models.training.running import running

    missing = untrained(model, index_path)
    if missing is None:
        return ""
    now = running(index_path)
    if now is not None and missing in now.kinds:
        return " — training in the background"
    return f" — not trained yet ({missing})"


def models_reading(kind: str) -> list[str]:
    """The registered models whose default parameters name a trained artefact of ``kind``."""
    return [spec.name for spec in list_models() if any(p.artefact == kind for p in spec.param_specs())]


_TRAINED: dict[str, tuple[int | None, frozenset[tuple[str, str]]]] = {}
MEMO_SIZE = 64  # indexes remembered per process (oldest forgotten first): a memo never grows without bound
_LOCK = threading.Lock()


def _trained(index_path: str) -> frozenset[tuple[str, str]]:
    """(kind, name) of every artefact of the index, read again only when its artefacts folder changes
    (training renames a folder into it)."""
    try:
        stamp: int | None = (Path(index_path) / artefacts.FOLDER).stat().st_mtime_ns
    except OSError:
        stamp = None
    seen = _TRAINED.get(index_path)
    if seen is None or seen[0] != stamp:
        found = frozenset((str(r.get("kind")), str(r["name"])) for r in artefacts.available(index_path))
        seen = (stamp, found)
        with _LOCK:
            _TRAINED.pop(index_path, None)
            _TRAINED[index_path] = seen
            for old in list(_TRAINED)[: max(0, len(_TRAINED) - MEMO_SIZE)]:
                del _TRAINED[old]
    return seen[1]


def learned_params(learned: str | None) -> dict[str, dict[str, str]] | None:
    """The models' parameters that make ``ltr.v1`` read the stored ranker ``learned``."""
    return {LTR: {"model": learned}} if learned else None


def learned_choice(url: UrlReader) -> str | None:
    """The stored ranker a link names (``p.ltr.model``), else the default one; None when none is stored."""
    rankers = stored_rankers()
    if not rankers:
        if url.has(LTR_MODEL):
            url.warnings.append(f"The link's {LTR_MODEL}={url.text(LTR_MODEL)!r} names a learned ranker, but none "
                                "is stored; learn one on the Evaluate page.")
        return None
    return url.choice(LTR_MODEL, rankers, default_ranker(rankers))
