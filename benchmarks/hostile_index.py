"""Damage a copy of an index in 258 ways and see what loading it and querying it does.

Every ``.npy`` file (23) gets {flip a byte, a huge first value, a scrambled 64 KiB block, a changed
header dtype, a changed header shape, truncation to half, truncation to zero, deletion}; every
``.parquet`` file (5) {flip, a huge value, scramble, a footer byte, the footer's length, truncate
half, truncate to zero, delete}; ``manifest.json`` 34 edits (each count +1, -1 and huge,
``term_occurrences = 0``, a count as a string or negative, a file's checksum changed or removed,
harmless fields changed, a flipped byte, truncation, deletion).

Each case loads the damaged copy with ``Index.load`` (no ``sentret verify``) and takes several
models' top 10 (with the sentences' texts) and the support sentences of one query, compared with
the same workload on the intact copy — in a fresh Python per case, or with ``--fork`` in a child
forked from a worker that imported everything once (the same outcome, ten times faster; what the
tests run). Then ``verify`` runs on the damaged copy.

Outcomes: ``signal`` (the process died of a signal: a segmentation fault takes an app server down),
``wrong`` (results differ from the intact index's, silently), ``traceback`` (an exception other than
a SentretError), ``IndexFormatError`` (a clear message), ``other SentretError``, ``identical``
(results equal the intact index's). Also reports how many cases ``sentret verify`` catches.

    .venv/bin/python benchmarks/hostile_index.py [--index data/indexes/demo] [--fork] [--workers 2] [--json out.json]

``benchmarks/hostile_resealed.py`` runs the resealed cases (hostile content behind consistent
checksums: manifests, shards, artefacts, rankers).

Seeded: the same index gives the same 258 cases. Pass ``--upgrade`` to first give the copy's
manifest the fields of the current format (``sentret verify --fix``) when the index is an older one.
To run it against older code: ``git worktree add /tmp/sentret-before HEAD`` and
``PYTHONPATH=/tmp/sentret-before .venv/bin/python benchmarks/hostile_index.py --fork`` from there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
QUERY = "Picasso and peace"
MODELS = ("bm25f.v1", "bm25.v1", "lm-2si.v1", "lm-dir.v1", "tfisf.v1", "tfisf-con.v1", "lm-class.v1", "lm-trigger.v1")


def workload(path: str, query: str, models: list[str]) -> tuple[int, str, str]:
    """Load (no verify) and query: (exit code, results as JSON, the last line of any error).

    Exit codes: 0 results, 3 IndexFormatError, 4 another SentretError, 5 any other exception."""
    from sentret_core import Index, score, support, top_k
    from sentret_core.errors import IndexFormatError, SentretError

    try:
        index = Index.load(path)
        out: dict[str, object] = {}
        for model in models:
            top = top_k(score(index, query, model), 10)
            out[model] = [[int(i), round(float(v), 9)] for i, v in zip(top.ids, top.scores)]
            out[model + "/texts"] = [index.texts[int(i)] for i in top.ids]
        result = json.loads(json.dumps(support(index, query, top_entities=5, per_entity=2).to_dict(), default=str))
        result.pop("timings", None)
        out["support"] = result
    except IndexFormatError as err:
        return 3, "", f"IndexFormatError: {err}"
    except SentretError as err:
        return 4, "", f"{type(err).__name__}: {err}"
    except Exception as err:
        return 5, "", f"RAW {type(err).__name__}: {err}"
    return 0, json.dumps(out, sort_keys=True), ""


def verify_outcome(path: str) -> tuple[int, str]:
    """(1 if ``verify`` finds a problem or refuses the folder, else 0; what it says)."""
    from sentret_core.index.reader import verify

    try:
        problems = verify(path)
    except Exception as err:
        return 1, f"{type(err).__name__}: {err}"
    return (1 if problems else 0), "; ".join(problems)


# --- the mutations ---------------------------------------------------------------------------------


def _npy_header(path: Path) -> tuple[int, np.dtype, tuple[int, ...]]:
    with path.open("rb") as handle:
        version = np.lib.format.read_magic(handle)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(handle)
        return handle.tell(), dtype, shape


def _rewrite_header(path: Path, change: Callable[[str], str]) -> None:
    """Edit the header text of a .npy in place, keeping its length (padding with spaces)."""
    raw = bytearray(path.read_bytes())
    offset, _, _ = _npy_header(path)
    start = 10 if raw[6] == 1 else 12
    text = raw[start:offset].decode("latin1")
    new = change(text.rstrip("\n").rstrip())
    new = new.ljust(len(text) - 1) + "\n"
    assert len(new) == len(text), (path, text, new)
    raw[start:offset] = new.encode("latin1")
    path.write_bytes(bytes(raw))


def _flip(path: Path, rng: random.Random) -> None:
    raw = bytearray(path.read_bytes())
    first = _npy_header(path)[0] if path.suffix == ".npy" else 0
    if len(raw) > first:
        where = rng.randrange(first, len(raw))
        raw[where] ^= 0xFF
    path.write_bytes(bytes(raw))


def _huge(path: Path, rng: random.Random) -> None:
    offset, dtype, shape = _npy_header(path)
    raw = bytearray(path.read_bytes())
    if int(np.prod(shape)) == 0:
        return
    value = np.array([np.iinfo(dtype).max if dtype.kind in "iu" else 1e300], dtype=dtype)
    raw[offset : offset + dtype.itemsize] = value.tobytes()
    path.write_bytes(bytes(raw))


def _scramble(path: Path, rng: random.Random) -> None:
    raw = bytearray(path.read_bytes())
    first = _npy_header(path)[0] if path.suffix == ".npy" else 0
    size = min(64 * 1024, len(raw) - first)
    if size <= 0:
        return
    start = rng.randrange(first, len(raw) - size + 1)
    raw[start : start + size] = rng.randbytes(size)
    path.write_bytes(bytes(raw))


def _header_dtype(path: Path, rng: random.Random) -> None:
    swap = {"<i4": "<f4", "<i8": "<f8", "<f8": "<i8", "|i1": "|u1", "<f4": "<i4"}

    def change(text: str) -> str:
        for old, new in swap.items():
            if f"'{old}'" in text:
                return text.replace(f"'{old}'", f"'{new}'")
        raise AssertionError(text)

    _rewrite_header(path, change)


def _header_shape(path: Path, rng: random.Random) -> None:
    _, _, shape = _npy_header(path)
    old = f"'shape': {shape!r}"
    new = f"'shape': ({max(shape[0] - 1, 0)},)"
    _rewrite_header(path, lambda text: text.replace(old, new))


def _truncate_half(path: Path, rng: random.Random) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def _truncate_zero(path: Path, rng: random.Random) -> None:
    path.write_bytes(b"")


def _delete(path: Path, rng: random.Random) -> None:
    path.unlink()


NPY = {"flip": _flip, "huge value": _huge, "scramble 64 KiB": _scramble, "header dtype": _header_dtype,
       "header shape": _header_shape, "truncate half": _truncate_half, "truncate to zero": _truncate_zero,
       "delete": _delete}


def _parquet_huge(path: Path, rng: random.Random) -> None:
    """The first 8 bytes of the first column chunk set to all ones."""
    raw = bytearray(path.read_bytes())
    raw[4:12] = b"\xff" * 8
    path.write_bytes(bytes(raw))


def _parquet_footer_byte(path: Path, rng: random.Random) -> None:
    """One byte of the footer (the schema, row counts and offsets: the table's header) flipped."""
    raw = bytearray(path.read_bytes())
    length = int.from_bytes(raw[-8:-4], "little")
    raw[len(raw) - 8 - length + rng.randrange(length)] ^= 0xFF
    path.write_bytes(bytes(raw))


def _parquet_footer_length(path: Path, rng: random.Random) -> None:
    """The footer's length field set to a huge value."""
    raw = bytearray(path.read_bytes())
    raw[-8:-4] = (2**31 - 1).to_bytes(4, "little")
    path.write_bytes(bytes(raw))


PARQUET = {"flip": _flip, "huge value": _parquet_huge, "scramble 64 KiB": _scramble,
           "footer byte": _parquet_footer_byte, "footer length": _parquet_footer_length,
           "truncate half": _truncate_half, "truncate to zero": _truncate_zero, "delete": _delete}


def _manifest_edit(change: Callable[[dict], None]) -> Callable[[Path, random.Random], None]:
    def edit(path: Path, rng: random.Random) -> None:
        manifest = json.loads(path.read_text())
        change(manifest)
        path.write_text(json.dumps(manifest, indent=2, sort_keys=True))

    return edit


def _count(key: str, change: Callable[[int], object]) -> Callable[[dict], None]:
    def edit(manifest: dict) -> None:
        manifest["counts"][key] = change(manifest["counts"][key])

    return edit


def _zero_occurrences(manifest: dict) -> None:
    manifest["counts"]["term_occurrences"] = 0


def _other_checksum(manifest: dict) -> None:
    manifest["files"]["X.data.npy"] = "0" * 64


def _drop_file(manifest: dict) -> None:
    del manifest["files"]["sent_len.npy"]


def _string_count(manifest: dict) -> None:
    manifest["counts"]["sentences"] = str(manifest["counts"]["sentences"])


COUNTED = ("sentences", "documents", "terms", "entities", "mentions", "term_occurrences")
MANIFEST: dict[str, Callable[[Path, random.Random], None]] = {}
for _key in COUNTED:
    MANIFEST[f"counts.{_key} + 1"] = _manifest_edit(_count(_key, lambda v: v + 1))
    MANIFEST[f"counts.{_key} - 1"] = _manifest_edit(_count(_key, lambda v: v - 1))
    MANIFEST[f"counts.{_key} huge"] = _manifest_edit(_count(_key, lambda v: 10**12))
MANIFEST.update(
    {
        "counts.term_occurrences = 0": _manifest_edit(_zero_occurrences),
        "counts.sentences a string": _manifest_edit(_string_count),
        "files[X.data.npy] changed": _manifest_edit(_other_checksum),
        "files[sent_len.npy] removed": _manifest_edit(_drop_file),
        "counts.sentences negative": _manifest_edit(_count("sentences", lambda v: -v)),
        "counts.terms = 0": _manifest_edit(_count("terms", lambda v: 0)),
        "counts.words + 1": _manifest_edit(_count("words", lambda v: v + 1)),
        "counts removed": _manifest_edit(lambda m: m.pop("counts")),
        "files emptied": _manifest_edit(lambda m: m.update(files={})),
        "format removed": _manifest_edit(lambda m: m.pop("format")),
        "source changed": _manifest_edit(lambda m: m.update(source="elsewhere")),
        "model changed": _manifest_edit(lambda m: m.update(model="another_model")),
        "created changed": _manifest_edit(lambda m: m.update(created="2000-01-01T00:00:00+0000")),
        "flip": _flip,
        "truncate half": _truncate_half,
        "delete": _delete,
    }
)


def cases(index: Path) -> list[tuple[str, str, Callable[[Path, random.Random], None]]]:
    found = []
    for file in sorted(index.iterdir()):
        if file.suffix == ".npy":
            found += [(file.name, name, fn) for name, fn in NPY.items()]
        elif file.suffix == ".parquet":
            found += [(file.name, name, fn) for name, fn in PARQUET.items()]
    found += [("manifest.json", name, fn) for name, fn in MANIFEST.items()]
    return found


# --- running: a fresh Python per case, or a fork per case from one warmed-up process -------------


def _env() -> dict[str, str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(ROOT)) if p)
    return env


