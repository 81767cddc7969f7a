"""The spaCy pass on Ray: the same shards as the local engine, parsed by one pool of actors.

The driver reads the source (every format, encoding and duplicate-id check of the local engine) and
cuts it into shards of ``shard_documents`` documents and each shard into batches, each row with its
ordinal. ``num_workers`` actors (one CPU each), started once for the whole parse, each load the spaCy
pipeline once and parse batches with the local engine's own code, so the shards are the same. Batches
go to whichever actor is free, at most :data:`IN_FLIGHT` per actor ahead of the results, which come back
in order: each batch moves the progress bar, and a shard is written as soon as its last batch is back
while the next shard's batches are already being parsed. Ray Core's actors rather than Ray Data: a
Ray Data pipeline needs its input as a dataset up front, and a parse streams its source from the driver
(one pipeline per shard restarted the actors, and loaded the model, every 20,000 documents). Ray is
optional (``pip install 'sentret[scale]'``).
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import socket
import time
from collections import Counter, deque
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
    from sentret_core.ingest.engine import Engine

log = logging.getLogger(__name__)
CONNECT_TIMEOUT_S = 5.0
IN_FLIGHT = 2  # batches per actor sent ahead of the results taken back: none idles, the driver holds little
RETRIES = 3  # a parsing actor that dies is restarted and its batch run again this often (Ray's default: forever)
NODE_CHECK_TIMEOUT_S = 120.0  # a node loads the spaCy pipeline once to report it
NODE_KEYS = ("sentret", "spacy_version", "model", "model_version", "pipeline", "normalisation")
NEEDS_RAY = "--engine ray needs Ray: pip install 'sentret[scale]' (or pip install ray)"
_INPUT = pa.schema([("ordinal", pa.int64()), ("id", pa.string()), ("title", pa.string()), ("text", pa.string()),
                    ("sentences", pa.list_(pa.string()))])


class Parser:
    """A Ray actor's work: the spaCy pipeline, loaded once, over batches of documents.

    The model and spaCy batch size are class attributes (:func:`parser_for`), not constructor
    arguments, which Ray would keep for the actor's restarts.
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

    def parse(self, batch: pa.Table) -> tuple[pa.Table, str]:
        """The batch parsed, and the node that parsed it (named as :func:`check_nodes` names nodes)."""
        import ray

        return self(batch), node_name(ray.util.get_node_ip_address(), ray.get_runtime_context().get_node_id())


def parser_for(model: str, batch_size: int) -> type[Parser]:
    return type("Parser", (Parser,), {"model": model, "batch_size": batch_size})


