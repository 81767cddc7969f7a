"""The sentence vectors ``minilm.v1`` reads: every sentence of an index encoded once by the MiniLM encoder
(:mod:`sentret_core.models.minilm.encoder`), an explicit step like the word classes (``sentret train minilm
INDEX``; ``make run`` encodes the demo's in the background).

The vectors are unit-length, stored as float16 (half the bytes; a cosine moves by at most about 1e-3, and
the explanation shows by how much) in a named artefact of kind ``minilm``, whose record holds the weights'
checksum and the checksum of the index's texts (``sentences.parquet``): vectors of other texts or of other
weights are refused, never scored.

Encoding is resumable: the sentences are encoded a chunk at a time, each chunk kept in a hidden folder
beside the artefacts as it is done, so an interrupted run (Ctrl-C, a killed process) starts again from the
last chunk it finished when it is run again with the same index and weights.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.artefact_contents import texts_checksum

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

KIND = "minilm"
DEFAULT_NAME = "minilm"
CHUNK = 4096  # sentences per kept chunk: a resumed run repeats at most this many
Progress = Callable[[int, int], None]  # (sentences done, sentences in all)


def train_minilm(index: Index, name: str = DEFAULT_NAME, *, batch_size: int = 32,
                 progress: Progress | None = None) -> artefacts.Artefact:
    """Encode every sentence of ``index`` and write the artefact ``name`` (kind ``minilm``)."""
    from sentret_core.models.minilm.encoder import encoder

    artefacts.check_name(name)
    if not 1 <= batch_size <= 4096:
        raise SentretError(f"batch_size must be an integer with 1 ≤ batch_size ≤ 4096 (got {batch_size})")
    model = encoder()
    stamp = {"index": artefacts.fingerprint(index), "texts": texts_checksum(index), "weights": model.checksum,
             "chunk": CHUNK, "N": index.N}
    partial = Path(index.path) / artefacts.FOLDER / f".{name}.partial"
    chunks = _resume(partial, stamp)
    clock = time.perf_counter()
    done = sum(len(c) for c in chunks)
    if progress is not None:
        progress(done, index.N)
    for start in range(done, index.N, CHUNK):
        texts = index.texts[start:min(start + CHUNK, index.N)]
        vectors = model.encode(texts, batch_size=batch_size).astype(np.float16)
        _keep(partial, start, vectors)
        chunks.append(vectors)
        done += len(vectors)
        if progress is not None:
            progress(done, index.N)
    vectors = np.concatenate(chunks) if chunks else np.zeros((0, model.dim), dtype=np.float16)
    meta: dict[str, Any] = {"model": model.name, "weights": model.checksum, "texts": stamp["texts"],
                            "dim": model.dim, "max_length": model.max_length, "dtype": "float16",
                            "seconds": round(time.perf_counter() - clock, 3)}
    made = artefacts.write(index, KIND, name, {"vectors": vectors}, meta)
    shutil.rmtree(partial, ignore_errors=True)
    return made


def _resume(partial: Path, stamp: dict[str, Any]) -> list[np.ndarray]:
    """The chunks a previous run of the same encoding kept, in order (none when it encoded something else)."""
    record = partial / "stamp.json"
    try:
        same = json.loads(record.read_text()) == stamp
    except (OSError, ValueError):
        same = False
    if not same:
        shutil.rmtree(partial, ignore_errors=True)
        try:
            partial.mkdir(parents=True)
            record.write_text(json.dumps(stamp))
        except OSError as err:
            raise SentretError(f"{partial.parent}: cannot write there ({err.strerror})") from None
        return []
    chunks = []
    for start in range(0, int(stamp["N"]), int(stamp["chunk"])):
        try:
            chunk = np.load(partial / f"{start}.npy", allow_pickle=False)
        except (OSError, ValueError):
            break
        expected = min(int(stamp["chunk"]), int(stamp["N"]) - start)
        if chunk.dtype != np.float16 or chunk.ndim != 2 or len(chunk) != expected:
            break
        chunks.append(chunk)
    return chunks


def _keep(partial: Path, start: int, vectors: np.ndarray) -> None:
    """Write one finished chunk under a temporary name and rename it: a kept chunk is always whole."""
    tmp = partial / f".{start}.npy"
    with open(tmp, "wb") as handle:
        np.save(handle, vectors)
    os.replace(tmp, partial / f"{start}.npy")


def load_vectors(index: Index, found: artefacts.Artefact) -> np.ndarray:
    """The sentence vectors of the ``minilm`` artefact ``found`` (read from ``index``) as float32, one row per
    sentence (kept in the index's cache: the float16 artefact is widened once, so a query is one float32
    mat-vec)."""
    return index.cache.get(f"models.minilm/{found.reference}",
                           lambda: np.ascontiguousarray(found.arrays["vectors"], dtype=np.float32))
