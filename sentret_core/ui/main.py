"""sentret's Streamlit app: builds the navigation and nothing else (the pages live in sentret_core.ui.pages).

Packaged so that ``sentret app`` runs it from an installed wheel (``streamlit run`` of this file); the
repository's ``app.py`` calls :func:`run` so ``streamlit run app.py`` and ``make run`` work as before.
"""

import importlib
import threading
from collections.abc import Callable

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


PAGES = ("explore", "howto", "corpus", "annotate", "evaluate", "admin")
_imported = threading.Event()


def _import_pages() -> None:
    """Import every page's module once per process, in the background after the first page is drawn,
    so that a first switch to another page does not wait for its imports either."""
    for module in PAGES:
        importlib.import_module(f"sentret_core.ui.pages.{module}")


def run() -> None:
    """One script run: page config, the navigation, then (once) the background warm-up and page imports."""
    st.set_page_config(page_title="sentret — entity support sentences", page_icon="🔎", layout="wide")
    navigation = st.navigation(
        [
            # Explore answers at / (the default) and at /explore (the sidebar's link), so both kinds of link work
            st.Page(_page("explore"), title="Explore", icon="🔎", url_path="home", default=True, visibility="hidden"),
            st.Page(_page("explore"), title="Explore", icon="🔎", url_path="explore"),
            st.Page(_page("howto"), title="How it works", icon="🧮", url_path="how-it-works"),
            st.Page(_page("corpus"), title="Corpus", icon="📚", url_path="corpus"),
            st.Page(_page("annotate"), title="Annotate", icon="✍️", url_path="annotate"),
            st.Page(_page("evaluate"), title="Evaluate", icon="📊", url_path="evaluate"),
            st.Page(_page("admin"), title="Admin", icon="🔐", url_path="admin"),
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
