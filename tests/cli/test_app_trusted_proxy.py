"""`sentret app --trusted-proxy`, in two processes: the real app served by `sentret app` in a subprocess, and
sign-in attempts from this one over Streamlit's websocket, each with a forged ``X-Forwarded-For`` — what a
guesser behind a local forwarder (an SSH tunnel, socat, ``kubectl port-forward``) can send.

Without ``--trusted-proxy`` the header gives no fresh allowance (every attempt is the TCP peer's, "local");
with ``--trusted-proxy 127.0.0.1`` it is honoured (each forged address has its own count, and only the
name's ceiling across clients holds); a server started some other way, which trusts loopback without
sentret knowing, counts every forged address as one client. What the server counted is read back from
the judgments database.

The waits are made long before the attempts, not raced: a key is given failures of 100 s ago
(:func:`failed_before`), so that its next failure is checked and then makes it wait a minute, longer than
the rest of the test — however slow the machine, every later attempt under that key is refused.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sentret_core import Index
from sentret_core.annotation.client_address import SERVER_TRUST_ENV, TRUSTED_PROXY_ENV, UNVERIFIED
from sentret_core.annotation.records import ADMIN_TOKEN_ENV
from sentret_core.annotation.session_setup import create_session
from sentret_core.annotation.store import JudgmentStore
from sentret_core.annotation.throttle import ceiling_of
from sentret_core.cli.main import main
from tests.browser_util import free_port, stop, streamlit_server
from tests.stream_client import StreamClient

TOKEN = "trusted-proxy-admin-token"
WRONG_TOKEN = "wrong admin token"
WRONG = "wrong name or passphrase"
WAIT = "too many failed sign-ins"


def test_a_trusted_proxy_must_be_an_address_or_a_network(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("*", "proxy.example", "10.0.0.0/33"):
        assert main(["app", "--trusted-proxy", bad]) == 2
        assert f"--trusted-proxy {bad!r}: not an IP address or network" in capsys.readouterr().err


@pytest.fixture
def judgments(small_index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A database with session "s" (annotator carol) for the server to use; the app's environment."""
    db = tmp_path / "judgments.sqlite"
    monkeypatch.setenv(ADMIN_TOKEN_ENV, TOKEN)
    with JudgmentStore(db) as store:
        create_session(store, "s", small_index, "picasso peace", top_entities=3, depth=1)
        store.admin(TOKEN).add_annotator("s", "carol", "carol-passphrase")
    return db


@contextmanager
def sentret_app(index: Index, db: Path, log: Path, *flags: str) -> Iterator[str]:
    """``sentret app --index INDEX FLAGS`` on a free port, with ``db`` and the admin token; its URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in (TRUSTED_PROXY_ENV, SERVER_TRUST_ENV)}
    env.update(SENTRET_JUDGMENTS_DB=str(db), SENTRET_INDEX_ROOT=str(index.path.parent), PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "sentret_core", "app", "--index", str(index.path), "--port", str(port), *flags]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while b"Uvicorn server started" not in log.read_bytes():
            assert process.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def admin_tries(url: str, forged: list[str]) -> list[str]:
    """One wrong admin token per forged address, each from a new connection; what the page said."""
    said = []
    for address in forged:
        with StreamClient(url, "admin", {"X-Forwarded-For": address}) as tab:
            page = tab.run({"Admin token": "a wrong guess"}, "Sign in as admin", tab.open())
        said.append(next(t for t in page.texts if WRONG_TOKEN in t or WAIT in t))
    return said


def carol_tries(url: str, forged: list[str]) -> list[str]:
    said = []
    for address in forged:
        with StreamClient(url, "annotate", {"X-Forwarded-For": address}) as tab:
            values = {"Session": "s", "Your name": "carol", "Your passphrase": "a wrong guess"}
            page = tab.run(values, "Sign in", tab.open())
        said.append(next(t for t in page.texts if WRONG in t or WAIT in t))
    return said


def counted_clients(db: Path) -> set[str]:
    """The clients the server counted attempts under (the last part of each per-client key)."""
    with sqlite3.connect(db) as conn:
        keys = [json.loads(row[0]) for row in conn.execute("SELECT DISTINCT key FROM sign_in_attempts")]
    return {key[-1] for key in keys if key[0] in ("admin", "name", "client")}


def failed_before(db: Path, key: tuple[str, ...], failures: int) -> None:
    """``failures`` failed attempts under ``key`` 100 s ago: over their wait, inside the throttle's window."""
    at = time.time() - 100
    with sqlite3.connect(db) as conn:
        rows = [(json.dumps(list(key)), at)] * failures
        conn.executemany("INSERT INTO sign_in_attempts (key, at) VALUES (?, ?)", rows)
    conn.close()


