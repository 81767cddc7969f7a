"""Counts from question/answer-sentence pairs: the QA-pair and named-entity trigger tables of
Momtazi & Klakow, IP&M 2015, §6.4-6.5, and their question-word rows.

For every pair (Q, A) the question is normalised like a query (:func:`~sentret_core.models.core.query.normalise`),
which gives its terms and its question-word markers (``?who``, ``?when``, ``?where``, ``?how-many``:
the wh-words are spaCy stop words, so they are kept apart as markers); the answer sentence
goes through the index's spaCy pass (terms and NER mentions).

* ``qa``     f(w → w')  = Σ_pairs c(w,Q) · c(w',A)           (V × V; only the index's terms)
* ``ne``     f(w → L)   = Σ_pairs c(w,Q) · y(L,A)            (V × labels)
* ``qa_ask`` f(a → w')  = Σ_pairs [a asked by Q] · c(w',A)   (markers × V)
* ``ne_ask`` f(a → L)   = Σ_pairs [a asked by Q] · y(L,A)    (markers × labels)
* ``asked``  n(a)       = number of pairs whose question asks a (the markers' "collection")

y(L,A) = number of answer terms inside an entity of label L (a four-term DATE counts four). The
marker rows are kept apart from the term rows, so the term tables — and ``lm-trigger.v1``, which
reads only them — are what they were before markers existed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sentret_core.errors import SentretError
from sentret_core.ingest.qa_files import WIKIQA_HEADER, read_lines, read_wikiqa
from sentret_core.models.core.query import ANSWER_TYPES

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

ASKS: tuple[str, ...] = tuple(ANSWER_TYPES)  # the question-word markers, in a fixed order


def read_qa_pairs(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(question, answer sentence) pairs of a WikiQA TSV (rows with Label 1) or a two-column TSV."""
    path = Path(path)
    lines = read_lines(path, "question/answer pairs")
    if lines and tuple(lines[0].split("\t")) == WIKIQA_HEADER:
        data = read_wikiqa(path)
        pairs = [(q.text, data.documents[q.document][1][position])
                 for q in data.questions for position, label in zip(q.positions, q.labels) if label == 1]
    else:
        pairs = []
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 2:
                raise SentretError(f"{path}:{lineno}: expected question<TAB>answer (or a WikiQA TSV)")
            pairs.append((fields[0], fields[1]))
    if not pairs:
        raise SentretError(f"{path}: no question/answer pairs (a WikiQA file needs rows with Label 1)")
    return pairs


def label_counts(
    sent: np.ndarray,
    token_start: np.ndarray,
    token_end: np.ndarray,
    label: np.ndarray,
    seq_owner: np.ndarray,
    seq_tokens: np.ndarray,
    shape: tuple[int, int],
) -> sp.csr_matrix:
    """(sentences × labels): how many terms of each sentence lie in an entity of each label.

    ``seq_owner``/``seq_tokens`` are the sentence and token index of every term occurrence, in
    order (sentences ascending, tokens ascending inside each)."""
    if len(sent) == 0:
        return sp.csr_matrix(shape)
    big = int(max(int(seq_tokens.max(initial=0)), int(token_end.max(initial=0)))) + 1
    keys = seq_owner.astype(np.int64) * big + seq_tokens.astype(np.int64)
    lo = np.searchsorted(keys, sent.astype(np.int64) * big + token_start, side="left")
    hi = np.searchsorted(keys, sent.astype(np.int64) * big + token_end, side="left")
    out = sp.csr_matrix(((hi - lo).astype(np.float64), (sent, label)), shape=shape)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


@dataclass(frozen=True)
class QACounts:
    """Raw counts from question/answer pairs (see the module docstring)."""

    qa: sp.csr_matrix  # V × V
    ne: sp.csr_matrix  # V × labels
    qa_ask: sp.csr_matrix  # markers × V
    ne_ask: sp.csr_matrix  # markers × labels
    asked: np.ndarray  # (markers,) questions asking each
    labels: list[str]
    stats: dict[str, Any]


def _rows(rows: list[int], cols: list[int], shape: tuple[int, int]) -> sp.csr_matrix:
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)


def qa_tables(index: Index, pairs: Sequence[tuple[str, str]], labels: list[str], n_process: int = 1) -> QACounts:
    """Count the QA-pair and NE tables and their question-word rows; answers go through the
    index's spaCy pass."""
    from sentret_core.ingest.corpus import Document
    from sentret_core.ingest.nlp import DEFAULT_PIPELINE, parse_documents
    from sentret_core.models.core.query import is_marker, normalise, pipeline

    nlp, _ = pipeline(str(index.manifest.get("model", DEFAULT_PIPELINE)))
    lookup = index.term_index
    marker_of = {a: i for i, a in enumerate(ASKS)}
    docs = (Document(str(i), "", answer, (answer,)) for i, (_, answer) in enumerate(pairs))
    parsed = list(parse_documents(docs, nlp, n_process=n_process))
    q_rows, q_cols, k_rows, k_cols, a_rows, a_cols = [], [], [], [], [], []
    m_sent, m_start, m_end, m_label, owners, tokens = [], [], [], [], [], []
    seen_labels = set(labels)
    for doc in parsed:
        for sentence in doc.sentences:
            for m in sentence.mentions:
                seen_labels.add(m.label)
    all_labels = sorted(seen_labels)
    where = {name: i for i, name in enumerate(all_labels)}
    for i, ((question, _), doc) in enumerate(zip(pairs, parsed)):
        for term in normalise(index, question):
            if is_marker(term):
                if term in marker_of:  # distinct per question (question_markers)
                    k_rows.append(i)
                    k_cols.append(marker_of[term])
                continue
            tid = lookup.get(term)
            if tid is not None:
                q_rows.append(i)
                q_cols.append(tid)
        for sentence in doc.sentences:  # one sentence each (presegmented)
            for term in sentence.terms:
                tid = lookup.get(term)
                if tid is not None:
                    a_rows.append(i)
                    a_cols.append(tid)
            owners += [i] * len(sentence.term_tokens)
            tokens += sentence.term_tokens
            for m in sentence.mentions:
                m_sent.append(i)
                m_start.append(m.token_start)
                m_end.append(m.token_end)
                m_label.append(where[m.label])
    P, V = len(pairs), index.V
    Q, K, A = _rows(q_rows, q_cols, (P, V)), _rows(k_rows, k_cols, (P, len(ASKS))), _rows(a_rows, a_cols, (P, V))
    Y = label_counts(np.array(m_sent, np.int64), np.array(m_start, np.int64), np.array(m_end, np.int64),
                     np.array(m_label, np.int64), np.array(owners, np.int64), np.array(tokens, np.int64),
                     (P, len(all_labels)))
    asked = np.asarray(K.sum(axis=0), dtype=np.float64).ravel()
    stats = {"qa_pairs_read": P, "questions_with_terms": int((np.diff(Q.tocsr().indptr) > 0).sum()),
             "answer_mentions": len(m_sent),
             "questions_asking": dict(zip(ASKS, asked.astype(int).tolist()))}
    KT = K.T.tocsr()
    return QACounts((Q.T @ A).tocsr(), (Q.T @ Y).tocsr(), (KT @ A).tocsr(), (KT @ Y).tocsr(), asked, all_labels,
                    stats)
