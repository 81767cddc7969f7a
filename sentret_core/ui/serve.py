"""The app's server process: ``python -m sentret_core.ui.serve run SCRIPT [FLAGS]`` is ``streamlit run SCRIPT
[FLAGS]`` (the same arguments, run in this process) with the warm-up of the default index started first.

A bare ``streamlit run`` runs nothing of the app until a browser opens it, so its first page had to load the
index, spaCy and the default models' statistics itself (about 2 s of the 5-6 s it took on a quiet 2-core
machine). Started here, the warm-up does that while the server starts and the browser loads Streamlit's
frontend; the first page waits for whatever of it is still under way (:func:`sentret_core.ui.state.wait_for_warm_up`).
``make run``, ``sentret app`` and the browser tests start the app this way.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from streamlit.web.cli import main as streamlit_main

    from sentret_core.ui.state import warm_up

    warm_up()
    streamlit_main(sys.argv[1:] if argv is None else argv, prog_name="streamlit")


if __name__ == "__main__":
    main()
