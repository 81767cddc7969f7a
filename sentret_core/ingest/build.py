"""Building an index: documents → spaCy pass → arrays and tables → a folder, atomically.

The build writes into a hidden temporary folder beside the target and renames it into
place only when everything (manifest last) is written: an interrupted or failed build
never leaves a half-written index, and an existing index is replaced only with ``force``.
SIGTERM, SIGINT and SIGHUP remove the folder and stop the spaCy workers before the process
ends (interrupt.py); a later build removes folders whose build was killed outright (staging.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

from sentret_core import __version__
from sentret_core.errors import CorpusError, SentretError
from sentret_core.index.format import is_index, save_array, save_matrix, save_table, write_manifest
from sentret_core.ingest.corpus import Document, Skipped, read_corpus
from sentret_core.ingest.graph import GraphBuilder
from sentret_core.ingest.interrupt import cleanup_on_signals, signals_deferred
from sentret_core.ingest.nlp import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MODEL,
    NORMALISATION,
    ParsedDocument,
    load_pipeline,
    parse_documents,
)
from sentret_core.ingest.staging import disk_full, folder_size, make_staging, release, write_error

Progress = Callable[[int, int], None]  # (documents done, words done)
_TEXT_BATCH = 8192


@dataclass(frozen=True)
class BuildSummary:
    path: Path
    documents: int
    sentences: int
    words: int
    terms: int
    entities: int
    seconds: float
    notes: tuple[str, ...] = ()  # what was left out or cleaned up, to tell the user

    @property
    def words_per_second(self) -> float:
        return self.words / self.seconds if self.seconds else 0.0


def build_index(
    source: str | Path,
    out: str | Path,
    *,
    fmt: str = "auto",
    encoding: str = "utf-8",
    model: str = DEFAULT_MODEL,
    n_process: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
    force: bool = False,
    progress: Progress | None = None,
) -> BuildSummary:
    """Index the documents of ``source`` (``"demo"``, a folder, JSONL or CSV) into the folder ``out``."""
    _check_settings(n_process, batch_size)
    if str(source) != "demo":
        _check_not_the_source(Path(out), Path(source))
    _check_target(Path(out), force)
    skipped = Skipped()
    documents = read_corpus(source, fmt, encoding, skipped)
    first = next(documents, None)  # surface a bad source before loading the model
    if first is None:
        raise CorpusError(f"{source}: no documents with text found")
    summary = build_from_documents(
        _chain(first, documents), out, source=str(source), model=model, n_process=n_process,
        batch_size=batch_size, force=force, progress=progress,
    )  # fmt: skip
    return dataclasses.replace(summary, notes=(*summary.notes, *skipped.notes(source)))


def build_from_documents(
    documents: Iterable[Document],
    out: str | Path,
    *,
    source: str,
    model: str = DEFAULT_MODEL,
    n_process: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
    force: bool = False,
    progress: Progress | None = None,
) -> BuildSummary:
    """Index a stream of :class:`Document` records (presegmented ones kept as given) into ``out``.

    ``source`` is what the manifest records as the documents' origin.
    """
    _check_settings(n_process, batch_size)
    out = Path(out)
    _check_target(out, force)
    nlp = load_pipeline(model)
    started = time.perf_counter()
    with cleanup_on_signals():
        tmp, notes = make_staging(out)
        try:
            writer = _write(tmp, documents, nlp, n_process=n_process, batch_size=batch_size, progress=progress)
            if writer.n_sentences == 0:
                raise CorpusError(f"{source}: the documents hold no sentences")
            counts = writer.finish()
            write_manifest(tmp, _manifest(nlp, model, source, dict(counts, words=writer.n_words)))
            with signals_deferred():  # the old index goes only once the new one is in place
                release(tmp)
                _replace(tmp, out)
        except BaseException as exc:
            full = isinstance(exc, OSError) and disk_full(exc)
            written = folder_size(tmp) if full else 0
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, OSError) and full:
                raise write_error(exc, out, written) from None
            raise
    seconds = time.perf_counter() - started
    return BuildSummary(
        out, counts["documents"], counts["sentences"], writer.n_words, counts["terms"], counts["entities"],
        seconds, tuple(notes),
    )  # fmt: skip


def _write(
    tmp: Path, documents: Iterable[Document], nlp: Any, *, n_process: int, batch_size: int, progress: Progress | None
) -> IndexWriter:
    """The spaCy pass over ``documents``, each added to a writer in ``tmp``."""
    writer = IndexWriter(tmp)
    with contextlib.closing(parse_documents(documents, nlp, n_process=n_process, batch_size=batch_size)) as parsed:
        for doc in parsed:  # closed on any error: spaCy's workers are told to stop right away
            writer.add(doc)
            if progress is not None:
                progress(writer.n_documents, writer.n_words)
    return writer


def _manifest(nlp: Any, model: str, source: str, counts: dict[str, int]) -> dict[str, Any]:
    return {
        "sentret_version": __version__,
        "spacy_version": _spacy_version(),
        "model": model,
        "model_version": nlp.meta.get("version", ""),
        "pipeline": nlp.pipe_names,
        "normalisation": NORMALISATION,
        "source": source,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "counts": counts,
    }


def _check_settings(n_process: int, batch_size: int) -> None:
    if n_process < 1 or batch_size < 1:
        raise SentretError(f"--n-process and --batch-size must be at least 1 (got {n_process}, {batch_size})")


def _check_target(out: Path, force: bool) -> None:
    """``out`` may be built into: it is new, an empty folder, or (with ``force``) a sentret index.

    ``force`` replaces an index and nothing else: never a file, a folder of other things, the
    current folder or the home folder.
    """
    if not out.exists():
        return
    where = out.resolve()
    if where in (Path.cwd().resolve(), Path.home().resolve()) or where == Path(where.anchor):
        raise SentretError(f"{out}: refusing to build into the current, home or root folder; choose a new --out")
    if not out.is_dir():
        raise SentretError(f"{out}: exists and is not a folder; choose another --out (--force replaces only an index)")
    if is_index(out):
        if not force:
            raise SentretError(f"{out}: an index is already there; pass --force to replace it")
        return
    if any(out.iterdir()):
        raise SentretError(
            f"{out}: exists, is not empty and is not an index; choose another --out (--force replaces only an index)"
        )


def _check_not_the_source(out: Path, source: Path) -> None:
    """The index must not be built over (or inside) the documents it reads."""
    out, source = out.resolve(), source.resolve()
    if out == source or source in out.parents:
        raise SentretError(f"{out}: that is where the documents are; choose an --out outside {source}")


def _replace(tmp: Path, out: Path) -> None:
    """Move the finished build into place; the old folder goes only once the new one is there."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(old)
    tmp.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink()


