"""Text files, safely: a write that fails leaves any old file as it was (never half of the new one), and a
TOML file that cannot be read is one message naming it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from sentret_core.errors import SentretError


def write_text_atomic(path: str | os.PathLike[str], text: str, what: str = "") -> None:
    """Write ``text`` (UTF-8, newlines as given) to a temporary file beside ``path``, then rename it into place;
    an OSError is one SentretError naming the file (and ``what`` it is: "run file", …)."""
    target = Path(path)
    if target.is_dir():
        raise SentretError(f"{path}: is a folder; name a file to write")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            os.replace(tmp, target)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as error:
        raise SentretError(f"cannot write {what + ' ' if what else ''}{path}: {error.strerror or error}") from None


def read_toml(path: Path, label: str) -> dict[str, Any]:
    """The TOML file at ``path``; one SentretError starting with ``label`` when it is not UTF-8 TOML."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise SentretError(f"{label}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as err:
        raise SentretError(f"{label}: not valid TOML: {err}") from None
    except RecursionError:  # the parser recurses per nested array or table: 5,000 levels exhaust the stack
        raise SentretError(f"{label}: nested too deeply to be a settings file") from None
