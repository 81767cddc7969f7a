"""Resealed hostile files, beside the damage matrix of ``benchmarks/hostile_index.py``.

The damage matrix of ``hostile_index.py`` damages files by accident; here an attacker also rewrites
every checksum, so each manifest is consistent and only checks on what the files *are* can tell.
Four groups, each case on a fresh copy of the index, its workload and ``verify`` each in a forked child with a timeout:

* **manifests**: the index manifest or the shards manifest naming ``/dev/zero``, ``../`` paths, a
  symlink out of the folder, a FIFO; JSON nested 100,000 deep; a model that is not a spaCy pipeline;
* **shards**: a valid Parquet file of another schema, a text column holding integers (top level and
  nested), a null text, counts that are not the shard's — workload: build an index from the shards;
* **artefacts**: word classes and trigger tables with out-of-range or negative indices, resealed
  with the artefact's own hash — workload: ``lm-class.v1`` / ``lm-trigger.v1`` queries;
* **rankers**: crafted LightGBM model texts (a cyclic tree, indices out of range or negative, 0 or
  huge ``num_leaves``, NaN leaves, an infinite threshold, a garbage ``decision_type``, huge
  categorical boundaries, 100k trees claimed, truncation) and a linear ranker with a NaN
  coefficient, stored under a name (``hostile_rankers.py``) — workload: ``ltr.v1`` by that name,
  and ``importance()``.

Outcomes: ``signal``, ``hang`` (the timeout), ``traceback`` (an exception that is not a
SentretError), ``clear error`` (a SentretError), ``wrong`` (results without an error that differ
from the intact copy's, or non-finite scores), ``identical``. For rankers, which have no intact
twin, a crafted text that loads and scores finitely is ``accepted``.

    .venv/bin/python benchmarks/hostile_resealed.py --index SMALL_INDEX [--json out.json] [--groups manifest,rankers]

The index needs the default artefacts (``classes``, ``triggers``) for the artefact group.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from hostile_index import MODELS, QUERY, in_child, workload
from hostile_rankers import ranker_workload, store_rankers

Job = Callable[[], tuple[int, str, str]]
OUTCOMES = ("signal", "hang", "traceback", "wrong", "clear error", "identical", "accepted")
LM_MODELS = ["bm25f.v1", "lm-dir.v1", "lm-class.v1", "lm-trigger.v1"]
BUILD_MODELS = ["bm25f.v1", "lm-dir.v1", "tfisf.v1"]  # a rebuilt index has no trained artefacts


# --- resealing --------------------------------------------------------------------------------------


def reseal_index(path: Path, change: Callable[[dict[str, Any]], None] | None = None) -> None:
    """``change`` the index manifest, then record every listed regular file's sha256, size and block
    digests and the manifest's own checksum again."""
    from sentret_core.index.blocks import block_digests
    from sentret_core.index.validate import canonical_checksum, sha256_of

    manifest = json.loads((path / "manifest.json").read_text())
    if change is not None:
        change(manifest)
    blocks = manifest.get("blocks", {}).get("sha256", {})
    for name in manifest["files"]:
        file = path / name
        if file.is_file() and file.resolve().is_relative_to(path.resolve()):
            manifest["files"][name], manifest["sizes"][name] = sha256_of(file), file.stat().st_size
            if name in blocks:
                blocks[name] = block_digests(file, manifest["blocks"]["bytes"])
    manifest.pop("checksum", None)
    manifest["checksum"] = canonical_checksum(manifest)
    (path / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))


def reseal_shards(path: Path, change: Callable[[dict[str, Any]], None] | None = None) -> None:
    from sentret_core.index.validate import canonical_checksum, sha256_of

    folder = path / "shards"
    manifest = json.loads((folder / "manifest.json").read_text())
    if change is not None:
        change(manifest)
    for shard in manifest["shards"]:
        file = folder / str(shard["file"])
        if file.is_file() and file.resolve().is_relative_to(folder.resolve()):
            shard["sha256"], shard["size"] = sha256_of(file), file.stat().st_size
    manifest.pop("checksum", None)
    manifest["checksum"] = canonical_checksum(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    reseal_index(path)


def _replace_shard(path: Path, table: Any) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, path / "shards" / "part-00000.parquet")
    reseal_shards(path)


