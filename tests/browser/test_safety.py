"""Data safety end to end, in a real Chromium: no request leaves for a URL planted in user or corpus text,
and the server refuses an upload over the size limit.

A request logger (a tiny HTTP server on 127.0.0.1, on a free port) counts every request it gets. The
app runs on an index whose title, sentences and one entity hold Markdown images, links, autolinks
and bare URLs that point at the logger; the Explore query (``?q=``), a session name and an
annotator name hold more. Every page is visited with them on screen, and the logger must have
counted nothing, and no ``<img>`` or ``<a>`` may point at it. The entity is made certain with an
entity ruler in a copy of the spaCy pipeline, and the text is read without the entities' labels, so the test
never depends on what NER guesses.
Skipped when /usr/bin/chromium is absent.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sentret_core import Index, build_index
from sentret_core.annotation.auth import admin_token
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from tests.browser_util import Server, select_option, streamlit_server, wait_until_idle
from tests.conftest import SMALL_DOCS

sync_api = pytest.importorskip("playwright.sync_api", reason="the Playwright package is not installed")

TOKEN = "browser-safety-token"
PASSPHRASE = "planted-annotator-passphrase"  # the planted annotator's own (added by the admin)
TIMEOUT = 30_000  # ms, for any one wait


class Logger:
    """An HTTP server on 127.0.0.1 that records the path of every request it is sent."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                hits.append(self.path)
                self.send_response(404)
                self.end_headers()

            do_GET = do_POST = do_HEAD = _answer

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self.hits = hits
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Planted:
    """The hostile texts, all pointing at the logger's ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.entity = f"Acme![e]({url}/entity.png)Corp"
        self.title = f"Planted ![t]({url}/title.png) [t]({url}/title-link) <{url}/title-auto> {url}/title-bare"
        self.text = (
            f"The company {self.entity} is based in London. "
            f"London hosted the peace![s]({url}/sentence.png)conference in 1919. "
            f"London welcomed delegates[d]({url}/sentence-link)and <{url}/sentence-auto> and "
            f"{url}/sentence-bare in 1919. "
            f'London mayor <img src="{url}/sentence-html.png"> spoke of peace.\n'
            f"London rejoiced\n![n]({url}/newline.png) after the peace."
        )
        self.query = f"London peace ![q]({url}/query.png) [q]({url}/query-link) <{url}/query-auto> {url}/query-bare"
        self.session = f"pilot ![s]({url}/session.png) <{url}/session-auto>"
        self.annotator = f"ann ![a]({url}/annotator.png) [a]({url}/annotator-link) {url}/annotator-bare"
        self.find = f"![f]({url}/find.png) {url}/find-bare"


@pytest.fixture(scope="module")
def logger() -> Iterator[Logger]:
    running = Logger()
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(scope="module")
def planted(logger: Logger) -> Planted:
    return Planted(logger.url)


@pytest.fixture(scope="module")
def planted_index(planted: Planted, tmp_path_factory: pytest.TempPathFactory) -> Index:
    """The small corpus plus the planted document, parsed by the default pipeline with an entity ruler
    that tags the planted entity as an ORG."""
    import spacy

    from sentret_core.ingest.nlp import DEFAULT_PIPELINE

    root = tmp_path_factory.mktemp("planted")
    nlp = spacy.load(DEFAULT_PIPELINE)
    nlp.add_pipe("entity_ruler", before="ner").add_patterns([{"label": "ORG", "pattern": planted.entity}])
    nlp.to_disk(root / "pipeline")
    docs = [*SMALL_DOCS, {"id": "planted", "title": planted.title, "text": planted.text}]
    (root / "corpus.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    build_index(root / "corpus.jsonl", root / "indexes" / "planted", n_process=1, model=str(root / "pipeline"))
    index = Index.load(root / "indexes" / "planted")
    assert (planted.entity, "ORG") in index.entity_index, "the entity ruler did not tag the planted entity"
    assert any(f"]({planted.url}/sentence.png)" in text for text in index.texts)
    return index


@pytest.fixture(scope="module")
def server(planted_index: Index, planted: Planted, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    logs = tmp_path_factory.mktemp("safety-logs")
    db = logs / "judgments.sqlite"
    with JudgmentStore(db) as store:
        topics = f"{planted.query}\t{planted.entity}|ORG"
        create_session(store, planted.session, planted_index, topics, depth=2)
        store.admin(admin_token()).add_annotator(planted.session, planted.annotator, PASSPHRASE)
    env = {"SENTRET_JUDGMENTS_DB": str(db), ADMIN_TOKEN_ENV: TOKEN}
    with streamlit_server(planted_index.path, planted_index.path.parent, logs / "streamlit.log", extra_env=env) as up:
        yield up


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        tab = context.new_page()
        tab.set_default_timeout(TIMEOUT)
        yield tab
    finally:
        context.close()


def settle(page: Any) -> None:
    """Let the run finish and anything it would load start loading."""
    wait_until_idle(page)
    page.wait_for_timeout(800)


def assert_nothing_left(page: Any, logger: Logger, where: str) -> None:
    page.wait_for_timeout(500)
    assert logger.hits == [], f"{where}: the browser requested {logger.hits}"
    port = logger.url.rsplit(":", 1)[1]
    images = page.locator(f'[data-testid="stMain"] img[src*=":{port}"]').count()
    links = page.locator(f'[data-testid="stMain"] a[href*=":{port}"]').count()
    assert (images, links) == (0, 0), f"{where}: {images} image(s) and {links} link(s) point at the logger"


# The entities' labels hidden while the text is read: spaCy's NER may tag part of a planted URL (it did for 9
# of 200 logger ports: "peace![s](http://127.0.0.1:37170" as an ORG), and its label is drawn inside the text.
_TEXT_WITHOUT_LABELS = """main => {
  const style = document.createElement("style");
  style.textContent = "sub.label { display: none !important }";
  document.head.appendChild(style);
  try { return main.innerText; } finally { style.remove(); }
}"""


def shown(page: Any) -> str:
    """The main area's text as a reader sees it, without the entities' labels (the word joiners that break
    autolinks are invisible)."""
    text = page.locator('[data-testid="stMain"]').evaluate(_TEXT_WITHOUT_LABELS)
    return str(text).replace("\u2060", "")


def test_the_logger_sees_what_the_browser_fetches(server: Server, page: Any, logger: Logger) -> None:
    page.goto(server.url, wait_until="domcontentloaded")
    page.evaluate("url => { new Image().src = url }", f"{logger.url}/control.png")
    page.wait_for_timeout(1000)
    assert logger.hits == ["/control.png"]
    logger.hits.clear()


def test_explore_and_how_it_works_show_planted_urls_as_text(
    server: Server, page: Any, logger: Logger, planted: Planted
) -> None:
    entity = f"{planted.entity}|ORG"
    query = urllib.parse.urlencode({"q": planted.query, "entity": entity})
    page.goto(f"{server.url}/?{query}", wait_until="domcontentloaded")
    page.get_by_text("candidate sentences").first.wait_for()
    settle(page)
    page.get_by_text("Context (±2 sentences)").first.click()
    settle(page)
    assert_nothing_left(page, logger, "Explore")
    text = shown(page)
    # shown as typed in the heading: cut short, the whole query on hover
    assert planted.query[:40] in text and planted.entity in text
    assert page.locator("h3 span[title]").first.get_attribute("title") == planted.query
    assert f"peace![s]({planted.url}/sentence.png)conference" in text

    page.locator('[data-testid="stSidebarNav"] a').filter(has_text="How it works").first.click()
    page.get_by_text("Top 10", exact=True).wait_for()
    settle(page)
    page.get_by_role("tab", name="Fig. 1").click()  # substring: the tab that draws Fig. 1's sets
    settle(page)
    assert_nothing_left(page, logger, "How it works")
    assert f"for {planted.entity}" in shown(page)  # the growth curve's caption names the entity


def test_corpus_shows_planted_titles_and_searches_as_text(
    server: Server, page: Any, logger: Logger, planted: Planted
) -> None:
    page.goto(f"{server.url}/corpus", wait_until="domcontentloaded")
    page.get_by_text("Documents", exact=True).first.wait_for()
    settle(page)
    select_option(page, "Document", "Planted")
    expected = f"peace![s]({planted.url}/sentence.png)conference"
    deadline = time.monotonic() + 60  # the chosen document is drawn a rerun away; another one says "conference" too
    while expected not in shown(page) and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    settle(page)
    assert expected in shown(page)
    box = page.get_by_label("Find a document by title", exact=True)
    box.fill(planted.find)
    box.press("Enter")
    page.get_by_text("No document title contains").wait_for()
    settle(page)
    assert_nothing_left(page, logger, "Corpus")
    assert planted.find in shown(page)


def test_annotate_and_admin_show_planted_names_as_text(
    server: Server, page: Any, logger: Logger, planted: Planted
) -> None:
    page.goto(f"{server.url}/annotate", wait_until="domcontentloaded")
    page.get_by_label("Session", exact=True).fill(planted.session)
    page.get_by_label("Your name").fill(planted.annotator)
    page.get_by_label("Your passphrase").fill(PASSPHRASE)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Signed in as").wait_for()
    settle(page)
    page.get_by_text("Show context (t)").click()
    settle(page)
    assert_nothing_left(page, logger, "Annotate")
    text = shown(page)
    assert planted.annotator in text and planted.session in text and planted.entity in text

    page.locator('[data-testid="stSidebarNav"] a').filter(has_text="Admin").first.click()
    page.get_by_label("Admin token", exact=True).fill(TOKEN)
    page.get_by_role("button", name="Sign in as admin").click()
    page.get_by_text("Progress", exact=True).wait_for()
    settle(page)
    assert_nothing_left(page, logger, "Admin")
    assert planted.session in shown(page)


def test_the_server_refuses_an_upload_over_the_limit(server: Server, page: Any) -> None:
    """A rewritten request skips the browser's own check: the server itself must refuse it."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    from sentret_core.ui.upload import MAX_TOTAL_MB

    sessions: list[str] = []

    def frames(ws: Any) -> None:
        def received(payload: Any) -> None:
            if isinstance(payload, bytes):
                message = ForwardMsg.FromString(payload)
                if message.HasField("new_session"):
                    sessions.append(message.new_session.initialize.session_id)

        ws.on("framereceived", received)

    page.on("websocket", frames)
    page.goto(f"{server.url}/corpus", wait_until="domcontentloaded")
    page.get_by_text("Documents", exact=True).first.wait_for()
    wait_until_idle(page)
    assert sessions, "no session id seen on the websocket"
    xsrf = next(c["value"] for c in page.context.cookies() if c["name"] == "_streamlit_xsrf")
    target = f"{server.url}/_stcore/upload_file/{sessions[0]}/forged"

    def put(size_mb: int) -> int:
        part = {"name": "big.txt", "mimeType": "text/plain", "buffer": b"x" * (size_mb * 1024 * 1024)}
        response = page.request.put(target, multipart={"file": part}, headers={"X-Xsrftoken": xsrf})
        return int(response.status)

    assert put(1) == 204  # the route and the token work
    assert put(MAX_TOTAL_MB + 10) == 413


