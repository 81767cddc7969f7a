"""Reading one text file line by line in the encoding asked for: binary files refused, byte-order marks honoured.

The first block is sniffed from the same open file that is then decoded. A NUL character means a
binary file, in the first block or on any later line; for UTF-16 and UTF-32 that is a NUL *character*,
not a zero byte, since every ASCII letter has one. A leading byte-order mark is never part of the text.
A named pipe works too (process substitution, ``<(zcat docs.gz)``), but one that nothing writes to is
refused after a bounded wait, never read forever; devices and sockets are refused. ``-`` is standard
input, and a gzip file (by its magic bytes, whatever its name) is read decompressed.
"""

from __future__ import annotations

import codecs
import functools
import gzip
import io
import os
import select
import stat
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

from sentret_core.errors import CorpusError

STDIN = "-"  # a corpus or topics file read from standard input
GZIP_MAGIC = b"\x1f\x8b"
SNIFF_BYTES = 8192
PIPE_WAIT_S = 10.0  # how long a named pipe may stay silent before it is refused
_WIDE = ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be")
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def text_lines(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """``(line number, line)`` pairs of ``path`` decoded with ``encoding`` (newlines kept)."""
    codec = check_encoding(encoding)
    try:
        handle = opened(path)
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    with handle:
        try:
            head = handle.peek(SNIFF_BYTES)[:SNIFF_BYTES]
            codec = _check_head(path, head, encoding, codec)
            text = io.TextIOWrapper(handle, encoding=codec, newline="")
            for number, line in enumerate(text, start=1):
                if "\x00" in line:
                    raise CorpusError(f"{path}, line {number}: holds a NUL character: a binary file, not text")
                yield number, line[1:] if number == 1 and line.startswith("\ufeff") else line
        except UnicodeDecodeError as err:
            raise decode_error(path, encoding, err) from None
        except (gzip.BadGzipFile, EOFError, zlib.error) as err:
            raise CorpusError(f"{path}: a damaged or cut-short gzip file ({err or type(err).__name__})") from None


def opened(path: Path) -> io.BufferedReader | gzip.GzipFile:
    """``path`` (or standard input, ``-``) as bytes to read, decompressed when it is gzip."""
    raw = _open(path)
    if raw.peek(len(GZIP_MAGIC))[: len(GZIP_MAGIC)] != GZIP_MAGIC:
        return raw
    return _Gunzipped(raw)


class _Gunzipped(gzip.GzipFile):
    """A gzip stream that closes the file under it too (``GzipFile(fileobj=…)`` leaves it open)."""

    def __init__(self, raw: io.BufferedReader) -> None:
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw

    def close(self) -> None:
        super().close()
        self._raw.close()


class _Unclosed(io.BufferedReader):
    """Standard input: a reader's ``with`` must not close it (a sniffing peek and the read share it)."""

    def close(self) -> None:
        pass


@functools.cache
def standard_input() -> _Unclosed:
    """Standard input's bytes, opened once per process: what a format sniff peeks at, the reader then reads."""
    return _Unclosed(io.FileIO(os.dup(sys.stdin.fileno()), "rb"))


def _open(path: Path) -> io.BufferedReader:
    """``path`` opened for reading: a regular file, standard input, or a named pipe something writes to within
    :data:`PIPE_WAIT_S`."""
    if str(path) == STDIN:
        return standard_input()
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return path.open("rb")
    if not stat.S_ISFIFO(mode):
        raise CorpusError(f"{path}: not a file (a device, socket or folder); name a text file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opening a pipe with no writer would block forever
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    if not poll.poll(PIPE_WAIT_S * 1000):
        os.close(fd)
        raise CorpusError(f"{path}: a named pipe that nothing wrote to in {PIPE_WAIT_S:.0f} s; start its writer first")
    os.set_blocking(fd, True)
    return open(fd, "rb")  # the caller closes it


def decode_error(path: Path, encoding: str, err: UnicodeDecodeError) -> CorpusError:
    return CorpusError(
        f"{path}: not valid {encoding} text (byte {err.start}); "
        "pass --encoding with the file's encoding, e.g. --encoding latin-1"
    )


def check_encoding(encoding: str) -> str:
    """The codec for ``encoding``, a text encoding (``hex`` or ``rot13`` are codecs, but not of text)."""
    if not isinstance(encoding, str) or not encoding:
        raise CorpusError(f"encoding={encoding!r}: must name a text encoding such as utf-8 or latin-1",
                          arguments=("encoding",))
    try:
        name = codecs.lookup(encoding).name
        "".encode(name)  # LookupError for a codec that is not a text encoding
    except (LookupError, ValueError):
        raise CorpusError(f"unknown text encoding {encoding!r}; use e.g. utf-8, utf-16 or latin-1") from None
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
