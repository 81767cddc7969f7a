"""Each argument of a support request is checked once, at the public edge: ``support()`` checks, the query
context and the models' top-k it runs trust what was checked. Counted by wrapping every check function
wherever a module of the package imported it."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sentret_core import Index, checks, search, support
from sentret_core.index import loaded
from sentret_core.support import weighting

CHECKS: dict[str, Callable[..., Any]] = {
    **{name: getattr(checks, name) for name in dir(checks) if name.startswith("check_")},
    "check_index": loaded.check_index,
    "check_weighting": weighting.check_weighting,
}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Calls of each check function, by its name and, for the ones that name their argument, that name."""
    calls: Counter[str] = Counter()

    def wrap(name: str, check: Callable[..., Any]) -> Callable[..., Any]:
        def counting(*args: Any, **kwargs: Any) -> Any:
            named = name in ("check_int", "check_str", "check_strings") and args and isinstance(args[0], str)
            calls[f"{name}({args[0]})" if named else name] += 1
            return check(*args, **kwargs)

        return counting

    for module in [m for name, m in sys.modules.items() if name.startswith("sentret_core") and m is not None]:
        for name, check in CHECKS.items():
            if getattr(module, name, None) is check:
                monkeypatch.setattr(module, name, wrap(name, check))
    yield calls


def test_a_support_request_checks_each_argument_once(small_index: Index, counted: Counter[str]) -> None:
    found = support(small_index, "spanish civil war", ranker="bm25f.v1", k=20, window=2,
                    models=("bm25f.v1", "lm-dir.v1", "position", "sum-kld"), params={"bm25f.v1": {"k1": 0.9}})
    assert found.entities  # the request did its work: entities ranked, each with its support sentences
    once = ["check_index", "check_query", "check_weighting", "check_int(k)", "check_int(window)",
            "check_model_name", "check_labels", "check_params", "check_str(entity_score)",
            "check_int(top_entities)", "check_int(per_entity)", "check_entity_ids", "check_strings(models)"]
    assert {name: counted[name] for name in once} == dict.fromkeys(once, 1)
    inside = {"check_instance": 1, "check_str(entity_weighting)": 1}  # check_index's and check_weighting's own
    assert {name: n for name, n in counted.items() if name not in once} == inside


def test_the_public_search_still_checks_what_it_is_given(small_index: Index, counted: Counter[str]) -> None:
    search(small_index, "spanish civil war", "bm25f.v1", 5)
    assert counted["check_index"] == 1 and counted["check_query"] == 1 and counted["check_int(k)"] == 1
