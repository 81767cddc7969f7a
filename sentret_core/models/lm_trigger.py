"""The trained trigger language model (seed 001 §5-6 eq. 9-12; SPEC "Trigger LM").

score(s) = Σ_{q∈Q} c(q,Q) · log p(q|θ_s), with (eq. 12)

    p(q|θ_s) = Σ_t λ_t · p_t(q|s)  +  (1 − Σ_t λ_t) · (c(q,s) + μ·p(q)) / (|s| + μ)
    p_t(q|s)   = (1/|s|) · Σ_{j=1}^{|s|} p_t(q|s_j)                     (eq. 10)
    p_t(q|s_j) = f_t(q, s_j) / Σ_w f_t(w, s_j)                            (eq. 9)

over the triggerings t (each weight a parameter):

* ``self``    — every word triggers itself only: p_self(q|s) = c(q,s)/|s|, the unsmoothed
  sentence model (§6.1); it needs no table;
* ``inside``  — f(w→w') = times w and w' occur in one sentence of the corpus (§6.2);
* ``across``  — f(w→w') = times w occurs in a sentence and w' in the *next* sentence of the same
  document (§6.3);
* ``qa``      — f(w→w') = times w occurs in a question and w' in one of its correct answer
  sentences (§6.4);
* ``ne``      — f(w→L) = times w occurs in a question and a term of its answer sentence lies in
  a named entity of label L (spaCy NER); a sentence's targets are then the NER labels of its
  terms (a term outside every entity has none) (§6.5).

Counting (as seed 001 §4.1 counts co-occurrence: every instance): inside-sentence counts
c(w,s)·c(w',s) pairs of *other* positions (a word twice in a sentence triggers itself once each
way); QA counts c(w,Q)·c(w',A). Tables are term×term (term×label for ``ne``) scipy CSR matrices
over the index's vocabulary, pruned below ``min_count`` (``qa_min_count`` for the QA tables).

**Training.** :func:`train_triggers` counts the corpus tables on the index (plus any ``sources``,
other indexes matched by term string — the paper trained on AQUAINT) and, given a file of
question/answer-sentence pairs, the QA and NE tables. It records them as the index's *current*
tables, which the registered model ``lm-trigger.v1`` uses; with none recorded the model trains the
corpus tables of the index itself on first use. To use WikiQA's training questions::

    from sentret_core.models.lm_trigger import train_triggers
    train_triggers(index, qa_pairs="../shared/data/wikiqa/WikiQA-train.tsv")

(rows with Label 1; a plain two-column ``question<TAB>answer`` file works too). Tables are cached
like the word classes: ``cache-triggers-<key>.npz`` + ``.json`` beside the index, the current one
named in ``cache-triggers.json``.

Readings where the paper is silent:

* eq. 9 normalises over the *triggers* of a fixed target s_j (its denominator sums over q_i),
  as SPEC states; so p_t(·|s_j) is a distribution over the vocabulary;
* a target with no trigger mass in a table (never triggered, or pruned away), an unlabelled term
  for ``ne``, and the empty sentence back off to the collection model p(q) — the same convention
  as the other LMs' maximum-likelihood model of an empty text — so every p_t(·|s) and p(·|θ_s)
  sums to 1 over the vocabulary. A table that was never trained (no QA file) therefore gives
  p_t(q|s) = p(q) for every sentence: a constant, which changes no ranking;
* |s| in eq. 10 is the number of terms (after stop-word removal), repeats included;
* question words are normalised like every query (SPEC "Notation"): spaCy's stop words are
  removed, which includes the wh-words ("when", "who", "where", "how", "many"), so the paper's
  "when → DATE" cannot be learned; content words ("born → DATE", "high → QUANTITY") can;
* the NE table counts answer *terms* inside entities (a four-term DATE counts four), matching how
  a candidate sentence's labels are counted per term in eq. 10.

**Candidates**: the sentences with a query term or with a target of an active table (λ_t > 0)
that a query term triggers; at most ``max_candidates`` are returned: all sentences with a query
term, then the best-scoring others (ties by sentence id).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sentret_core.errors import SentretError
from sentret_core.index.format import sha256_of
from sentret_core.index.neighbours import expand_ranges
from sentret_core.models.cache import cached
from sentret_core.models.layout import collection_model, layout, sentence_row
from sentret_core.models.lm_class import PAPER_001, _cap
from sentret_core.models.lm_params import MU_GRID, MU_MIN
from sentret_core.models.params import Params, grid_range, param
from sentret_core.models.postings import Postings, postings
from sentret_core.models.query import Query
from sentret_core.models.spec import Explained, ModelSpec
from sentret_core.models.training.classes import (
    cache_key,
    describe_sources,
    fingerprint,
    get_current,
    load_cache,
    save_cache,
    set_current,
    source_list,
)
from sentret_core.models.vectors import EMPTY_IDS, EMPTY_SCORES, run_starts, union

if TYPE_CHECKING:
    from sentret_core.index.reader import Index

ALGORITHM = "triggers.v1"
TABLES = ("inside", "across", "qa", "ne")
COMPONENTS = ("self", *TABLES)
_LOCK = threading.RLock()


# --- the tables ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerTables:
    """Raw trigger counts f(w → target) of one index: rows are triggers, columns targets."""

    key: str
    tables: dict[str, sp.csr_matrix]  # inside, across, qa: V×V; ne: V×len(labels)
    labels: tuple[str, ...]
    meta: dict[str, Any]

    def pairs(self, name: str) -> int:
        return int(self.tables[name].nnz)


def _prune(matrix: Any, min_count: int) -> sp.csr_matrix:
    out = sp.csr_matrix(matrix, dtype=np.float64)
    out.sum_duplicates()
    if min_count > 1:
        out.data[out.data < min_count] = 0.0
    out.eliminate_zeros()
    out.sort_indices()
    return out


def _remapped(source: Index, target: Index) -> sp.csr_matrix:
    """The source's sentence×term counts over the target's vocabulary (unknown terms dropped)."""
    X = sp.csr_matrix(source.X, dtype=np.float64)
    if source is target:
        return X
    lookup = target.term_index
    mapping = np.array([lookup.get(t, -1) for t in source.vocab], dtype=np.int64)
    cols = mapping[np.asarray(X.indices, dtype=np.int64)]
    keep = cols >= 0
    rows = np.repeat(np.arange(source.N, dtype=np.int64), np.diff(X.indptr))[keep]
    return sp.csr_matrix((X.data[keep], (rows, cols[keep])), shape=(source.N, target.V))


def corpus_tables(index: Index, sources: Sequence[Index] = ()) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Raw inside-sentence and across-sentence counts over the index (plus ``sources``)."""
    V = index.V
    inside = sp.csr_matrix((V, V))
    across = sp.csr_matrix((V, V))
    for source in [index, *sources]:
        X = _remapped(source, index)
        gram = (X.T @ X).tocsr()
        occurrences = np.asarray(X.sum(axis=0)).ravel()
        gram.setdiag(gram.diagonal() - occurrences)  # a position does not trigger itself
        inside = inside + gram
        nxt = np.asarray(source.next)
        has_next = np.flatnonzero(nxt >= 0)
        across = across + (X[has_next].T @ X[nxt[has_next]]).tocsr()
    return sp.csr_matrix(inside), sp.csr_matrix(across)