def run_subprocess(path: Path, models: list[str], timeout: float) -> tuple[int, str, str, int, str]:
    """The workload and verify, each in a fresh Python: (code, results, message, verify code, its text)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--run-one", str(path), "--models", ",".join(models)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=_env())
    except subprocess.TimeoutExpired:
        return 999, "", "timeout", 1, ""
    verify = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--verify-one", str(path)],
        capture_output=True, text=True, env=_env(),
    )
    message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    return done.returncode, done.stdout, message, verify.returncode, verify.stdout.strip()


def in_child(job: Callable[[], tuple[int, str, str]], timeout: float) -> tuple[int, str, str]:
    """``job`` in a forked child: its code (negative: the signal that ended it), output, message."""
    with tempfile.NamedTemporaryFile(prefix="hostile-", suffix=".json", delete=False) as out:
        pass
    pid = os.fork()
    if pid == 0:  # the child: run, write, leave without any clean-up of the parent's
        code = 5
        try:
            code, stdout, message = job()
            Path(out.name).write_text(json.dumps([stdout, message]))
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.unlink(out.name)
            return 999, "", "timeout"
        time.sleep(0.002)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    text = Path(out.name).read_text()
    os.unlink(out.name)
    stdout, message = json.loads(text) if text else ("", "")
    return code, stdout, message


def run_forked(path: Path, models: list[str], timeout: float) -> tuple[int, str, str, int, str]:
    code, stdout, message = in_child(lambda: workload(str(path), QUERY, models), timeout)
    vcode, vtext = verify_outcome(str(path))  # it only hashes and checks: no need for a process of its own
    return code, stdout, message, vcode, vtext


def classify(code: int, stdout: str, reference: str) -> str:
    if code < 0:
        return "signal"
    if code == 999:
        return "timeout"
    if code == 3:
        return "IndexFormatError"
    if code == 4:
        return "other SentretError"
    if code != 0:
        return "traceback"
    return "identical" if stdout == reference else "wrong"


OUTCOMES = ("signal", "wrong", "traceback", "timeout", "IndexFormatError", "other SentretError", "identical")


def run_shard(copy: Path, shard: int, shards: int, models: list[str], seed: int, fork: bool, timeout: float,
              limit: int, quiet: bool) -> list[dict]:
    """Cases ``shard``, ``shard + shards``, … on ``copy`` (each restored after), one after the other."""
    run = run_forked if fork else run_subprocess
    if fork:  # everything imported and warmed up once, before the first fork (the intact copy: no state
        workload(str(copy), QUERY, models)  # is kept but per-process caches such as spaCy's tokenizer)
    code, reference, message, vcode, vtext = run(copy, models, timeout)
    if code != 0 or vcode != 0:
        raise SystemExit(f"the intact index fails the workload (exit {code}: {message}) or verify ({vtext})")
    todo = cases(copy)
    todo = todo[: limit or len(todo)]
    results = []
    for i in range(shard, len(todo), shards):
        file, name, mutate = todo[i]
        target = copy / file
        original = target.read_bytes()
        mutate(target, random.Random(f"{seed}/{file}/{name}"))
        changed = not target.exists() or target.read_bytes() != original
        try:
            code, stdout, message, vcode, vtext = run(copy, models, timeout)
        finally:
            target.write_bytes(original)
        outcome = classify(code, stdout, reference)
        result = {"case": i, "file": file, "mutation": name, "changed": changed, "outcome": outcome, "exit": code,
                  "message": message[:300], "verify_caught": vcode != 0, "verify": vtext[:300]}
        results.append(result)
        if not quiet:
            caught = "caught" if vcode else "MISSED"
            line = f"[{i + 1:3}/{len(todo)}] {file:22} {name:28} {outcome:18} verify={caught}  {message[:110]}"
            print(line, file=sys.stderr, flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--index", default=str(ROOT / "data" / "indexes" / "demo"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--limit", type=int, default=0, help="run only the first N cases (for a quick look)")
    parser.add_argument(
        "--fork",
        action="store_true",
        help="fork each case from a process that imported everything once (fast; for the tests)",
    )
    parser.add_argument("--upgrade", action="store_true", help="first bring the copy's manifest to the current format")
    parser.add_argument("--quiet", action="store_true", help="no line per case")
    parser.add_argument("--json", help="write every case's outcome here")
    parser.add_argument("--run-one", help=argparse.SUPPRESS)
    parser.add_argument("--verify-one", help=argparse.SUPPRESS)
    parser.add_argument("--shard", help=argparse.SUPPRESS)
    args = parser.parse_args()
    models = args.models.split(",")
    if args.run_one:
        code, stdout, message = workload(args.run_one, QUERY, models)
        print(stdout, end="")
        print(message, file=sys.stderr)
        return code
    if args.verify_one:
        code, text = verify_outcome(args.verify_one)
        print(text)
        return code
    if args.shard:  # one worker: --shard i/n --index COPY; results as JSON on stdout
        shard, shards = map(int, args.shard.split("/"))
        found = run_shard(Path(args.index), shard, shards, models, args.seed, args.fork, args.timeout, args.limit,
                          args.quiet)
        print(json.dumps(found))
        return 0

    work = Path(tempfile.mkdtemp(prefix="sentret-hostile-"))
    try:
        started = time.perf_counter()
        workers = []
        for w in range(args.workers):
            copy = work / f"w{w}" / "index"
            shutil.copytree(args.index, copy, ignore=shutil.ignore_patterns(".lock"))
            if args.upgrade:
                from sentret_core.index.upgrade import upgrade_manifest

                upgrade_manifest(copy)
            command = [sys.executable, str(Path(__file__).resolve()), "--shard", f"{w}/{args.workers}", "--index",
                       str(copy), "--models", args.models, "--seed", str(args.seed), "--timeout", str(args.timeout),
                       "--limit", str(args.limit)]
            command += (["--fork"] if args.fork else []) + (["--quiet"] if args.quiet else [])
            env = dict(_env(), SENTRET_RANKERS=str(work / f"w{w}" / "rankers"))
            workers.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env))
        results: list[dict] = []
        for process in workers:
            stdout, _ = process.communicate()
            if process.returncode != 0:
                print(f"a worker failed (exit {process.returncode})", file=sys.stderr)
                return 1
            results += json.loads(stdout)
        results.sort(key=lambda r: r["case"])
        counts = Counter(r["outcome"] for r in results)
        caught = sum(r["verify_caught"] for r in results)
        print(f"{len(results)} cases of {args.index} in {time.perf_counter() - started:.0f} s")
        for outcome in OUTCOMES:
            print(f"  {outcome:20} {counts.get(outcome, 0):4}")
        print(f"  verify caught        {caught:4} of {len(results)}")
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
