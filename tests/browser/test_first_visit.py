"""A first visit while the word classes train in the background, in a real Chromium.

``make run`` starts the app at once and trains the demo's word classes and trigger tables beside it.
Here a real ``sentret train classes`` runs on an index of our own; once it holds the index's training
marker it is paused (SIGSTOP), so the page is visited while it surely runs, whatever the machine's
speed. The page must answer and say that the classes train in the background, with about how long
is left, and the class LMs must be listed as "training in the background" (before, they said "not
trained yet" and nothing else). Resumed, the training ends and the open page enables the class LMs
by itself: no reload, no server restart. Skipped when /usr/bin/chromium is absent.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sentret_core.index import artefacts
from sentret_core.models.training.running import running
from sentret_core.ui.background import WATCH_S
from tests.browser_util import ROOT, chromium, streamlit_server, wait_until_idle
from tests.conftest import SMALL_DOCS, build_from_texts

sync_api = pytest.importorskip("playwright.sync_api", reason="the Playwright package is not installed")

TIMEOUT = 30_000  # ms, for any one wait
CLASS_LM = "LM, class-based (word clusters)"  # lm-class.v1's display name


def synthetic_docs(n_docs: int = 300, seed: int = 0) -> list[dict[str, str]]:
    """Documents of made-up words (1,500 of them, 10 to a sentence): enough bigrams that training
    classes takes a few seconds, not a few milliseconds."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ra", "tu", "pe", "zo", "vi", "na", "qu", "be", "so"]
    words = sorted({"".join(rng.choice(syllables) for _ in range(3)) for _ in range(4000)})[:1500]
    return [
        {"id": f"d{d}", "title": f"Doc {d}",
         "text": " ".join(" ".join(rng.choice(words) for _ in range(10)).capitalize() + "." for _ in range(6))}
        for d in range(n_docs)
    ]


def paused_training(index: Path) -> subprocess.Popen[bytes]:
    """``sentret train classes INDEX`` in the background, paused once it holds the index's marker."""
    process = subprocess.Popen([sys.executable, "-m", "sentret_core", "train", "classes", str(index)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while running(index) is None:
        if process.poll() is not None:
            raise AssertionError(f"training ended before it was seen running: {process.stdout.read()!r}")  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the training never took the index's marker"
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGSTOP)
    return process


def chosen_models(page: Any) -> Any:
    """The chosen support models' names, as the Explore page's chooser shows them."""
    return (
        page.locator('[data-testid="stMultiSelect"]')
        .filter(has_text="Support models")
        .get_by_role("group", name="Selected values")
    )


def test_the_first_visit_answers_and_says_training_runs(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    index = build_from_texts(tmp_path, [*SMALL_DOCS, *synthetic_docs()], "synth").path
    training = paused_training(index)
    try:
        with streamlit_server(index, tmp_path, tmp_path / "streamlit.log") as server, chromium() as browser:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(TIMEOUT)
            clock = time.monotonic()
            page.goto(f"{server.url}/?models=lm-class.v1,bm25f.v1", wait_until="domcontentloaded")
            notice = page.get_by_text(re.compile(r"word classes of this index are training in the background, "
                                                 r"(about \d+ s left|finishing)"))
            expect(notice).to_be_visible(timeout=TIMEOUT)
            print(f"first page with the notice in {time.monotonic() - clock:.1f} s")  # a number, not a budget
            waiting = page.get_by_text("lm-class.v1, lm-class.v2 are enabled when it finishes")
            expect(waiting).to_be_visible(timeout=TIMEOUT)
            expect(page.get_by_label("Query", exact=True)).to_be_visible(timeout=TIMEOUT)  # the page works meanwhile
            wait_until_idle(page)

            page.get_by_text("Ranking settings").click()
            expect(chosen_models(page)).to_contain_text(f"{CLASS_LM} — training in the background", timeout=TIMEOUT)

            os.kill(training.pid, signal.SIGCONT)  # the training goes on and ends ...
            assert training.wait(timeout=300) == 0, training.stdout.read()  # type: ignore[union-attr]
            assert [r["name"] for r in artefacts.available(index, "classes")] == ["classes"]
            # ... and the open page notices by itself: the notice goes, the class LM is offered plainly
            expect(notice).to_have_count(0, timeout=int((WATCH_S + 20) * 1000))
            wait_until_idle(page)
            if not chosen_models(page).is_visible():  # the page's rerun closed the settings again
                page.get_by_text("Ranking settings").click()
            expect(chosen_models(page)).to_contain_text(CLASS_LM, timeout=TIMEOUT)
            expect(chosen_models(page)).not_to_contain_text("training", timeout=TIMEOUT)
    finally:
        if training.poll() is None:
            os.kill(training.pid, signal.SIGCONT)
            training.kill()
            training.wait(timeout=30)