def _chain(first: Document, rest: Iterator[Document]) -> Iterator[Document]:
    yield first
    yield from rest


def _spacy_version() -> str:
    import spacy

    return str(spacy.__version__)


class IndexWriter:
    """Accumulates parsed documents in compact buffers and writes the index files at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.vocab: dict[str, int] = {}
        self.graph = GraphBuilder()
        self.n_documents = 0
        self.n_sentences = 0
        self.n_words = 0
        self._docs: dict[str, list[Any]] = {"id": [], "title": [], "first_sentence": [], "n_sentences": []}
        self._sent = {name: array("q") for name in ("sent_doc", "sent_pos", "sent_start", "sent_end")}
        self._seq = {
            name: array("q") for name in ("seq_terms", "seq_tokens", "seq_char_start", "seq_char_end")
        }
        self._seq_indptr = array("q", [0])
        self._title_terms = array("q")
        self._title_indptr = array("q", [0])
        self._texts: list[str] = []
        self._text_writer = pq.ParquetWriter(folder / "sentences.parquet", pa.schema([("text", pa.string())]))

    def _ids(self, terms: list[str]) -> list[int]:
        vocab = self.vocab
        return [vocab.setdefault(term, len(vocab)) for term in terms]

    def add(self, doc: ParsedDocument) -> None:
        self.n_words += doc.n_words
        if not doc.sentences:
            return
        d = self.n_documents
        self._docs["id"].append(doc.id)
        self._docs["title"].append(doc.title)
        self._docs["first_sentence"].append(self.n_sentences)
        self._docs["n_sentences"].append(len(doc.sentences))
        self._title_terms.extend(self._ids(doc.title_terms))
        self._title_indptr.append(len(self._title_terms))
        for pos, sent in enumerate(doc.sentences):
            s = self.n_sentences
            for name, value in zip(self._sent, (d, pos, sent.start, sent.end)):
                self._sent[name].append(value)
            self._seq["seq_terms"].extend(self._ids(sent.terms))
            self._seq["seq_tokens"].extend(sent.term_tokens)
            self._seq["seq_char_start"].extend(start for start, _ in sent.term_chars)
            self._seq["seq_char_end"].extend(end for _, end in sent.term_chars)
            self._seq_indptr.append(len(self._seq["seq_terms"]))
            self.graph.add(s, sent.mentions)
            self._texts.append(sent.text)
            self.n_sentences += 1
        self.n_documents += 1
        if len(self._texts) >= _TEXT_BATCH:
            self._flush_texts()

    def _flush_texts(self) -> None:
        if self._texts:
            self._text_writer.write_table(pa.table({"text": self._texts}))
            self._texts = []

    def finish(self) -> dict[str, int]:
        """Write every file but the manifest; return the counts."""
        self._flush_texts()
        self._text_writer.close()
        folder, N, D, V = self.folder, self.n_sentences, self.n_documents, len(self.vocab)

        seq_indptr = _np(self._seq_indptr)
        seq = {name: _np(values) for name, values in self._seq.items()}
        sent_len = np.diff(seq_indptr)
        rows = np.repeat(np.arange(N), sent_len)
        X = sp.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, seq["seq_terms"])), shape=(N, V))
        X.sum_duplicates()
        save_matrix(folder, "X", X)
        save_matrix(folder, "XT", X.tocsc())

        title_indptr = _np(self._title_indptr)
        title_rows = np.repeat(np.arange(D), np.diff(title_indptr))
        title = sp.csr_matrix(
            (np.ones(len(title_rows), dtype=np.int32), (title_rows, _np(self._title_terms))), shape=(D, V)
        )
        title.sum_duplicates()
        save_matrix(folder, "title", title)

        sent = {name: _np(values) for name, values in self._sent.items()}
        for name, values in sent.items():
            save_array(
                folder,
                name,
                values.astype(np.int32 if name != "sent_start" and name != "sent_end" else np.int64),
            )
        save_array(folder, "sent_len", sent_len.astype(np.int32))
        save_array(folder, "seq_indptr", seq_indptr)
        for name, values in seq.items():
            save_array(folder, name, values.astype(np.int32))

        doc_of = sent["sent_doc"]
        in_doc = sp.csr_matrix((np.ones(N, dtype=np.int32), (doc_of, np.arange(N))), shape=(D, N))
        df = np.diff((in_doc @ X).tocsc().indptr)
        sf = np.diff(X.tocsc().indptr)
        cf = np.asarray(X.sum(axis=0)).ravel()
        terms = pd.DataFrame(
            {
                "term": list(self.vocab),
                "sf": sf.astype(np.int64),
                "df": df.astype(np.int64),
                "cf": cf.astype(np.int64),
            }
        )
        save_table(folder, "terms", terms)

        documents = pd.DataFrame(self._docs)
        n_sent = documents["n_sentences"].to_numpy()
        documents["mean_sentence_length"] = np.bincount(doc_of, weights=sent_len, minlength=D) / n_sent
        save_table(folder, "documents", documents)

        entities, mentions, G = self.graph.finish(N)
        save_table(folder, "entities", entities)
        save_table(folder, "mentions", mentions)
        save_matrix(folder, "G", G, ones=True)
        save_matrix(folder, "GT", G.tocsc(), ones=True)
        return {
            "documents": D,
            "sentences": N,
            "terms": V,
            "term_occurrences": int(sent_len.sum()),
            "title_term_occurrences": int(title.data.sum()),
            "entities": len(entities),
            "mentions": len(mentions),
        }


def _np(values: array) -> np.ndarray:
    return np.frombuffer(values, dtype=np.int64) if len(values) else np.zeros(0, dtype=np.int64)