def read_qa_pairs(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(question, answer sentence) pairs of a WikiQA TSV (rows with Label 1) or a two-column TSV."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise SentretError(f"{path}: cannot read the question/answer pairs ({err})") from None
    if not lines:
        raise SentretError(f"{path}: no question/answer pairs")
    header = lines[0].split("\t")
    pairs: list[tuple[str, str]] = []
    if "Question" in header and "Sentence" in header:
        qi, si = header.index("Question"), header.index("Sentence")
        li = header.index("Label") if "Label" in header else None
        for lineno, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) != len(header):
                raise SentretError(f"{path}:{lineno}: expected {len(header)} tab-separated fields")
            if li is None or fields[li].strip() == "1":
                pairs.append((fields[qi], fields[si]))
    else:
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 2:
                raise SentretError(f"{path}:{lineno}: expected question<TAB>answer")
            pairs.append((fields[0], fields[1]))
    if not pairs:
        raise SentretError(f"{path}: no question/answer pairs (a WikiQA file needs rows with Label 1)")
    return pairs


def index_labels(index: Index) -> list[str]:
    if index.E == 0:
        return []
    return sorted({str(x) for x in index.entities["label"]})


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


def sentence_labels(index: Index, labels: Sequence[str]) -> sp.csr_matrix:
    """Y: term counts per (sentence, NER label) of the index."""

    def build() -> sp.csr_matrix:
        where = {name: i for i, name in enumerate(labels)}
        shape = (index.N, len(labels))
        if index.E == 0 or len(index.mentions) == 0:
            return sp.csr_matrix(shape)
        cols = index.mention_columns
        ent_label = np.array([where.get(str(x), -1) for x in index.entities["label"]], dtype=np.int64)
        lab = ent_label[cols["entity"]]
        ok = lab >= 0
        indptr = np.asarray(index.seq_indptr, dtype=np.int64)
        owner = np.repeat(np.arange(index.N, dtype=np.int64), np.diff(indptr))
        return label_counts(cols["sentence"][ok], cols["token_start"][ok], cols["token_end"][ok], lab[ok],
                            owner, np.asarray(index.seq_tokens, dtype=np.int64), shape)  # fmt: skip

    return cached(index, "models.trigger.labels/" + "|".join(labels), build)


