"""The spaCy pass on Ray Data: the same shards as the local engine, parsed by a pool of actors.

The driver reads the source (every format, encoding and duplicate-id check of the local engine) and
hands it to Ray in chunks of a shard's documents (:data:`~sentret_core.ingest.shards.SHARD_DOCUMENTS`), each
with its ordinal. ``map_batches`` runs a callable class, :class:`Parser`, on ``num_workers`` actors
(one CPU each): each loads the spaCy pipeline once and parses its batches with the local engine's
own code, so the shards are the same. The parsed rows stream back in order and each chunk becomes
one shard. Ray is optional (``pip install 'sentret[scale]'``).
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import socket
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sentret_core._version import __version__
from sentret_core.errors import SentretError
from sentret_core.ingest.corpus import Document
from sentret_core.ingest.nlp import load_pipeline, parse_documents
from sentret_core.ingest.pipeline import check_same_pipeline, pipeline_record
from sentret_core.ingest.shards import ShardWriter, to_table

if TYPE_CHECKING:
    from sentret_core.ingest.parse import Engine

CONNECT_TIMEOUT_S = 5.0
RETRIES = 3  # a parsing actor that dies is restarted and its batch run again this often (Ray's default: forever)
NODE_CHECK_TIMEOUT_S = 120.0  # a node loads the spaCy pipeline once to report it
NODE_KEYS = ("sentret", "spacy_version", "model", "model_version", "pipeline", "normalisation")
NEEDS_RAY = "--engine ray needs Ray: pip install 'sentret[scale]' (or pip install 'ray[data]')"
_INPUT = pa.schema([("ordinal", pa.int64()), ("id", pa.string()), ("title", pa.string()), ("text", pa.string()),
                    ("sentences", pa.list_(pa.string()))])


class Parser:
    """A Ray actor's work: the spaCy pipeline, loaded once, over batches of documents.

    The model and spaCy batch size are class attributes (:func:`parser_for`), not constructor
    arguments, which Ray would keep in its object store for restarts it warns about.
    """

    model = ""
    batch_size = 64

    def __init__(self) -> None:
        self.nlp = load_pipeline(self.model)

    def __call__(self, batch: pa.Table) -> pa.Table:
        rows = batch.to_pylist()
        docs = [Document(r["id"], r["title"], r["text"], None if r["sentences"] is None else tuple(r["sentences"]))
                for r in rows]
        parsed = parse_documents(docs, self.nlp, n_process=1, batch_size=self.batch_size)
        table = to_table(parsed, 0)
        return table.set_column(0, "ordinal", batch.column("ordinal"))


def parser_for(model: str, batch_size: int) -> type[Parser]:
    return type("Parser", (Parser,), {"model": model, "batch_size": batch_size})


def parse_with_ray(
    writer: ShardWriter, documents: Iterable[Document], engine: Engine, progress: Callable[[int, int], None] | None
) -> dict[str, Any]:
    """Parse ``documents`` on Ray into new shards of ``writer``; return the pipeline record."""
    ray = _import_ray()
    record = pipeline_record(load_pipeline(engine.model), engine.model)
    check_same_pipeline(writer.pipeline, record)
    writer.pipeline = record
    started_here = not ray.is_initialized()
    if started_here:
        _start(ray, engine)
    _quiet_data()
    try:
        if engine.address:  # another machine's nodes: each must parse exactly as this one would
            check_nodes(ray, engine.model, parses_with(record))
        workers = engine.num_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        done = [0, 0]  # documents, words

        def batch_done(batch: pa.Table) -> None:  # progress per batch, as the batches come back
            done[0] += batch.num_rows
            done[1] += int(pa.compute.sum(batch.column("n_words")).as_py() or 0)
            if progress is not None:
                progress(done[0], done[1])

        for chunk in _chunks(documents, writer.next_ordinal, writer.shard_documents):
            writer.write(_parse_chunk(ray, chunk, engine, workers, batch_done))
    finally:
        if started_here:
            ray.shutdown()
    return record


def parses_with(record: dict[str, Any]) -> dict[str, Any]:
    """What a machine parses with: sentret's version and a pipeline's record (:func:`pipeline_record`)."""
    return {"sentret": __version__, **record}


def node_report(model: str) -> dict[str, Any]:
    """:func:`parses_with` ``model`` on this machine, or why it cannot load."""
    try:
        return parses_with(pipeline_record(load_pipeline(model), model))
    except Exception as err:  # a node without the pipeline: said in the driver's one message
        return {"error": f"{type(err).__name__}: {err}"}


def node_differences(expected: dict[str, Any], reports: dict[str, dict[str, Any]]) -> list[str]:
    """For each node (by address) that would not parse as ``expected`` says, what differs, in words."""
    problems = []
    for node, report in sorted(reports.items()):
        if "error" in report:
            problems.append(f"node {node} cannot load it ({report['error']})")
            continue
        differs = [f"{key} {report.get(key)!r} (here {expected[key]!r})" for key in NODE_KEYS
                   if report.get(key) != expected.get(key)]
        if differs:
            problems.append(f"node {node} has " + ", ".join(differs))
    return problems


def check_nodes(ray: Any, model: str, expected: dict[str, Any]) -> None:
    """Refuse, in one message and before anything is parsed, a cluster where some node has another sentret,
    spaCy or pipeline than this machine: its shards would differ from the rest. Each node with a CPU runs
    :func:`node_report` once."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]
    probe = ray.remote(num_cpus=1, max_retries=0)(node_report)
    refs = {f"{n['NodeManagerAddress']} ({n['NodeID'][:8]})": probe.options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(model) for n in nodes}
    reports = {}
    deadline = time.monotonic() + NODE_CHECK_TIMEOUT_S  # for all nodes together: they report in parallel
    for node, ref in refs.items():
        try:
            reports[node] = ray.get(ref, timeout=max(0.0, deadline - time.monotonic()))
        except Exception as err:  # e.g. sentret not installed there: the task cannot even be unpickled
            reports[node] = {"error": f"{type(err).__name__}: {str(err).strip().splitlines()[-1][:300]}"}
    problems = node_differences(expected, reports)
    if problems:
        raise SentretError("the Ray cluster's nodes would not all parse as this machine does: "
                           + "; ".join(problems) + ". Install the same sentret, spaCy and pipeline on every node.")


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise SentretError(NEEDS_RAY) from None
    return ray


