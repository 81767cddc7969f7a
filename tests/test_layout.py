"""The house rules of DESIGN.md, checked on the source itself: small modules, no import cycle,
streamlit only under ui/, every shared default defined once.

Run as a script for the module-size table: ``.venv/bin/python tests/test_layout.py``.
"""

from __future__ import annotations

import ast
import statistics
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "sentret_core"
MAX_LINES = 400
MAX_MEDIAN = 150
# names that must be assigned in sentret_core/defaults.py and nowhere else
SHARED_DEFAULTS = ("DEFAULT_RANKER", "DEFAULT_K", "DEFAULT_WINDOW", "RELEVANT_GRADE", "MAX_K", "DEFAULT_POOL_MODELS")


def modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package (``__init__`` as the package)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def line_counts() -> dict[str, int]:
    return {name: len(path.read_text().splitlines()) for name, path in modules().items()}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's own modules that ``name`` imports anywhere in its file (lazy imports included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text())
    for block in ast.walk(tree):  # imports under `if TYPE_CHECKING:` never run: they are not edges
        if isinstance(block, ast.If) and ast.unparse(block.test).endswith("TYPE_CHECKING"):
            block.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    graph = {name: imports(name, path, known) for name, path in mods.items()}
    # importing a.b.c runs a/__init__ and a/b/__init__ first: those edges are real but not cycles of
    # the code's own making, so a package's __init__ is not counted as importing its children
    return {name: {t for t in targets if not name.startswith(t + ".") and not t.startswith(name + ".")}
            for name, targets in graph.items()}  # fmt: skip


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# Data flows one way (README "The code"): a module never imports a layer above its own.
LAYERS = {"ingest": 1, "index": 1, "models": 2, "support": 3, "evaluation": 4, "annotation": 4, "learning": 4,
          "cli": 5, "ui": 5, "integrations": 5}
ENTRY_POINTS = {"sentret_core.__main__"}


def layer(name: str) -> int:
    parts = name.split(".")
    return LAYERS.get(parts[1], 0) if len(parts) > 1 else 0

def test_no_module_is_large_and_most_are_small() -> None:
    counts = line_counts()
    too_long = {name: n for name, n in counts.items() if n > MAX_LINES}
    assert not too_long, f"modules over {MAX_LINES} lines: {too_long}"
    assert statistics.median(counts.values()) <= MAX_MEDIAN


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_only_the_ui_imports_streamlit() -> None:
    offenders = []
    for name, path in modules().items():
        if name.startswith("sentret_core.ui"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                offenders.append(name)
    assert offenders == []


def test_shared_defaults_are_defined_once() -> None:
    where: dict[str, list[str]] = {}
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name) and target.id in SHARED_DEFAULTS:
                    where.setdefault(target.id, []).append(name)
    assert {k: v for k, v in where.items() if v != ["sentret_core.defaults"]} == {}


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = [f"{name} -> {target}" for name, targets in import_graph().items() if name not in ENTRY_POINTS
              for target in sorted(targets) if layer(target) > layer(name)]  # fmt: skip
    assert upward == []


if __name__ == "__main__":
    counts = line_counts()
    for name, n in sorted(counts.items(), key=lambda item: -item[1]):
        print(f"{n:5d}  {name}")
    median = statistics.median(counts.values())
    print(f"{len(counts)} modules, median {median:.0f} lines, largest {max(counts.values())}")