def qa_tables(
    index: Index, pairs: Sequence[tuple[str, str]], labels: list[str], n_process: int = 1
) -> tuple[sp.csr_matrix, sp.csr_matrix, list[str], dict[str, Any]]:
    """Raw QA-pair (V×V) and NE (V×labels) counts; answers go through the index's spaCy pass."""
    from sentret_core.ingest.corpus import Document
    from sentret_core.ingest.nlp import DEFAULT_MODEL, parse_documents
    from sentret_core.models.query import normalise, pipeline

    nlp, _ = pipeline(str(index.manifest.get("model", DEFAULT_MODEL)))
    lookup = index.term_index
    docs = (Document(str(i), "", answer, (answer,)) for i, (_, answer) in enumerate(pairs))
    parsed = list(parse_documents(docs, nlp, n_process=n_process))
    q_rows, q_cols, a_rows, a_cols = [], [], [], []
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
    Q = sp.csr_matrix((np.ones(len(q_rows)), (q_rows, q_cols)), shape=(P, V))
    A = sp.csr_matrix((np.ones(len(a_rows)), (a_rows, a_cols)), shape=(P, V))
    Y = label_counts(np.array(m_sent, np.int64), np.array(m_start, np.int64), np.array(m_end, np.int64),
                     np.array(m_label, np.int64), np.array(owners, np.int64), np.array(tokens, np.int64),
                     (P, len(all_labels)))  # fmt: skip
    stats = {"qa_pairs_read": P, "questions_with_terms": int((np.diff(Q.tocsr().indptr) > 0).sum()),
             "answer_mentions": len(m_sent)}  # fmt: skip
    return (Q.T @ A).tocsr(), (Q.T @ Y).tocsr(), all_labels, stats


def train_triggers(
    index: Index,
    qa_pairs: str | os.PathLike[str] | None = None,
    *,
    sources: Sequence[Index | str | os.PathLike[str]] = (),
    min_count: int = 2,
    qa_min_count: int = 1,
    n_process: int = 1,
    current: bool = True,
    save: bool = True,
) -> TriggerTables:
    """Count (or load) the trigger tables of ``index`` and make them its current tables.

    ``sources``: other indexes whose sentences add to the inside/across-sentence counts.
    ``qa_pairs``: a file of question/answer-sentence pairs for the QA and NE tables (None: those
    tables stay empty). Entries below ``min_count`` (``qa_min_count``) are pruned.
    """
    if min_count < 1 or qa_min_count < 1:
        raise SentretError(f"min_count and qa_min_count must be at least 1 (got {min_count}, {qa_min_count})")
    extra = source_list(sources)
    described = describe_sources(extra)
    qa_path = Path(qa_pairs).resolve() if qa_pairs is not None else None
    if qa_path is not None and not qa_path.is_file():
        raise SentretError(f"{qa_pairs}: no such file of question/answer pairs")
    params = {"min_count": int(min_count), "qa_min_count": int(qa_min_count)}
    key = cache_key({"algorithm": ALGORITHM, "params": params, "index": fingerprint(index),
                     "sources": [d["fingerprint"] for d in described],
                     "qa": sha256_of(qa_path) if qa_path is not None else None})  # fmt: skip
    with _LOCK:
        found = _load(index, key)
        if found is None:
            found = _count(index, key, extra, described, qa_path, params, n_process, save)
            index.cache[f"models.triggers/{key}"] = found
        if current:
            set_current(index, "triggers", key)
    return found


