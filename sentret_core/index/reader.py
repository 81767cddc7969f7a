"""The sentence index: what every scorer and the support engine read.

An index is a folder, immutable once built:

* ``manifest.json`` — format version, versions, model, normalisation, counts, sha256 of every file;
* ``*.npy`` — arrays (loaded with ``mmap_mode="r"``): the sentence×term counts ``X`` (CSR) and
  ``XT`` (the same counts as CSC, the postings), title term counts per document, the entity
  containment graph ``G`` (CSR) and ``GT`` (CSC), per-sentence columns and term sequences;
* ``*.parquet`` — tables: terms (with sf, df, cf), documents, sentence texts, entities, mentions.

Notation as in docs/spec.md: N sentences, D documents, V terms, ``sf``/``df`` sentence and document
frequencies, ``cf`` collection counts, ``avsl`` the mean sentence length in terms.
"""

from __future__ import annotations

import threading
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from sentret_core.defaults import DEFAULT_WINDOW
from sentret_core.errors import IndexFormatError
from sentret_core.index import artefacts, validate
from sentret_core.index.blocks import FileBlocks
from sentret_core.index.cache import DerivedCache
from sentret_core.index.format import MANIFEST, SHARDS, index_path, read_manifest
from sentret_core.index.neighbours import PerSentence, document_bounds, neighbourhood
from sentret_core.index.sliced import Slices
from sentret_core.index.tables import IndexTables
from sentret_core.index.texts import SentenceTexts

# a per-occurrence file larger than this is checked in the background from its first sentence read (its blocks are
# read all over, a sentence at a time: at 75M, the first support requests each hashed 1-2 s of blocks)
CHECK_REST_FROM = 2**26


def verify(path: str | Path) -> list[str]:
    """Every problem with the index at ``path``, empty if sound: the manifest against its own
    checksum, missing, resized, altered or unexpected files, array headers and structure, tables,
    and the artefacts (every file of ``artefacts/``)."""
    path = index_path(path)
    manifest = read_manifest(path, strict=False)
    problems = validate.manifest_problems(manifest)
    expected: dict[str, str] = manifest.get("files", {}) if isinstance(manifest.get("files"), dict) else {}
    block, blocks = validate.block_record(manifest) if not problems else (0, {})
    for name, digest in sorted(expected.items()):
        problem = validate.sha256_problem(path, name, str(digest), blocks.get(name), block)
        if problem is not None:
            problems.append(problem)
    for file in sorted(path.iterdir()):
        if file.name not in expected and file.name not in (MANIFEST, artefacts.FOLDER, SHARDS):
            older = file.name.startswith("cache-")  # sentret before named artefacts trained on first use
            problems.append(f"{file.name}: " + ("a cache of an older sentret (safe to delete)" if older
                                                else "not part of the index"))
    from sentret_core.ingest.shards import shards_problems  # the shards' format is the ingest's

    problems += shards_problems(path / SHARDS)
    if problems:
        return problems
    try:  # the files are as built: now whether the manifest's counts and records fit them
        index = Index.load(path)
        index._sound.update(expected)
        validate.check_all_arrays(path, index.manifest["counts"], index._mapped)
        for table in validate.TABLES:
            index._table(table)
    except IndexFormatError as err:
        return [str(err).removeprefix(f"{path}: ").removesuffix(f"; {validate.hint(path)}")]
    return artefacts.problems(index)


# --- reading -----------------------------------------------------------------------------


