"""The Annotate page's keyboard handler (sentret_core.ui.annotate.shortcuts) in a real Chromium, on a
page that stands in for Streamlit: every click starts a "run" that flips the app's script state,
redraws the grade buttons for the next item and replaces the shortcuts component (as Streamlit
does when the layout shifts). A regression guarded here: keys died after ``u`` and ``t``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from sentret_core.ui.annotate.shortcuts import SHORTCUTS, component_html

KEYS = list(SHORTCUTS)  # 1 2 3 4 u s b n t f
RUN_TOKEN = 987654321  # replaced by the fake app's run number in each component it draws
TIMEOUT_MS = 400

# A stand-in for Streamlit: controls keyed like the Annotate page's, a script state, runs on clicks.
FAKE_APP = """
<div data-testid="stApp" data-test-script-state="notRunning">
  <h1 tabindex="-1">Annotate</h1>
  <input id="name" type="text"> <div class="st-key-annotate_toggle_box"></div>
  <div id="grades"></div>
  <div class="stElementContainer st-key-annotate_undo"><button>Undo</button></div>
  <div class="stElementContainer st-key-annotate_skip"><button>Skip</button></div>
  <div class="stElementContainer st-key-annotate_back"><button>Back</button></div>
  <div class="stElementContainer st-key-annotate_current"><button>Current</button></div>
  <div class="stElementContainer st-key-annotate_flag"><button>Flag</button></div>
  <div class="stElementContainer st-key-annotate_context"><label><input type="checkbox"> context</label></div>
  <div id="slot-a"></div><div id="slot-b"></div>
</div>
<script>
  window.fake = {item: 7, run: 0, clicks: [], startMs: 5, runMs: 40, answer: true, advance: true, template: null};
  const app = document.querySelector('[data-testid="stApp"]');
  function grades() {
    const box = document.getElementById("grades");
    box.innerHTML = "";
    for (const g of [1, 2, 3, 4]) {
      const div = document.createElement("div");
      div.className = "stElementContainer st-key-grade" + g + "_" + fake.item;
      div.innerHTML = "<button>" + g + "</button>";
      div.querySelector("button").addEventListener("click", () => clicked("grade" + g + "_" + fake.item));
      box.appendChild(div);
    }
  }
  function component() {  // a new frame each run, in the other slot: the old one is removed
    fake.run += 1;
    for (const old of document.querySelectorAll("iframe")) old.remove();
    const frame = document.createElement("iframe");
    frame.setAttribute("srcdoc", fake.template.replaceAll("RUN_TOKEN", String(fake.run)));
    document.getElementById(fake.run % 2 ? "slot-a" : "slot-b").appendChild(frame);
  }
  function answer(what) {  // the run a click causes: the next item after a grade, a new component
    setTimeout(() => {
      app.setAttribute("data-test-script-state", "running");
      setTimeout(() => {
        if (what.startsWith("grade") && fake.advance) { fake.item += 1; grades(); }
        component();
        app.setAttribute("data-test-script-state", "notRunning");
      }, fake.runMs);
    }, fake.startMs);
  }
  function clicked(what) {
    fake.clicks.push(what);
    if (fake.answer) answer(what);  // else a server that answers late (answer() by hand) or never
  }
  for (const name of ["undo", "skip", "back", "current", "flag"]) {
    document.querySelector(".st-key-annotate_" + name + " button")
      .addEventListener("click", () => clicked(name));
  }
  document.querySelector(".st-key-annotate_context input").addEventListener("click", () => clicked("context"));
  grades();