def _count(
    index: Index,
    key: str,
    extra: list[Index],
    described: list[dict[str, str]],
    qa_path: Path | None,
    params: dict[str, int],
    n_process: int,
    save: bool,
) -> TriggerTables:
    clock = time.perf_counter()
    inside, across = corpus_tables(index, extra)
    inside, across = _prune(inside, params["min_count"]), _prune(across, params["min_count"])
    corpus_seconds = time.perf_counter() - clock
    labels = index_labels(index)
    qa_stats: dict[str, Any] = {}
    if qa_path is not None:
        pairs = read_qa_pairs(qa_path)
        qa, ne, labels, qa_stats = qa_tables(index, pairs, labels, n_process)
        qa, ne = _prune(qa, params["qa_min_count"]), _prune(ne, params["qa_min_count"])
    else:
        qa, ne = sp.csr_matrix((index.V, index.V)), sp.csr_matrix((index.V, len(labels)))
    tables = {"inside": inside, "across": across, "qa": sp.csr_matrix(qa), "ne": sp.csr_matrix(ne)}
    meta = {
        "algorithm": ALGORITHM,
        "params": params,
        "sources": described,
        "qa_pairs": str(qa_path) if qa_path is not None else None,
        "labels": list(labels),
        "shapes": {name: list(m.shape) for name, m in tables.items()},
        "stats": {"seconds": round(time.perf_counter() - clock, 3),
                  "corpus_seconds": round(corpus_seconds, 3),
                  "pairs": {name: int(m.nnz) for name, m in tables.items()}, **qa_stats},
        "index": str(index.path),
        "created": time.time(),
    }  # fmt: skip
    found = TriggerTables(key, tables, tuple(labels), meta)
    if save:
        arrays: dict[str, np.ndarray] = {}
        for name, m in tables.items():
            arrays[f"{name}.indptr"] = m.indptr
            arrays[f"{name}.indices"] = m.indices
            arrays[f"{name}.data"] = m.data
        save_cache(index, "triggers", key, arrays, meta)
    return found


def _load(index: Index, key: str) -> TriggerTables | None:
    memo = f"models.triggers/{key}"
    found: TriggerTables | None = index.cache.get(memo)
    if found is not None:
        return found
    loaded = load_cache(index, "triggers", key)
    if loaded is None:
        return None
    arrays, meta = loaded
    try:
        tables = {
            name: sp.csr_matrix(
                (arrays[f"{name}.data"], arrays[f"{name}.indices"], arrays[f"{name}.indptr"]),
                shape=tuple(meta["shapes"][name]),
            )
            for name in TABLES
        }
    except (KeyError, ValueError):
        return None
    if tables["inside"].shape != (index.V, index.V):
        return None
    found = TriggerTables(key, tables, tuple(meta["labels"]), meta)
    index.cache[memo] = found
    return found


def current_tables(index: Index) -> TriggerTables:
    """The index's current tables (:func:`train_triggers`); the corpus tables counted now if none."""
    key = get_current(index, "triggers")
    if key is not None:
        found = _load(index, key)
        if found is not None:
            return found
    return train_triggers(index)


# --- what the scorer derives from the tables -------------------------------------------------------


class _HitCache:
    """Recent (table, term) → hits, bounded by the number of stored sentence ids: the hits do not
    depend on the weights, so tuning and slider moves re-use them."""

    LIMIT = 4_000_000

    def __init__(self) -> None:
        self.store: OrderedDict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key: tuple[str, int]) -> tuple[np.ndarray, np.ndarray] | None:
        with self.lock:
            found = self.store.get(key)
            if found is not None:
                self.store.move_to_end(key)
            return found

    def put(self, key: tuple[str, int], value: tuple[np.ndarray, np.ndarray]) -> None:
        with self.lock:
            if key in self.store:
                return
            self.store[key] = value
            self.size += len(value[0])
            while self.size > self.LIMIT and len(self.store) > 1:
                _, (rows, _) = self.store.popitem(last=False)
                self.size -= len(rows)


@dataclass(frozen=True)
class TriggerData:
    tables: TriggerTables
    norm: dict[str, sp.csr_matrix]  # column-normalised: p_t(w|target) in row w
    massless: dict[str, np.ndarray]  # per target: True when nothing triggers it
    background: dict[str, np.ndarray]  # (N,) share of s's terms whose target has no mass (1: empty s)
    labels: Postings  # Y: term counts per label, as postings
    inv_s: np.ndarray  # (N,) 1/|s|, 0 for the empty sentence
    empty_s: np.ndarray  # (N,) 1.0 for the empty sentence
    hit_cache: _HitCache = field(default_factory=_HitCache, compare=False, repr=False)

    def hits(self, name: str, term: int, post: Postings) -> tuple[np.ndarray, np.ndarray]:
        """Σ_j p_t(term|s_j) per sentence (sorted ids, sums), cached."""
        found = self.hit_cache.get((name, term))
        if found is None:
            found = _hits(self.norm[name], term, self.labels if name == "ne" else post)
            self.hit_cache.put((name, term), found)
        return found


