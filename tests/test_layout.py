"""The house rules (docs/architecture.md), checked on the source itself: small modules, no import cycle
(through a package's own ``__init__`` and ``TYPE_CHECKING`` imports too), streamlit only under ui/, no
upward import between layers. Shared defaults are guarded in tests/test_defaults.py.

Run as a script for the module-size table: ``.venv/bin/python tests/test_layout.py``.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
import statistics
import sys
from pathlib import Path
from typing import NamedTuple

PACKAGE = Path(__file__).resolve().parents[1] / "sentret_core"
MAX_LINES = 400
MAX_MEDIAN = 150
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


class Imports(NamedTuple):
    """The package's own modules a module imports: at run time (lazy imports included), and only for the
    type checker (under ``if TYPE_CHECKING:``)."""

    runtime: set[str]
    typing: set[str]


def _typing_only(tree: ast.Module) -> set[int]:
    """The ids of the import statements under ``if TYPE_CHECKING:`` (its ``else:`` runs, so it is not)."""
    found = set()
    for block in ast.walk(tree):
        if isinstance(block, ast.If) and ast.unparse(block.test).endswith("TYPE_CHECKING"):
            found |= {id(node) for stmt in block.body for node in ast.walk(stmt)}
    return found


def _resolve(target: str, known: set[str]) -> str:
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target


def imports(name: str, path: Path, known: set[str]) -> Imports:
    """What ``name`` imports. ``from P import n`` is an edge to the module ``P.n`` when there is one, else
    to ``P`` itself, so a submodule that takes a name from its own package's ``__init__`` (``from
    sentret_core import X`` inside sentret_core) has an edge to it. Importing ``a.b.c`` also runs
    ``a/__init__`` first, but a package part-way through its ``__init__`` still loads its submodules:
    that implicit step is no edge."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = Imports(set(), set())
    tree = ast.parse(path.read_text())
    typing_only = _typing_only(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [_resolve(alias.name, known) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else _resolve(base, known)
                       for alias in node.names]
        else:
            continue
        edges = found.typing if id(node) in typing_only else found.runtime
        edges.update(target for target in targets if target and target != name)
    found.typing.difference_update(found.runtime)
    return found


@functools.cache
def import_edges() -> dict[str, Imports]:
    mods = modules()
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def import_graph(*, typing: bool = False) -> dict[str, set[str]]:
    """Module → the modules it imports at run time; with ``typing``, those under ``TYPE_CHECKING`` too."""
    return {name: found.runtime | (found.typing if typing else set()) for name, found in import_edges().items()}


def cycle_path(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest cycle through the first module of a strongly connected ``component``: a, b, …, a."""
    start, inside = component[0], set(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph.get(node, set()) & inside):
                if nxt == start:
                    back = [node]
                    while back[-1] != start:
                        back.append(previous[back[-1]])
                    return [*reversed(back), start]
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    raise ValueError(f"{component} is not a cycle")


def describe(graph: dict[str, set[str]], component: list[str], typing: dict[str, set[str]]) -> str:
    """A cycle as text, each step marked when it is a ``TYPE_CHECKING`` import: "a -> b -(typing)-> a"."""
    path = cycle_path(graph, component)
    text = path[0]
    for source, target in itertools.pairwise(path):
        text += f" -(typing)-> {target}" if target in typing.get(source, set()) else f" -> {target}"
    return text


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


# Data flows one way (docs/code.md): a module never imports a layer above its own.
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


# `if TYPE_CHECKING:` imports that close a cycle, allowed one by one with the reason each is harmless: each
# only names, in annotations, the type of the object that calls the module (a facade and its parts). They
# never run, and every module here has `from __future__ import annotations`. A runtime cycle is never allowed.
_FACADE = "annotates the JudgmentStore facade its functions take; the store imports this module's functions"
TYPING_EDGES_ALLOWED: dict[tuple[str, str], str] = {
    ("sentret_core.annotation.records", "sentret_core.annotation.item_order"): "annotates ItemOrder",
    ("sentret_core.annotation.adjudication", "sentret_core.annotation.store"): _FACADE,
    ("sentret_core.annotation.review", "sentret_core.annotation.store"): _FACADE,
    ("sentret_core.annotation.session_admin", "sentret_core.annotation.store"): _FACADE,
    ("sentret_core.annotation.admin", "sentret_core.annotation.store"): _FACADE,
    ("sentret_core.annotation.annotator", "sentret_core.annotation.store"): _FACADE,
    ("sentret_core.annotation.annotator", "sentret_core.annotation.web_sessions"): "annotates WebSessions",
    ("sentret_core.annotation.identity", "sentret_core.annotation.store"): _FACADE,
    ("sentret_core.annotation.known_browsers", "sentret_core.annotation.store"): _FACADE,
    ("sentret_core.annotation.throttle", "sentret_core.annotation.store"): _FACADE,
    ("sentret_core.annotation.web_sessions", "sentret_core.annotation.store"): _FACADE,
}


def test_no_import_cycle() -> None:
    graph = import_graph()
    assert [describe(graph, c, {}) for c in cycles(graph)] == []


def test_no_import_cycle_through_type_checking_imports() -> None:
    typing = {name: {target for target in found.typing if (name, target) not in TYPING_EDGES_ALLOWED}
              for name, found in import_edges().items()}
    graph = {name: targets | typing[name] for name, targets in import_graph().items()}
    assert [describe(graph, c, typing) for c in cycles(graph)] == []


def test_every_allowed_type_checking_edge_still_closes_a_cycle() -> None:
    """An allowed edge that is gone, or closes no cycle any more, comes off the list."""
    edges, components = import_edges(), [set(c) for c in cycles(import_graph(typing=True))]
    stale = [edge for edge in TYPING_EDGES_ALLOWED if edge[0] not in edges or edge[1] not in edges[edge[0]].typing
             or not any(set(edge) <= component for component in components)]
    assert stale == [], f"take these off TYPING_EDGES_ALLOWED: {stale}"


def test_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    graph = {"a": {"b", "d"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycle_path(graph, ["a", "b", "c", "d"]) == ["a", "d", "a"]  # the shortest way back to a
    assert describe(graph, ["a", "b", "c", "d"], {"d": {"a"}}) == "a -> d -(typing)-> a"


def _graph_of(tmp_path: Path, files: dict[str, str]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The import graph of a toy package ``pkg`` made of ``files`` (path → source)."""
    for relative, source in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(source)
    mods = {}
    for path in sorted(tmp_path.rglob("*.py")):
        parts = list(path.relative_to(tmp_path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    edges = {name: imports(name, path, set(mods)) for name, path in mods.items()}
    return ({name: e.runtime | e.typing for name, e in edges.items()}, {name: e.typing for name, e in edges.items()})


def test_a_submodule_taking_a_name_from_its_own_package_init_is_a_cycle(tmp_path: Path) -> None:
    """The cycle sentret_core/__init__ -> ingest/build.py -> __version__ had: it worked by line order only."""
    graph, typing = _graph_of(tmp_path, {
        "pkg/__init__.py": "VERSION = '1'\nfrom pkg.sub.build import build\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/build.py": "from pkg import VERSION\nfrom pkg import sub\ndef build(): ...\n",
    })
    assert graph["pkg.sub.build"] == {"pkg", "pkg.sub"}  # `from pkg import sub` is the submodule, not pkg's names
    assert [describe(graph, c, typing) for c in cycles(graph)] == ["pkg -> pkg.sub.build -> pkg"]


def test_a_cycle_through_a_type_checking_import_is_seen_and_marked(tmp_path: Path) -> None:
    graph, typing = _graph_of(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import B\nclass A: ...\n",
        "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\nelse:\n"
                    "    import pkg.c\nclass B: ...\n",
        "pkg/c.py": "",
    })
    assert typing["pkg.b"] == {"pkg.a"} and "pkg.c" in graph["pkg.b"]  # the else: branch runs
    assert [describe(graph, c, typing) for c in cycles(graph)] == ["pkg.a -> pkg.b -(typing)-> pkg.a"]


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


def test_no_module_imports_a_layer_above_its_own() -> None:
    # a package's __init__ gathers its own modules (sentret_core/__init__ is the public API): not upward
    upward = [f"{name} -> {target}" for name, targets in import_graph().items() if name not in ENTRY_POINTS
              for target in sorted(targets)
              if layer(target) > layer(name) and not target.startswith(f"{name}.")]
    assert upward == []


if __name__ == "__main__":
    counts = line_counts()
    for name, n in sorted(counts.items(), key=lambda item: -item[1]):
        print(f"{n:5d}  {name}")
    median = statistics.median(counts.values())
    print(f"{len(counts)} modules, median {median:.0f} lines, largest {max(counts.values())}")


BENCHMARKS = PACKAGE.parent / "benchmarks"


def benchmark_imports() -> dict[str, dict[str, set[str]]]:
    """Benchmark script → the other scripts it imports (``from hostile_index import …``), each with the names taken."""
    scripts = {path.stem for path in BENCHMARKS.glob("*.py")}
    found: dict[str, dict[str, set[str]]] = {}
    for path in sorted(BENCHMARKS.glob("*.py")):
        taken: dict[str, set[str]] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in scripts:
                taken.setdefault(node.module, set()).update(alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                taken.update({alias.name: set() for alias in node.names if alias.name in scripts})
        found[path.stem] = taken
    return found


def test_benchmark_scripts_share_public_names_without_a_cycle() -> None:
    found = benchmark_imports()
    assert found["hostile_resealed"]["hostile_index"] >= {"QUERY", "in_child"}  # the check sees real imports
    graph = {name: set(taken) for name, taken in found.items()}
    assert [describe(graph, c, {}) for c in cycles(graph)] == []
    private = [f"{name} takes {other}.{n}" for name, taken in found.items() for other, names in taken.items()
               for n in sorted(names) if n.startswith("_")]
    assert private == []


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
# library errors that still name a CLI flag, by module, until each names its Python argument instead (errors.py's
# ``arguments``, printed as flags by cli/flags.py): the counts may only go down, and a module at 0 comes off
FLAGS_LEFT = {
    "sentret_core.evaluation.plan": 1,  # --param
    "sentret_core.evaluation.reproduce": 1,  # --json (of a tables file's command, not of the caller)
    "sentret_core.ingest.corpus": 6,  # --format --id-field --text-field --title-field
    "sentret_core.ingest.pipeline": 1,  # --model
    "sentret_core.ingest.ray_engine": 5,  # --address --engine
    "sentret_core.ingest.resume": 1,  # --out
    "sentret_core.ingest.targets": 7,  # --force --out
    "sentret_core.ingest.textfile": 2,  # --encoding
    "sentret_core.learning.learn": 1,  # --learner
    "sentret_core.models.training.ray_encoding": 3,  # --engine
}


def raised_flags(path: Path) -> list[str]:
    """The CLI flags in the messages ``path`` raises, outside commands to run (`sentret train … --force`, backticked
    or the message's last words)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            texts = [part.value for arg in node.exc.args for part in ast.walk(arg)
                     if isinstance(part, ast.Constant) and isinstance(part.value, str)]
            message = re.sub(r"`[^`]*`", "", "".join(texts))
            found += FLAG.findall(re.sub(r"\b(?:sentret [a-z]+|pip install) .*", "", message))  # a command hint
    return found


def test_library_errors_name_arguments_not_flags() -> None:
    counts = {name: len(raised_flags(path)) for name, path in modules().items()
              if not name.startswith(("sentret_core.cli", "sentret_core.ui"))}
    assert raised_flags(modules()["sentret_core.ingest.targets"])  # the check sees flags where there are
    assert {name: n for name, n in counts.items() if n} == {name: n for name, n in FLAGS_LEFT.items() if n}
