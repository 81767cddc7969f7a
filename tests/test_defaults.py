"""sentret_core/defaults.py is the one source of every shared default: no module assigns one of its names
again, no constant is written out in two modules where one should import it, every default says where
it comes from, and the public edges (Python API, CLI) start from these values.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parents[1] / "sentret_core"
CONSTANT = re.compile(r"_?[A-Z][A-Z0-9_]*")

# Constants with the same name and value in several modules that are different things, each with the
# modules allowed to hold it; a third module, or another value, is caught.
SAME_BY_COINCIDENCE: dict[str, tuple[set[str], str]] = {
    "FORMAT_VERSION": ({"sentret_core.index.format", "sentret_core.ingest.shards"},
                       "the index's and the parsed shards' formats are versioned independently"),
    "MANIFEST": ({"sentret_core.index.validate", "sentret_core.ingest.shards"},
                 "an index's manifest and a shards folder's (a format of its own) happen to share a file name"),
    "MEMO_SIZE": ({"sentret_core.ui.state", "sentret_core.ui.offered", "sentret_core.ui.index_check"},
                  "the bound of each of the app's memos, chosen for that memo"),
}


def modules(package: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def assignments(path: Path) -> Iterator[tuple[str, ast.expr | None, int]]:
    """The module-level assignments of ``path`` (also under a module-level ``if``/``try``): name, value, line."""
    statements = list(ast.parse(path.read_text()).body)
    while statements:
        node = statements.pop(0)
        if isinstance(node, ast.If | ast.Try):
            statements[:0] = [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        yield name.id, node.value, node.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.value, node.lineno


def literal(value: ast.expr | None) -> tuple[str, str] | None:
    """A literal value (``frozenset({...})`` and ``tuple([...])`` included) as (type, repr); else None."""
    if value is None:
        return None
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("frozenset", "tuple")
            and len(value.args) == 1 and not value.keywords):
        inner = literal(value.args[0])
        return None if inner is None else (value.func.id, repr(sorted(ast.literal_eval(value.args[0]), key=repr)))
    try:
        found = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return type(found).__name__, repr(found)


def redefinitions(package: Path) -> list[str]:
    """Module-level assignments, outside defaults.py, of a name defaults.py defines."""
    names = {name for name, _, _ in assignments(package / "defaults.py")}
    return [f"{module}:{line} {name}" for module, path in modules(package) if path != package / "defaults.py"
            for name, _, line in assignments(path) if name in names]


def written_twice(package: Path) -> list[str]:
    """UPPER_CASE constants with the same name and the same literal value in more than one module."""
    where: dict[tuple[str, tuple[str, str]], set[str]] = {}
    for module, path in modules(package):
        for name, value, _ in assignments(path):
            key = literal(value)
            if key is not None and CONSTANT.fullmatch(name):
                where.setdefault((name, key), set()).add(module)
    return sorted(f"{name} = {key[1]} in {', '.join(sorted(found))}" for (name, key), found in where.items()
                  if len(found) > 1 and not found <= SAME_BY_COINCIDENCE.get(name, (set(), ""))[0])


def test_no_module_redefines_a_default() -> None:
    assert redefinitions(PACKAGE) == []


def test_no_constant_is_written_out_in_two_modules() -> None:
    assert written_twice(PACKAGE) == []


def test_the_guards_find_what_they_look_for(tmp_path: Path) -> None:
    """What the package once had: a default written again, a constant in two modules."""
    package = tmp_path / "sentret_core"
    (package / "support").mkdir(parents=True)
    (package / "defaults.py").write_text('DEFAULT_EXCLUDED_LABELS = frozenset({"CARDINAL", "ORDINAL"})\n')
    (package / "support" / "entities.py").write_text(
        'DEFAULT_EXCLUDED_LABELS = frozenset({"ORDINAL", "CARDINAL"})\nALPHA = 0.05\nLOCK = object()\n'
    )
    (package / "report.py").write_text("if True:\n    ALPHA = 0.05\nLOCK = object()\nSHOWN = 0.05\n")
    (package / "comparison.py").write_text("ALPHA = 0.050\nMANIFEST = 'manifest.json'\nTOP: int = 1\n")
    (package / "validate.py").write_text("MANIFEST = 'manifest.json'\nTOP = 1.0\n")
    assert redefinitions(package) == ["sentret_core.support.entities:1 DEFAULT_EXCLUDED_LABELS"]
    # frozensets compare as sets; LOCK is no literal; SHOWN is another name; TOP is 1 and 1.0; MANIFEST is
    # allowed only in sentret_core.index.validate and sentret_core.ingest.shards
    assert written_twice(package) == [
        "ALPHA = 0.05 in sentret_core.comparison, sentret_core.report, sentret_core.support.entities",
        "DEFAULT_EXCLUDED_LABELS = ['CARDINAL', 'ORDINAL'] in sentret_core.defaults, sentret_core.support.entities",
        "MANIFEST = 'manifest.json' in sentret_core.comparison, sentret_core.validate",
    ]


def test_every_default_says_where_it_comes_from() -> None:
    """Each default sits in a block of lines led by a comment (its source, or why this value)."""
    lines = (PACKAGE / "defaults.py").read_text().splitlines()
    uncommented = []
    for name, _, line in assignments(PACKAGE / "defaults.py"):
        above = line - 2
        while above >= 0 and lines[above].strip() and not lines[above].lstrip().startswith("#"):
            above -= 1
        if above < 0 or not lines[above].lstrip().startswith("#"):
            uncommented.append(name)
    assert uncommented == []


def test_the_python_api_starts_from_the_defaults() -> None:
    from sentret_core import defaults
    from sentret_core.evaluation.measures import evaluate
    from sentret_core.ingest.build import build_index
    from sentret_core.ingest.nlp import load_pipeline
    from sentret_core.models import score, search
    from sentret_core.support.engine import support

    def default(function: Callable[..., Any], name: str) -> Any:
        return inspect.signature(function).parameters[name].default

    assert {name: default(support, name) for name in ("ranker", "k", "entity_score", "top_entities", "models",
                                                       "per_entity", "window", "entity_weighting")} == {
        "ranker": defaults.DEFAULT_RANKER, "k": defaults.DEFAULT_K, "entity_score": defaults.DEFAULT_ENTITY_SCORE,
        "top_entities": defaults.DEFAULT_SUPPORT_ENTITIES, "models": defaults.DEFAULT_SUPPORT_MODELS,
        "per_entity": defaults.DEFAULT_PER_ENTITY, "window": defaults.DEFAULT_WINDOW,
        "entity_weighting": defaults.DEFAULT_ENTITY_WEIGHTING,
    }
    assert default(score, "model") == default(search, "model") == defaults.DEFAULT_RANKER
    assert default(search, "k") == defaults.DEFAULT_K
    assert default(evaluate, "metrics") == defaults.DEFAULT_METRICS
    assert default(build_index, "model") == default(load_pipeline, "model") == defaults.DEFAULT_PIPELINE


def test_the_cli_starts_from_the_defaults() -> None:
    from sentret_core import defaults
    from sentret_core.cli import eval as cli_eval
    from sentret_core.cli import search as cli_search

    sub = argparse.ArgumentParser().add_subparsers()
    cli_search.register(sub)
    cli_eval.register(sub)
    support = sub.choices["support"].parse_args(["INDEX", "QUERY"])
    assert (support.ranker, support.k, support.entity_score, support.top_entities, support.per_entity,
            support.models.split(","), support.entity_weighting) == (
        defaults.DEFAULT_RANKER, defaults.DEFAULT_K, defaults.DEFAULT_ENTITY_SCORE, defaults.DEFAULT_SUPPORT_ENTITIES,
        defaults.DEFAULT_PER_ENTITY, list(defaults.DEFAULT_SUPPORT_MODELS), defaults.DEFAULT_ENTITY_WEIGHTING,
    )
    assert sub.choices["search"].parse_args(["INDEX", "QUERY"]).model == defaults.DEFAULT_RANKER
    (labels,) = [action for action in sub.choices["support"]._actions if action.dest == "labels"]
    assert "all but CARDINAL and ORDINAL" in (labels.help or "")  # sorted(DEFAULT_EXCLUDED_LABELS), in words
    evaluation = sub.choices["eval"].parse_args(["wikiqa", "--data", "FILE"])
    assert evaluation.metrics.split(",") == list(defaults.DEFAULT_METRICS)


def test_the_version_has_one_source() -> None:
    """``sentret_core/_version.py`` is read by the package, the index builder and the distribution."""
    from importlib.metadata import version

    import sentret_core
    from sentret_core import _version
    from sentret_core.ingest import build

    assert sentret_core.__version__ is build.__version__ is _version.__version__ == version("sentret")
