"""The Annotate page in a real Chromium: sign in, grade three items with the keyboard, find them exported.

Runs ``streamlit run app.py`` on a free port against the small fixture index and a fresh
judgments database. Skipped when ``/usr/bin/chromium`` or Playwright is missing. Set
``SENTRET_SCREENSHOTS`` to a folder (e.g. ``docs/screenshots``) to keep ``annotate.png``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[1]
TOKEN = "browser-test-token"
START_TIMEOUT_S = 60.0
STEP_TIMEOUT_MS = 20_000
IDLE = (
    "() => document.querySelector('[data-testid=stApp]')"
    "?.getAttribute('data-test-script-state') === 'notRunning'"
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"streamlit exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    output = log.read_text(errors="replace")
    pytest.fail(f"streamlit did not answer within {START_TIMEOUT_S:.0f} s:\n{output}")


@pytest.fixture
def server(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)  # for the export at the end
    db = tmp_path / "judgments.sqlite"
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, "picasso peace", "pw", top_entities=5, depth=2)
    port = _free_port()
    env = dict(os.environ)
    env.update(SENTRET_INDEX=str(small_index.path), SENTRET_INDEX_ROOT=str(small_index.path.parent),
               SENTRET_JUDGMENTS_DB=str(db), **{ADMIN_TOKEN_ENV: TOKEN})
    log = tmp_path / "streamlit.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
                "--server.headless", "true", "--browser.gatherUsageStats", "false",
                "--server.fileWatcherType", "none",
            ],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url, process, log)
        yield url, db
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def test_grade_three_items_with_the_keyboard(server: tuple[str, Path], tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="no Playwright (pip install playwright)")
    url, db = server
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run", "--disable-sync",
            ],
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.set_default_timeout(STEP_TIMEOUT_MS)
            page.goto(f"{url}/annotate?session=s", wait_until="domcontentloaded")
            page.get_by_label("Your name").fill("keyboard")
            page.get_by_label("Session passphrase").fill("pw")
            page.get_by_role("button", name="Sign in").click()
            caption = page.get_by_text(re.compile(r"^Item \d"))
            sync_api.expect(caption).to_have_text(re.compile(r"^Item 1$"))
            # the shortcut script has registered its listener on the page
            page.wait_for_function("() => typeof window.__sentretAnnotateKeys === 'function'")
            page.locator("h1").first.click()  # focus the page, not a text field
            page.keyboard.press("3")
            sync_api.expect(caption).to_have_text(re.compile(r"^Item 2$"))
            # two keys in quick succession: the second waits until the first one's rerun is done
            page.keyboard.press("1")
            page.keyboard.press("4")
            sync_api.expect(caption).to_have_text(re.compile(r"^Item 4$"))
            sync_api.expect(page.get_by_text("3 of 5 graded")).to_be_visible()
            page.keyboard.press("t")  # t: show the context
            context = page.get_by_text(re.compile("Spanish painter|peace conference|Stalin Peace Prize"))
            sync_api.expect(context.first).to_be_visible()
            page.wait_for_function(IDLE)
            sync_api.expect(page.get_by_role("button", name="4 · very relevant")).to_be_visible()
            target = Path(os.environ.get("SENTRET_SCREENSHOTS", tmp_path))
            target.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(target / "annotate.png"), full_page=True)
        finally:
            browser.close()
    with JudgmentStore(db) as store:
        export = store.admin(TOKEN).export_jsonl("s")
    mine = [json.loads(line) for line in export.splitlines()]
    assert [(j["annotator"], j["position"], j["grade"]) for j in mine] == [
        ("keyboard", 0, 3), ("keyboard", 1, 1), ("keyboard", 2, 4)
    ]
