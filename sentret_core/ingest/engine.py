"""How the spaCy pass runs (:class:`Engine`): on this machine or on a Ray cluster. :mod:`.parse` runs the local
engine and :mod:`.ray_engine` the Ray one; both take their settings from here."""

from __future__ import annotations

from dataclasses import dataclass

from sentret_core.errors import SentretError
from sentret_core.index.safe_files import spacy_model_problem
from sentret_core.ingest.nlp import DEFAULT_BATCH_SIZE, DEFAULT_PIPELINE

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class Engine:
    """How the spaCy pass runs: ``local`` (``n_process`` workers) or ``ray`` (``num_workers`` actors at ``address``)."""

    name: str = "local"
    model: str = DEFAULT_PIPELINE
    n_process: int = 2
    batch_size: int = DEFAULT_BATCH_SIZE
    address: str | None = None
    num_workers: int | None = None

    def check(self) -> None:
        if self.name not in ENGINES:
            raise SentretError(f"unknown engine {self.name!r}; choose one of {', '.join(ENGINES)}")
        if self.n_process < 1 or self.batch_size < 1:
            raise SentretError(f"n_process={self.n_process} and batch_size={self.batch_size}: each must be at least 1",
                               arguments=("n_process", "batch_size"))
        if self.num_workers is not None and self.num_workers < 1:
            raise SentretError(f"num_workers={self.num_workers}: must be at least 1", arguments=("num_workers",))
        if self.model and (problem := spacy_model_problem(self.model)) is not None:
            raise SentretError(f"model={self.model}: {problem.removeprefix('its ')}", arguments=("model",))
        if self.address is not None and not self.address.strip():
            raise SentretError(
                f"address={self.address!r} is empty: name the Ray cluster as HOST:PORT (or 'auto'), or leave it out "
                "to start Ray here", arguments=("address",))
        if self.address is not None and self.address.strip().lower().startswith("ray://"):
            raise SentretError(
                f"address={self.address}: sentret does not go through Ray Client (ray://); give the head node's "
                "HOST:PORT as `ray start --head` prints it (port 6379 unless `ray start --port` says otherwise), "
                "or auto", arguments=("address",))