BAD_URLS = [  # (path and query, text the page shows instead of a traceback)
    ("/?index=" + "a" * 120, "is not an index"),
    ("/?index=" + urllib.parse.quote("é" * 130), "is not an index"),
    ("/?index=deep", "index='deep' is not an index"),
    ("/how-it-works?q=war&sentence=" + urllib.parse.quote("²"), "is not a sentence id"),
    ("/how-it-works?q=war&sentence=" + "9" * 5000, "is not a sentence id"),
    ("/how-it-works?q=war&k=" + urllib.parse.quote("٣"), "is not a whole number"),
    ("/corpus", "Documents"),  # with the deeply nested manifest under the index root
]


@pytest.fixture(scope="module")
def plain_server(small_index: Index, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The app on the small index, with a folder beside it whose manifest.json is JSON nested 100,000
    deep (Python's json recurses once per level)."""
    root = tmp_path_factory.mktemp("bad-urls")
    (root / "small").symlink_to(small_index.path, target_is_directory=True)
    (root / "deep").mkdir()
    (root / "deep" / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with streamlit_server(small_index.path, root, root / "streamlit.log") as up:
        yield up


def test_no_url_shows_a_traceback(plain_server: Server, page: Any) -> None:
    """Each bad link names what is wrong and the page is drawn: no traceback anywhere."""
    for address, expected in BAD_URLS:
        page.goto(plain_server.url + address, wait_until="domcontentloaded")
        page.get_by_text(expected).first.wait_for()
        settle(page)
        text = shown(page)
        assert "Traceback" not in text and "Error:" not in text, f"{address[:80]}: {text[:500]}"
        assert page.locator('[data-testid="stException"]').count() == 0, address[:80]