</script>
"""


def expected_click(key: str, item: int) -> str:
    return {"u": "undo", "s": "skip", "b": "back", "n": "current", "t": "context", "f": "flag"}.get(
        key, f"grade{key}_{item}"
    )


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page()
    page.set_default_timeout(10_000)
    page.set_content(FAKE_APP)
    template = component_html(RUN_TOKEN, timeout_ms=TIMEOUT_MS).replace(str(RUN_TOKEN), "RUN_TOKEN")
    page.evaluate("(t) => { fake.template = t; component(); }", template)
    page.wait_for_function("() => typeof window.__sentretAnnotateKeys === 'function'")
    page.locator("h1").focus()
    yield page
    page.close()


def clicks(page: Any) -> list[str]:
    return list(page.evaluate("() => fake.clicks"))


def wait_idle(page: Any, n_clicks: int) -> None:
    """Until the fake app has seen ``n_clicks`` clicks, answered them and the handler is free."""
    page.wait_for_function(
        "(n) => fake.clicks.length === n && "
        "document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state') === 'notRunning' "
        "&& !window.__sentretAnnotateState.busy",
        arg=n_clicks,
    )


def de_bruijn_pairs(symbols: list[str]) -> list[str]:
    """A sequence in which every ordered pair of ``symbols`` (a key twice included) follows once."""
    edges = {a: list(symbols) for a in symbols}
    path, stack = [], [symbols[0]]
    while stack:  # Hierholzer's walk over the complete digraph with loops
        if edges[stack[-1]]:
            stack.append(edges[stack[-1]].pop())
        else:
            path.append(stack.pop())
    return path[::-1]


def test_every_key_works_after_every_other_key(page: Any) -> None:
    sequence = de_bruijn_pairs(KEYS)
    pairs = set(itertools.pairwise(sequence))
    assert len(sequence) == len(KEYS) ** 2 + 1 and pairs == set(itertools.product(KEYS, KEYS))
    item, expected = 7, []
    for n, key in enumerate(sequence, start=1):
        page.keyboard.press(key)
        expected.append(expected_click(key, item))
        item += key in "1234"
        wait_idle(page, n)
        assert clicks(page) == expected, f"after {sequence[:n]}"


def test_fast_keys_are_queued_one_press_per_run(page: Any) -> None:
    for key in "3u1tb4":
        page.keyboard.press(key)
    wait_idle(page, 6)
    # each grade went to the item shown when it was pressed: never twice to the same item
    assert clicks(page) == ["grade3_7", "undo", "grade1_8", "context", "back", "grade4_9"]


def test_a_press_without_answer_frees_the_handler_after_the_timeout(page: Any) -> None:
    page.evaluate("() => { fake.answer = false; }")
    page.keyboard.press("3")
    page.wait_for_function("() => fake.clicks.length === 1 && window.__sentretAnnotateState.busy")
    page.keyboard.press("u")  # queued behind the unanswered press, pressed once the timeout frees it
    page.wait_for_function("() => fake.clicks.length === 2", timeout=3 * TIMEOUT_MS)
    page.wait_for_function("() => !window.__sentretAnnotateState.busy", timeout=3 * TIMEOUT_MS)
    page.keyboard.press("b")
    page.wait_for_function("() => fake.clicks.length === 3", timeout=3 * TIMEOUT_MS)
    assert clicks(page) == ["grade3_7", "undo", "back"]


def test_a_late_answer_never_regrades_the_item_just_graded(page: Any) -> None:
    page.evaluate("() => { fake.answer = false; }")
    page.keyboard.press("3")
    page.keyboard.press("1")  # meant for the next item, which the server has not drawn yet
    page.wait_for_function("() => fake.clicks.length === 1 && window.__sentretAnnotateState.busy")
    page.wait_for_function("() => !window.__sentretAnnotateState.busy", timeout=3 * TIMEOUT_MS)  # timed out
    page.wait_for_timeout(TIMEOUT_MS)  # the page still shows item 7: its grade button is not pressed again
    assert clicks(page) == ["grade3_7"]
    page.evaluate("() => { fake.answer = true; answer('grade3_7'); }")  # the late answer: item 8
    wait_idle(page, 2)
    assert clicks(page) == ["grade3_7", "grade1_8"]


def test_the_same_item_is_graded_again_once_the_page_is_redrawn(page: Any) -> None:
    page.evaluate("() => { fake.advance = false; }")  # e.g. a closed session: the grade is refused
    page.keyboard.press("3")
    page.keyboard.press("3")
    wait_idle(page, 2)
    assert clicks(page) == ["grade3_7", "grade3_7"]


def test_a_slow_run_holds_the_next_key_until_it_is_drawn(page: Any) -> None:
    page.evaluate(f"() => {{ fake.runMs = {3 * TIMEOUT_MS}; }}")  # longer than the timeout
    page.keyboard.press("2")
    page.keyboard.press("2")
    wait_idle(page, 2)
    # the second press waited for the slow run (past the timeout) instead of grading item 7 again
    assert clicks(page) == ["grade2_7", "grade2_8"]


def test_disabled_or_missing_buttons_do_nothing_and_block_nothing(page: Any) -> None:
    page.evaluate("() => { document.querySelector('.st-key-annotate_current button').disabled = true; }")
    page.keyboard.press("n")
    page.keyboard.press("1")
    wait_idle(page, 1)
    assert clicks(page) == ["grade1_7"]


def test_keys_in_a_text_field_are_left_alone_but_not_on_a_focused_toggle(page: Any) -> None:
    page.locator("#name").focus()
    page.keyboard.type("3u")
    assert page.locator("#name").input_value() == "3u"
    page.locator(".st-key-annotate_context input").focus()  # e.g. after clicking the toggle
    page.keyboard.press("3")
    wait_idle(page, 1)
    assert clicks(page) == ["grade3_7"]


def test_a_new_version_replaces_the_old_handler(page: Any) -> None:
    page.evaluate("() => { window.__sentretAnnotate.version = 'older'; component(); }")
    page.wait_for_function("() => window.__sentretAnnotate.version !== 'older'")
    page.keyboard.press("4")
    wait_idle(page, 1)
    assert clicks(page) == ["grade4_7"]  # one click: the old listener is gone
