"""Corpus upload: documents from the browser → a new index under ``data/indexes/<name>``.

The logic is :func:`build_uploaded`, free of widgets so that tests can call it: it checks the
admin token (building or replacing an index is an admin action), the name, and that no open
annotation session uses an index it would replace; it checks every file's type and size before
it writes any, saves them into a temporary folder, reads every one of them with the corpus
readers (so a binary file, a file in another encoding, broken JSONL or an empty file fails
with its reason before spaCy starts), writes them as one JSONL and builds the index from it.
:func:`render_upload` draws the widgets on the Corpus page — only after the admin sign-in — and,
after a good build, switches the session to the new index; after a failed one the previous index
stays loaded. The server itself refuses a file over the limit (``server.maxUploadSize`` in
``.streamlit/config.toml``).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from sentret_core.annotation.index_use import refuse_if_in_use
from sentret_core.annotation.records import SessionInfo
from sentret_core.annotation.store import JudgmentStore
from sentret_core.errors import CorpusError, SentretError
from sentret_core.index.format import is_index
from sentret_core.ingest.build import BuildSummary, build_index
from sentret_core.ingest.corpus import read_corpus
from sentret_core.ui.text import md

MAX_TOTAL_MB = 50
MAX_TOTAL_BYTES = MAX_TOTAL_MB * 1024 * 1024
SUFFIXES = ("txt", "md", "jsonl", "csv")
ENCODINGS = ("utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

Progress = Callable[[float, str], None]  # (fraction done, message)


class Upload(NamedTuple):
    """One uploaded file: its name as the browser sent it and its bytes."""

    name: str
    data: bytes


def check_name(name: str, root: Path, *, overwrite: bool = False, in_use: Iterable[SessionInfo] = ()) -> Path:
    """The folder ``root/name`` for a new index; a clear error for a bad or taken name, or for an index
    that one of the open sessions in ``in_use`` reads."""
    name = name.strip()
    if not name:
        raise SentretError("Give the new index a name.")
    if "/" in name or "\\" in name or name in (".", ".."):
        raise SentretError(f"The index name {name!r} may not contain a path separator.")
    if not _NAME.match(name):
        raise SentretError(
            f"The index name {name!r} is not allowed: use 1-64 letters, digits, '-', '_' or '.', "
            "starting with a letter or digit."
        )
    target = root / name
    if target.exists() and not overwrite:
        what = "an index" if is_index(target) else "a folder"
        raise SentretError(
            f"{what.capitalize()} named {name!r} already exists in {root}; choose another name or tick "
            "“Replace the existing index”."
        )
    if target.exists() and not target.is_dir():
        raise SentretError(f"{target} exists and is not a folder; choose another name.")
    if target.exists():
        refuse_if_in_use(in_use, target, "replace")
    return target


def _safe_file_name(name: str, taken: set[str]) -> str:
    base = Path(name.replace("\\", "/")).name.strip() or "file"
    base = re.sub(r"[^\w.\- ]", "_", base)
    candidate, n = base, 1
    while candidate.lower() in taken:
        stem, dot, suffix = base.rpartition(".")
        candidate = f"{stem}-{n}.{suffix}" if dot else f"{base}-{n}"
        n += 1
    taken.add(candidate.lower())
    return candidate


def check_uploads(files: Sequence[tuple[str, int]]) -> None:
    """Check uploaded files by ``(name, size in bytes)``: at least one, each of an accepted type, and
    together within the limit. Called as soon as files arrive and again before anything is written."""
    if not files:
        raise SentretError("Choose at least one file to upload.")
    for name, _size in files:
        if Path(name).suffix.lower().lstrip(".") not in SUFFIXES:
            raise CorpusError(f"{name}: unsupported file type; upload .txt, .md, .jsonl or .csv files")
    total = sum(size for _name, size in files)
    if total > MAX_TOTAL_BYTES:
        raise SentretError(
            f"The files add up to {total / 1024 / 1024:.1f} MB; the limit is {MAX_TOTAL_MB} MB in total."
        )


def save_uploads(files: Sequence[Upload], folder: Path) -> list[Path]:
    """Write ``files`` into ``folder`` once all of them pass :func:`check_uploads` and none is empty."""
    check_uploads([(f.name, len(f.data)) for f in files])
    for upload in files:
        if not upload.data.strip():
            raise CorpusError(f"{upload.name}: the file is empty")
    taken: set[str] = set()
    paths = []
    for upload in files:
        path = folder / _safe_file_name(upload.name, taken)
        path.write_bytes(upload.data)
        paths.append(path)
    return paths


def _user_message(err: SentretError, folder: Path, names: dict[str, str]) -> str:
    """The reader's message with the temporary paths replaced by the names the user uploaded."""
    text = str(err)
    for saved, original in names.items():
        text = text.replace(str(folder / saved), original)
    return text.replace(
        "pass --encoding with the file's encoding", "choose the file's encoding under “Encoding”"
    )


def combine(paths: Sequence[Path], out: Path, encoding: str = "utf-8") -> int:
    """Read every file with the corpus readers and write all their documents to the JSONL ``out``.

    With several files, document ids are prefixed with the file name so that they stay
    unique. Returns the number of documents; raises :class:`CorpusError` naming the file.
    """
    count = 0
    with out.open("w", encoding="utf-8") as handle:
        for path in paths:
            for doc in read_corpus(path, "auto", encoding):
                doc_id = doc.id if len(paths) == 1 else f"{path.name}:{doc.id}"
                record = {"id": doc_id, "title": doc.title, "text": doc.text}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                count += 1
    return count


