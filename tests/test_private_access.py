"""No module of sentret_core reaches into another module's or object's underscore names.

The annotation modules, for one, share the database through public names (``sentret_core/annotation/db.py``:
``store.db.read()``, ``store.db.transaction()``, ``Database.session_row`` ...), never through the
store's or a handle's private attributes. The rule, on the source itself: an attribute access
``<expr>._name`` (one leading underscore; dunders are Python's, not private) is allowed only when
``<expr>`` is ``self`` or ``cls``, or a class the module itself defines. ``_asdict``, ``_replace``,
``_fields``, ``_make`` and ``_field_defaults`` are the documented public API of named tuples (the
underscore only keeps them apart from field names), so they are allowed on any expression.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sentret_core"
NAMED_TUPLE_API = {"_asdict", "_replace", "_fields", "_make", "_field_defaults"}
# other libraries' underscore names we rely on, each for a reason
THIRD_PARTY = {
    "_actions", "_SubParsersAction", "_AppendAction",  # argparse has no public way to walk a parser's options
    "_exit",  # os._exit: documented, the exit of a forked child that must not run the parent's handlers
    "_query_params",  # Streamlit's QueryParams: the URL rewritten without a history entry (ui/history.py)
}
# a module's own class's private names on an instance it builds or holds (a local variable, not self)
OWN_INSTANCES = {"index/reader.py": {"_sound", "_table", "_mapped"}, "ingest/nlp.py": {"_span"}}


def private_accesses(source: str) -> list[str]:
    """``line: expression`` for every access to another object's underscore name in ``source``."""
    tree = ast.parse(source)
    own_classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    allowed_owners = {"self", "cls"} | own_classes
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__") or name in NAMED_TUPLE_API:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in allowed_owners:
            continue
        found.append((node.lineno, node.col_offset, f"{node.lineno}: {ast.unparse(node)}"))
    return [text for _, _, text in sorted(found)]


def private_imports(source: str) -> list[str]:
    """``line: from module import _name`` for every import of another module's underscore name."""
    return [f"{node.lineno}: from {node.module} import {alias.name}"
            for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)
            for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_uses_another_objects_private_names(path: Path) -> None:
    own = OWN_INSTANCES.get(path.relative_to(PACKAGE).as_posix(), set())
    found = [hit for hit in private_accesses(path.read_text()) if hit.rsplit("._", 1)[-1] not in
             {name.lstrip("_") for name in THIRD_PARTY | own}]
    assert found + private_imports(path.read_text()) == [], f"{path.name} reaches into private names"


def test_the_rule_catches_what_it_should_and_nothing_else() -> None:
    # Each forbidden line is a shape the annotation modules used before db.py (e.g. admin.py called
    # ``self._store._transaction()`` and web_sessions.py set ``handle._web``); each allowed one is not.
    forbidden = (
        "store._read()\n"
        "self._store._transaction()\n"
        "admin._store\n"
        "handle._web = None\n"
        "make()._x\n"
    )
    allowed = (
        "class Own:\n    _cache = {}\n"
        "Own._cache\n"
        "self._conn\n"
        "cls._registry\n"
        "obj.__class__\n"
        "row._replace(grade=1)\n"
        "Judgment._fields\n"
        "store.db.read()\n"
    )
    assert private_accesses(forbidden) == [
        "1: store._read",
        "2: self._store._transaction",
        "3: admin._store",
        "4: handle._web",
        "5: make()._x",
    ]
    assert private_accesses(allowed) == []