def _normalise_columns(table: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray]:
    mass = np.asarray(table.sum(axis=0)).ravel()
    scale = np.zeros(len(mass))
    np.divide(1.0, mass, out=scale, where=mass > 0)
    norm = sp.csr_matrix(table @ sp.diags(scale))
    norm.sort_indices()
    return norm, mass <= 0


def trigger_data(index: Index) -> TriggerData:
    tables = current_tables(index)

    def build() -> TriggerData:
        lay = layout(index)
        n_s = lay.sent_len
        inv_s = np.zeros(index.N)
        np.divide(1.0, n_s, out=inv_s, where=n_s > 0)
        empty_s = (n_s <= 0).astype(np.float64)
        Y = sentence_labels(index, tables.labels)
        norm, massless, background = {}, {}, {}
        for name in TABLES:
            norm[name], massless[name] = _normalise_columns(tables.tables[name])
            counts = Y if name == "ne" else index.X
            unmatched = n_s - np.asarray(counts @ (~massless[name]).astype(np.float64)).ravel()
            background[name] = unmatched * inv_s + empty_s
        return TriggerData(tables, norm, massless, background, Postings.of(Y), inv_s, empty_s)

    return cached(index, f"models.trigger.data/{tables.key}", build)


def _hits(norm: sp.csr_matrix, term: int, post: Postings) -> tuple[np.ndarray, np.ndarray]:
    """Σ_j p_t(term|s_j) per sentence s (sorted ids, sums) over the targets ``term`` triggers."""
    lo, hi = int(norm.indptr[term]), int(norm.indptr[term + 1])
    if lo == hi:
        return EMPTY_IDS, EMPTY_SCORES
    targets, weights = norm.indices[lo:hi], norm.data[lo:hi]
    start, end = post.indptr[targets], post.indptr[targets + 1]
    where = expand_ranges(start, end)
    rows = post.rows.take(where)
    vals = post.vals.take(where) * np.repeat(weights, end - start)
    order = rows.argsort(kind="stable")
    rows = rows.take(order)
    starts = run_starts(rows)
    return rows.take(starts), np.add.reduceat(vals.take(order), starts) if len(rows) else EMPTY_SCORES


# --- the model ------------------------------------------------------------------------------------

_LAM = dict(min=0.0, max=1.0, step=0.05, grid=grid_range(0.1, 0.9, 0.1))


_HELP = {
    "self": "weight of self triggering: the unsmoothed sentence model c(q,s)/|s|",
    "inside": "weight of inside-sentence triggering (terms of one sentence trigger each other)",
    "across": "weight of across-sentence triggering (terms trigger the next sentence's terms)",
    "qa": "weight of QA-pair triggering (question terms trigger answer terms; see train_triggers)",
    "ne": "weight of named-entity triggering (question terms trigger answer NER labels; see train_triggers)",
    "mu": "Dirichlet prior of the word unigram model, which gets the remaining weight 1 − Σλ",
    "max_candidates": "most sentences returned: those with a query term, then the best others",
}


@dataclass(frozen=True)
class TriggerParams(Params):
    lam_self: float = param(0.0, _HELP["self"], symbol=r"\lambda_{self}", **_LAM)  # type: ignore[arg-type]
    lam_inside: float = param(0.2, _HELP["inside"], symbol=r"\lambda_{in}", **_LAM)  # type: ignore[arg-type]
    lam_across: float = param(0.0, _HELP["across"], symbol=r"\lambda_{ac}", **_LAM)  # type: ignore[arg-type]
    lam_qa: float = param(0.0, _HELP["qa"], symbol=r"\lambda_{qa}", **_LAM)  # type: ignore[arg-type]
    lam_ne: float = param(0.0, _HELP["ne"], symbol=r"\lambda_{ne}", **_LAM)  # type: ignore[arg-type]
    mu: float = param(100.0, _HELP["mu"], symbol=r"\mu", min=0.0, max=1e6, step=1.0, grid=MU_GRID, min_positive=MU_MIN)
    max_candidates: int = param(10000, _HELP["max_candidates"], min=1, max=1_000_000, step=1)

    def check(self) -> None:
        total = sum(self.weights().values())
        if total > 1.0 + 1e-12:
            raise SentretError(
                f"the triggering weights lam_self + lam_inside + lam_across + lam_qa + lam_ne = {total:g} "
                "exceed 1; they are mixture weights and the word unigram model gets 1 minus their sum"
            )

    def weights(self) -> dict[str, float]:
        return {name: float(getattr(self, f"lam_{name}")) for name in COMPONENTS}

    def rest(self) -> float:
        return max(1.0 - sum(self.weights().values()), 0.0)


