"""The one helper for user- and corpus-controlled text (sentret_core.ui.text): Markdown that stays text,
HTML that stays one escaped block, and every page drawing such text through it.

Rendering is checked with markdown-it-py, a CommonMark reference implementation (Streamlit's own
renderer, react-markdown with remark-gfm, runs in the browser: tests/browser/test_safety.py).
GFM's *literal* autolinks (bare ``http://``, ``www.``, e-mail addresses), which markdown-it-py
does not make, are checked against the patterns remark-gfm uses (mdast-util-gfm-autolink-literal).
"""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from sentret_core import Index
from sentret_core.ui.text import WORD_JOINER, html_text, md, one_html_block

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "sentret_core" / "ui"
URL = "http://127.0.0.1:8622"
# Every Markdown construct that could fetch or link, and the ones that format or break out of a line.
HOSTILE = [
    f"Picasso ![q]({URL}/x.png)",  # an image: the browser fetches it
    f"[click]({URL}/link)",  # an inline link
    f'[click]({URL}/link "title")',
    f"<{URL}/auto>",  # an autolink
    "<mail@example.com>",
    f"see {URL}/bare and www.example.com/w and someone@example.com",  # GFM literal autolinks
    f"[ref][1] and [1]\n\n[1]: {URL}/ref",  # a reference link and its definition
    f"![ref][img]\n[img]: {URL}/img.png",
    f"<img src={URL}/html.png> <script>alert(1)</script> <a href='{URL}/a'>a</a>",  # raw HTML
    "http&#58;//127.0.0.1:8622/entity &amp; &lt;b&gt;",  # character references
    "line one\n\n![x](http://127.0.0.1:8622/after-blank-line.png)",  # a blank line ends the paragraph
    "# heading",
    "- item",
    "+ item",
    "1. item",
    "3) item",
    "> quote",
    "    indented code",
    "***",
    "text\n===",  # a setext heading
    "| a | b |\n|---|---|\n| c | d |",  # a GFM table
    "**bold** *em* _em_ ~~strike~~ `code` ```fence```",
    ":red[coloured] :material/home: :smile: $x^2$ $$y$$",  # Streamlit's directives, icons, emoji and LaTeX
    "back\\slash \\![x](y) ends in \\",
]
TAGS = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)")
# mdast-util-gfm-autolink-literal's find-and-replace patterns (lib/index.js): URLs and e-mail addresses
GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE)
GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")


