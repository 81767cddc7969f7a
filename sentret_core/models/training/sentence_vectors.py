"""The sentence vectors ``minilm.v1`` reads: every sentence of an index encoded once by the MiniLM encoder
(:mod:`sentret_core.models.minilm.encoder`), an explicit step like the word classes (``sentret train minilm
INDEX``; ``make run`` encodes the demo's in the background).

The vectors are unit-length, stored as float16 (half the bytes; a cosine moves by at most about 1e-3, and
the explanation shows by how much) in a named artefact of kind ``minilm``, whose record holds the weights'
checksum and the checksum of the index's texts (``sentences.parquet``): vectors of other texts or of other
weights are refused, never scored.

Encoding is resumable: the sentences are encoded a chunk at a time, each chunk kept in a hidden folder
beside the artefacts as it is done, so an interrupted run (Ctrl-C, a killed process) encodes only the chunks
it had not finished when it is run again with the same index and weights (locally or on Ray).

``sentret add`` keeps them (:func:`carry_vectors`): a sentence's vector depends on its text alone, so the
sentences of the documents already indexed keep theirs and only the added ones are encoded; the result is
the artefact a fresh ``sentret train minilm`` of the new index writes.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sentret_core.defaults import ANN_MIN_SENTENCES
from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.index.artefact_contents import texts_checksum

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.minilm.encoder import Encoder

KIND = "minilm"
DEFAULT_NAME = "minilm"
CHUNK = 4096  # sentences per kept chunk: a resumed run repeats at most this many
Progress = Callable[[int, int], None]  # (sentences done, sentences in all)


def train_minilm(index: Index, name: str = DEFAULT_NAME, *, batch_size: int = 32, ann: bool | None = None,
                 progress: Progress | None = None, ray: RayOptions | None = None) -> artefacts.Artefact:
    """Encode every sentence of ``index`` and write the artefact ``name`` (kind ``minilm``), with a
    nearest-neighbour graph of the vectors when ``ann`` (``None``: from ``ANN_MIN_SENTENCES`` sentences on);
    on a pool of Ray actors given ``ray`` (:mod:`~sentret_core.models.training.ray_encoding`)."""
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
    done = [sum(len(c) for c in chunks.values())]
    if progress is not None:
        progress(done[0], index.N)

    def finished(start: int, vectors: np.ndarray) -> None:
        _keep(partial, start, vectors)
        chunks[start] = vectors
        done[0] += len(vectors)
        if progress is not None:
            progress(done[0], index.N)

    jobs = ((start, list(index.texts[start:min(start + CHUNK, index.N)]))
            for start in range(0, index.N, CHUNK) if start not in chunks)
    if ray is not None:
        from sentret_core.models.training.ray_encoding import encode_on_ray

        encode_on_ray(jobs, weights=model.checksum, batch_size=batch_size, address=ray.address,
                      num_workers=ray.num_workers, done=finished)
    for start, texts in jobs:  # what is left: every chunk when local
        finished(start, model.encode(texts, batch_size=batch_size).astype(np.float16))
    ordered = [chunks[start] for start in sorted(chunks)]
    vectors = np.concatenate(ordered) if ordered else np.zeros((0, model.dim), dtype=np.float16)
    graph = index.N >= ANN_MIN_SENTENCES if ann is None else ann
    made = artefacts.write(index, KIND, name, _with_graph(vectors, graph), _meta(model, index, clock))
    shutil.rmtree(partial, ignore_errors=True)
    return made


def _with_graph(vectors: np.ndarray, graph: bool) -> dict[str, np.ndarray]:
    from sentret_core.models.minilm import ann

    return {"vectors": vectors, ann.ARRAY: ann.build_graph(vectors)} if graph else {"vectors": vectors}


def _meta(model: Encoder, index: Index, clock: float, **more: Any) -> dict[str, Any]:
    return {"model": model.name, "weights": model.checksum, "texts": texts_checksum(index), "dim": model.dim,
            "max_length": model.max_length, "dtype": "float16", "seconds": round(time.perf_counter() - clock, 3),
            **more}


def carry_vectors(old_path: str | Path, new_path: str | Path) -> list[str]:
    """Write into the index at ``new_path`` (the old index with documents added: ``sentret add``) every
    sentence-vector artefact of ``old_path``, under the same name: the sentences of the old documents keep
    their vectors, the others are encoded. Returns the names carried; one that cannot be (damaged, or encoded
    by other weights than the installed ones) is left behind, as every other trained artefact is."""
    from sentret_core.index.reader import Index
    from sentret_core.models.minilm import ann
    from sentret_core.models.minilm.encoder import encoder

    old, new = Index.load(old_path), Index.load(new_path)
    source = old_rows(old, new)
    carried = []
    for record in artefacts.available(old.path, KIND):
        try:
            found = artefacts.read(old, KIND, str(record["name"]))
        except SentretError:
            continue
        model = encoder()
        if found.meta.get("weights") != model.checksum:
            continue
        clock = time.perf_counter()
        vectors = np.empty((new.N, model.dim), dtype=np.float16)
        kept = source >= 0
        vectors[kept] = found.arrays["vectors"][source[kept]]
        fresh = np.flatnonzero(~kept)
        for start in range(0, len(fresh), CHUNK):
            rows = fresh[start:start + CHUNK]
            vectors[rows] = model.encode([new.texts[int(r)] for r in rows]).astype(np.float16)
        artefacts.write(new, KIND, found.name, _with_graph(vectors, ann.ARRAY in found.arrays),
                        _meta(model, new, clock, carried=int(kept.sum())))
        carried.append(found.name)
    return carried


def old_rows(old: Index, new: Index) -> np.ndarray:
    """For each sentence of ``new``, the id of the same sentence (same document id, position and length) in
    ``old``, or -1."""
    old_doc = {str(d): i for i, d in enumerate(old.documents["id"])}
    doc_map = np.array([old_doc.get(str(d), -1) for d in new.documents["id"]], dtype=np.int64)
    first = np.full(len(old_doc) + 1, old.N, dtype=np.int64)
    np.minimum.at(first, old.sent_doc.astype(np.int64), np.arange(old.N, dtype=np.int64))
    in_old = doc_map[new.sent_doc.astype(np.int64)]
    row = np.where(in_old >= 0, first[in_old] + new.sent_pos.astype(np.int64), -1)
    valid = (in_old >= 0) & (row < old.N)
    checked = np.where(valid, row, 0)
    same = (valid & (old.sent_doc[checked] == in_old) & (old.sent_pos[checked] == new.sent_pos)
            & (old.sent_len[checked] == new.sent_len))
    return np.where(same, row, -1)


@dataclass(frozen=True)
class RayOptions:
    """Where ``--engine ray`` encodes: the cluster at ``address`` (None: a Ray started here), on
    ``num_workers`` actors (None: one a CPU)."""

    address: str | None = None
    num_workers: int | None = None


def _resume(partial: Path, stamp: dict[str, Any]) -> dict[int, np.ndarray]:
    """The chunks a previous run of the same encoding kept, by first sentence id (none when it encoded
    something else)."""
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
        return {}
    chunks = {}
    for start in range(0, int(stamp["N"]), int(stamp["chunk"])):  # chunks come back in any order on Ray
        try:
            chunk = np.load(partial / f"{start}.npy", allow_pickle=False)
        except (OSError, ValueError):
            continue
        expected = min(int(stamp["chunk"]), int(stamp["N"]) - start)
        if chunk.dtype == np.float16 and chunk.ndim == 2 and len(chunk) == expected:
            chunks[start] = chunk
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