def _shard_rows(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path / "shards" / "part-00000.parquet").to_pylist()


# --- the cases: (group, name, mutate the copy, workload kind) ---------------------------------------


def _deep(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _manifest_cases() -> dict[str, Callable[[Path], None]]:
    def listed(name: str) -> Callable[[Path], None]:
        return lambda p: reseal_index(p, lambda m: m["files"].update({name: "0" * 64}))

    def symlink(p: Path) -> None:
        (p / "zero.npy").symlink_to("/dev/zero")
        listed("zero.npy")(p)

    def fifo(p: Path) -> None:
        os.mkfifo(p / "zero.npy")
        listed("zero.npy")(p)

    def array_to_dev_zero(p: Path) -> None:
        (p / "sent_start.npy").unlink()
        (p / "sent_start.npy").symlink_to("/dev/zero")

    def nested(p: Path) -> None:
        (p / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)

    def shard_file(name: str) -> Callable[[Path], None]:
        return lambda p: reseal_shards(p, lambda m: m["shards"][0].update(file=name))

    def shards_nested(p: Path) -> None:
        (p / "shards" / "manifest.json").write_text('{"a":' * 100_000 + "0" + "}" * 100_000)
        reseal_index(p)

    return {
        "files names /dev/zero": listed("/dev/zero"),
        "files names ../../../../dev/zero": listed("../../../../dev/zero"),
        "files names a symlink to /dev/zero": symlink,
        "files names a FIFO": fifo,
        "an array is a symlink to /dev/zero": array_to_dev_zero,
        "manifest nested 100k deep": nested,
        "a field nested 500 deep": lambda p: reseal_index(p, lambda m: m.update(source=_deep(500))),
        "model is numpy (not spaCy)": lambda p: reseal_index(p, lambda m: m.update(model="numpy")),
        "model is a path": lambda p: reseal_index(p, lambda m: m.update(model="../../../tmp/x")),
        "shards manifest names /dev/zero": shard_file("/dev/zero"),
        "shards manifest names ../ path": shard_file("../../../../dev/zero"),
        "shards manifest nested 100k deep": shards_nested,
        "shards model is numpy": lambda p: reseal_shards(p, lambda m: m["pipeline"].update(model="numpy")),
    }


def _shard_cases() -> dict[str, Callable[[Path], None]]:
    import pyarrow as pa

    from sentret_core.ingest.shards import SCHEMA, SENTENCE

    def other_schema(p: Path) -> None:
        _replace_shard(p, pa.table({"ordinal": [0, 1], "id": ["a", "b"], "other": [1.5, 2.5]}))

    def title_ints(p: Path) -> None:
        rows = _shard_rows(p)
        for i, row in enumerate(rows):
            row["title"] = i
        schema = SCHEMA.set(SCHEMA.get_field_index("title"), pa.field("title", pa.int64()))
        _replace_shard(p, pa.Table.from_pylist(rows, schema=schema))

    def text_ints(p: Path) -> None:
        rows = _shard_rows(p)
        for row in rows:
            for sentence in row["sentences"]:
                sentence["text"] = len(sentence["text"])
        fields = [pa.field("text", pa.int64()) if f.name == "text" else f for f in SENTENCE]
        where = SCHEMA.get_field_index("sentences")
        schema = SCHEMA.set(where, pa.field("sentences", pa.list_(pa.struct(fields))))
        _replace_shard(p, pa.Table.from_pylist(rows, schema=schema))

    def null_text(p: Path) -> None:
        rows = _shard_rows(p)
        rows[0]["sentences"][0]["text"] = None
        _replace_shard(p, pa.Table.from_pylist(rows, schema=SCHEMA))

    def null_terms(p: Path) -> None:
        rows = _shard_rows(p)
        rows[0]["sentences"][0]["terms"] = None
        _replace_shard(p, pa.Table.from_pylist(rows, schema=SCHEMA))

    def counts_lie(p: Path) -> None:
        def change(m: dict[str, Any]) -> None:
            m["shards"][0]["sentences"] += 1
            m["counts"]["sentences"] += 1

        reseal_shards(p, change)

    def empty_table(p: Path) -> None:
        _replace_shard(p, pa.Table.from_pylist([], schema=SCHEMA))

    return {"another schema": other_schema, "title holds ints": title_ints, "sentence text holds ints": text_ints,
            "a null sentence text": null_text, "null terms": null_terms, "counts that lie": counts_lie,
            "no rows": empty_table}


def _artefact_cases() -> dict[str, Callable[[Path], None]]:
    def edit(kind: str, change: Callable[[dict[str, np.ndarray]], None]) -> Callable[[Path], None]:
        def mutate(p: Path) -> None:
            from sentret_core import Index
            from sentret_core.index import artefacts

            index = Index.load(p)
            found = artefacts.read(index, kind, kind)
            arrays = {name: np.array(values) for name, values in found.arrays.items()}
            change(arrays)
            keep = ("format", "kind", "name", "sha256", "index", "created", "checksum")
            artefacts.write(index, kind, kind, arrays, {k: v for k, v in found.meta.items() if k not in keep})

        return mutate

    def at(name: str, value: int, where: int = 0) -> Callable[[dict[str, np.ndarray]], None]:
        def change(arrays: dict[str, np.ndarray]) -> None:
            if len(arrays[name]) == 0:  # an empty table: give it one entry to be hostile with
                arrays[name] = np.array([value], dtype=arrays[name].dtype)
                data = name.replace(".indices", ".data")
                if data in arrays:
                    arrays[data] = np.ones(1)
                    indptr = arrays[name.replace(".indices", ".indptr")]
                    indptr[1:] = 1
            else:
                arrays[name][where] = value

        return change

    def nan_weight(arrays: dict[str, np.ndarray]) -> None:
        arrays["inside.data"][0] = math.nan

    return {
        "classes: an id out of range": edit("classes", at("classes", 10**6)),
        "classes: a negative id": edit("classes", at("classes", -5)),
        "classes: a huge id": edit("classes", at("classes", 2**31 - 1)),
        "triggers: inside index out of range": edit("triggers", at("inside.indices", 10**6)),
        "triggers: inside index negative": edit("triggers", at("inside.indices", -7)),
        "triggers: inside indptr beyond": edit("triggers", at("inside.indptr", 10**6, -1)),
        "triggers: across indptr decreasing": edit("triggers", at("across.indptr", 10**6, 1)),
        "triggers: qa index out of range": edit("triggers", at("qa.indices", 10**6)),
        "triggers: ne_ask index negative": edit("triggers", at("ne_ask.indices", -1)),
        "triggers: a NaN weight": edit("triggers", nan_weight),
    }


# --- running ------------------------------------------------------------------------------------------


def build_workload(path: str, models: list[str]) -> tuple[int, str, str]:
    from sentret_core.errors import SentretError
    from sentret_core.ingest.build import build_from_shards

    out = Path(path).parent / "rebuilt"
    try:
        build_from_shards(Path(path) / "shards", out)
    except SentretError as err:
        return 4, "", f"{type(err).__name__}: {err}"
    except Exception as err:
        return 5, "", f"RAW {type(err).__name__}: {err}"
    return workload(str(out), QUERY, models)


def verify_job(path: str) -> tuple[int, str, str]:
    from sentret_core.errors import SentretError
    from sentret_core.index.reader import verify

    try:
        problems = verify(path)
    except SentretError as err:
        return 4, "", f"{type(err).__name__}: {err}"
    except Exception as err:
        return 5, "", f"RAW {type(err).__name__}: {err}"
    return (4 if problems else 0), "", "; ".join(problems)


def classify(code: int, stdout: str, reference: str | None) -> str:
    if code < 0:
        return "signal"
    if code == 999:
        return "hang"
    if code in (3, 4):
        return "clear error"
    if code == 6:
        return "wrong"
    if code != 0:
        return "traceback"
    if reference is None:
        return "accepted"
    return "identical" if stdout == reference else "wrong"


def _job(kind: str, path: str, models: list[str]) -> Job:
    return partial(build_workload, path, BUILD_MODELS) if kind == "build" else partial(workload, path, QUERY, models)


GROUPS = ("manifest", "shards", "artefacts", "rankers")


def run(index: Path, models: list[str], timeout: float, quiet: bool,
        groups: tuple[str, ...] = GROUPS) -> list[dict[str, Any]]:
    work = Path(tempfile.mkdtemp(prefix="sentret-resealed-"))
    os.environ["SENTRET_RANKERS"] = str(work / "rankers")
    try:
        pristine = work / "pristine"
        shutil.copytree(index, pristine, ignore=shutil.ignore_patterns(".lock"))
        models = [m for m in models if m in LM_MODELS] or LM_MODELS
        _, reference, message = in_child(partial(workload, str(pristine), QUERY, models), timeout)
        _, built, problem = in_child(partial(build_workload, str(pristine), BUILD_MODELS), timeout)
        _, expected, _ = in_child(partial(workload, str(pristine), QUERY, BUILD_MODELS), timeout)
        if not reference or built != expected:
            raise SystemExit(f"the intact index fails the workload or its rebuild differs ({message or problem})")
        makers = [("manifest", _manifest_cases, "query"), ("shards", _shard_cases, "build"),
                  ("artefacts", _artefact_cases, "query")]
        results = []
        for group, make, kind in makers:
            if group not in groups:
                continue
            cases = make()
            for name, mutate in cases.items():
                copy = work / f"case-{len(results)}" / "index"
                shutil.copytree(pristine, copy, symlinks=True)
                mutate(copy)
                code, stdout, message = in_child(_job(kind, str(copy), models), timeout)
                vcode, _, vtext = in_child(partial(verify_job, str(copy)), timeout)
                outcome = classify(code, stdout, expected if kind == "build" else reference)
                results.append(_result(group, name, outcome, message, vcode, vtext, quiet))
                shutil.rmtree(copy.parent, ignore_errors=True)
        for name, stored in (store_rankers() if "rankers" in groups else {}).items():
            code, _, message = in_child(partial(ranker_workload, str(pristine), stored), timeout)
            outcome = "identical" if name == "intact" and code == 0 else classify(code, "", None)
            results.append(_result("rankers", name, outcome, message, None, "", quiet))
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _result(group: str, name: str, outcome: str, message: str, vcode: int | None, vtext: str,
            quiet: bool) -> dict[str, Any]:
    verified = "n/a" if vcode is None else {0: "MISSED", 4: "reports"}.get(vcode, "hang" if vcode == 999 else "raw")
    result = {"group": group, "case": name, "outcome": outcome, "message": message[:300], "verify": verified,
              "verify_text": vtext[:300]}
    if not quiet:
        print(f"{group:10} {name:40} {outcome:12} verify={verified:8} {message[:100]}", file=sys.stderr, flush=True)
    return result


def report(results: list[dict[str, Any]]) -> str:
    """The table: one row per group, one column per outcome, and how many ``verify`` reports."""
    groups = list(dict.fromkeys(r["group"] for r in results))
    lines = [f"{'group':10} {'cases':>5} " + " ".join(f"{o:>11}" for o in OUTCOMES) + f" {'verify':>8}"]
    for group in groups:
        rows = [r for r in results if r["group"] == group]
        counts = Counter(r["outcome"] for r in rows)
        checked = [r for r in rows if r["verify"] != "n/a"]
        verified = f"{sum(r['verify'] == 'reports' for r in checked)}/{len(checked)}" if checked else "n/a"
        lines.append(f"{group:10} {len(rows):5} " + " ".join(f"{counts.get(o, 0):11}" for o in OUTCOMES)
                     + f" {verified:>8}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--index", required=True, help="the index to copy and damage (with its default artefacts)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a case's workload may take")
    parser.add_argument("--groups", default=",".join(GROUPS), help="which groups, comma-separated")
    parser.add_argument("--quiet", action="store_true", help="no line per case")
    parser.add_argument("--json", help="write every case's outcome here")
    args = parser.parse_args()
    found = run(Path(args.index), args.models.split(","), args.timeout, args.quiet, tuple(args.groups.split(",")))
    print(f"{len(found)} resealed cases of {args.index}")
    print(report(found))
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
