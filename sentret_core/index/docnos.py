"""Sentence ids as TREC document ids (docnos): ``<document id>-<position>``.

A TREC docno has no whitespace, so the document id's whitespace, ``%`` and non-ASCII characters are
percent-encoded (UTF-8, RFC 3986); a docno reads back to exactly one sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from sentret_core.errors import SentretError

if TYPE_CHECKING:  # the command line imports docno() without loading the index machinery
    from sentret_core.index.reader import Index

_KEEP = "!\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~"


def docno(document: str, position: int) -> str:
    """The docno of the sentence at ``position`` (from 0) of ``document``."""
    return f"{quote(document, safe=_KEEP)}-{position}"


def sentence_docnos(index: Index) -> list[str]:
    """The docno of every sentence of ``index``, by sentence id (built once per loaded index: a run or a
    PyTerrier pipeline asks for them at every query)."""
    def build() -> list[str]:
        documents = list(index.documents["id"])
        return [docno(str(documents[d]), int(p)) for d, p in zip(index.sent_doc.tolist(), index.sent_pos.tolist())]

    names: list[str] = index.cache.get("docnos/names", build)
    return names


def _by_docno(index: Index) -> dict[str, int]:
    def build() -> dict[str, int]:
        return {name: sentence for sentence, name in enumerate(sentence_docnos(index))}

    known: dict[str, int] = index.cache.get("docnos/ids", build)
    return known


def sentence_ids(index: Index, docnos: list[str]) -> list[int]:
    """The sentence id of each docno; a docno of no sentence of ``index`` is refused by name."""
    known = _by_docno(index)
    missing = [d for d in docnos if d not in known]
    if missing:
        shown = ", ".join(repr(d) for d in missing[:5])
        raise SentretError(f"{len(missing)} docno(s) name no sentence of the index {index.path}: {shown} "
                           "(sentret's docnos are <document id>-<position>)")
    return [known[d] for d in docnos]
