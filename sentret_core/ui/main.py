"""sentret's Streamlit app: builds the navigation and nothing else (the pages live in sentret_core.ui.pages).

Packaged so that ``sentret app`` runs it from an installed wheel (``streamlit run`` of this file); the
repository's ``app.py`` calls :func:`run` so ``streamlit run app.py`` and ``make run`` work as before.
"""

import importlib
import threading
from collections.abc import Callable
from typing import NamedTuple

import streamlit as st

from sentret_core.learning import scorer as _ltr  # noqa: F401  registers ltr.v1: the pages import submodules only
from sentret_core.ui.state import warm_up


def _page(module: str) -> Callable[[], None]:
    """A page's ``render``, its module imported on the first visit: the first page does not wait for
    the others' imports (Evaluate's scipy.stats alone takes seconds on a busy machine)."""

    def render() -> None:
        importlib.import_module(f"sentret_core.ui.pages.{module}").render()

    render.__name__ = module  # Streamlit names a page's script after its function
    return render


class Page(NamedTuple):
    """A page of the navigation: its module in ``sentret_core.ui.pages`` (with a ``render()``), title, icon, URL."""

    module: str
    title: str
    icon: str
    url_path: str


# the app's pages, in the sidebar's order: the one list a new page is added to (docs/extending.md)
PAGES = (
    Page("explore", "Explore", "🔎", "explore"),
    Page("howto", "How it works", "🧮", "how-it-works"),
    Page("corpus", "Corpus", "📚", "corpus"),
    Page("annotate", "Annotate", "✍️", "annotate"),
    Page("evaluate", "Evaluate", "📊", "evaluate"),
    Page("admin", "Admin", "🔐", "admin"),
)
_imported = threading.Event()


def _import_pages() -> None:
    """Import every page's module once per process, in the background after the first page is drawn,
    so that a first switch to another page does not wait for its imports either."""
    for page in PAGES:
        importlib.import_module(f"sentret_core.ui.pages.{page.module}")


def run() -> None:
    """One script run: page config, the navigation, then (once) the background warm-up and page imports."""
    st.set_page_config(page_title="sentret — entity support sentences", page_icon="🔎", layout="wide")
    first = PAGES[0]
    navigation = st.navigation(
        [
            # the first page answers at / (the default) and at its own path (the sidebar's link), so both kinds of
            # link work
            st.Page(_page(first.module), title=first.title, icon=first.icon, url_path="home", default=True,
                    visibility="hidden"),
            *(st.Page(_page(page.module), title=page.title, icon=page.icon, url_path=page.url_path)
              for page in PAGES),
        ]
    )
    navigation.run()
    # once per process, in the background: the index, the query tokenizer, the default models' statistics.
    # sentret_core.ui.serve (make run, sentret app) started it with the server; under a bare `streamlit run` it
    # starts only now, after the first page is drawn, which would otherwise share the two cores (and the GIL) with it
    warm_up()
    if not _imported.is_set():
        _imported.set()
        threading.Thread(target=_import_pages, name="sentret-import-pages", daemon=True).start()


if __name__ == "__main__":  # `streamlit run sentret_core/ui/main.py` runs the script as __main__
    run()
