"""docs/screenshots/: Explore and How it works on the demo index, light and dark, at 800 and 1400 px.

    .venv/bin/python benchmarks/screenshots.py [--index data/indexes/demo] [--out docs/screenshots]
                                               [--query "Spanish Civil War"]

Starts `streamlit run app.py` on the index, opens each page in Debian's Chromium emulating
``prefers-color-scheme``, prints what tests/browser/test_layout.py asserts (sidebar folded, page
width, the entity table's key columns in view, How it works' height) and writes
``<page>-<scheme>-<width>.png``. Needs /usr/bin/chromium and Playwright; the index must be built.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests package: its browser helpers
from tests import browser_util  # noqa: E402
from tests.browser_util import CHROMIUM, chromium, streamlit_server  # noqa: E402
from tests.layout_views import KEY_COLUMNS, PAGES, SCHEMES, WIDTHS, measure, open_view, shoot  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=ROOT / "data" / "indexes" / "demo")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--query", default="Spanish Civil War")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"no Chromium at {CHROMIUM}: apt-get install chromium", file=sys.stderr)
        return 2
    if not (args.index / "manifest.json").exists():
        print(f"no index at {args.index}: build it with `make run` or `sentret index demo`", file=sys.stderr)
        return 2
    browser_util.SCREENSHOTS = args.out  # where layout_views.shoot writes
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "streamlit.log"
        with streamlit_server(args.index, args.index.parent, log, timeout=180) as server, chromium() as browser:
            for page in PAGES:
                for scheme in SCHEMES:
                    for width in WIDTHS:
                        context, tab = open_view(browser, server.url, page, args.query, scheme, width)
                        try:
                            seen = measure(tab)
                            keys = [round(h["right"]) for h in seen.get("headers", [])[:KEY_COLUMNS]]
                            path = shoot(tab, page, scheme, width)
                        finally:
                            context.close()
                        print(f"{page:13} {scheme:5} {width:5} px · sidebar folded {seen['sidebarCollapsed']!s:5} · "
                              f"page {seen['pageScrollWidth']} px wide · main {seen['mainHeight']} px tall · "
                              f"key columns end at {keys} · {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