class Index(IndexTables):
    """A loaded index. Arrays are memory-mapped; tables and derived data load on first use (the tables'
    side: :class:`~sentret_core.index.tables.IndexTables`).

    Query-independent data derived from it (context counts, p(d|s), length factors, an artefact's
    tables) belongs in ``cache``, a bounded :class:`~sentret_core.index.cache.DerivedCache`, so it is
    computed once per loaded index.

    :meth:`load` checks what reads O(1) values of each file, so it costs the same cold at any size;
    every file is checked against its sha256 the first time it is read, and an array then for what
    reads all of it (bounds, order) before anything indexes with it (:mod:`sentret_core.index.validate`);
    an array read in slices (:meth:`slices`: the postings) is checked a block at a time instead, each
    block at the first slice reading it (:mod:`sentret_core.index.sliced`). ``notes`` says what could not
    be checked (an index of an older sentret).
    """

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = path
        self.manifest = manifest
        self.cache = DerivedCache()  # everything derived from the index, bounded (index/cache.py)
        self.notes: tuple[str, ...] = ()
        self._mapped: dict[str, np.ndarray] = {}
        self._sound: set[str] = set()  # files found to match their sha256 in this process
        self._structured: set[str] = set()  # arrays whose whole-array checks passed in this process
        self._blocks: dict[str, FileBlocks] = {}  # files with block digests, and which blocks were found sound
        self._slices: dict[str, Slices] = {}
        self._lock = threading.Lock()
        counts = manifest["counts"]
        self.N: int = counts["sentences"]
        self.D: int = counts["documents"]
        self.V: int = counts["terms"]
        self.E: int = counts["entities"]

    @classmethod
    def load(cls, path: str | Path, *, verify: bool = False) -> Index:
        """Load the index at ``path`` after the cheap checks; with ``verify``, after all of
        :func:`verify` (every file hashed, artefacts included). A damaged index raises
        :class:`IndexFormatError` naming the file and what is wrong."""
        path = index_path(path)
        manifest = read_manifest(path)
        index = cls(path, manifest)
        index._mapped = validate.check_load(path, manifest)
        if not validate.is_current(manifest):
            index.notes = (validate.OLD_INDEX_NOTE.format(path=path),)
        if verify:
            index.verify()
        return index

    def verify(self) -> None:
        """Check every file against its sha256 now (and the rest of :func:`verify`); raises
        :class:`IndexFormatError` listing the problems."""
        problems = verify(self.path)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise IndexFormatError(f"{self.path}: {problems[0]}{more}; {validate.hint(self.path)}")
        self._sound.update(self.manifest.get("files", {}))

    def _checked(self, file: str) -> None:
        """``file`` matches its sha256 in the manifest, checked once per process (at its first read): a
        file with block digests block by block, on two threads, skipping the blocks already checked."""
        if file in self._sound:
            return
        digest = self.manifest.get("files", {}).get(file)
        blocks = self.file_blocks(file)
        if blocks is not None:
            blocks.check_all()
        elif digest is not None:
            problem = validate.sha256_problem(self.path, file, digest)
            if problem is not None:
                raise IndexFormatError(f"{self.path}: {problem}; {validate.hint(self.path)}")
        self._sound.add(file)

    def file_blocks(self, file: str) -> FileBlocks | None:
        """The block digests of ``file`` and which blocks were found sound (None: the file has none)."""
        with self._lock:
            if file not in self._blocks:
                block, recorded = validate.block_record(self.manifest)
                if file not in recorded:
                    return None
                found = FileBlocks(self.path / file, block, recorded[file], lambda what: validate.fail(self.path, what))
                found.sound[:] = file in self._sound  # hashed whole already (verify)
                self._blocks[file] = found
            return self._blocks[file]

    def __repr__(self) -> str:
        counts = f"{self.D} documents, {self.N} sentences, {self.V} terms, {self.E} entities"
        return f"Index({str(self.path)!r}: {counts})"

    # files
    def _array(self, name: str) -> np.ndarray:
        """A checked array, memory-mapped (a plain ndarray view: slicing an np.memmap costs far more)."""
        if name not in self._mapped:  # an Index made without load(): check it now
            self._mapped = validate.check_load(self.path, self.manifest)
        self._checked(f"{name}.npy")
        if name not in self._structured:  # bounds and order, read once: never at load (O(size) when cold)
            validate.check_array(self.path, self.manifest["counts"], self._mapped, name)
            self._structured.add(name)
        return self._mapped[name]

    def array(self, name: str) -> np.ndarray:
        """The array ``name`` (its file without ``.npy``, e.g. ``"XT.indptr"``), checked whole."""
        if name not in validate.expected_arrays(self.manifest["counts"]):
            raise KeyError(name)
        return self._array(name)

    def slices(self, name: str) -> Slices:
        """Slices of the array ``name`` (one of ``validate.SLICED``): ``slices(lo, hi)`` is ``array[lo:hi]``,
        each block of its file checked the first time a slice reads from it, not the whole file first."""
        if name not in validate.SLICED:
            raise KeyError(name)
        with self._lock:
            if name in self._slices:
                return self._slices[name]
        if name not in self._mapped:
            self._mapped = validate.check_load(self.path, self.manifest)
        file = f"{name}.npy"
        blocks = self.file_blocks(file) if name in self._mapped else None
        offset = validate.npy_header(self.path, file)[2] if blocks is not None else 0
        counts = self.manifest["counts"]
        found = Slices(self._mapped.get(name, np.zeros(0, dtype=np.int8)), offset, blocks,
                       lambda part: validate.check_part(self.path, counts, name, part),
                       lambda: self._array(name))
        with self._lock:
            return self._slices.setdefault(name, found)

    def _matrix(self, name: str, kind: str, shape: tuple[int, int], dtype: type = np.int32) -> Any:
        indptr, indices = self._array(f"{name}.indptr"), self._array(f"{name}.indices")
        data = self._array(f"{name}.data") if f"{name}.data" in self._mapped else np.ones(len(indices), dtype=dtype)
        cls = sp.csr_matrix if kind == "csr" else sp.csc_matrix
        return cls((data, indices, indptr), shape=shape, copy=False)

    # term statistics (the terms table: index/tables.py)
    @property
    def total_terms(self) -> int:
        """|C|: term occurrences in the whole corpus."""
        return int(self.manifest["counts"]["term_occurrences"])

    @property
    def avsl(self) -> float:
        return self.total_terms / self.N if self.N else 0.0

    # matrices
    @cached_property
    def X(self) -> sp.csr_matrix:
        """c(t, s): sentences × terms, CSR."""
        return self._matrix("X", "csr", (self.N, self.V))

    @cached_property
    def XT(self) -> sp.csc_matrix:
        """c(t, s) as CSC: the postings of each term."""
        return self._matrix("XT", "csc", (self.N, self.V))

    @cached_property
    def title_X(self) -> sp.csr_matrix:
        """Title term counts: documents × terms, CSR."""
        return self._matrix("title", "csr", (self.D, self.V))

    @cached_property
    def G(self) -> sp.csr_matrix:
        """The entity containment graph, sentences × entities, CSR of ones (int8)."""
        return self._matrix("G", "csr", (self.N, self.E), np.int8)

    @cached_property
    def GT(self) -> sp.csc_matrix:
        return self._matrix("GT", "csc", (self.N, self.E), np.int8)

    # sentences
    @cached_property
    def sent_doc(self) -> np.ndarray:
        return self._array("sent_doc")

    @cached_property
    def sent_pos(self) -> np.ndarray:
        """Position of each sentence in its document, from 0."""
        return self._array("sent_pos")

    @cached_property
    def sent_start(self) -> np.ndarray:
        return self._array("sent_start")

    @cached_property
    def sent_end(self) -> np.ndarray:
        return self._array("sent_end")

    @cached_property
    def sent_len(self) -> np.ndarray:
        """|s|: number of terms of each sentence."""
        return self._array("sent_len")

    @cached_property
    def texts(self) -> SentenceTexts:
        """The sentences' texts, read a row group at a time (the last ones used are kept)."""
        return self._strings("sentences", "text", texts=True)

    @property
    def prev(self) -> PerSentence:
        """prev(s), or -1 at the start of a document (``.take(ids)``, ``[s]``; computed where asked)."""
        first = self.sent_doc_first
        return PerSentence(self.N, lambda ids: np.where(ids > first.take(ids), ids - 1, -1))

    @property
    def next(self) -> PerSentence:
        """next(s), or -1 at the end of a document (``.take(ids)``, ``[s]``; computed where asked)."""
        end = self.sent_doc_end
        return PerSentence(self.N, lambda ids: np.where(ids + 1 < end.take(ids), ids + 1, -1))

    @property
    def sent_doc_first(self) -> PerSentence:
        """The first sentence of each sentence's document (int32 unless N needs int64; computed where asked)."""
        return self._bounds[0]

    @property
    def sent_doc_end(self) -> PerSentence:
        """One past the last sentence of each sentence's document (computed where asked)."""
        return self._bounds[1]

    @cached_property
    def _bounds(self) -> tuple[PerSentence, PerSentence]:
        return document_bounds(self.N, self.sent_doc, self.doc_first, self.doc_nsent)

    def neighbourhood(self, sentences: np.ndarray, window: int = DEFAULT_WINDOW) -> np.ndarray:
        """The sorted distinct sentences within ±``window`` of ``sentences`` inside their documents."""
        return neighbourhood(self.sent_doc_first, self.sent_doc_end, sentences, window)

    def neighbours(self, sentence: int, window: int = DEFAULT_WINDOW) -> np.ndarray:
        """Sentence ids within ±``window`` of ``sentence`` in its document, itself included, in order."""
        return self.neighbourhood(np.array([sentence], dtype=np.int64), window)

    # term sequences (order and positions, for the position scorer and bigram statistics)
    @cached_property
    def seq_indptr(self) -> np.ndarray:
        return self._array("seq_indptr")

    @cached_property
    def seq_terms(self) -> np.ndarray:
        return self._array("seq_terms")

    @cached_property
    def seq_tokens(self) -> np.ndarray:
        """Token index of each term occurrence inside its sentence."""
        return self._array("seq_tokens")

    @cached_property
    def seq_char_start(self) -> np.ndarray:
        return self._array("seq_char_start")

    @cached_property
    def seq_char_end(self) -> np.ndarray:
        return self._array("seq_char_end")

    def sequence(self, sentence: int) -> np.ndarray:
        return np.asarray(self.occurrences("seq_terms", sentence))

    def occurrences(self, name: str, sentence: int) -> np.ndarray:
        """One sentence's part of a per-occurrence array (``seq_terms``, ``seq_tokens``, ``seq_char_start``,
        ``seq_char_end``): only the blocks of the file it reads are checked first, not the whole file (10.8 GB
        for the three a support sentence reads at 75M sentences: 21 s the first time); a file of more than
        :data:`CHECK_REST_FROM` bytes has its other blocks checked in the background from then on."""
        lo, hi = int(self.seq_indptr[sentence]), int(self.seq_indptr[sentence + 1])
        found = self.slices(name)
        if found.array.nbytes > CHECK_REST_FROM:
            found.check_rest_in_background()
        return found(lo, hi)
