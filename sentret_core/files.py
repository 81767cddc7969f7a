"""Writing a text file so that a failed write leaves any old file as it was, never half of the new one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

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
