"""Explain and the term distribution of the trigger LMs (``lm-trigger.v1``, ``v2``), computed from
the sentence's own rows (not the scoring path), so a test can hold the two against each other.

``lm-trigger.v2`` adds one row per question-word marker of the query (``?when`` …): the same
mixture columns, where every component without question-word rows (self, inside, across, the
word unigram) gives the marker's prior p(a), and the QA and NE components give p_t(a|s)
(:class:`~sentret_core.models.lm_trigger.data.AskData`). Its ``p(t)`` column holds p(a).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sentret_core.models.arrays.layout import collection_model, sentence_row
from sentret_core.models.core.query import Query
from sentret_core.models.core.spec import Explained
from sentret_core.models.lm_trigger.data import AskData, ask_data, trigger_data
from sentret_core.models.training.triggers import ASK_TABLES, ASKS, COMPONENTS, TABLES

if TYPE_CHECKING:
    from sentret_core.index.reader import Index
    from sentret_core.models.lm_trigger.params import TriggerParams


def _sentence_label_counts(index: Index, sentence: int, labels: Sequence[str]) -> np.ndarray:
    """Terms of ``sentence`` inside an entity of each label, from its mentions and term tokens."""
    out = np.zeros(len(labels))
    where = {name: i for i, name in enumerate(labels)}
    lo, hi = int(index.seq_indptr[sentence]), int(index.seq_indptr[sentence + 1])
    tokens = np.asarray(index.seq_tokens[lo:hi], dtype=np.int64)
    m_lo, m_hi = index.mention_range(sentence)
    cols = index.mention_columns
    ent_labels = index.entity_labels
    for m in range(m_lo, m_hi):
        i = where.get(ent_labels[int(cols["entity"][m])], -1)
        if i >= 0:
            out[i] += int(((tokens >= cols["token_start"][m]) & (tokens < cols["token_end"][m])).sum())
    return out


def _row_of(norm: sp.csr_matrix, term: int) -> dict[int, float]:
    lo, hi = int(norm.indptr[term]), int(norm.indptr[term + 1])
    return dict(zip(norm.indices[lo:hi].tolist(), norm.data[lo:hi].tolist()))


def distribution_trigger(index: Index, sentence: int, p: TriggerParams) -> np.ndarray:
    """p(q|θ_s) over the whole vocabulary (sums to 1)."""
    p_c = collection_model(index)
    cols, counts = sentence_row(index, sentence)
    n_s = float(counts.sum())
    c_s = np.zeros(index.V)
    np.add.at(c_s, cols, counts)
    weights = p.weights()
    out = weights["self"] * (c_s / n_s if n_s > 0 else p_c)
    active = [name for name in TABLES if weights[name] > 0]
    if active:
        data = trigger_data(index, p.tables)
        y_s = _sentence_label_counts(index, sentence, data.tables.labels)
        for name in active:
            targets = y_s if name == "ne" else c_s
            if n_s > 0:
                part = np.asarray(data.norm[name] @ targets).ravel() / n_s
                unmatched = float(targets[~data.massless[name]].sum())
                part = part + (n_s - unmatched) / n_s * p_c
            else:
                part = p_c
            out = out + weights[name] * part
    den = n_s + p.mu
    out = out + p.rest() * ((c_s + p.mu * p_c) / den if den > 0 else p_c)
    return np.asarray(out, dtype=np.float64)


_SHORT = {"inside": "inside", "across": "across", "qa": "QA", "ne": "NE"}


def explain_trigger(index: Index, q: Query, sentence: int, p: TriggerParams) -> Explained:
    p_c = collection_model(index)
    cols, counts = sentence_row(index, sentence)
    n_s = float(counts.sum())
    weights = p.weights()
    active = [name for name in TABLES if weights[name] > 0]
    data = trigger_data(index, p.tables) if active else None
    y_s = _sentence_label_counts(index, sentence, data.tables.labels) if data is not None else np.zeros(0)
    vocab = index.vocab
    rows = []
    for term, t, qf in zip(q.unique, q.ids, q.qtf):
        t = int(t)
        pt = float(p_c[t])
        if pt <= 0:
            continue  # unseen in the collection: skipped
        c_t = float(counts[cols == t].sum())
        parts: dict[str, float] = {"self": c_t / n_s if n_s > 0 else pt}
        why: list[tuple[float, str]] = []
        for name in active:
            assert data is not None
            row = _row_of(data.norm[name], t)
            if name == "ne":
                targets = [(j, float(y)) for j, y in enumerate(y_s) if y > 0]
                labels = data.tables.labels
                named = [(labels[j], y, row.get(j, 0.0), bool(data.massless[name][j])) for j, y in targets]
            else:
                named = [(vocab[int(u)], float(c), row.get(int(u), 0.0), bool(data.massless[name][int(u)]))
                         for u, c in zip(cols, counts)]
            if n_s > 0:
                matched = sum(c * w for _, c, w, _ in named)
                unmatched = n_s - sum(c for _, c, _, massless in named if not massless)
                parts[name] = matched / n_s + unmatched / n_s * pt
            else:
                parts[name] = pt
            for target, c, w, _ in named:
                if w > 0:
                    value = weights[name] * w * c / n_s
                    why.append((value, f"{term}→{target}{'×' + str(int(c)) if c > 1 else ''} "
                                       f"({_SHORT[name]}, {value:.3g})"))
        den = n_s + p.mu
        word = (c_t + p.mu * pt) / den if den > 0 else pt
        why.sort(key=lambda x: -x[0])
        record: dict[str, Any] = {
            "term": term,
            "c(t,q)": float(qf),
            "c(t,s)": c_t,
            "|s|": n_s,
            "p(t)": pt,
            "top trigger pairs": "; ".join(text for _, text in why[:3]) or "—",
        }
        for name in COMPONENTS:
            record[f"λ_{name}·p_{name}(t|s)"] = weights[name] * parts.get(name, pt)
        record["(1-Σλ)·p_dir(t|s)"] = p.rest() * word
        prob = math.fsum([*(record[f"λ_{n}·p_{n}(t|s)"] for n in COMPONENTS), record["(1-Σλ)·p_dir(t|s)"]])
        record["p(t|θ)"] = prob
        record["log p(t|θ)"] = math.log(prob) if prob > 0 else -math.inf
        record["contribution"] = float(qf) * record["log p(t|θ)"]
        rows.append(record)
    notes: dict[str, float] = {"|s|": n_s}
    if data is not None:
        for name in TABLES:
            notes[f"{name} pairs"] = float(data.tables.pairs(name))
    columns = tuple(rows[0]) if rows else ("term", "contribution")
    return Explained(columns, rows, {}, notes)



# --- lm-trigger.v2: the question-word markers ---------------------------------------------------------


def active_asks(index: Index, q: Query, p: TriggerParams) -> list[tuple[str, int]]:
    """The query's markers that are scored: known, asked by some training question, and with an
    active question-word table (λ_qa or λ_ne > 0); each with its position in :data:`ASKS`."""
    weights = p.weights()
    if not q.asks or not any(weights[name] > 0 for name in ASK_TABLES):
        return []
    prior = ask_data(index, p.tables).prior
    return [(a, ASKS.index(a)) for a in q.asks if a in ASKS and prior[ASKS.index(a)] > 0]


def ask_distribution(index: Index, sentence: int, p: TriggerParams) -> np.ndarray:
    """p(a|θ_s) over the markers :data:`ASKS` (sums to 1 once the tables have QA pairs)."""
    data = ask_data(index, p.tables)
    weights = p.weights()
    cols, counts = sentence_row(index, sentence)
    n_s = float(counts.sum())
    y_s = _sentence_label_counts(index, sentence, trigger_data(index, p.tables).tables.labels)
    out = (1.0 - sum(weights[name] for name in ASK_TABLES)) * data.prior
    for name in ASK_TABLES:
        out = out + weights[name] * _ask_part(data, name, cols, counts, y_s, n_s)
    return np.asarray(out, dtype=np.float64)


def _targets(name: str, cols: np.ndarray, counts: np.ndarray, y_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if name == "ne":
        found = np.flatnonzero(y_s > 0)
        return found, y_s[found]
    return cols, counts


def _ask_part(
    data: AskData, name: str, cols: np.ndarray, counts: np.ndarray, y_s: np.ndarray, n_s: float
) -> np.ndarray:
    """p_t(·|s) over the markers for one sentence (eq. 10; massless targets back off to p(a))."""
    if n_s <= 0:
        return np.asarray(data.prior, dtype=np.float64)
    targets, c = _targets(name, cols, counts, y_s)
    norm = data.norm[name]
    matched = np.zeros(len(ASKS))
    for x, cx in zip(targets.tolist(), c.tolist()):
        for a, w in _row_of(norm, int(x)).items():
            matched[a] += cx * w
    unmatched = n_s - float(c[~data.massless[name][targets]].sum())
    return np.asarray(matched / n_s + unmatched / n_s * data.prior, dtype=np.float64)


def ask_rows(index: Index, q: Query, sentence: int, p: TriggerParams) -> list[dict[str, Any]]:
    """One explain row per scored marker, with the columns of the term rows."""
    asks = active_asks(index, q, p)
    if not asks:
        return []
    data = ask_data(index, p.tables)
    labels = trigger_data(index, p.tables).tables.labels
    weights = p.weights()
    cols, counts = sentence_row(index, sentence)
    n_s = float(counts.sum())
    y_s = _sentence_label_counts(index, sentence, labels)
    vocab = index.vocab
    parts = {name: _ask_part(data, name, cols, counts, y_s, n_s) for name in ASK_TABLES if weights[name] > 0}
    rows = []
    for a, k in asks:
        pa = float(data.prior[k])
        why: list[tuple[float, str]] = []
        for name in parts:
            targets, c = _targets(name, cols, counts, y_s)
            for x, cx in zip(targets.tolist(), c.tolist()):
                w = _row_of(data.norm[name], int(x)).get(k, 0.0)
                if w > 0 and n_s > 0:
                    value = weights[name] * w * cx / n_s
                    target = labels[int(x)] if name == "ne" else vocab[int(x)]
                    why.append((value, f"{a}→{target}{'×' + str(int(cx)) if cx > 1 else ''} "
                                       f"({_SHORT[name]}, {value:.3g})"))
        why.sort(key=lambda x: -x[0])
        record: dict[str, Any] = {"term": a, "c(t,q)": 1.0, "c(t,s)": 0.0, "|s|": n_s, "p(t)": pa,
                                  "top trigger pairs": "; ".join(text for _, text in why[:3]) or "—"}
        for name in COMPONENTS:
            record[f"λ_{name}·p_{name}(t|s)"] = weights[name] * (float(parts[name][k]) if name in parts else pa)
        record["(1-Σλ)·p_dir(t|s)"] = p.rest() * pa
        prob = math.fsum([*(record[f"λ_{n}·p_{n}(t|s)"] for n in COMPONENTS), record["(1-Σλ)·p_dir(t|s)"]])
        record["p(t|θ)"] = prob
        record["log p(t|θ)"] = math.log(prob) if prob > 0 else -math.inf
        record["contribution"] = record["log p(t|θ)"]
        rows.append(record)
    return rows


def explain_trigger_v2(index: Index, q: Query, sentence: int, p: TriggerParams) -> Explained:
    """``lm-trigger.v1``'s rows for the query terms, then one row per scored marker."""
    terms = explain_trigger(index, q, sentence, p)
    asks = ask_rows(index, q, sentence, p)
    rows = [*terms.rows, *asks]
    notes = dict(terms.notes)
    if any(p.weights()[name] > 0 for name in ASK_TABLES):
        tables = trigger_data(index, p.tables).tables
        for name, rows_name in ASK_TABLES.items():
            notes[f"question-word {name} pairs"] = float(tables.pairs(rows_name))
        notes["training questions with a question word"] = float(tables.asked.sum())
    columns = tuple(rows[0]) if rows else ("term", "contribution")
    return Explained(columns, rows, {}, notes)
