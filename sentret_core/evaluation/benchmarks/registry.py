"""The benchmarks ``sentret eval``, ``sentret learn`` and :func:`load_benchmark` know.

Each benchmark module declares itself once, as a :class:`BenchmarkSpec` (its loader and what the CLI
and the evaluation ask of it: the kind of task, the default baseline, the file ``--data`` takes, whether
``sentret learn`` accepts it), and the package's ``__init__`` registers it with one line; the listing
order is the registration order. Everything else (argparse choices and help, dispatch, ``kind_of``, the
default baseline of a plan) reads this registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from sentret_core.errors import SentretError
from sentret_core.evaluation.benchmarks.base import Benchmark, Kind

Baseline = Literal["doc-order", "random"]
Loader = Callable[..., Benchmark]
# Loader options beyond cache, n_process and log, with the value that means "not given"; the CLI has
# a flag for each (``--distractors``, ``--min-candidates``): a new option needs its flag there too.
OPTIONS: dict[str, object] = {"distractors": None, "min_candidates": 1}
_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark: ``load(path, *, cache=None, n_process=1, log=None, **options) -> Benchmark``.

    ``kind``: ``"sentences"`` (each question's own closed candidate set; convert into the candidates
    format of :mod:`~sentret_core.evaluation.benchmarks.candidates`) or ``"support"`` (entity support,
    where the support models ``position`` and ``sum-*`` apply). ``baseline``: what significance is
    tested against by default: ``"random"`` where the collection has no document order (TrecQA: every
    candidate its own document, so ``doc-order`` ties everything). ``data``: how ``--data``'s help names
    the file (``""``: not named). ``learnable``: ``sentret learn <name>`` exists; ``training_file`` is
    what its help says it learns from (default ``"<name>'s training file"``). ``options``: the keys of
    :data:`OPTIONS` the loader accepts. ``listed``: where the package's own discovery puts it in the CLI's
    listings (lower first, then by module name); the built-in ones take 10-40.
    """

    name: str
    load: Loader
    kind: Kind = "sentences"
    baseline: Baseline = "doc-order"
    data: str = ""
    learnable: bool = True
    training_file: str = ""
    options: tuple[str, ...] = ()
    listed: int = 50

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"benchmark name {self.name!r}: lowercase letters and digits, words joined by '-'")
        if self.kind not in get_args(Kind):
            raise ValueError(f"benchmark {self.name}: kind {self.kind!r} is not one of {get_args(Kind)}")
        if self.baseline not in get_args(Baseline):
            raise ValueError(f"benchmark {self.name}: baseline {self.baseline!r} is not one of {get_args(Baseline)}")
        unknown = [option for option in self.options if option not in OPTIONS]
        if unknown:
            raise ValueError(f"benchmark {self.name}: unknown options {unknown}; known: {list(OPTIONS)}")

    @property
    def learn_help(self) -> str:
        """What ``sentret learn <name> --help`` says it learns from."""
        what = self.training_file or f"{self.name}'s training file"
        return f"Learn from {what}."


_REGISTRY: dict[str, BenchmarkSpec] = {}


def register_benchmark(spec: BenchmarkSpec) -> BenchmarkSpec:
    """Add ``spec`` after the benchmarks registered before it; a name registered twice is a mistake."""
    if spec.name in _REGISTRY:
        raise ValueError(f"benchmark {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_benchmark(name: str) -> BenchmarkSpec:
    """Remove a registered benchmark (a test's toy, say) and return it."""
    if name not in _REGISTRY:
        raise SentretError(f"benchmark {name!r} is not registered")
    return _REGISTRY.pop(name)


def get_benchmark(name: str) -> BenchmarkSpec:
    """The registered benchmark ``name``, or one clear error listing the choices."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise SentretError(f"unknown benchmark {name!r}; choose one of {', '.join(_REGISTRY)}") from None


def list_benchmarks() -> tuple[BenchmarkSpec, ...]:
    """Every registered benchmark, in registration order."""
    return tuple(_REGISTRY.values())


def benchmark_names(*, learnable: bool = False) -> tuple[str, ...]:
    """The registered names in order (with ``learnable``: those ``sentret learn`` accepts)."""
    return tuple(spec.name for spec in _REGISTRY.values() if spec.learnable or not learnable)