def render(markdown: str) -> str:
    """CommonMark with raw HTML allowed (as ``unsafe_allow_html``), plus GFM tables and strikethrough."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(markdown)


def shown_text(rendered: str) -> str:
    """The text a reader sees in rendered HTML: tags dropped, references decoded, word joiners gone."""
    return html.unescape(re.sub(r"<[^>]*>", "", rendered)).replace(WORD_JOINER, "")


def collapsed(text: str) -> str:
    return " ".join(text.replace("\0", "\ufffd").split())


@pytest.mark.parametrize("text", HOSTILE)
def test_md_renders_as_one_paragraph_of_the_same_text(text: str) -> None:
    rendered = render(md(text))
    assert [m.group(0) for m in TAGS.finditer(rendered)] == ["<p", "</p"], rendered  # no a, img, h1, li, table…
    assert collapsed(shown_text(rendered)) == collapsed(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_md_leaves_no_literal_autolink(text: str) -> None:
    # remark-gfm finds literal autolinks in the text *after* backslash escapes are resolved
    unescaped = re.sub(r"\\(.)", r"\1", md(text))
    assert not GFM_URL.search(unescaped) and not GFM_EMAIL.search(unescaped), unescaped
    assert not re.search(r":[^\s\d\u2060]", unescaped)  # no :directive[…], :icon:, :emoji: (nor http://)


@given(st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n\t![]()<>:/\\`*_#+-=.|~$&@")))
def test_md_is_literal_for_any_text(text: str) -> None:
    rendered = render(md(text))
    tags = {m.group(2) for m in TAGS.finditer(rendered)}
    assert tags <= {"p"}, rendered
    assert collapsed(shown_text(rendered)) == collapsed(text)


def test_md_keeps_plain_messages_readable() -> None:
    assert md("picture.txt: looks like a binary file (line 3)") == r"picture.txt: looks like a binary file \(line 3\)"
    assert md("Paris, 1919") == "Paris, 1919"
    assert md("a\nb\r\nc") == "a b c"
    assert md("bad.qrels:1: a qrels line") == "bad.qrels:1: a qrels line"  # line numbers stay as they are
    assert md(42) == "42"


def test_html_text_escapes_and_stays_on_one_line() -> None:
    assert html_text("<b>\"Tom\" & 'Jerry'</b>") == "&lt;b&gt;&quot;Tom&quot; &amp; &#x27;Jerry&#x27;&lt;/b&gt;"
    assert "\n" not in html_text("a\n\nb\rc") and "\r" not in html_text("a\n\nb\rc")


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize(
    "template",
    [
        '<div class="support"><small><i>{}</i></small><p>{}</p></div>',
        "<style>p{{color:red}}</style><table><tr><td>{}</td><td>{}</td></tr></table>",
        '\n<svg viewBox="0 0 10 10">\n  <text x="1" y="2">{}</text>\n  <text>{}</text>\n</svg>',
        "<p>{}</p>\n<p>{}</p>",
    ],
)
def test_one_html_block_is_never_read_as_markdown(template: str, text: str) -> None:
    block = one_html_block(template.format(html_text(text), html_text(text)))
    tokens = MarkdownIt("commonmark", {"html": True}).parse(block)
    assert [t.type for t in tokens] == ["html_block"]  # raw HTML throughout: no paragraph, no inline Markdown
    rendered = render(block)
    assert "<img" not in rendered and "<a " not in rendered and "<script" not in rendered
    assert "\n" not in block


def test_one_html_block_keeps_a_block_that_already_is_one() -> None:
    card = '<div class="support"><p>text</p></div>'
    assert one_html_block(card) == card


# --- every page draws user text through the helper -------------------------------------------------


def calls(path: Path) -> list[tuple[str, int]]:
    """(what, line) of each use of ``html.escape`` or ``unsafe_allow_html`` in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.keyword) and node.arg == "unsafe_allow_html":
            found.append(("unsafe_allow_html", node.value.lineno))
        if isinstance(node, ast.Attribute) and node.attr == "escape" and ast.unparse(node.value) == "html":
            found.append(("html.escape", node.lineno))
    return found


def test_only_the_helper_escapes_html_or_allows_it() -> None:
    offenders = {
        str(path.relative_to(UI)): found
        for path in sorted(UI.rglob("*.py"))
        if path.name != "text.py" and (found := calls(path))
    }
    assert offenders == {}, "draw user text with sentret_core.ui.text (md, html_text, show_html)"


def test_a_query_from_the_url_is_shown_as_text(small_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a browser: the Explore heading that quotes ``?q=`` (an HTML block, the query cut short
    with its full text on hover) holds the query escaped: no image, link or tag of its own."""
    monkeypatch.setenv("SENTRET_INDEX", str(small_index.path))
    monkeypatch.setenv("SENTRET_INDEX_ROOT", str(small_index.path.parent))
    query = f"Picasso peace ![q]({URL}/q.png) <{URL}/auto> {URL}/bare"
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    app.query_params["q"] = query
    app.run()
    assert not app.exception
    heading = next(m.value for m in app.markdown if "<h3 " in m.value and ">Why" in m.value)
    assert f'title="{html_text(query)}"' in heading  # the full query on hover, escaped
    rendered = MarkdownIt("commonmark").render(heading)  # raw HTML allowed, as st.markdown does here
    assert "<img" not in rendered and "<a " not in rendered and f"<{URL}" not in rendered
    assert rendered.count("<") == heading.count("<")  # Markdown added no tag: the block stays raw HTML


def test_rank_lists_read_as_words() -> None:
    from sentret_core.ui.glossary import ranks_text

    assert [ranks_text(r) for r in ([3], [1, 3], [1, 3, 4])] == ["rank 3", "ranks 1 and 3", "ranks 1, 3 and 4"]
