"""The one way pages draw text that users or the corpus control: queries, entities, sentences, titles,
annotator and session names, notes, file names, and error messages that quote any of them.

Streamlit renders every text element (``st.markdown``, ``st.caption``, ``st.subheader``, ``st.error``,
widget labels, …) as Markdown — with GitHub's extensions (bare URLs become links), LaTeX, emoji and
its own ``:colour[…]`` directives — so ``html.escape`` alone is not enough: ``![q](http://…)`` in
a query would still make the browser fetch that address. Two kinds of context, two helpers:

* :func:`md` for text inside Markdown: every character that starts a Markdown construct is
  backslash-escaped, and the sequences GFM turns into links by themselves (``http://``, ``www.``,
  ``name@host``) are broken with an invisible word joiner. The text shows as typed, on one line.
* :func:`html_text` for text inside HTML drawn with :func:`show_html`: HTML-escaped and on one
  line; :func:`show_html` makes sure the whole markup is one raw HTML block, which CommonMark
  never reads as Markdown.

Images and links are never made from user text: no page builds ``![…](…)``, ``[…](…)`` or
``<img>``/``<a>`` around it (a test checks that only this module escapes or allows HTML).
"""

from __future__ import annotations

import html
import re
from typing import Any

import streamlit as st

WORD_JOINER = "\u2060"  # zero width, no line break: "http:⁠//x" shows as "http://x" but is no link
# CommonMark lets any ASCII punctuation be backslash-escaped; these start a construct anywhere in a line
# (links, images, autolinks, raw HTML, character references, emphasis, code, tables, LaTeX, directives).
_INLINE = frozenset("\\`*_{}[]()<>#+!|~$&")
_NEWLINES = re.compile(r"\r\n?|\n")
_LINE_BREAKS = re.compile(r"\s*(?:\r\n?|\n|\u2028|\u2029|\x0b|\x0c|\x1c|\x1d|\x1e|\x85)\s*")
_LIST_START = re.compile(r"^(\d+)\.")  # "1." starts an ordered list at the start of a line
_COLON = re.compile(r":(?=[^\s\d])")  # "http://", ":red[…]", ":material/icon:", ":emoji:" (not "file:3:")
_WWW = re.compile(r"(?i)(www)(?=\.)")
# a block-level tag (CommonMark HTML block type 6) that starts a raw HTML block running to the next blank line
_BLOCK_START = re.compile(r"<(?:div|p|table|section|ul|ol|details|figure)[\s/>]")


def md(text: object) -> str:
    """``text`` for a Markdown string: it shows exactly as given (on one line), never as formatting,
    a link, an image, HTML, LaTeX or an icon."""
    line = _LINE_BREAKS.sub(" ", str(text)).strip()
    out = "".join("\\" + ch if ch in _INLINE else ch for ch in line)
    out = _LIST_START.sub(r"\1\\.", out)
    if out.startswith(("-", "=")):  # a bullet, a thematic break or a setext underline
        out = "\\" + out
    out = _COLON.sub(":" + WORD_JOINER, out)
    out = _WWW.sub(r"\1" + WORD_JOINER, out)
    return out.replace("@", "@" + WORD_JOINER)


def html_text(text: object) -> str:
    """``text`` for the inside of HTML drawn with :func:`show_html`: escaped, and on one line (a blank
    line would end the raw HTML block and let Markdown read what follows)."""
    return _NEWLINES.sub(" ", html.escape(str(text), quote=True))


def one_html_block(markup: str) -> str:
    """``markup`` as a single raw HTML block: on one line, and opened by a block-level tag."""
    line = _NEWLINES.sub(" ", markup)
    return line if _BLOCK_START.match(line) else f"<div>{line}</div>"


def show_html(markup: str, where: Any = None) -> None:
    """Draw ``markup`` — trusted tags around :func:`html_text`-escaped text — as HTML, never as Markdown.

    ``where``: a container (a column, say); the current one by default.
    """
    (where if where is not None else st).markdown(one_html_block(markup), unsafe_allow_html=True)
