"""A config file for the defaults a user would otherwise repeat: ``sentret.toml``, else the
``[tool.sentret]`` table of a ``pyproject.toml``, in the working directory or the nearest folder above it
that has one (as ruff finds its settings; a ``pyproject.toml`` without the table is passed by). A flag on
the command line wins over the file (a repeatable one, such as ``--param``, replaces the file's list), and
the file over sentret's own defaults::

    index = "data/indexes/demo"        # every command that takes an index (a positional INDEX or --index)

    [search]                           # a table per command; its keys are the command's options
    model = "bm25f.v1"
    k = 20

    [support]
    models = ["bm25f.v1", "lm-2si.v1"] # a list, or the comma-separated text --models takes
    k = 100

    [learn.wikiqa]                     # a subcommand's table sits inside its command's
    learner = "linear"

The ``index`` of a file found above the working directory is read relative to the file's folder.
A key is an option's long name without the dashes (``n-process`` or ``n_process``). A file that is not
TOML, a table that names no command or a key that names no option of its command, and a value of the
wrong kind each give one message naming the file and the key.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentret_core.errors import SentretError

FILE_NAME = "sentret.toml"
PROJECT_FILE = "pyproject.toml"
INDEX_KEY = "index"


@dataclass(frozen=True)
class Config:
    """The table read and where it came from (``label`` names it in messages)."""

    path: Path
    label: str
    table: dict[str, Any]


def find_config(folder: Path | None = None) -> Config | None:
    """The config of ``folder`` (default: the working directory) or of the nearest folder above it that has
    one, or ``None`` when none has."""
    start = Path.cwd() if folder is None else folder
    for here in (start, *start.absolute().parents):
        found = _config_in(here)
        if found is not None:
            return found
    return None


def _config_in(folder: Path) -> Config | None:
    own = folder / FILE_NAME
    if own.is_file():
        return Config(own, FILE_NAME, _read(own, FILE_NAME))
    project = folder / PROJECT_FILE
    if not project.is_file():
        return None
    try:  # someone else's pyproject.toml that is not TOML is not sentret's to complain about
        tool = _read(project, PROJECT_FILE).get("tool", {})
    except SentretError:
        return None
    table = tool.get("sentret") if isinstance(tool, dict) else None
    if table is None:
        return None
    label = f"{PROJECT_FILE} [tool.sentret]"
    if not isinstance(table, dict):
        raise SentretError(f"{label}: expected a table of settings, got {type(table).__name__}")
    return Config(project, label, table)


def _read(path: Path, label: str) -> dict[str, Any]:
    from sentret_core.files import read_toml

    return read_toml(path, label)


def apply_config(parser: argparse.ArgumentParser, config: Config) -> list[str]:
    """Make the file's values ``parser``'s defaults; returns the settings applied, as ``[command] key``."""
    applied: list[str] = []
    table = dict(config.table)
    index = table.pop(INDEX_KEY, None)
    if index is not None:
        if not isinstance(index, str) or not index.strip():
            raise SentretError(f"{config.label}: {INDEX_KEY}: expected the path of an index folder as text, "
                               f"got {index!r}")
        if config.path.parent.absolute() != Path.cwd().absolute():  # found above: relative to the file
            index = str(config.path.parent / index)
        for name, command in _commands(parser):
            for action in command._actions:
                if action.dest == INDEX_KEY:
                    _index_default(action, index)
                    applied.append(f"[{name}] {INDEX_KEY}")
    _apply_tables(parser, table, config.label, [], applied)
    return applied


def _apply_tables(parser: argparse.ArgumentParser, table: dict[str, Any], label: str, path: list[str],
                  applied: list[str]) -> None:
    subcommands = _subcommands(parser)
    options = {o.lstrip("-").replace("-", "_"): a for a in parser._actions for o in a.option_strings
               if o.startswith("--") and a.dest not in ("help", "version")}
    where = f"[{'.'.join(path)}] " if path else ""
    for key, value in table.items():
        if key in subcommands and isinstance(value, dict):
            _apply_tables(subcommands[key], value, label, [*path, key], applied)
            continue
        action = options.get(key.replace("-", "_")) if path else None
        if action is None:
            raise SentretError(f"{label}: {where}{key}: {_unknown(key, path, subcommands, options)}")
        parser.set_defaults(**{action.dest: _value(action, value, f"{label}: {where}{key}")})
        if action.required:
            action.required = False
        if type(action) is argparse._AppendAction:
            action.__class__ = _ReplacingAppend
        applied.append(f"{where}{key}")


class _ReplacingAppend(argparse._AppendAction):
    """A repeatable option whose default a file gave: the command line's values replace the file's list
    rather than extend it, as every other flag wins over the file."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if getattr(namespace, self.dest, None) is self.default:  # the first time on this command line
            setattr(namespace, self.dest, [])
        super().__call__(parser, namespace, values, option_string)


def _unknown(key: str, path: list[str], subcommands: dict[str, Any], options: dict[str, Any]) -> str:
    if not path:
        names = ", ".join(sorted(subcommands))
        return f"not a setting: the top level takes '{INDEX_KEY}' and a table per command ({names})"
    command = " ".join(path)
    known = ", ".join(sorted(o.replace("_", "-") for o in options)) or "none"
    more = f"; its subcommands: {', '.join(sorted(subcommands))}" if subcommands else ""
    return f"`sentret {command}` has no option --{key} (its options: {known}{more})"


def _value(action: argparse.Action, value: Any, where: str) -> Any:
    """``value`` as the option would have parsed it from the command line, or a message naming ``where``."""
    if action.nargs == 0:  # a flag: --json, --force
        if not isinstance(value, bool):
            raise SentretError(f"{where}: expected true or false, got {value!r}")
        return value if action.const is not False else not value
    if isinstance(action, argparse._AppendAction):
        items = value if isinstance(value, list) else [value]
        return [_one(action, item, where) for item in items]
    if isinstance(value, list):  # --models a,b,c
        return _one(action, ",".join(str(item) for item in value), where)
    return _one(action, value, where)


def _one(action: argparse.Action, value: Any, where: str) -> Any:
    if isinstance(value, (dict, list)) or (isinstance(value, bool) and action.type is not None):
        raise SentretError(f"{where}: expected a single value, got {value!r}")
    convert = action.type if callable(action.type) else str
    try:
        converted = convert(str(value))
    except (ValueError, TypeError, argparse.ArgumentTypeError):
        kind = "an integer" if convert is int else "a number" if convert is float else "a valid value"
        raise SentretError(f"{where}: expected {kind}, got {value!r}") from None
    if action.choices is not None and converted not in action.choices:
        allowed = ", ".join(map(str, action.choices))
        raise SentretError(f"{where}: {value!r} is not one of {allowed}")
    return converted


def _index_default(action: argparse.Action, index: str) -> None:
    """An index argument defaults to the file's: a positional INDEX may then be left out."""
    action.default = index
    if action.option_strings:
        action.required = False
    elif action.nargs is None:
        action.nargs = "?"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command and subcommand, with its path: ``[("search", p), ("learn wikiqa", p), …]``."""
    found = []
    for name, sub in _subcommands(parser).items():
        path = f"{prefix} {name}".strip()
        found.append((path, sub))
        found.extend(_commands(sub, path))
    return found
