"""The ``sentret`` console script: :func:`sentret_core.cli.main.main`, with Ctrl-C while the command line is
still being imported answered as everywhere else (one line, exit 130), not with a traceback."""

from __future__ import annotations

import sys

INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def main() -> None:
    try:
        from sentret_core.cli.main import main as run

        code = run()
    except KeyboardInterrupt:
        sys.stderr.write("sentret: interrupted\n")
        code = INTERRUPTED
    raise SystemExit(code)
