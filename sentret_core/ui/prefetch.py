"""Load, while the page is idle, the browser code that the first results and the first visit to a page need.

Streamlit's page loads much of its own code only when an element first appears: the Markdown renderer
for HTML blocks (``rehype-raw`` with ``hastscript`` and ``web-namespaces``) and the download button, which
Explore draws with its first results; the charts (Vega-Lite), tables, formulas (KaTeX) and metrics that
How it works draws; the buttons and emoji of the other pages. So the first query of a session waited for
them (433-566 ms at p95 against ≤ 300 ms for the later ones, ``benchmarks/app_latency.py``), and so did
the first visit to How it works (some 45 files). Drawing such elements on the first screen moved the
cost to the first page (3.8 s instead of 2.1 s), so instead the page imports them once it is idle after
the first screen (and the body font's italic faces through
``document.fonts``): a later result or page finds them loaded.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

import streamlit as st

# The frontend's lazily loaded files a first result needs, by the start of their name (their hash varies
# with the Streamlit release, so the installed package is searched for them).
LAZY = (
    # Explore's first results: HTML in Markdown, the download button
    "js/rehype-raw.", "js/hastscript.", "js/web-namespaces.", "js/DownloadButton.", "js/createDownloadLinkElement.",
    # How it works: Vega-Lite charts (and the d3 modules they load on first draw), tables, formulas, metrics
    "js/ArrowVegaLiteChart.", "js/loadVegaEmbed.", "js/embed.", "js/vega-interpreter.", "js/linear.", "js/ordinal.",
    "js/time.", "js/defaultLocale.", "js/cubic.", "js/init.", "js/string.", "js/value.", "js/threshold.",
    "js/colors.", "js/treemap.", "js/DataFrame.", "js/unzip.", "js/serialization.", "js/resolveDefaultExport.",
    "js/_baseIndexOf.", "js/_hasUnicode.", "js/rehype-katex.", "js/Metric.", "js/Button.",
    # the other pages' buttons and emoji
    "js/ButtonGroup.", "js/remark-emoji.",
)

SCRIPT = """<script>
(() => {
  if (window.sentretPrefetch) return;
  window.sentretPrefetch = true;
  const files = %s;
  const idle = (run) => (window.requestIdleCallback || ((f) => setTimeout(f, 1500)))(run, {timeout: 4000});
  const main = [...document.scripts].map((s) => s.src).find((src) => src.includes("/static/js/"));
  if (!main) return;
  const base = main.slice(0, main.indexOf("/static/") + "/static/".length);
  idle(() => {
    // the body font's italic faces, loaded as the text that uses them would load them
    for (const face of document.fonts) {
      if (face.family.includes("Source Sans") && face.style === "italic" && face.status === "unloaded") face.load();
    }
    // each import is evaluated in a task of its own, so a click in between is not kept waiting;
    // window.sentretPrefetched: when all are loaded (ms since the page opened), for benchmarks/app_latency.py
    Promise.allSettled(files.map((file) => import(base + file)))
      .then(() => { window.sentretPrefetched = performance.now(); });
  });
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
