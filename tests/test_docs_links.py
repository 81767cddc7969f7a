"""The developer docs point at things that exist: every relative link of docs/*.md and README.md
names a file (and, with ``#anchor``, a heading) of the repository, and every module path and test
name that docs/ quotes in backticks is in the repository today.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINKED = [*DOCS, ROOT / "README.md"]
SEARCHED = ("sentret_core", "tests", "benchmarks")
# files docs/extending.md writes as its worked example: they do not exist until a reader follows it
# the example files of docs/extending.md's recipes: the model's and the page's
EXAMPLES = {"sentret_core/models/coord.py", "tests/models/test_coord.py", "coord.py", "test_coord.py",
            "models/test_coord.py", "sentret_core/ui/pages/sizes.py", "tests/ui/test_app_sizes.py"}

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^[\w./-]+\.py$")
TEST_NAME = re.compile(r"^test_\w+$")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(doc: Path) -> set[str]:
    """The anchors of ``doc``'s headings (outside code blocks)."""
    text = FENCE.sub("", doc.read_text(encoding="utf-8"))
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def broken_links(doc: Path) -> list[str]:
    """The links of ``doc`` whose file or heading does not exist (web and mail links are not checked)."""
    text = doc.read_text(encoding="utf-8")
    found = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        where = (doc.parent / path).resolve() if path else doc
        if not where.exists() or (anchor and where.suffix == ".md" and anchor not in headings(where)):
            found.append(target)
    return found


def _python_files() -> list[str]:
    found = [p.relative_to(ROOT).as_posix() for top in SEARCHED for p in (ROOT / top).rglob("*.py")]
    return found + [p.name for p in ROOT.glob("*.py")]  # and the top level's: app.py, setup.py


def missing_paths(text: str, files: list[str]) -> list[str]:
    """Backticked ``*.py`` paths of ``text`` that no file of the repository ends with (a path may be
    given from the repository root, or shortened to its last parts: ``bm25/pruning.py``)."""
    quoted = {token for token in CODE.findall(text) if PATH.match(token)}
    return sorted(
        token for token in quoted - EXAMPLES
        if not any(f == token or f.endswith("/" + token) for f in files)
    )


def missing_tests(text: str, tests: str) -> list[str]:
    """Backticked test names of ``text`` that no test file defines."""
    names = {token for token in CODE.findall(text) if TEST_NAME.match(token)}
    return sorted(name for name in names if f"def {name}(" not in tests)


def test_the_checks_find_what_is_broken(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    (tmp_path / "b.md").write_text("# Notation F_q(s)\n", encoding="utf-8")
    doc.write_text("[ok](b.md) [ok](b.md#notation-f_qs) [no](c.md) [no](b.md#other) [web](https://x.org)\n",
                   encoding="utf-8")
    assert broken_links(doc) == ["c.md", "b.md#other"]
    doc.write_text("[no](c.md#notation)\n", encoding="utf-8")
    assert broken_links(doc) == ["c.md#notation"]
    files = ["sentret_core/models/bm25/scorer.py", "tests/models/test_x.py"]
    text = "`bm25/scorer.py` `scorer.py` `sentret_core/models/bm25/scorer.py` `m25/scorer.py` `lm/scorer.py` `coord.py`"
    assert missing_paths(text, files) == ["lm/scorer.py", "m25/scorer.py"]
    assert missing_tests("`test_here` `test_gone`", "def test_here() -> None:") == ["test_gone"]


@pytest.mark.parametrize("doc", LINKED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_names_an_existing_file(doc: Path) -> None:
    assert broken_links(doc) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_module_path_and_test_named_in_docs_exists(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert missing_paths(text, _python_files()) == []
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py"))
    assert missing_tests(text, tests) == []


def test_the_developer_docs_exist() -> None:
    assert {p.name for p in DOCS} >= {"architecture.md", "extending.md", "spec.md"}
