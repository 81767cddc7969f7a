"""``sentret models``: the registered sentence scorers, their parameters and where their code lives."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sentret_core.cli.common import command


def register(sub: Any) -> None:
    p = command(sub, "models", "List the registered sentence scorers and their parameters.", _run_models)
    p.add_argument("--json", action="store_true")


def _run_models(args: argparse.Namespace) -> int:
    from sentret_core.models import list_models

    rows = [
        {
            "name": spec.name,
            "display_name": spec.display_name,
            "paper": spec.paper,
            "source": spec.source,
            "params": {p.name: {"default": p.default, "allowed": p.allowed(), "description": p.description}
                       for p in spec.param_specs()},
        }
        for spec in list_models()
    ]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
        return 0
    for spec in list_models():
        params = ", ".join(f"{p.name}={p.default}" for p in spec.param_specs()) or "no parameters"
        print(f"{spec.name:<20} {spec.display_name:<34} {params}")
        print(f"{'':<20} {spec.source}")
    return 0


