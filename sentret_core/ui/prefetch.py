"""Fetch, while the first page is idle, the browser code that the first results of a session need.

Streamlit's page loads some of its own code only when an element first appears: the Markdown renderer
for HTML blocks (``rehype-raw`` with ``hastscript`` and ``web-namespaces``), the download button, and the
italic face of its font. Explore draws all of them with its first results, so the first query of a
session waited for them: 433-566 ms at p95 against ≤ 300 ms for the later queries
(``benchmarks/app_latency.py``). Drawing such elements on the first screen moved the cost to the first
page (3.8 s instead of 2.1 s), so instead the page asks the browser to fetch them once it is idle
(``modulepreload`` for a module; the body font's italic faces through ``document.fonts``): the first results then
find them loaded.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

import streamlit as st

# The frontend's lazily loaded files a first result needs, by the start of their name (their hash varies
# with the Streamlit release, so the installed package is searched for them).
LAZY = ("js/rehype-raw.", "js/hastscript.", "js/web-namespaces.", "js/DownloadButton.",
        "js/createDownloadLinkElement.")

SCRIPT = """<script>
(() => {
  if (window.sentretPrefetch) return;
  window.sentretPrefetch = true;
  const files = %s;
  const fetchAll = () => {
    const main = [...document.scripts].map((s) => s.src).find((src) => src.includes("/static/js/"));
    if (!main) return;
    const base = main.slice(0, main.indexOf("/static/") + "/static/".length);
    for (const file of files) {
      const link = document.createElement("link");
      Object.assign(link, {rel: "modulepreload", href: base + file});
      document.head.appendChild(link);
    }
    // the body font's italic faces, loaded as the text that uses them would load them
    for (const face of document.fonts) {
      if (face.family.includes("Source Sans") && face.style === "italic" && face.status === "unloaded") face.load();
    }
  };
  (window.requestIdleCallback || ((run) => setTimeout(run, 1500)))(fetchAll, {timeout: 4000});
})();
</script>"""


@functools.cache
def lazy_files() -> tuple[str, ...]:
    """The files of :data:`LAZY` in the installed Streamlit, relative to its ``static/`` URL folder."""
    spec = importlib.util.find_spec("streamlit")
    if spec is None or spec.origin is None:
        return ()
    root = Path(spec.origin).parent / "static" / "static"
    found = []
    for start in LAZY:
        folder, stem = start.split("/")
        found += sorted(f"{folder}/{path.name}" for path in (root / folder).glob(f"{stem}*") if path.suffix == ".js")
    return tuple(found)


def install() -> None:
    """Put :data:`SCRIPT` into the page (the sidebar, where an empty block takes no room); it acts once per load."""
    files = lazy_files()
    if files:
        st.sidebar.html(SCRIPT % json.dumps(list(files)), unsafe_allow_javascript=True)
