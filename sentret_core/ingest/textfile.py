"""Reading one text file line by line in the encoding asked for: binary files refused, byte-order marks honoured.

The first block is sniffed from the same open file that is then decoded (a named pipe works too). A
NUL character in it means a binary file; for UTF-16 and UTF-32 that is a NUL *character*, not a zero
byte, since every ASCII letter has one. A leading byte-order mark is never part of the text.
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterator
from pathlib import Path

from sentret_core.errors import CorpusError

SNIFF_BYTES = 8192
_WIDE = ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be")
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def text_lines(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """``(line number, line)`` pairs of ``path`` decoded with ``encoding`` (newlines kept)."""
    codec = _codec(encoding)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    with handle:
        head = handle.peek(SNIFF_BYTES)[:SNIFF_BYTES]
        codec = _check_head(path, head, encoding, codec)
        text = io.TextIOWrapper(handle, encoding=codec, newline="")
        try:
            for number, line in enumerate(text, start=1):
                yield number, line[1:] if number == 1 and line.startswith("\ufeff") else line
        except UnicodeDecodeError as err:
            raise decode_error(path, encoding, err) from None


def decode_error(path: Path, encoding: str, err: UnicodeDecodeError) -> CorpusError:
    return CorpusError(
        f"{path}: not valid {encoding} text (byte {err.start}); "
        "pass --encoding with the file's encoding, e.g. --encoding latin-1"
    )


def _codec(encoding: str) -> str:
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise CorpusError(f"unknown encoding {encoding!r}") from None
    return "utf-8-sig" if name == "utf-8" else name


def _check_head(path: Path, head: bytes, encoding: str, codec: str) -> str:
    """The codec to decode ``path`` with, after refusing a binary head; UTF-16 byte order from its BOM."""
    if codec not in _WIDE:
        if head.startswith(_UTF16_BOMS) and codec == "utf-8-sig":
            raise CorpusError(
                f"{path}: UTF-16 text (it starts with a byte-order mark), not utf-8; pass --encoding utf-16"
            )
        if b"\x00" in head:
            raise CorpusError(f"{path}: looks like a binary file, not text")
        return codec
    own_bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(codec)
    if own_bom is not None and head.startswith(_UTF16_BOMS) and not head.startswith(own_bom):
        raise CorpusError(f"{path}: its byte-order mark says the other byte order; pass --encoding utf-16")
    if codec == "utf-16" and not head.startswith(_UTF16_BOMS):  # Python's decoder needs a BOM here
        codec = "utf-16-be" if _big_endian(head) else "utf-16-le"
    if codec == "utf-32" and not head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        codec = "utf-32-le"
    decoded = codecs.getincrementaldecoder(codec)(errors="replace").decode(head)
    if "\x00" in decoded:
        raise CorpusError(f"{path}: looks like a binary file, not {encoding} text")
    return codec


def _big_endian(head: bytes) -> bool:
    """UTF-16 without a BOM whose ASCII characters put their zero byte first."""
    even, odd = head[0::2], head[1::2]
    return even.count(0) > len(even) // 2 and odd.count(0) == 0