def _start(ray: Any, engine: Engine) -> None:
    """Join the cluster at ``engine.address``, or start a Ray here with one CPU per worker."""
    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
    # Ray's C++ core logs a warning-worthy note as an error for every actor pool (ray#53727); errors
    # that matter still reach us as Python exceptions
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    quiet = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False}
    if engine.address:
        _check_reachable(engine.address)
        try:
            ray.init(address=engine.address, logging_level=logging.ERROR, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise SentretError(f"cannot join the Ray cluster at --address {engine.address}: {err}") from None
    else:
        ray.init(num_cpus=engine.num_workers or os.cpu_count() or 1, **quiet)


def _check_reachable(address: str) -> None:
    """Fail in one line, within :data:`CONNECT_TIMEOUT_S`, when nothing listens at ``HOST:PORT``
    (``ray.init`` would wait for the cluster for minutes); ``auto`` is left to Ray."""
    if address == "auto":
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise SentretError(f"--address {address}: expected HOST:PORT of a Ray head node, e.g. 127.0.0.1:6379, or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as err:
        raise SentretError(
            f"cannot reach the Ray cluster at --address {address}: nothing answered there "
            f"within {CONNECT_TIMEOUT_S:.0f} s ({err.strerror or err})"
        ) from None


def _quiet_data() -> None:
    """Results in input order; no progress bars or per-dataset log lines (ours is the progress bar)."""
    from ray.data import DataContext

    context = DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)


def _chunks(documents: Iterable[Document], first_ordinal: int, size: int) -> Iterator[pa.Table]:
    """The documents as tables of ``size`` rows (one shard each), numbered from ``first_ordinal``."""
    stream = iter(documents)
    ordinal = first_ordinal
    while chunk := list(itertools.islice(stream, size)):
        yield pa.Table.from_pydict({
            "ordinal": list(range(ordinal, ordinal + len(chunk))), "id": [d.id for d in chunk],
            "title": [d.title for d in chunk], "text": [d.text for d in chunk],
            "sentences": [None if d.sentences is None else list(d.sentences) for d in chunk],
        }, schema=_INPUT)
        ordinal += len(chunk)


def _parse_chunk(
    ray: Any, chunk: pa.Table, engine: Engine, workers: int, on_batch: Callable[[pa.Table], None]
) -> pa.Table:
    """One chunk through the actor pool, its rows back in ordinal order; ``on_batch`` sees each batch as it comes."""
    # batches small enough for every worker to get several, large enough to keep spaCy's batching
    batch = max(1, min(engine.batch_size * 4, -(-chunk.num_rows // (workers * 4))))
    # one block per batch (a repartition would need CPUs the actors hold)
    dataset = ray.data.from_arrow([chunk.slice(at, batch) for at in range(0, chunk.num_rows, batch)])
    with warnings.catch_warnings():
        # the only way Ray Data (≤ 2.63, hence the pin) takes an actor's restarts: its deprecated remote args
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        parsed = dataset.map_batches(
            parser_for(engine.model, engine.batch_size), batch_size=batch, batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=1,
            max_restarts=RETRIES, max_task_retries=RETRIES,
        )
    tables = []
    try:
        for block in parsed.iter_batches(batch_size=None, batch_format="pyarrow"):
            tables.append(pa.Table.from_batches([block]) if isinstance(block, pa.RecordBatch) else block)
            on_batch(tables[-1])
    except ray.exceptions.RayActorError:
        raise SentretError(
            f"--engine ray: a parsing worker died {RETRIES + 1} times on the same batch of the documents "
            f"{_span(chunk)} (killed, out of memory, or a crash in spaCy on one of them); the parse stopped"
        ) from None
    except ray.exceptions.RayError as err:  # an error raised while parsing, which Ray wraps
        raise SentretError(f"--engine ray: parsing the documents {_span(chunk)} failed: {_worker_error(err)}") from None
    table = pa.concat_tables(tables) if tables else to_table([], 0)
    return table.sort_by("ordinal")


def _span(chunk: pa.Table) -> str:
    ids = chunk.column("id")
    return f"{ids[0].as_py()!r} to {ids[-1].as_py()!r}"


_RAISED = re.compile(r"^([A-Za-z_][\w.]*): (.*)$")
_WRAPPED = "The above exception was the direct cause of the following exception:"


def _worker_error(err: BaseException) -> str:
    """The error a worker raised, as ``Type: first line``. Ray Data wraps it in a UserCodeException in
    the worker and only the traceback's text crosses to the driver: its last ``Type: message`` line
    before Ray's wrapper names it; else Ray's own first line."""
    text = str(err)
    own = text.split(_WRAPPED)[0] if _WRAPPED in text else ""
    raised = [m for line in own.splitlines() if (m := _RAISED.match(line.strip()))]
    if raised:
        name, message = raised[-1].groups()
        return f"{name.rsplit('.', 1)[-1]}: {message}"
    return text.strip().splitlines()[0] if text.strip() else type(err).__name__
