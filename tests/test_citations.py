"""Nothing in the repository cites a document it does not contain.

Code, tests and docs cite papers (authors, venue, year, equation), the repository's own ``docs/``, or
a test by name — never a numbered source paper kept elsewhere ("seed 002"), an outside spec or design
note ("SPEC", "DESIGN.md"), a tracker's "issue 29" / "failure 3", or a brief. Paths to benchmark
*data* (``../shared/data``, the default location of WikiQA, TrecQA, …) are settings, not citations,
and are allowed; so is a name that merely holds digits after "seed" (``seed001_rows.json``, ``/tmp/run-seed001``).

A path of the repository named in prose must exist, unless ``NAMED_BUT_NOT_IN_THE_REPOSITORY`` says
why it need not (a worked example's new file, a benchmark's output).

On failure the test lists every offending ``file:line``. ``NOT_YET_SWEPT`` holds the files whose
owners have not swept them yet; empty it as they are swept. ``.venv/bin/python tests/test_citations.py``
prints what each entry still holds (an entry at 0 can leave the list).
"""

from __future__ import annotations

import re
from pathlib import Path


def _repository_root() -> Path:
    for folder in Path(__file__).resolve().parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    raise RuntimeError("no pyproject.toml above tests/")


ROOT = _repository_root()
SCANNED = ("sentret_core", "tests", "benchmarks", "docs", "README.md", "CHANGELOG.md")
SUFFIXES = {".py", ".md", ".toml", ".txt"}

# Files (or folders, ending in "/") still being swept by their owners; relative to the repository root.
NOT_YET_SWEPT: tuple[str, ...] = ()

# Documents being written now: cited already, and checked to exist once they leave this list.
STILL_BEING_WRITTEN: tuple[str, ...] = ()

# Paths named on purpose although no such file is in the repository, each with the reason.
NAMED_BUT_NOT_IN_THE_REPOSITORY = {
    # docs/extending.md's worked example adds a model in these files; tests/test_docs_links.py exempts them
    "sentret_core/models/coord.py": "the model a newcomer adds in docs/extending.md",
    "tests/models/test_coord.py": "its tests in docs/extending.md",
    "sentret_core/ui/pages/sizes.py": "the page a newcomer adds in docs/extending.md",
    "tests/ui/test_app_sizes.py": "its tests in docs/extending.md",
    # a placeholder: docs/extending.md's "run one file" and tests/test_docs_links.py's checker self-test
    "tests/models/test_x.py": "any test file",
    # written by running benchmarks/quality.py, not kept in the repository
    "benchmarks/out/quality.md": "the report benchmarks/quality.py writes",
}

OUTSIDE_CITATIONS = {
    "a source paper by its number": re.compile(r"(?<![\w-])seeds? ?0\d\d(?!\w)", re.IGNORECASE),
    "an outside spec or design note": re.compile(r"\bSPEC\b|\bDESIGN\.md\b"),
    "a tracker's issue or failure": re.compile(r"\b(?:issues?|failures?) ?#?\d+", re.IGNORECASE),
    "a brief or its lead": re.compile(r"\bthe (?:issue|brief|lead)\b|\bdone[- ]when\b", re.IGNORECASE),
    "a document beside the repository": re.compile(
        r"/work/shared|shared/seeds|\.\./shared(?!/data\b)|shared/data/README"
    ),
}


def _scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        target = ROOT / name
        if target.is_file():
            files.append(target)
        elif target.is_dir():
            files.extend(p for p in sorted(target.rglob("*")) if p.is_file() and p.suffix in SUFFIXES)
    this_file = Path(__file__).resolve()
    return [p for p in files if p.resolve() != this_file and "__pycache__" not in p.parts]


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _not_yet_swept(relative: str) -> bool:
    return any(relative == entry or (entry.endswith("/") and relative.startswith(entry)) for entry in NOT_YET_SWEPT)