def parse_with_ray(
    writer: ShardWriter, documents: Iterable[Document], engine: Engine, progress: Callable[[int, int], None] | None
) -> dict[str, Any]:
    """Parse ``documents`` on Ray into new shards of ``writer``; return the pipeline record."""
    ray = import_ray()
    record = pipeline_record(load_pipeline(engine.model), engine.model)
    check_same_pipeline(writer.pipeline, record)
    writer.pipeline = record
    started_here = not ray.is_initialized()
    if started_here:
        start_ray(ray, engine)
    try:
        if engine.address:  # another machine's nodes: each must parse exactly as this one would
            check_nodes(ray, engine.model, parses_with(record))
        workers = engine.num_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        done = [0, 0]  # documents, words
        nodes: Counter[str] = Counter()

        def batch_done(batch: pa.Table, node: str) -> None:  # progress per batch, as the batches come back
            done[0] += batch.num_rows
            done[1] += int(pa.compute.sum(batch.column("n_words")).as_py() or 0)
            nodes[node] += 1
            if progress is not None:
                progress(done[0], done[1])

        chunks = _chunks(documents, writer.next_ordinal, writer.shard_documents)
        for shard in _parse_on_pool(ray, _batches(chunks, workers, engine.batch_size), engine, workers, batch_done):
            writer.write(shard)
        if nodes:
            log.info("parsed on %d Ray node(s): %s", len(nodes),
                     ", ".join(f"{node} {count} batches" for node, count in sorted(nodes.items())))
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
    refs = {node_name(n["NodeManagerAddress"], n["NodeID"]): probe.options(
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


def import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise SentretError(NEEDS_RAY) from None
    return ray


def start_ray(ray: Any, engine: Engine) -> None:
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
        # "local": a Ray of our own even where `ray start` runs one on this machine (ray.init would join it)
        ray.init(address="local", num_cpus=engine.num_workers or os.cpu_count() or 1, **quiet)


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


def _batches(chunks: Iterable[pa.Table], workers: int, batch_size: int) -> Iterator[tuple[pa.Table, bool]]:
    """Each chunk's batches, with whether the batch ends its chunk (its shard): small enough for every
    worker to get several of a shard, large enough to keep spaCy's own batching."""
    for chunk in chunks:
        size = max(1, min(batch_size * 4, -(-chunk.num_rows // (workers * 4))))
        for at in range(0, chunk.num_rows, size):
            yield chunk.slice(at, size), at + size >= chunk.num_rows


def _parse_on_pool(
    ray: Any, batches: Iterator[tuple[pa.Table, bool]], engine: Engine, workers: int,
    on_batch: Callable[[pa.Table, str], None],
) -> Iterator[pa.Table]:
    """The shards of ``batches``, parsed by one pool of ``workers`` actors for the whole stream; ``on_batch``
    sees each parsed batch, in order, as it comes back."""
    from ray.util import ActorPool

    # Ray's default restarts a dead actor forever: a document that crashes spaCy would hang the parse
    remote = ray.remote(num_cpus=1, max_restarts=RETRIES, max_task_retries=RETRIES)(
        parser_for(engine.model, engine.batch_size))
    actors = [remote.remote() for _ in range(workers)]
    pool = ActorPool(actors)
    sent: deque[tuple[pa.Table, bool]] = deque()  # submitted batches, in the order their results come back
    shard: list[pa.Table] = []
    try:
        for batch in itertools.chain(batches, [None]):
            if batch is not None:
                pool.submit(lambda actor, rows: actor.parse.remote(rows), batch[0])
                sent.append(batch)
            while sent and (batch is None or len(sent) > workers * IN_FLIGHT):
                rows, last = sent.popleft()
                table, node = _next_result(ray, pool, rows)
                on_batch(table, node)
                shard.append(table)
                if last:
                    yield pa.concat_tables(shard).sort_by("ordinal")
                    shard = []
    finally:
        for actor in actors:
            ray.kill(actor)


def _next_result(ray: Any, pool: Any, rows: pa.Table) -> tuple[pa.Table, str]:
    """The pool's next result, for the batch ``rows``; a worker's failure as one message naming the batch."""
    try:
        table, node = pool.get_next()
    except ray.exceptions.RayActorError:
        raise SentretError(
            f"--engine ray: a parsing worker died {RETRIES + 1} times on the same batch of the documents "
            f"{_span(rows)} (killed, out of memory, or a crash in spaCy on one of them); the parse stopped"
        ) from None
    except ray.exceptions.RayError as err:  # an error raised while parsing, which Ray wraps
        raise SentretError(f"--engine ray: parsing the documents {_span(rows)} failed: {worker_error(err)}") from None
    return table, node


def node_name(address: str, node_id: str) -> str:
    return f"{address} ({node_id[:8]})"


def _span(chunk: pa.Table) -> str:
    ids = chunk.column("id")
    return f"{ids[0].as_py()!r} to {ids[-1].as_py()!r}"


_RAISED = re.compile(r"^([A-Za-z_][\w.]*): (.*)$")
_WRAPPED = "The above exception was the direct cause of the following exception:"


def worker_error(err: BaseException) -> str:
    """The error a worker raised, as ``Type: first line``: Ray keeps it as the error's cause; where only a
    traceback's text crossed to the driver, its last ``Type: message`` line before Ray's wrapper names it;
    else Ray's own first line."""
    cause = getattr(err, "cause", None)  # Ray Core keeps the worker's own exception
    if isinstance(cause, Exception) and not type(cause).__module__.startswith("ray."):
        lines = str(cause).strip().splitlines()
        return f"{type(cause).__name__}: {lines[0]}" if lines else type(cause).__name__
    text = str(err)
    own = text.split(_WRAPPED)[0] if _WRAPPED in text else ""
    raised = [m for line in own.splitlines() if (m := _RAISED.match(line.strip()))]
    if raised:
        name, message = raised[-1].groups()
        return f"{name.rsplit('.', 1)[-1]}: {message}"
    return text.strip().splitlines()[0] if text.strip() else type(err).__name__