FORGED = [f"203.0.113.{n}" for n in range(1, 13)]
NEXT_WAITS_A_MINUTE = 8  # free 3: the ninth failure waits 2 ** 6 s, capped at 60
CEILING_NEXT_WAITS = 14  # ceiling free 10: the fifteenth waits 2 ** 5 s


@pytest.mark.slow
def test_without_a_trusted_proxy_a_forged_header_buys_no_new_allowance(
    small_index: Index, judgments: Path, tmp_path: Path
) -> None:
    failed_before(judgments, ("admin", "local"), NEXT_WAITS_A_MINUTE)
    failed_before(judgments, ("client", "local"), NEXT_WAITS_A_MINUTE)
    with sentret_app(small_index, judgments, tmp_path / "app.log") as url:
        said = admin_tries(url, FORGED[:5])
        assert [s == WRONG_TOKEN for s in said] == [True] + [False] * 4  # every forged address is the peer's
        said = carol_tries(url, FORGED[5:10])
        assert [WRONG in s for s in said] == [True] + [False] * 4
    assert counted_clients(judgments) == {"local"}  # the TCP peer, never the header


@pytest.mark.slow
def test_with_trusted_proxy_127_0_0_1_the_header_is_honoured_up_to_the_names_ceiling(
    small_index: Index, judgments: Path, tmp_path: Path
) -> None:
    failed_before(judgments, ("admin", "local"), NEXT_WAITS_A_MINUTE)  # the peer's own count: not used
    failed_before(judgments, ceiling_of("name", "s", "carol"), CEILING_NEXT_WAITS)
    with sentret_app(small_index, judgments, tmp_path / "app.log", "--trusted-proxy", "127.0.0.1") as url:
        assert admin_tries(url, FORGED[:4]) == [WRONG_TOKEN] * 4  # each forged client has its own count
        said = carol_tries(url, FORGED[4:])  # eight fresh clients: one checked, then carol's name waits
        assert [WRONG in s for s in said] == [True] + [False] * 7
    assert counted_clients(judgments) == {"local", *FORGED[:5]}  # the refused are not counted


@pytest.mark.slow
def test_a_server_trusting_loopback_unbeknown_to_sentret_counts_forged_addresses_as_one(
    small_index: Index, judgments: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`streamlit run app.py` without `make run`'s variables: uvicorn trusts 127.0.0.1 by default."""
    monkeypatch.delenv(SERVER_TRUST_ENV, raising=False)
    monkeypatch.delenv(TRUSTED_PROXY_ENV, raising=False)
    failed_before(judgments, ("admin", UNVERIFIED), NEXT_WAITS_A_MINUTE)
    with streamlit_server(small_index.path, small_index.path.parent, tmp_path / "bare.log",
                          extra_env={"SENTRET_JUDGMENTS_DB": str(judgments)}) as server:
        said = admin_tries(server.url, FORGED[:4])
        assert [s == WRONG_TOKEN for s in said] == [True] + [False] * 3
    assert counted_clients(judgments) == {UNVERIFIED}
