"""Which registered scorers the app offers: a learned ranker (ltr.v1) only once one is stored."""

from __future__ import annotations

from sentret_core.index import artefacts
from sentret_core.models import list_models


def offered_models() -> list[str]:
    learned = bool(artefacts.available(None, "ranker"))
    return [spec.name for spec in list_models() if spec.family != "ltr" or learned]
