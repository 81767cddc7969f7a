"""Helpers for the end-to-end tests: a Streamlit server in a subprocess and Debian's Chromium via Playwright.

``playwright install`` is not used: the tests drive the system Chromium at ``/usr/bin/chromium``
(``apt-get install chromium``) and skip when it is absent.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
# Screenshots go to a scratch folder, so a test run leaves the work tree as it was; refresh the
# README's with SENTRET_SCREENSHOTS=docs/screenshots.
SCREENSHOTS = Path(os.environ.get("SENTRET_SCREENSHOTS", Path(tempfile.gettempdir()) / "sentret-screenshots"))
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SKIP_REASON = (
    f"no Chromium at {CHROMIUM}: install it with `apt-get install chromium` "
    "(.ci/run does; `playwright install` is not used)"
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def streamlit_server(
    index: Path, root: Path, log: Path, timeout: float = 60.0, extra_env: dict[str, str] | None = None,
    app_root: Path = ROOT, port: int | None = None,
) -> Iterator[Server]:
    """``streamlit run app.py`` (of ``app_root``, this checkout by default; through sentret_core.ui.serve) on
    ``port`` (default: a free one) with the app pointed at ``index`` (and ``extra_env`` set); stopped on exit."""
    port = free_port() if port is None else port
    env = dict(os.environ, SENTRET_INDEX=str(index), SENTRET_INDEX_ROOT=str(root), PYTHONUNBUFFERED="1")
    env.update(extra_env or {})
    # never the real data/judgments/: a caller's own database, else one beside the server log
    env.setdefault("SENTRET_JUDGMENTS_DB", str(log.parent / "judgments.sqlite"))
    # as make run and `sentret app` start it (an older checkout, --app-root, may have no such launcher)
    serve = (app_root / "sentret_core" / "ui" / "serve.py").is_file()
    command = [
        sys.executable, "-m", "sentret_core.ui.serve" if serve else "streamlit", "run", str(app_root / "app.py"),
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=app_root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + timeout
        while not _healthy(server.url):
            if process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {process.returncode}:\n{server.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not answer within {timeout:.0f} s:\n{server.log_tail()}")
            time.sleep(0.2)
        yield server
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server we started (its own process group), politely first."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium under Playwright, closed on leaving."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            yield browser
        finally:
            browser.close()


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
BUSY = '[data-testid="stApp"]:not([data-test-script-state="notRunning"])'


def wait_until_idle(page: Any, timeout_ms: int = 30_000, start_ms: int = 300) -> None:
    """Wait for the rerun an action triggered to start (briefly) and then to finish (bounded)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with suppress(PlaywrightTimeout):  # the run was over before we looked, or nothing ran
        page.wait_for_selector(BUSY, timeout=start_ms, state="attached")
    page.wait_for_selector(IDLE, timeout=timeout_ms, state="attached")


def selected(page: Any, label: str) -> str:
    """What the selectbox labelled ``label`` shows."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    return str(box.get_by_role("combobox").first.input_value())


def select_option(page: Any, label: str, option: str, attempts: int = 4) -> None:
    """Open the selectbox labelled ``label`` and click the option whose text contains ``option``."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    choice = page.get_by_role("option").filter(has_text=option).first
    for _ in range(attempts):  # a rerun landing just then can close the list or undo the choice
        try:
            box.get_by_role("button", name="Open").first.click(timeout=5_000)
            choice.click(timeout=3_000)
        except Exception:
            page.keyboard.press("Escape")
            wait_until_idle(page)
            continue
        wait_until_idle(page)
        if option in selected(page, label):
            return
    shown = page.get_by_role("option").all_inner_texts()
    value = selected(page, label)
    raise AssertionError(f"could not choose {option!r} in {label!r}: it shows {value!r}, its list {shown}")


def screenshot(page: Any, name: str, height: int | None = None) -> Path:
    """A screenshot of the app's whole page into ``SCREENSHOTS/name``.

    Streamlit scrolls inside its own container, so the viewport is first made as tall as the content.
    """
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if height is None:
        height = int(
            page.evaluate(
                "() => { const m = document.querySelector('[data-testid=\"stMain\"]') "
                "|| document.querySelector('section.main'); "
                "return m ? m.scrollHeight : document.body.scrollHeight }"
            )
        )
    width = page.viewport_size["width"] if page.viewport_size else 1400
    page.set_viewport_size({"width": width, "height": max(600, min(height + 40, 6000))})
    page.wait_for_timeout(400)
    path = SCREENSHOTS / name
    page.screenshot(path=str(path))
    return path
