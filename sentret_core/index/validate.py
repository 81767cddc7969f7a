"""Checking an index before anything reads it: cheap checks at every load, the rest on demand.

A damaged file must never crash the process (scipy's sparse routines trust ``indptr`` and
``indices`` and read out of bounds on bad ones) nor give silently different results. Three layers:

* **at every load** (:func:`check_load`, reading O(1) values of each file, so a load costs the same
  cold at any size; see ``benchmarks/validation_cost.py``): the manifest's own checksum and the
  types of its counts; every file it lists present with its recorded size (and block digests that
  cover it); every ``.npy`` header against the manifest and the counts; each matrix's and the term
  sequences' ``indptr`` starting at 0 and ending at nnz; every table's row count and columns;
* **at the first read of each file** (:meth:`Index._checked <sentret_core.index.reader.Index>`):
  its sha256 (block by block on two threads when the manifest has block digests,
  :mod:`sentret_core.index.blocks`), then, for an array, the checks that read all of it
  (:func:`check_array`: ``indptr`` never decreasing, indices within bounds, the sentences in document
  order…), vectorised, before anything indexes with it; for a table, its columns against the arrays
  (:mod:`sentret_core.index.columns`). An array read in slices (the postings) is checked a block at a
  time instead, at the first slice reading each block: its digest, then :func:`check_part`;
* **on demand** (``sentret verify``, ``Index.load(path, verify=True)``, the app in the
  background): every file's sha256 and its blocks', files the manifest does not list, the artefacts.

Every name the manifest lists must first be a regular file inside the folder, and the manifest itself a
regular file of bounded size and nesting (:mod:`sentret_core.index.safe_files`: a *resealed* manifest,
its checksums rewritten, could otherwise name ``/dev/zero``). Any failure is an
:class:`IndexFormatError` naming the file and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sentret_core.errors import IndexFormatError
from sentret_core.index.blocks import MIN_BLOCK_BYTES, count_blocks, digests
from sentret_core.index.blocks import whole_digest as sha256_of
from sentret_core.index.safe_files import UnsafeFile, member, member_name_problem, spacy_model_problem

MANIFEST = "manifest.json"
COUNTS = ("documents", "sentences", "terms", "entities", "term_occurrences", "mentions")
# matrix name → (rows of indptr − 1 are counted by, the bound of its indices, has a data file)
MATRICES: dict[str, tuple[str, str, bool]] = {
    "X": ("sentences", "terms", True), "XT": ("terms", "sentences", True), "title": ("documents", "terms", True),
    "G": ("sentences", "entities", False), "GT": ("entities", "sentences", False),
}
PER_SENTENCE = ("sent_doc", "sent_pos", "sent_start", "sent_end", "sent_len")
PER_OCCURRENCE = ("seq_terms", "seq_tokens", "seq_char_start", "seq_char_end")
TABLES = {  # table → (the count its rows must equal, the columns it must have)
    "terms": ("terms", ("term", "sf", "df", "cf")),
    "documents": ("documents", ("id", "title", "first_sentence", "n_sentences", "mean_sentence_length")),
    "sentences": ("sentences", ("text",)),
    "entities": ("entities", ("text", "label")),
    "mentions": ("mentions", ("sentence", "entity", "token_start", "token_end", "char_start", "char_end")),
}
CHUNK = 2**20  # values per step of a whole-array check: its temporaries stay small (fresh memory is slow)
OLD_INDEX_NOTE = (
    "{path}: its manifest.json has no checksum of its own and no record of file sizes and array "
    "headers (an index of an older sentret); run `sentret verify --fix {path}` to add them, or rebuild it"
)


def hint(path: Path) -> str:
    return f"run `sentret verify {path}`"


def fail(path: Path, what: str) -> IndexFormatError:
    return IndexFormatError(f"{path}: {what}; {hint(path)}")


# --- the manifest ----------------------------------------------------------------------------------


def canonical_checksum(manifest: Mapping[str, Any]) -> str:
    """sha256 over the manifest's content without its ``checksum`` field, in one canonical JSON form."""
    body = {key: value for key, value in manifest.items() if key != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def manifest_problems(manifest: Mapping[str, Any]) -> list[str]:
    """What is wrong with a parsed manifest itself (its checksum, its counts, its file list)."""
    problems = []
    recorded = manifest.get("checksum")
    if recorded is not None and recorded != canonical_checksum(manifest):
        problems.append(f"{MANIFEST}: its checksum does not match its content (it was edited or damaged)")
    counts = manifest.get("counts")
    if not isinstance(counts, dict):
        return [*problems, f"{MANIFEST}: has no counts"]
    for key in COUNTS:
        value = counts.get(key)
        if type(value) is not int or value < 0:
            problems.append(f"{MANIFEST}: counts.{key} is {value!r}, not a count")
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(
        isinstance(digest, str) and len(digest) == 64 for digest in files.values()
    ):
        problems.append(f"{MANIFEST}: its list of files and checksums is missing or damaged")
    elif (unsafe := next(filter(None, map(member_name_problem, files)), None)) is not None:
        problems.append(f"{MANIFEST}: its list of files is not an index's: {unsafe}")
    if "model" in manifest and (model := spacy_model_problem(manifest["model"])) is not None:
        problems.append(f"{MANIFEST}: {model}")
    sizes = manifest.get("sizes", {})
    if not isinstance(sizes, dict) or not all(type(v) is int and v >= 0 for v in sizes.values()):
        problems.append(f"{MANIFEST}: sizes is not a record of byte counts")
    if "arrays" in manifest and not isinstance(manifest["arrays"], dict):
        problems.append(f"{MANIFEST}: arrays is not a record")
    if "blocks" in manifest and not _blocks_sound(manifest["blocks"], files if isinstance(files, dict) else {}):
        problems.append(f"{MANIFEST}: its record of block checksums is damaged")
    return problems


def _blocks_sound(blocks: Any, files: Mapping[str, Any]) -> bool:
    """``blocks`` is ``{"bytes": block size, "sha256": {file: [a digest per block]}}`` of files the manifest lists."""
    if not isinstance(blocks, dict) or set(blocks) != {"bytes", "sha256"} or not isinstance(blocks["sha256"], dict):
        return False
    size = blocks["bytes"]
    if type(size) is not int or not MIN_BLOCK_BYTES <= size <= 2**40 or size % MIN_BLOCK_BYTES:
        return False
    return all(name in files and isinstance(found, list) and len(found) > 1
               and all(isinstance(d, str) and len(d) == 64 for d in found)
               for name, found in blocks["sha256"].items())


def block_record(manifest: Mapping[str, Any]) -> tuple[int, dict[str, list[str]]]:
    """The block size and the block digests by file (none for an index built before them)."""
    blocks = manifest.get("blocks")
    if not isinstance(blocks, dict):
        return 0, {}
    return int(blocks["bytes"]), dict(blocks["sha256"])


def is_current(manifest: Mapping[str, Any]) -> bool:
    """Whether the manifest protects itself and records sizes and headers (written by this sentret)."""
    return all(key in manifest for key in ("checksum", "sizes", "arrays"))


# --- .npy headers ----------------------------------------------------------------------------------


def npy_header(folder: Path, name: str) -> tuple[np.dtype, tuple[int, ...], int]:
    """dtype, shape and data offset of a .npy file; an IndexFormatError if the header is unreadable,
    not a plain C-order array, or does not fit the file's size."""
    file = folder / name
    try:
        with file.open("rb") as handle:
            version = np.lib.format.read_magic(handle)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
            else:
                raise ValueError(f"npy format version {version}")
            offset = handle.tell()
        size = file.stat().st_size
    except FileNotFoundError:
        raise fail(folder, f"{name} is missing") from None
    except Exception as err:  # numpy raises ValueError, EOFError, SyntaxError… on a damaged header
        raise fail(folder, f"{name}: its header cannot be read ({type(err).__name__}: {err})") from None
    if fortran or dtype.hasobject or len(shape) != 1:
        raise fail(folder, f"{name}: its header says {dtype.str} {shape}, not a plain one-dimensional array")
    if size != offset + shape[0] * dtype.itemsize:
        raise fail(
            folder, f"{name} is {size:,} bytes, but its header ({dtype.str}, {shape[0]:,} values) needs "
            f"{offset + shape[0] * dtype.itemsize:,} (truncated, or a changed header)",
        )
    return dtype, shape, offset


def map_array(folder: Path, name: str, dtype: np.dtype, length: int) -> np.ndarray:
    """The read-only memory map of a checked .npy (a plain ndarray view: slicing a memmap costs more)."""
    if length == 0:
        empty = np.zeros(0, dtype=dtype)
        empty.flags.writeable = False
        return empty
    try:
        return np.asarray(np.load(folder / name, mmap_mode="r", allow_pickle=False))
    except (OSError, ValueError) as err:
        raise fail(folder, f"cannot read {name} ({err})") from None


# --- at every load ---------------------------------------------------------------------------------


def check_load(folder: Path, manifest: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The cheap checks every load makes (see the module's docstring); returns the mapped arrays by
    name (without ``.npy``). Raises :class:`IndexFormatError` on the first problem."""
    counts: dict[str, int] = dict(manifest["counts"])
    files: dict[str, str] = manifest.get("files", {})
    sizes: dict[str, int] = manifest.get("sizes", {})
    recorded: dict[str, dict[str, Any]] = manifest.get("arrays", {})
    block, blocks = block_record(manifest)
    for name in sorted(files):
        try:
            size = member(folder, name).stat().st_size
        except FileNotFoundError:
            raise fail(folder, f"{name} is missing") from None
        except UnsafeFile as err:
            raise fail(folder, f"{MANIFEST} lists {err}") from None
        except OSError as err:
            raise fail(folder, f"cannot read {name} ({err.strerror})") from None
        if name in sizes and sizes[name] != size:
            raise fail(folder, f"{name} is {size:,} bytes, not the {sizes[name]:,} the manifest records "
                               "(truncated or altered)")
        if name in blocks and len(blocks[name]) != count_blocks(size, block):
            raise fail(folder, f"{MANIFEST} records {len(blocks[name]):,} block checksums of {name}, whose "
                               f"{size:,} bytes make {count_blocks(size, block):,} blocks (it was edited or damaged)")
    expected = expected_arrays(counts)
    required = [f"{name}.npy" for name in expected if not name.endswith(".data") or MATRICES[name.split(".")[0]][2]]
    unlisted = [name for name in [*required, *(f"{table}.parquet" for table in TABLES)] if name not in files]
    if unlisted:  # a file without a recorded sha256 could never be checked
        raise fail(folder, f"{MANIFEST} does not list {', '.join(unlisted[:3])}{' …' if len(unlisted) > 3 else ''} "
                           "among the index's files (it was edited or damaged)")
    arrays: dict[str, np.ndarray] = {}
    for name in sorted(expected):
        file = f"{name}.npy"
        if file not in files and not (folder / file).exists():
            if name.endswith(".data") and not MATRICES[name.split(".")[0]][2]:
                continue  # G and GT are matrices of ones: no data file
            raise fail(folder, f"{file} is missing")
        dtype, shape, _ = npy_header(folder, file)
        if file in recorded:
            want = recorded[file]
            if dtype.str != want.get("dtype") or list(shape) != list(want.get("shape", [])):
                raise fail(folder, f"{file}: its header says {dtype.str} {shape}, but the manifest records "
                                   f"{want.get('dtype')} {tuple(want.get('shape', []))}")
        kinds, length = expected[name]
        if dtype.str not in kinds:
            raise fail(folder, f"{file}: its header says {dtype.str}; an index stores {' or '.join(kinds)} there")
        if length is not None and shape[0] != length:
            raise fail(folder, f"{file} holds {shape[0]:,} values; the counts in the manifest need {length:,}")
        arrays[name] = map_array(folder, file, dtype, shape[0])
    _check_structure(folder, counts, arrays)
    _check_table_sizes(folder, counts)
    return arrays


_INT = ("<i4", "<i8")


def expected_arrays(counts: Mapping[str, int]) -> dict[str, tuple[tuple[str, ...], int | None]]:
    """Array name → (the dtypes allowed, the length the counts fix, or None when only nnz fixes it)."""
    N, T = counts["sentences"], counts["term_occurrences"]
    expected: dict[str, tuple[tuple[str, ...], int | None]] = {name: (_INT, N) for name in PER_SENTENCE}
    expected["seq_indptr"] = (_INT, N + 1)
    expected.update({name: (_INT, T) for name in PER_OCCURRENCE})
    for matrix, (rows, _, _) in MATRICES.items():
        expected[f"{matrix}.indptr"] = (_INT, counts[rows] + 1)
        expected[f"{matrix}.indices"] = (_INT, None)
        expected[f"{matrix}.data"] = (("<i4", "<i8", "|i1"), None)
    return expected


def _check_structure(folder: Path, counts: Mapping[str, int], arrays: Mapping[str, np.ndarray]) -> None:
    """What every load checks of the arrays' structure, reading O(1) values: each matrix's ``indptr``
    starts at 0 and ends at its nnz, its data as long as its indices; the term sequences end at the
    counted occurrences. What reads a whole array waits for that array's first use (:func:`check_array`)."""
    for matrix in MATRICES:
        indptr, indices = arrays[f"{matrix}.indptr"], arrays[f"{matrix}.indices"]
        data = arrays.get(f"{matrix}.data")
        if indptr.dtype != indices.dtype:
            raise fail(folder, f"{matrix}.indptr.npy and {matrix}.indices.npy have different dtypes")
        _check_ends(folder, f"{matrix}.indptr.npy", indptr, len(indices), f"{matrix}.indices.npy")
        if data is not None and len(data) != len(indices):
            raise fail(folder, f"{matrix}.data.npy holds {len(data):,} values, {matrix}.indices.npy {len(indices):,}")
    _check_ends(folder, "seq_indptr.npy", arrays["seq_indptr"], counts["term_occurrences"], "counts.term_occurrences")


def check_array(folder: Path, counts: Mapping[str, int], arrays: Mapping[str, np.ndarray], name: str) -> None:
    """The checks that read the whole array ``name`` (and the arrays it must agree with), vectorised: made
    at its first use, before scipy or numpy index anything with it (:meth:`Index._array
    <sentret_core.index.reader.Index>`), and all of them by :func:`check_all_arrays` (``sentret verify``).
    The values of data arrays index nothing: their sha256 at the first read covers them."""
    matrix, _, part = name.partition(".")
    if matrix in MATRICES and part == "indptr":
        _check_rising(folder, f"{name}.npy", arrays[name])
    elif matrix in MATRICES and part == "indices":
        bound = MATRICES[matrix][1]
        check_bounds(folder, f"{name}.npy", arrays[name], counts[bound], f"counts.{bound}")
    elif name == "title.data" and "title_term_occurrences" in counts:
        total = int(arrays["title.data"].sum(dtype=np.int64))
        if total != counts["title_term_occurrences"]:
            raise fail(folder, f"title.data.npy counts {total:,} title terms, the manifest "
                               f"{counts['title_term_occurrences']:,}")
    elif name in ("seq_indptr", "sent_len"):
        _check_rising(folder, "seq_indptr.npy", arrays["seq_indptr"])
        indptr, lengths = arrays["seq_indptr"], arrays["sent_len"]
        if len(indptr) != len(lengths) + 1 or not all(
            np.array_equal(np.diff(indptr[lo : lo + CHUNK + 1]), lengths[lo : lo + CHUNK])
            for lo in range(0, len(lengths), CHUNK)
        ):
            raise fail(folder, "sent_len.npy does not match the sentence bounds in seq_indptr.npy")
    elif name == "seq_terms":
        check_bounds(folder, "seq_terms.npy", arrays["seq_terms"], counts["terms"], "counts.terms")
    elif name == "sent_doc":
        sent_doc = arrays["sent_doc"]
        check_bounds(folder, "sent_doc.npy", sent_doc, counts["documents"], "counts.documents")
        if decreases(sent_doc):
            raise fail(folder, "sent_doc.npy is not in document order")
    elif name == "sent_pos" and len(arrays["sent_pos"]) and int(arrays["sent_pos"].min()) < 0:
        raise fail(folder, "sent_pos.npy holds a negative position")


# arrays that may be read in slices, checked a block at a time (their checks hold value by value)
SLICED = {f"{matrix}.{part}" for matrix, (_, _, data) in MATRICES.items() for part in ("indices", "data")[: 1 + data]}
SLICED |= set(PER_OCCURRENCE)


def check_part(folder: Path, counts: Mapping[str, int], name: str, values: np.ndarray) -> None:
    """:func:`check_array`'s checks of the array ``name`` (one of :data:`SLICED`, whose checks hold value by
    value) on a part of its ``values``: made on each block of the file the first time a slice reads it."""
    matrix, _, part = name.partition(".")
    if part == "indices":
        bound = MATRICES[matrix][1]
        check_bounds(folder, f"{name}.npy", values, counts[bound], f"counts.{bound}")
    elif name == "seq_terms":
        check_bounds(folder, "seq_terms.npy", values, counts["terms"], "counts.terms")


def check_all_arrays(folder: Path, counts: Mapping[str, int], arrays: Mapping[str, np.ndarray]) -> None:
    """:func:`check_array` of every array."""
    for name in sorted(arrays):
        check_array(folder, counts, arrays, name)


def _check_ends(folder: Path, name: str, indptr: np.ndarray, end: int, of: str) -> None:
    if len(indptr) == 0 or int(indptr[0]) != 0:
        raise fail(folder, f"{name} does not start at 0")
    if int(indptr[-1]) != end:
        raise fail(folder, f"{name} ends at {int(indptr[-1]):,}, not at the {end:,} values of {of}")


def decreases(values: np.ndarray) -> bool:
    """Whether a value is smaller than the one before it (a chunk at a time: small temporaries)."""
    last = len(values) - 1
    return any(bool(np.any(values[lo + 1 : min(lo + CHUNK, last) + 1] < values[lo : min(lo + CHUNK, last)]))
               for lo in range(0, last, CHUNK))


def _check_rising(folder: Path, name: str, indptr: np.ndarray) -> None:
    if decreases(indptr):
        raise fail(folder, f"{name} decreases somewhere (a row would have a negative length)")


def check_bounds(folder: Path, name: str, values: np.ndarray, bound: int, of: str) -> None:
    """0 <= values < bound, in one pass: read as unsigned, a negative value is a huge one."""
    if len(values) and int(values.view(values.dtype.str.replace("i", "u")).max()) >= bound:
        raise fail(folder, f"{name} holds values outside 0…{bound - 1:,} ({of} is {bound:,})")


def _check_table_sizes(folder: Path, counts: Mapping[str, int]) -> None:
    """Every table's footer readable, its row count and columns as the manifest says (metadata only)."""
    for table, (count, columns) in TABLES.items():
        file = f"{table}.parquet"
        try:
            meta = pq.ParquetFile(folder / file).metadata
            rows, names = meta.num_rows, set(meta.schema.names)
        except FileNotFoundError:
            raise fail(folder, f"{file} is missing") from None
        except (OSError, pa.ArrowException) as err:
            raise fail(folder, f"cannot read {file} ({err})") from None
        if rows != counts[count]:
            raise fail(folder, f"{file} has {rows:,} rows; counts.{count} in the manifest is {counts[count]:,}")
        missing = [c for c in columns if c not in names]
        if missing:
            raise fail(folder, f"{file} lacks the column(s) {', '.join(missing)}")


# --- at the first read of a file (tables: index/columns.py) ---------------------------------------------


def sha256_problem(folder: Path, name: str, digest: str, blocks: list[str] | None = None,
                   block: int = 0) -> str | None:
    """Why ``name`` does not match its recorded sha256 (and each block its ``blocks``' digest, when given),
    or None when it does (only a regular file inside ``folder`` is read)."""
    found: list[str] = []
    try:
        file = member(folder, name)
        if blocks:
            actual, found = digests(file, block)
        else:
            actual = sha256_of(file)
    except FileNotFoundError:
        return f"{name}: missing"
    except UnsafeFile as err:
        return f"{MANIFEST} lists {err}"
    except OSError as err:
        return f"{name}: cannot be read ({err.strerror})"
    if actual != digest:
        return f"{name}: checksum mismatch (the file was altered or corrupted)"
    wrong = [k for k, (got, want) in enumerate(zip(found, blocks or [])) if got != want]
    if wrong or len(found) != len(blocks or []):
        first = wrong[0] + 1 if wrong else min(len(found), len(blocks or [])) + 1
        return f"{name}: the checksum of its block {first:,} in {MANIFEST} does not match the file"
    return None
