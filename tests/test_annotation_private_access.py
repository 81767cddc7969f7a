"""No module of sentret_core/annotation/ reaches into another object's underscore names.

The modules share the database through public names (``sentret_core/annotation/db.py``:
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

ANNOTATION = Path(__file__).resolve().parents[1] / "sentret_core" / "annotation"
NAMED_TUPLE_API = {"_asdict", "_replace", "_fields", "_make", "_field_defaults"}


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


@pytest.mark.parametrize("path", sorted(ANNOTATION.glob("*.py")), ids=lambda p: p.name)
def test_no_module_uses_another_objects_private_names(path: Path) -> None:
    assert private_accesses(path.read_text()) == [], f"{path.name} reaches into private names"


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