def build_uploaded(
    files: Sequence[Upload],
    name: str,
    root: Path,
    *,
    store: JudgmentStore,
    token: str,
    overwrite: bool = False,
    encoding: str = "utf-8",
    progress: Progress | None = None,
) -> BuildSummary:
    """Build the index ``root/name`` from uploaded files; raises SentretError with a reason to show.

    ``token`` must be the admin token (checked by ``store``, whose open sessions must not use an
    index this would replace).
    """
    store.admin(token)  # "wrong admin token" otherwise
    target = check_name(name, root, overwrite=overwrite, in_use=store.sessions())
    with tempfile.TemporaryDirectory(prefix="sentret-upload-") as tmp:
        folder = Path(tmp) / "files"
        folder.mkdir()
        paths = save_uploads(files, folder)
        names = {p.name: f.name for p, f in zip(paths, files)}
        if progress:
            progress(0.0, f"Reading {len(paths)} file{'s' if len(paths) != 1 else ''}…")
        combined = Path(tmp) / "corpus.jsonl"
        try:
            total = combine(paths, combined, encoding)
        except SentretError as err:
            raise CorpusError(_user_message(err, folder, names)) from None

        def step(documents: int, words: int) -> None:
            if progress:
                progress(min(documents / max(total, 1), 1.0), f"Parsed {documents:,} of {total:,} documents, "
                         f"{words:,} words")

        try:
            return build_index(combined, target, force=overwrite, n_process=1, progress=step)
        except SentretError as err:
            raise SentretError(
                _user_message(err, folder, names).replace(str(combined), "the upload")
            ) from None


# --- the widgets ----------------------------------------------------------------------------------


def render_upload() -> None:
    """The Corpus page's upload form, behind the admin sign-in (building and replacing indexes are admin
    actions; an anonymous visitor explores and, with their own sign-in link or passphrase, annotates)."""
    from sentret_core.ui.admin_sign_in import signed_in_token, token_form
    from sentret_core.ui.judgments import page_store
    from sentret_core.ui.state import guarded, index_root, load_index

    st.subheader("Build an index from your documents")
    store = page_store()
    if store is None or token_form(store, "upload", NEEDS_ADMIN) is None:
        return
    done = st.session_state.pop("upload_done", None)
    if done:
        st.success(done)
    st.caption(
        f"Upload .txt or .md files (one document each; the first heading or line is the title), .jsonl "
        f'(one {{"id", "title", "text"}} object per line) or .csv (columns id,title,text). '
        f"At most {MAX_TOTAL_MB} MB in total. The index is built under `{index_root()}/<name>`."
    )
    files = _chosen_files()
    c1, c2, c3 = st.columns([2, 1, 1])
    name = c1.text_input("Name of the new index", key="upload_name", placeholder="e.g. my-notes",
                         help="Letters, digits, '-', '_' and '.'; no path separators.")
    encoding = c2.selectbox("Encoding", ENCODINGS, key="upload_encoding", help="The files' text encoding")
    overwrite = c3.checkbox("Replace the existing index", key="upload_overwrite",
                            help="Needed to build over an index of the same name")
    if not st.button("Build index", key="upload_build", type="primary", disabled=not files):
        return
    uploads = [Upload(f.name, f.getvalue()) for f in files]
    bar = st.progress(0.0, text="Starting…")

    def progress(fraction: float, message: str) -> None:
        bar.progress(fraction, text=message)

    root = index_root()
    target = root / name.strip()
    replacing = target.exists()
    summary = guarded("build the index", build_uploaded, uploads, name, root, store=store,
                      token=signed_in_token() or "", overwrite=overwrite, encoding=encoding or "utf-8",
                      progress=progress)
    if summary is None:  # the previous index stays loaded
        bar.empty()
        return
    if replacing:  # cached copies of the replaced index (and results computed from it) are stale
        load_index.clear()
        st.cache_data.clear()
    st.session_state["index_path"] = str(summary.path)
    st.session_state["upload_done"] = (
        f"Built {md(summary.path)}: {summary.documents:,} documents, {summary.sentences:,} sentences, "
        f"{summary.entities:,} entities in {summary.seconds:.1f} s. It is now the loaded index."
    )
    st.rerun()


NEEDS_ADMIN = "Building or replacing an index needs the admin token (the same sign-in as the Admin page)."


def _chosen_files() -> list[UploadedFile]:
    """The files in the uploader, once they pass :func:`check_uploads`; none (after saying why) otherwise.

    The uploader is given no ``type``: Streamlit checks that on the server *before* the page runs and
    answers a rewritten request (``page.html``) with a traceback. The type and the total size are
    checked here instead, as soon as the files arrive, and again before anything is written.
    """
    files = st.file_uploader(
        "Documents (.txt, .md, .jsonl, .csv)",
        accept_multiple_files=True,
        key="upload_files",
        max_upload_size=MAX_TOTAL_MB,
        help=f"Several files at once are fine; together at most {MAX_TOTAL_MB} MB.",
    )
    chosen = list(files or [])
    if chosen:
        try:
            check_uploads([(f.name, f.size) for f in chosen])
        except SentretError as err:
            st.error(md(str(err)))
            return []
    return chosen
