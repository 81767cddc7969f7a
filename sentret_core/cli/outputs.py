"""The one rule for what a command writes: no output ever replaces an input or a file sentret did not write.

Every command that writes declares its files (:func:`declare`): a function of the parsed arguments that
lists its inputs and every path it will write, derived names included (``--run-out runs.trec`` writes
``runs.bm25.v1.trec``). :func:`check_files` runs on that list before the command starts
(:func:`sentret_core.cli.main._run`), so nothing is read or written until every output is known safe:

- no output is an input, lies inside one or holds one (paths resolved: ``..``, symbolic and hard links
  count; a database's ``-wal``/``-shm``/``-journal`` files count as the database) — except where it lives
  inside an input by design (an artefact inside its index) or updates it in place (``sentret add``);
- no two outputs are one file;
- an output that exists is replaced only with ``--force``, and then only when it is recognisably of the
  kind the command writes (a run file, qrels, an index folder, an artefact, …), never a user's other file.

The library's builders check their own targets too (:mod:`sentret_core.ingest.targets`); this is the
command line's single gate, which the property test ``tests/cli/test_output_rule.py`` drives.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Kind = Literal["run", "qrels", "csv", "jsonl", "topics", "index", "shards", "artefact", "ranker", "cache",
               "database"]
WHAT: dict[str, str] = {
    "run": "a TREC run", "qrels": "TREC qrels", "csv": "a judgments CSV export",
    "jsonl": "a judgments JSONL export", "topics": "a topics file", "index": "an index",
    "shards": "a shards folder", "artefact": "a trained artefact", "ranker": "a learned ranker",
    "cache": "a benchmark cache", "database": "a judgments database",
}
_SIDECARS = ("-wal", "-shm", "-journal")  # SQLite's files beside a database: writing one corrupts it
_SQLITE = b"SQLite format 3\x00"  # the first bytes of every SQLite database file
_HEAD = 65536  # bytes of an existing file read to recognise its kind


@dataclass(frozen=True)
class Output:
    """One path a command writes: the option that names it, the name as typed, and what it is."""

    option: str
    typed: str
    path: Path
    kind: Kind
    home: str | None = None  # the input it lives in (an artefact's index) or updates (``sentret add``)


@dataclass(frozen=True)
class Files:
    """What a command reads and writes; ``None`` and ``-`` (standard input or output) are skipped."""

    inputs: Sequence[str | None]
    outputs: Sequence[Output]
    force: bool = False
    databases: Sequence[str] = field(default_factory=tuple)  # inputs whose journal files count as them


Declaration = Callable[[argparse.Namespace], Files]


def declare(parser: argparse.ArgumentParser, files: Declaration) -> None:
    """Say what the command of ``parser`` reads and writes; :func:`check_files` enforces the rule on it."""
    parser.set_defaults(files=files)


def output(option: str, typed: str | None, kind: Kind, path: str | os.PathLike[str] | None = None,
           home: str | None = None) -> list[Output]:
    """``[Output]`` for a path given on the command line, ``[]`` when the option was not given or is ``-``."""
    if typed is None or typed == "-":
        return []
    return [Output(option, typed, Path(typed if path is None else path), kind, home)]


def check_files(files: Files) -> None:
    """Refuse, with one message and before anything is written, any output the rule forbids."""
    from sentret_core.errors import SentretError

    seen: dict[str, str] = {}
    for out in files.outputs:
        said = f"{out.option} {out.typed}" + (f" writes {out.path}" if str(out.path) != out.typed else "")
        for given in files.inputs:
            if given is not None and given != "-" and given != out.home:
                _check_apart(out, said, given, given in files.databases)
        if out.home is not None:
            _check_home(out, said, out.home)
        where = os.path.realpath(out.path)
        if where in seen:
            raise SentretError(f"{out.option} {out.typed} and {seen[where]} would both write {out.path}; nothing "
                               "was written. "
                               "Choose another name for one of them.")
        seen[where] = f"{out.option} {out.typed}"
        if out.kind == "database" or (out.home is not None and Path(out.home) == out.path):
            _check_updated(out, said)
        elif out.kind != "cache":
            _check_existing(out, said, files.force)


def _check_apart(out: Output, said: str, given: str, database: bool) -> None:
    from sentret_core.errors import SentretError

    target, source = _resolved(out.path), _resolved(Path(given))
    written = _with_journals(target) if out.kind == "database" else {target}
    read = _with_journals(source) if database else {source}
    if written & read or _same_file(out.path, Path(given)):
        problem = "is"
    elif out.kind == "cache":  # a cache only adds folders of its own: it may hold or sit beside anything
        return
    elif source in target.parents:
        problem = "lies inside"
    elif target in source.parents:
        problem = "holds"
    else:
        return
    raise SentretError(f"{said}: that {problem} {given}, which this command reads; writing there would "
                       "destroy it, so nothing was written. Choose another place.")


def _with_journals(path: Path) -> set[Path]:
    return {path, *(path.with_name(path.name + end) for end in _SIDECARS)}


def _check_home(out: Output, said: str, home: str) -> None:
    """An output kept inside an input (an artefact in its index) must stay inside it, not replace it."""
    from sentret_core.errors import SentretError

    target, source = _resolved(out.path), _resolved(Path(home))
    if target != source and source not in target.parents:
        raise SentretError(f"{said}: leaves {home}, which it belongs in; nothing was written")


def _check_existing(out: Output, said: str, force: bool) -> None:
    from sentret_core.errors import SentretError

    path = out.path
    if not os.path.lexists(path):
        return
    what = WHAT[out.kind]
    if out.kind in ("index", "shards"):
        from sentret_core.index.format import is_index
        from sentret_core.ingest.targets import check_target, is_shards

        check_target(path, force, is_index if out.kind == "index" else is_shards, what)
        return
    if not force:
        trained = _artefact_kind(path) if out.kind in ("artefact", "ranker") else None
        said += f" ({trained})" if trained else ""
        raise SentretError(f"{said}, which exists; nothing was written. Add --force to replace it (if it is "
                           f"{what}), or choose another name.")
    if path.is_symlink() or not _is_own(path, out.kind):
        raise SentretError(f"{said}, which exists and is not {what}; --force replaces only {what}, so nothing "
                           "was written. Move it, or choose another name.")


def _check_updated(out: Output, said: str) -> None:
    """An output updated in place (a database, ``sentret add``'s index) must already be of its kind, if it exists."""
    from sentret_core.errors import SentretError

    if os.path.lexists(out.path) and not _is_own(out.path, out.kind):
        raise SentretError(f"{said} is not {WHAT[out.kind]}; nothing was changed. Name {WHAT[out.kind]}, or a new "
                           "file.")


def _is_own(path: Path, kind: Kind) -> bool:
    """Whether the existing ``path`` is recognisably of ``kind`` (an empty file is: nothing is lost)."""
    if kind == "index":
        from sentret_core.index.format import is_index

        return path.is_dir() and is_index(path)
    if kind == "database":
        try:
            with open(path, "rb") as handle:
                return handle.read(len(_SQLITE)) in (_SQLITE, b"")
        except OSError:
            return False
    if kind == "artefact":  # a folder of the index's artefacts folder, which only sentret writes (damaged or not)
        return path.is_dir()
    if kind == "ranker":
        return path.is_dir() and _artefact_kind(path) == "ranker"
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    lines = head.splitlines()[:-1] if len(head) == _HEAD else head.splitlines()  # the last may be cut short
    return not head.strip() or (bool(lines) and RECOGNISERS[kind](lines))


def _artefact_kind(folder: Path) -> str | None:
    """The kind an artefact folder's record names, or None for a folder that is not an artefact."""
    from sentret_core.index.artefacts import META

    try:
        record = json.loads((folder / META).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    kind = record.get("kind") if isinstance(record, dict) else None
    return kind if isinstance(kind, str) else None


def _qrels(lines: list[str]) -> bool:
    def line_ok(line: str) -> bool:
        fields = line.split()
        return len(fields) == 4 and fields[3].lstrip("-").isdigit()

    return all(line_ok(line) for line in lines if line.strip())


def _run(lines: list[str]) -> bool:
    def line_ok(line: str) -> bool:
        fields = line.split()
        try:
            return len(fields) == 6 and int(fields[3]) >= 0 and float(fields[4]) == float(fields[4])
        except ValueError:
            return False

    return all(line_ok(line) for line in lines if line.strip())


def _csv(lines: list[str]) -> bool:
    from sentret_core.annotation.records import JUDGMENT_FIELDS

    return lines[0].strip() == ",".join(JUDGMENT_FIELDS)


def _jsonl(lines: list[str]) -> bool:
    from sentret_core.annotation.records import JUDGMENT_FIELDS

    try:
        first = json.loads(lines[0])
    except (ValueError, RecursionError):
        return False
    return isinstance(first, dict) and set(first) == set(JUDGMENT_FIELDS)


def _topics(lines: list[str]) -> bool:
    return all(len(line.split("\t")) in (2, 3) for line in lines if line.strip())


RECOGNISERS: dict[str, Callable[[list[str]], bool]] = {"run": _run, "qrels": _qrels, "csv": _csv, "jsonl": _jsonl,
                                                       "topics": _topics}


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symbolic-link loop: compared as written
        return Path(os.path.abspath(path))


def _same_file(a: Path, b: Path) -> bool:
    """Hard links (and anything else) that are one file on disk."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def inputs_of(args: argparse.Namespace, *names: str) -> list[str | None]:
    """The values of the options ``names`` of ``args`` (lists flattened), as inputs."""
    found: list[str | None] = []
    for name in names:
        value: Any = getattr(args, name, None)
        found.extend(value if isinstance(value, list) else [value])
    return found
