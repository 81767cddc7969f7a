"""Ray on a real two-node cluster: a head and a second node started with `ray start` (1 CPU each), joined by
`sentret parse --engine ray --address 127.0.0.1:PORT`; both nodes parse, and the shards are the local engine's.

Ray replaces 127.0.0.1 with the machine's interface address, which a second node then cannot be told
apart by; so the cluster and the command run in a network namespace of their own (``unshare -rn``: a user
and a network namespace, no root needed) where only the loopback interface exists. HOME and Ray's
temporary folder are the test's own: no token or cluster file of the user's is read, none is left.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from sentret_core.ingest.build import parse_source
from sentret_core.ingest.engine import Engine

pytest.importorskip("ray", reason="Ray is the optional `scale` extra (pip install -e '.[scale]'); CI installs it")

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CLUSTER = """
set -eu
ip link set lo up
trap 'ray stop --force > /dev/null 2>&1 || true' EXIT
ray start --head --port 6379 --num-cpus 1 --include-dashboard false --disable-usage-stats --temp-dir "$RAY_TMP" \
    > "$RAY_TMP/head.log" 2>&1
ray start --address 127.0.0.1:6379 --num-cpus 1 --disable-usage-stats > "$RAY_TMP/node.log" 2>&1
sentret parse "$SOURCE" --out "$OUT" --engine ray --address 127.0.0.1:6379 --shard-documents 20
"""


def namespaces_work() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    try:
        return subprocess.run(["unshare", "-rn", "ip", "link", "set", "lo", "up"], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not namespaces_work(), reason="needs `unshare -rn` (user and network namespaces) and `ip`")
def test_two_nodes_both_parse_and_the_shards_are_the_local_engines(tmp_path: Path) -> None:
    source = tmp_path / "towns.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for i in range(60):
            text = f"Town {i} lies in France. Its mayor met the press in Lyon on Monday {i}."
            out.write(json.dumps({"id": f"t{i}", "title": f"Town {i}", "text": text}) + "\n")
    ray_tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": f"{BIN}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(home), "TMPDIR": str(ray_tmp),
           "RAY_TMP": str(ray_tmp), "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
           "SOURCE": str(source), "OUT": str(tmp_path / "cluster"), "LANG": "C.UTF-8"}
    try:
        ran = subprocess.run(["unshare", "-rn", "bash", "-c", CLUSTER], env=env, cwd=ROOT, capture_output=True,
                             text=True, timeout=600)
    finally:
        logs = {name: (ray_tmp / name).read_text(errors="replace")[-2000:] for name in ("head.log", "node.log")
                if (ray_tmp / name).exists()}
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert ran.returncode == 0, (ran.stderr[-3000:], logs)
    assert "parsed on 2 Ray node(s): 127.0.0.1 (" in ran.stderr, ran.stderr[-3000:]
    both = next(line for line in ran.stderr.splitlines() if "parsed on 2 Ray node(s)" in line)
    assert both.count(" batches") == 2  # each node parsed batches of its own

    parse_source(source, tmp_path / "local", engine=Engine(n_process=1), shard_documents=20)
    local = sorted(p.name for p in (tmp_path / "local").iterdir())
    assert local == sorted(p.name for p in (tmp_path / "cluster").iterdir())
    for name in local:
        assert (tmp_path / "cluster" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