def outside_citations(path: Path) -> list[str]:
    """``file:line: kind: text`` for every line of ``path`` that cites a document outside the repository."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for kind, pattern in OUTSIDE_CITATIONS.items():
            if pattern.search(line):
                found.append(f"{_relative(path)}:{number}: {kind}: {line.strip()[:120]}")
                break
    return found


def test_the_patterns_catch_what_they_are_meant_to_and_spare_data_paths() -> None:
    def cited(text: str) -> bool:
        return any(p.search(text) for p in OUTSIDE_CITATIONS.values())

    for bad in ("seed 002 eq. 9", "Seed 001's rows", "seeds 000/003", "SPEC \"Evaluation\"", "see SPEC.md",
                "DESIGN.md", "(issue 29)", "Issue 13, failure 2", "issues 12 and 24", "the brief's anchors",
                "Done-when", "../shared/SPEC.md", "../shared/data/README.md"):
        assert cited(bad), bad
    for fine in ("--data-root ../shared/data", "seed001_rows.json", "/tmp/run-seed001",
                 "SPECIAL = st.sampled_from", "Blanco & Zaragoza, SIGIR 2010, eq. 9", "docs/spec.md",
                 "the first two failed attempts", "random seed 0"):
        assert not cited(fine), fine


def test_nothing_cites_a_document_outside_the_repository() -> None:
    offending = [
        hit
        for path in _scanned_files()
        if not _not_yet_swept(_relative(path))
        for hit in outside_citations(path)
    ]
    assert not offending, (
        f"{len(offending)} line(s) cite documents outside the repository; cite the paper (authors, venue, "
        "year, equation), docs/, or a test by name instead:\n" + "\n".join(offending)
    )


# a path inside the repository named in prose: docs/spec.md, tests/test_x.py, benchmarks/quality.py, …
REPOSITORY_PATH = re.compile(r"(?<![\w./-])((?:docs|tests|benchmarks|sentret_core)/[\w./-]*\w\.(?:md|py|json|toml))")


def _repository_paths_named() -> list[tuple[str, int, str]]:
    """``(file, line, path)`` for every repository path named in a swept file."""
    return [
        (_relative(path), number, match.group(1))
        for path in _scanned_files()
        if not _not_yet_swept(_relative(path))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for match in REPOSITORY_PATH.finditer(line)
    ]


def test_every_repository_file_cited_exists() -> None:
    # the other half of citing inside the repository: the file named must be there
    missing = [
        f"{file}:{number}: {named}"
        for file, number, named in _repository_paths_named()
        if not (ROOT / named).exists()
        and named not in STILL_BEING_WRITTEN
        and named not in NAMED_BUT_NOT_IN_THE_REPOSITORY
    ]
    assert not missing, "files cited but not in the repository:\n" + "\n".join(missing)


def test_every_path_exempted_as_absent_is_still_named() -> None:
    # an exemption nothing needs any more would let a later, mistaken mention of that path pass unseen
    named = {path for _, _, path in _repository_paths_named()}
    unused = sorted(set(NAMED_BUT_NOT_IN_THE_REPOSITORY) - named)
    assert not unused, f"NAMED_BUT_NOT_IN_THE_REPOSITORY lists paths no file names any more: {unused}"


def test_every_allow_listed_path_exists() -> None:
    # a file moved or renamed while on the list would escape the sweep unnoticed
    missing = [entry for entry in NOT_YET_SWEPT if not (ROOT / entry).exists()]
    assert not missing, f"NOT_YET_SWEPT names paths that do not exist (moved? sweep the new path): {missing}"


def allow_list_counts() -> dict[str, int]:
    """Lines citing outside documents per ``NOT_YET_SWEPT`` entry: an entry at 0 can leave the list."""
    counts = dict.fromkeys(NOT_YET_SWEPT, 0)
    for path in _scanned_files():
        relative = _relative(path)
        for entry in NOT_YET_SWEPT:
            if relative == entry or (entry.endswith("/") and relative.startswith(entry)):
                counts[entry] += len(outside_citations(path))
    return counts


if __name__ == "__main__":
    for entry, count in allow_list_counts().items():
        print(f"{count:5d}  {entry}")
