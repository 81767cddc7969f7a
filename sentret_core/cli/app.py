"""``sentret app``: start the Streamlit app from an installed package (no checkout, no ``app.py``).

It runs ``streamlit run`` on the packaged script :mod:`sentret_core.ui.main` with the settings the
repository's ``.streamlit/config.toml`` holds passed as flags, because Streamlit reads that file only
from the working directory, which for an installed package is the user's own folder. The server trusts
``X-Forwarded-For`` only from the proxies ``--trusted-proxy`` names (see
:mod:`sentret_core.annotation.client_address`): otherwise a sign-in's client is the TCP peer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sentret_core.cli.common import command

DEFAULT_HOST = "127.0.0.1"  # this machine only; --host 0.0.0.0 shares the app on the network
DEFAULT_PORT = 8501


def register(sub: Any) -> None:
    p = command(sub, "app", "Start the web app (Streamlit) on this machine.", _run_app)
    p.add_argument("--index", default=None, metavar="DIR",
                   help="the index opened first (default: $SENTRET_INDEX, else data/indexes/demo)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"the port (default {DEFAULT_PORT})")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"the address to listen on (default {DEFAULT_HOST}: this machine only; "
                        "0.0.0.0 lets other machines on the network in)")
    p.add_argument("--trusted-proxy", action="append", default=None, metavar="ADDRESS",
                   help="a reverse proxy whose X-Forwarded-For names the browser, as an address or a network "
                        "(10.0.0.0/8); repeatable or comma-separated (default: $SENTRET_TRUSTED_PROXY, else none: "
                        "the header is ignored and sign-ins are throttled by the connecting address)")


def streamlit_command(script: Path, port: int, host: str) -> list[str]:
    """``streamlit run`` (through :mod:`sentret_core.ui.serve`, which starts the warm-up with the server) with the
    settings of .streamlit/config.toml as flags (a test checks they agree)."""
    from sentret_core.ui.upload import MAX_TOTAL_MB

    settings = {
        "server.port": str(port),
        "server.address": host,
        "server.headless": "true",  # never try to open a browser; print the address instead
        "server.maxUploadSize": str(MAX_TOTAL_MB),
        "server.fileWatcherType": "none",  # an installed package does not change under the server
        "browser.gatherUsageStats": "false",
        "client.toolbarMode": "viewer",  # no developer menu (Deploy, Rerun settings) for the app's users
        "runner.postScriptGC": "false",  # a full collection after every run delays its last messages
    }
    flags = [part for key, value in settings.items() for part in (f"--{key}", value)]
    return [sys.executable, "-m", "sentret_core.ui.serve", "run", str(script), *flags]


def _run_app(args: argparse.Namespace) -> int:
    import logging
    import os
    from importlib.util import find_spec

    from sentret_core.annotation.client_address import TRUSTED_PROXY_ENV, parse_trusted, server_environment
    from sentret_core.checks import check_int
    from sentret_core.errors import SentretError
    from sentret_core.index.format import is_index

    port = check_int("--port", args.port, 1, 65_535)
    named = args.trusted_proxy if args.trusted_proxy is not None else [os.environ.get(TRUSTED_PROXY_ENV, "")]
    trust = server_environment(parse_trusted(named))
    env = dict(os.environ, **trust)
    if args.index is not None:
        index = Path(args.index).expanduser().resolve()
        if not is_index(index):
            raise SentretError(f"--index {args.index}: not a sentret index (build one with `sentret index SOURCE "
                               "--out DIR`)")
        env["SENTRET_INDEX"] = str(index)
    spec = find_spec("sentret_core.ui.main")  # its path, without importing Streamlit and the pages here
    assert spec is not None and spec.origin is not None
    command_line = streamlit_command(Path(spec.origin), port, args.host)
    logging.getLogger(__name__).debug("running %s", " ".join(command_line))
    proxies = f"; X-Forwarded-For trusted from {trust[TRUSTED_PROXY_ENV]}" if trust[TRUSTED_PROXY_ENV] else ""
    print(f"sentret app: http://{'localhost' if args.host == DEFAULT_HOST else args.host}:{port} "
          f"(Ctrl-C stops it{proxies})", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os.execve(sys.executable, command_line, env)  # the server replaces this process: Ctrl-C and signals reach it
    return 0  # not reached
