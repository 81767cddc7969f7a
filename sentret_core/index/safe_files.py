"""Reading what a manifest names without trusting it: a manifest can be rewritten with
consistent checksums ("resealed"), so every name in it is checked before anything opens the file.

* a name a manifest lists must be a relative path inside its folder: no ``..``, not absolute, no
  backslash or NUL, and once resolved (symlinks followed) still inside the folder;
* what it names must be a regular file (``/dev/zero`` or a FIFO would make a hash never finish);
* a JSON manifest is read only when it is a regular file of at most :data:`MAX_MANIFEST_BYTES`,
  and only when its nesting is at most :data:`MAX_JSON_DEPTH` deep (Python's parser recurses);
* the spaCy model a manifest names must be an installed spaCy pipeline, found without importing it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

MAX_MANIFEST_BYTES = 16 * 1024 * 1024  # a demo index's manifest is a few KiB
MAX_JSON_DEPTH = 32  # sentret's manifests nest 4 deep
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
# a spaCy pipeline is loaded by package name: a Python identifier (a path would load anything)
_PACKAGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


class UnsafeFile(ValueError):
    """What is wrong with a file a manifest names, in words."""


def member_name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a file of a folder's manifest (syntax only, no file system), or None."""
    if not isinstance(name, str) or not name:
        return f"{name!r} is not a file name"
    if "\x00" in name or "\\" in name or len(name) > 255:
        return f"{name!r} is not a file name of an index"
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        return f"{name!r} names a file outside the folder"
    return None


def member(folder: Path, name: object) -> Path:
    """The regular file ``name`` inside ``folder``; :class:`UnsafeFile` if it is not one."""
    problem = member_name_problem(name)
    if problem is not None:
        raise UnsafeFile(problem)
    path = folder / str(name)
    try:
        inside = path.resolve().is_relative_to(folder.resolve())
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(str(path)) from None
    except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop
        raise UnsafeFile(f"{name!r} cannot be read ({err})") from None
    if not inside:
        raise UnsafeFile(f"{name!r} is a link to a file outside the folder")
    if not stat.S_ISREG(mode):
        raise UnsafeFile(f"{name!r} is not a regular file (a device, a pipe or a folder)")
    return path


def json_depth(data: bytes) -> int:
    """How deep the arrays and objects of the JSON text ``data`` nest (strings skipped)."""
    bare = np.frombuffer(_STRINGS.sub(b'""', data), dtype=np.uint8)
    steps = np.zeros(len(bare), dtype=np.int64)
    steps[(bare == ord("[")) | (bare == ord("{"))] = 1
    steps[(bare == ord("]")) | (bare == ord("}"))] = -1
    return int(np.cumsum(steps).max(initial=0))


def read_json(file: Path, *, max_bytes: int = MAX_MANIFEST_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The parsed JSON of ``file``: FileNotFoundError if there is none, :class:`UnsafeFile` if it is
    not a regular file, too large, too deeply nested or not JSON."""
    try:
        mode, size = os.stat(file).st_mode, os.stat(file).st_size
    except FileNotFoundError:
        raise
    except (OSError, RuntimeError) as err:
        raise UnsafeFile(f"cannot be read ({err})") from None
    if not stat.S_ISREG(mode):
        raise UnsafeFile("is not a regular file")
    if size > max_bytes:
        raise UnsafeFile(f"is {size:,} bytes, more than the {max_bytes:,} a manifest may have")
    try:
        with file.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as err:
        raise UnsafeFile(f"cannot be read ({err.strerror})") from None
    depth = json_depth(data)
    if depth > max_depth:
        raise UnsafeFile(f"nests {depth:,} levels deep, more than the {max_depth} a manifest may")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as err:
        raise UnsafeFile(f"is not JSON ({type(err).__name__})") from None


def spacy_model_problem(model: object) -> str | None:
    """Why ``model`` (a manifest's spaCy model) is not an installed spaCy pipeline, or None.

    Checked before ``spacy.load``, which calls the package's ``load`` with spaCy's own arguments:
    the package must have a ``meta.json`` and a pipeline folder with a ``config.cfg``, as every
    packaged spaCy pipeline does. A package that is not installed is no problem here: loading it
    says so clearly.
    """
    if isinstance(model, str) and ("/" in model or os.sep in model):  # a pipeline saved in a folder
        folder = Path(model)
        if folder.is_dir() and (folder / "meta.json").is_file() and (folder / "config.cfg").is_file():
            return None
        return f"its spaCy model {model[:80]!r} is not a folder holding a spaCy pipeline (meta.json, config.cfg)"
    if not isinstance(model, str) or not _PACKAGE.fullmatch(model):
        return f"its spaCy model {str(model)[:80]!r} is not the name of a spaCy pipeline package"
    try:
        spec = importlib.util.find_spec(model)  # a top-level name: found, not imported
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    places = [Path(p) for p in (spec.submodule_search_locations or [])]
    is_pipeline = any((place / "meta.json").is_file() and any(place.glob("*/config.cfg")) for place in places)
    if not is_pipeline:
        return f"its spaCy model {model!r} is an installed package but not a spaCy pipeline"
    return None
