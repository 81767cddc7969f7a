"""The app from a pip install: the built wheel in a fresh virtualenv, with the lowest Streamlit
pyproject.toml allows, starts with ``sentret app`` and lists the packaged example queries.

One virtualenv for the whole test (installing spaCy, pandas and the rest takes minutes). It needs the
package registry; it is skipped only when the registry cannot be reached, never because an install fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import tomllib

from sentret_core import Index
from tests.browser_util import free_port, stop

ROOT = Path(__file__).resolve().parents[1]
PACKAGED = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "sentret_core")  # what a wheel is built from

pytestmark = pytest.mark.network


def streamlit_floor() -> str:
    """The lowest Streamlit the project declares: ``streamlit>=X,<Y`` in pyproject.toml."""
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    found = [re.fullmatch(r"streamlit>=([\d.]+)(,<[\d.]+)?", d.replace(" ", "")) for d in dependencies]
    floors = [m.group(1) for m in found if m]
    assert len(floors) == 1, f"expected one streamlit>=X requirement, got {dependencies}"
    return floors[0]


def test_the_floor_is_the_version_whose_api_the_app_uses() -> None:
    # persist_state= on widgets (sentret_core/ui/state.py PERSIST) arrived in Streamlit 1.59.0 (its
    # widgets in 1.58.0 have no such parameter); st.Page(visibility=) and st.iframe are older than that
    assert streamlit_floor() == "1.59.0"


def _pip(python: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=timeout)


def _registry_reachable(scratch: Path) -> bool:
    """Whether pip can fetch from its configured registry at all (one small download, no install)."""
    probe = _pip(Path(sys.executable), "download", "--no-deps", "--quiet", "-d", str(scratch), "six", timeout=120)
    return probe.returncode == 0


def _build_wheel(out: Path, scratch: Path) -> Path:
    """The wheel of a copy of the sources (a build writes build/ and *.egg-info next to them)."""
    source = scratch / "source"
    source.mkdir()
    for name in PACKAGED:
        origin = ROOT / name
        if origin.is_dir():
            # without the compiled kernel built here: the wheel compiles its own
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
        else:
            shutil.copy2(origin, source / name)
    built = _pip(Path(sys.executable), "wheel", "--no-deps", "--quiet", "-w", str(out), str(source), timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = out.glob("sentret-*.whl")
    return wheel


# Run inside the fresh virtualenv: the packaged app script under Streamlit's AppTest, then every page.
APPTEST = """
import json, sys
from streamlit.testing.v1 import AppTest
import streamlit, sentret_core.ui.main as main
from sentret_core.models.bm25 import compiled

app = AppTest.from_file(main.__file__, default_timeout=120).run()
report = {"streamlit": streamlit.__version__, "script": main.__file__, "exceptions": [e.value for e in app.exception],
          "examples": list(app.selectbox(key="explore_example").options), "pages": {}, "kernel": compiled.available()}
for page in [page.module for page in main.PAGES]:
    script = f"from sentret_core.ui.pages import {page}\\n{page}.render()"
    shown = AppTest.from_string(script, default_timeout=120).run()
    report["pages"][page] = [e.value for e in shown.exception]
print(json.dumps(report))
"""


def test_the_wheel_runs_the_app_with_the_lowest_streamlit(small_index: Index, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    if not _registry_reachable(scratch):
        pytest.skip("the package registry cannot be reached: the wheel cannot be installed in a fresh virtualenv")
    wheel = _build_wheel(tmp_path / "dist", scratch)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, floor = venv / "bin" / "python", streamlit_floor()
    installed = _pip(python, "install", "--quiet", str(wheel), f"streamlit=={floor}", timeout=1800)
    assert installed.returncode == 0, installed.stderr[-3000:]

    env = dict(os.environ, SENTRET_INDEX_ROOT=str(tmp_path / "indexes"), PYTHONUNBUFFERED="1",
               SENTRET_JUDGMENTS_DB=str(tmp_path / "judgments.sqlite"), SENTRET_RANKERS=str(tmp_path / "rankers"),
               SENTRET_INDEX=str(small_index.path))
    env.pop("PYTHONPATH", None)  # nothing of this checkout: only what the wheel installed
    work = tmp_path / "elsewhere"  # no app.py, no .streamlit/ and no data/ here
    work.mkdir()
    demo = (ROOT / "sentret_core" / "ui" / "queries" / "demo.txt").read_text(encoding="utf-8").splitlines()
    expected = [line.strip() for line in demo if line.strip() and not line.startswith("#")]

    # the example queries and every page, under AppTest inside the virtualenv
    shown = subprocess.run([str(python), "-c", APPTEST], cwd=work, env=env, capture_output=True, text=True,
                           timeout=900)
    assert shown.returncode == 0, shown.stderr[-3000:]
    report = json.loads(shown.stdout.strip().splitlines()[-1])
    assert report["streamlit"] == floor and "site-packages" in report["script"]  # the wheel's, not this checkout's
    assert report["kernel"]  # the wheel compiled BM25's kernel (setup.py)
    from sentret_core.ui.main import PAGES  # this checkout's list of pages: the wheel renders each

    assert report["exceptions"] == [] and report["pages"] == {page.module: [] for page in PAGES}
    assert len(expected) >= 8 and report["examples"] == ["—", *expected]

    # `sentret app` serves it: the health check, then the page itself with HTTP 200
    port = free_port()
    log = tmp_path / "app.log"
    command = [str(venv / "bin" / "sentret"), "app", "--index", str(small_index.path), "--port", str(port)]
    with log.open("wb") as out:
        server = subprocess.Popen(command, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, log.read_text(errors="replace")[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as health:
                    if health.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        text = log.read_text(errors="replace")
        assert f"127.0.0.1:{port}" in text  # bound to this machine only, the default
    finally:
        stop(server)