def score_trigger(index: Index, q: Query, p: TriggerParams) -> tuple[np.ndarray, np.ndarray]:
    p_c = collection_model(index)
    use = [(int(t), float(qf)) for t, qf in zip(q.ids, q.qtf) if p_c[t] > 0]
    if not use:
        return EMPTY_IDS, EMPTY_SCORES
    weights = p.weights()
    active = [name for name in TABLES if weights[name] > 0]
    data = trigger_data(index) if active else None
    word_post = postings(index)
    words = [word_post(t) for t, _ in use]
    hits: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
    for t, _ in use:
        found = {}
        for name in active:
            assert data is not None
            found[name] = data.hits(name, t, word_post)
        hits.append(found)
    cand = union([r for r, _ in words] + [r for h in hits for r, _ in h.values()])
    if len(cand) == 0:
        return EMPTY_IDS, EMPTY_SCORES
    lay = layout(index)
    n_s = lay.sent_len.take(cand)
    inv_s = np.zeros(len(cand))
    np.divide(1.0, n_s, out=inv_s, where=n_s > 0)
    empty_s = (n_s <= 0).astype(np.float64)
    den = n_s + p.mu
    inv_d = np.zeros(len(cand))
    np.divide(1.0, den, out=inv_d, where=den > 0)
    rest = p.rest()
    total = np.zeros(len(cand))
    word_hit = np.zeros(len(cand), dtype=bool)
    with np.errstate(divide="ignore"):
        for (t, qf), (r, v), found in zip(use, words, hits):
            pt = float(p_c[t])
            pos = np.searchsorted(cand, r)
            word_hit[pos] = True
            c_t = np.zeros(len(cand))
            c_t[pos] = v
            prob = weights["self"] * (c_t * inv_s + empty_s * pt)
            for name, (rows, sums) in found.items():
                assert data is not None
                h = np.zeros(len(cand))
                h[np.searchsorted(cand, rows)] = sums
                prob += weights[name] * (h * inv_s + data.background[name].take(cand) * pt)
            if rest > 0:
                prob += rest * np.where(den > 0, (c_t + p.mu * pt) * inv_d, pt)
            total += qf * np.log(prob)
    return _cap(cand, total, word_hit, p.max_candidates)


# --- explain and the distribution (from the sentence's own row) -------------------------------------


def _sentence_label_counts(index: Index, sentence: int, labels: Sequence[str]) -> np.ndarray:
    """Terms of ``sentence`` inside an entity of each label, from its mentions and term tokens."""
    out = np.zeros(len(labels))
    where = {name: i for i, name in enumerate(labels)}
    lo, hi = int(index.seq_indptr[sentence]), int(index.seq_indptr[sentence + 1])
    tokens = np.asarray(index.seq_tokens[lo:hi], dtype=np.int64)
    m_lo, m_hi = int(index.mention_indptr[sentence]), int(index.mention_indptr[sentence + 1])
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
        data = trigger_data(index)
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
    data = trigger_data(index) if active else None
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
                         for u, c in zip(cols, counts)]  # fmt: skip
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
                                       f"({_SHORT[name]}, {value:.3g})"))  # fmt: skip
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


_FORMULA = (
    r"\sum_{q\in Q}c(q,Q)\log\Big[\sum_t\lambda_t\frac{1}{|s|}\sum_{j=1}^{|s|}"
    r"\frac{f_t(q,s_j)}{\sum_w f_t(w,s_j)}+\Big(1-\sum_t\lambda_t\Big)\frac{c(q,s)+\mu p(q)}{|s|+\mu}\Big]"
)

SPECS = [
    ModelSpec(
        "lm-trigger.v1",
        "LM, trained triggers",
        "lm",
        TriggerParams,
        score_trigger,
        explain_trigger,
        _FORMULA,
        f"{PAPER_001} §5-6 eq. 9-12",
        "query likelihood where a query word can be generated by sentence words it triggers "
        "(same sentence, next sentence, QA pairs, answer entity labels), mixed with the Dirichlet unigram",
        distribution_trigger,
    ),
]
