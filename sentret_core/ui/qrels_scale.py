"""The scale of an uploaded qrels file: sniffed from its grades, said in a sentence, and changeable.

Evaluate reads an upload on the scale chosen here (:func:`~sentret_core.annotation.scales.parse_scaled_qrels`),
so a session's export, on the trec or the 1-4 scale, gives the session's own numbers.
"""

from __future__ import annotations

import hashlib

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from sentret_core.annotation.records import IMPORT_SCALES
from sentret_core.annotation.scales import SCALE_NAMES, qrels_grades, read_scale, sniff_scale
from sentret_core.defaults import DEFAULT_QRELS_SCALE
from sentret_core.errors import SentretError
from sentret_core.ui.state import uploaded_text
from sentret_core.ui.text import md

SCALE_KEY = "evaluate_qrels_scale"
SNIFFED_FOR = "evaluate_qrels_scale_for"  # the file whose sniffed scale the radio was last set to


def choose_scale(text: str | None, data: bytes) -> str:
    """A radio of the scales, set to the sniffed one whenever a new file (``data``) arrives, and the
    sentence saying how the file is read; returns the chosen scale. ``text`` is None when the
    file is not text (the evaluation then says why)."""
    grades = qrels_grades(text.splitlines()) if text is not None else []
    digest = hashlib.sha256(data).hexdigest()
    if st.session_state.get(SNIFFED_FOR) != digest:
        st.session_state[SNIFFED_FOR] = digest
        try:
            st.session_state[SCALE_KEY] = sniff_scale(grades).scale
        except SentretError:  # no readable grade: the parser names the bad line on Evaluate
            st.session_state[SCALE_KEY] = DEFAULT_QRELS_SCALE
    scale: str = st.radio("qrels scale", list(IMPORT_SCALES), horizontal=True, key=SCALE_KEY,
                          format_func=SCALE_NAMES.__getitem__,
                          help="The scale of the file's grades; set to the one its values suggest") or (
        DEFAULT_QRELS_SCALE
    )
    if grades:
        try:
            reading = read_scale(grades, scale)
            sniffed = sniff_scale(grades)
        except SentretError as exc:
            st.warning(md(str(exc)))
        else:
            shown = sniffed if reading.scale == sniffed.scale else reading
            st.caption(shown.sentence() + ".")  # numbers and scale names only: nothing to escape
    return scale


def guarded_text(upload: UploadedFile) -> str | None:
    """The upload's text, or None when it is not UTF-8 (Evaluate says so when it is pressed)."""
    try:
        return uploaded_text(upload)
    except SentretError:
        return None
