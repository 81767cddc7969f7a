"""Public benchmarks as sentret collections: corpus (an index) + topics + qrels.

Three converters, all offline, each following the protocol of ``../shared/data/README.md``:

``wikiqa`` (Yang, Yih & Meek 2015; a WikiQA TSV split)
    ``QuestionID Question DocumentID DocumentTitle SentenceID Sentence Label`` with a header line.
    One document per DocumentID (title = DocumentTitle), its sentences in ``SentenceID``
    (``D<n>-<i>``) order, deduplicated across the questions that share the document and kept
    exactly as given (:func:`~sentret_core.corpus.presegmented`; a gap in ``i`` becomes an empty
    sentence so that positions and neighbours stay true). One index holds every document of the
    split, so collection statistics are over the split's sentences. A topic is a question with
    at least one correct sentence; its candidates are the question's own rows (its document's
    sentences), labels 0/1.

``trecqa`` (Wang, Smith & Mitamura 2007; the XML as distributed, or the TSV
``QuestionID Question CandidateIndex Sentence Label``)
    No document order exists, so there is no local context: every distinct candidate sentence
    is its own one-sentence document with an empty title (context fields are empty, a
    ``position`` baseline ties every candidate). One index holds every distinct candidate of the
    file (a sentence shared by two questions is one sentence). The file lists positives before
    negatives, so its order must never reach a tie-breaker: sentence ids follow the SHA-256 of
    the sentence text — a fixed pseudo-random order independent of the file's order — so
    shuffling the file gives the very same index, ids and runs.

``squad-support`` (Rajpurkar et al. 2016, SQuAD v1.1 JSON) — the entity-support benchmark
    Paragraph = document (title = the article title with ``_`` as spaces), sentences by our
    spaCy pass. A topic is (question, answer entity): for each gold answer, the sentence holding
    ``answer_start`` (by the index's sentence offsets) must mention a spaCy entity whose
    normalised text (:func:`~sentret_core.nlp.entity_text`, compared case-insensitively) equals
    the answer's; a mention overlapping the answer span is preferred, which fixes the label.
    That sentence is relevant (grade 4); every other sentence is unjudged. Several answers of a
    question naming the same entity give one topic with each of their sentences relevant.
    ``distractors="demo"`` adds the demo corpus's documents (:func:`~sentret_core.corpus.read_demo`)
    to the collection; ``min_candidates=N`` keeps the topics whose entity is mentioned in at
    least N sentences of the collection. Candidate sentences of a topic depend on the model
    (S_qe or Ŝ_qe, see :mod:`sentret_core.runs`).

Indexes are built once per (input file content, options, converter version, spaCy pipeline)
and cached under ``cache/<name>-<hash>/`` (default ``data/indexes/benchmarks``, gitignored);
parsing the files themselves is cheap and done on every load.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np

from sentret_core.errors import SentretError
from sentret_core.evaluation.metrics import Qrels, topic_id
from sentret_core.index.reader import FORMAT_VERSION, Index, is_index, sha256_of
from sentret_core.ingest.corpus import Document, presegmented
from sentret_core.ingest.nlp import DEFAULT_MODEL, entity_text

BENCHMARKS: tuple[str, ...] = ("wikiqa", "squad-support", "trecqa")
DISTRACTORS: tuple[str, ...] = ("demo",)
CONVERTER_VERSION = 1
DEFAULT_CACHE = Path("data") / "indexes" / "benchmarks"
CACHE_ENV = "SENTRET_BENCHMARK_CACHE"
RELEVANT_GRADE = 4  # squad-support: the answer sentence is "very relevant"

Kind = Literal["sentences", "support"]
Log = Callable[[str], None]

# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Topic:
    """One evaluation topic.

    ``candidates`` (sentence ids, ascending) is set for plain sentence retrieval (WikiQA,
    TrecQA): the question's own candidates. For entity support it is None (the candidates
    depend on the model) and ``entity`` is the answer entity's id. ``relevant`` are the
    relevant sentence ids; ``question`` the question id (entity topics of one question share it).
    """

    id: str
    question: str
    query: str
    relevant: tuple[int, ...]
    candidates: np.ndarray | None = field(default=None, compare=False)
    entity: int | None = None


@dataclass
class Benchmark:
    """A benchmark ready to evaluate: the collection's index, its topics and qrels."""

    name: str
    data: Path
    index: Index
    topics: tuple[Topic, ...]
    qrels: Qrels
    kind: Kind
    scale: Literal["binary", "graded"]
    options: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def docids(self) -> list[str]:
        """The TREC docid of every sentence: ``<document id>-<position in the document>``."""
        return _docids(self.index)

    def docid(self, sentence: int) -> str:
        return self.docids[sentence]

    @cached_property
    def topic_map(self) -> dict[str, Topic]:
        return {topic.id: topic for topic in self.topics}

    def describe(self) -> dict[str, Any]:
        """What a report says about the collection."""
        return {
            "benchmark": self.name,
            "data": str(self.data),
            "topics": len(self.topics),
            "documents": self.index.D,
            "sentences": self.index.N,
            "index": str(self.index.path),
            "options": dict(self.options),
            **self.stats,
        }


# --------------------------------------------------------------------------------------------
# Reading the files (no spaCy)
# --------------------------------------------------------------------------------------------


def _read_lines(path: Path, what: str) -> list[str]:
    if not path.is_file():
        raise SentretError(f"{path}: no such {what} file")
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise SentretError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise SentretError(f"cannot read {path}: {err.strerror or err}") from None


def _check_id(value: str, where: str, what: str) -> str:
    if not value or any(ch.isspace() for ch in value):
        raise SentretError(f"{where}: {what} {value!r} must be non-empty without whitespace")
    return value


@dataclass(frozen=True)
class WikiQAQuestion:
    id: str
    text: str
    document: str
    positions: tuple[int, ...]  # sentence positions in the document, in file order
    labels: tuple[int, ...]


@dataclass(frozen=True)
class WikiQAData:
    documents: dict[str, tuple[str, list[str]]]  # id -> (title, sentences by position)
    questions: list[WikiQAQuestion]


WIKIQA_HEADER = ("QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID", "Sentence", "Label")


def read_wikiqa(path: str | os.PathLike[str]) -> WikiQAData:
    """Parse a WikiQA TSV split; any malformed line raises :class:`SentretError` with its number."""
    path = Path(path)
    lines = _read_lines(path, "WikiQA TSV")
    if not lines or tuple(lines[0].split("\t")) != WIKIQA_HEADER:
        raise SentretError(f"{path}:1: expected the WikiQA header {' '.join(WIKIQA_HEADER)}")
    sentences: dict[str, dict[int, str]] = {}
    titles: dict[str, str] = {}
    rows: dict[str, list[Any]] = {}  # question id -> [text, document, positions, labels]
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        fields = line.split("\t")
        if len(fields) != 7:
            raise SentretError(f"{where}: expected 7 tab-separated fields ({', '.join(WIKIQA_HEADER)}), "
                               f"found {len(fields)}")  # fmt: skip
        qid, question, doc, title, sid, sentence, label = fields
        _check_id(qid, where, "QuestionID")
        _check_id(doc, where, "DocumentID")
        match = re.fullmatch(r"(.+)-(\d+)", sid)
        if match is None or match.group(1) != doc:
            raise SentretError(f"{where}: SentenceID {sid!r} is not {doc}-<number>")
        if label not in ("0", "1"):
            raise SentretError(f"{where}: Label {label!r} must be 0 or 1")
        position = int(match.group(2))
        known = sentences.setdefault(doc, {})
        if known.get(position, sentence) != sentence:
            raise SentretError(f"{where}: SentenceID {sid} has another text than on an earlier line")
        if titles.setdefault(doc, title) != title:
            raise SentretError(f"{where}: DocumentID {doc} has another title than on an earlier line")
        known[position] = sentence
        record = rows.setdefault(qid, [question, doc, [], []])
        if record[1] != doc or record[0] != question:
            raise SentretError(f"{where}: question {qid} appears with another text or document earlier")
        if position in record[2]:
            raise SentretError(f"{where}: SentenceID {sid} is listed twice for question {qid}")
        record[2].append(position)
        record[3].append(int(label))
    if not rows:
        raise SentretError(f"{path}: no question lines after the header")
    documents = {
        doc: (titles[doc], [known.get(i, "") for i in range(max(known) + 1)])
        for doc, known in sentences.items()
    }
    questions = [
        WikiQAQuestion(qid, text, doc, tuple(pos), tuple(labels))
        for qid, (text, doc, pos, labels) in rows.items()
    ]
    return WikiQAData(documents, questions)


@dataclass(frozen=True)
class TrecQAQuestion:
    id: str
    text: str
    candidates: tuple[tuple[str, int], ...]  # (sentence, label) in file order


_QAPAIRS = re.compile(r"<QApairs\s+id=['\"]([^'\"]*)['\"]\s*>(.*?)</QApairs>", re.S)
_BLOCK = re.compile(r"<(question|positive|negative)>\s*\n(.*?)</\1>", re.S)


def read_trecqa(path: str | os.PathLike[str]) -> list[TrecQAQuestion]:
    """Parse TrecQA: the XML as distributed (not well-formed XML: raw ``&``; each block's first
    line holds the tab-separated tokens) or the TSV ``QuestionID Question CandidateIndex Sentence Label``."""
    path = Path(path)
    if path.suffix.lower() in (".tsv", ".txt"):
        return _read_trecqa_tsv(path)
    lines = _read_lines(path, "TrecQA XML")
    text = "\n".join(lines)
    questions = []
    starts = [m.start() for m in re.finditer(r"<QApairs\b", text)]
    matches = list(_QAPAIRS.finditer(text))
    if len(matches) != len(starts):
        found = {m.start() for m in matches}
        bad = next(s for s in starts if s not in found)
        raise SentretError(f"{path}:{text.count(chr(10), 0, bad) + 1}: a <QApairs> block is not closed")
    if not matches:
        raise SentretError(f"{path}: no <QApairs id=...> blocks: not a TrecQA XML file")
    for match in matches:
        qid, body = match.group(1), match.group(2)
        line = text.count("\n", 0, match.start()) + 1
        _check_id(qid, f"{path}:{line}", "QApairs id")
        question = None
        candidates = []
        for block in _BLOCK.finditer(body):
            tokens = block.group(2).split("\n", 1)[0].split("\t")
            sentence = " ".join(t for t in (tok.strip() for tok in tokens) if t)
            if block.group(1) == "question":
                question = sentence
            else:
                candidates.append((sentence, 1 if block.group(1) == "positive" else 0))
        if question is None:
            raise SentretError(f"{path}:{line}: <QApairs id='{qid}'> has no <question>")
        questions.append(TrecQAQuestion(qid, question, _merge_candidates(candidates)))
    return questions


def _merge_candidates(candidates: list[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    """One entry per distinct sentence (the highest label if a sentence is listed twice)."""
    merged: dict[str, int] = {}
    for sentence, label in candidates:
        if sentence:
            merged[sentence] = max(label, merged.get(sentence, 0))
    return tuple(merged.items())


def _read_trecqa_tsv(path: Path) -> list[TrecQAQuestion]:
    lines = _read_lines(path, "TrecQA TSV")
    header = ("QuestionID", "Question", "CandidateIndex", "Sentence", "Label")
    if not lines or tuple(lines[0].split("\t")) != header:
        raise SentretError(f"{path}:1: expected the TrecQA header {' '.join(header)}")
    rows: dict[str, list[Any]] = {}
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        fields = line.split("\t")
        if len(fields) != 5:
            raise SentretError(f"{where}: expected 5 tab-separated fields, found {len(fields)}")
        qid, question, _, sentence, label = fields
        _check_id(qid, where, "QuestionID")
        if label not in ("0", "1"):
            raise SentretError(f"{where}: Label {label!r} must be 0 or 1")
        rows.setdefault(qid, [question, []])[1].append((sentence.strip(), int(label)))
    if not rows:
        raise SentretError(f"{path}: no question lines after the header")
    return [TrecQAQuestion(qid, q, _merge_candidates(c)) for qid, (q, c) in rows.items()]


@dataclass(frozen=True)
class SquadAnswer:
    start: int
    text: str


@dataclass(frozen=True)
class SquadQuestion:
    id: str
    text: str
    answers: tuple[SquadAnswer, ...]


@dataclass(frozen=True)
class SquadParagraph:
    id: str  # a<article>p<paragraph>, e.g. a03p012
    title: str
    context: str
    questions: tuple[SquadQuestion, ...]


def read_squad(path: str | os.PathLike[str]) -> list[SquadParagraph]:
    """Parse a SQuAD v1.1 JSON file into paragraphs (with their questions)."""
    path = Path(path)
    lines = _read_lines(path, "SQuAD JSON")
    try:
        data = json.loads("\n".join(lines))
    except json.JSONDecodeError as err:
        raise SentretError(f"{path}:{err.lineno}: not valid JSON ({err.msg})") from None
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list):
        raise SentretError(f'{path}: expected SQuAD\'s layout {{"version", "data": [articles]}}')
    paragraphs = []
    for a, article in enumerate(articles):
        try:
            title = str(article["title"]).replace("_", " ")
            for p, paragraph in enumerate(article["paragraphs"]):
                context = str(paragraph["context"])
                questions = []
                for qa in paragraph["qas"]:
                    answers = tuple(
                        SquadAnswer(int(ans["answer_start"]), str(ans["text"])) for ans in qa["answers"]
                    )
                    questions.append(SquadQuestion(_clean_id(str(qa["id"])), str(qa["question"]), answers))
                paragraphs.append(SquadParagraph(f"a{a:02d}p{p:03d}", title, context, tuple(questions)))
        except (KeyError, TypeError, ValueError) as err:
            raise SentretError(f"{path}: article {a} does not follow SQuAD v1.1's layout ({err!r})") from None
    if not paragraphs:
        raise SentretError(f"{path}: no paragraphs")
    return paragraphs


def _clean_id(value: str) -> str:
    return re.sub(r"\s+", "_", value.strip()) or "q"


# --------------------------------------------------------------------------------------------
# Building and caching indexes
# --------------------------------------------------------------------------------------------


def cache_root(cache: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder: ``cache``, else $SENTRET_BENCHMARK_CACHE, else ``data/indexes/benchmarks``."""
    if cache is not None:
        return Path(cache)
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


def cache_key(name: str, data: Path, options: dict[str, Any], model: str = DEFAULT_MODEL) -> str:
    """``<name>-<hash>``: the hash of the input file's content, the options and the versions."""
    recipe = {
        "benchmark": name,
        "file": sha256_of(data),
        "options": options,
        "converter": CONVERTER_VERSION,
        "index_format": FORMAT_VERSION,
        "model": model,
    }
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
    return f"{name}-{digest[:16]}"


def index_documents(
    documents: Iterable[Document],
    out: str | os.PathLike[str],
    *,
    source: str,
    model: str = DEFAULT_MODEL,
    n_process: int = 1,
) -> Index:
    """Index ``documents`` (``Document`` records, presegmented ones kept as given) into ``out``.

    Atomic like every build: an interrupted one leaves nothing, and an index another process
    finished first is kept.
    """
    from sentret_core.ingest.build import build_from_documents

    out = Path(out)
    if not is_index(out):
        build_from_documents(documents, out, source=source, model=model, n_process=n_process, force=True)
    return Index.load(out)


def cached_index(
    name: str,
    data: Path,
    options: dict[str, Any],
    documents: Iterable[Document] | Any,
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    model: str = DEFAULT_MODEL,
    log: Log | None = None,
) -> Index:
    """Load the cached index of (``name``, ``data``, ``options``) or build it from ``documents``
    (an iterable, or a zero-argument callable returning one, called only when building)."""
    out = cache_root(cache) / cache_key(name, data, options, model)
    if is_index(out):
        return Index.load(out)
    if log is not None:
        log(f"indexing {name} from {data} into {out} (once: later runs reuse it)")
    docs = documents() if callable(documents) else documents
    return index_documents(docs, out, source=f"{name}:{data}", model=model, n_process=n_process)


# --------------------------------------------------------------------------------------------
# The converters
# --------------------------------------------------------------------------------------------


def _doc_rows(index: Index) -> dict[str, int]:
    return {str(doc): row for row, doc in enumerate(index.documents["id"])}


def load_wikiqa(
    path: str | os.PathLike[str],
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """The WikiQA benchmark of one TSV split (see the module docstring)."""
    data_path = Path(path)
    parsed = read_wikiqa(data_path)

    def documents() -> Iterator[Document]:
        for doc, (title, sentences) in parsed.documents.items():
            yield presegmented(doc, title, sentences)

    index = cached_index("wikiqa", data_path, {}, documents, cache=cache, n_process=n_process, log=log)
    rows = _doc_rows(index)
    first = index.doc_first
    topics, qrels = [], {}
    docids = _docids(index)
    for question in parsed.questions:
        if not any(question.labels):
            continue
        d = rows.get(question.document)
        if d is None:
            raise SentretError(
                f"{index.path}: the cached index lacks document {question.document}; delete it"
            )
        ids = first[d] + np.asarray(question.positions, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        relevant = tuple(int(s) for s, label in zip(ids, question.labels) if label)
        topics.append(Topic(question.id, question.id, question.text, relevant, ids[order]))
        qrels[question.id] = {docids[int(s)]: int(label) for s, label in zip(ids, question.labels)}
    if not topics:
        raise SentretError(f"{data_path}: no question has a correct sentence")
    stats = {
        "questions": len(parsed.questions),
        "candidates": sum(len(t.candidates) for t in topics if t.candidates is not None),
    }
    return Benchmark("wikiqa", data_path, index, tuple(topics), qrels, "sentences", "binary", {}, stats)


def _docids(index: Index) -> list[str]:
    doc_ids = list(index.documents["id"])
    return [f"{doc_ids[d]}-{p}" for d, p in zip(index.sent_doc.tolist(), index.sent_pos.tolist())]


def _text_key(sentence: str) -> str:
    return hashlib.sha256(sentence.encode("utf-8")).hexdigest()


def load_trecqa(
    path: str | os.PathLike[str],
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """The TrecQA benchmark of one XML (or TSV) file (see the module docstring)."""
    data_path = Path(path)
    questions = read_trecqa(data_path)
    distinct = sorted({s for q in questions for s, _ in q.candidates}, key=lambda s: (_text_key(s), s))
    number = {sentence: i for i, sentence in enumerate(distinct)}
    width = max(5, len(str(len(distinct))))

    def documents() -> Iterator[Document]:
        for i, sentence in enumerate(distinct):
            yield presegmented(f"T{i:0{width}d}", "", [sentence])

    # The index depends on the set of sentences only, not on the file: key it by that set.
    recipe = {"sentences": hashlib.sha256("\n".join(distinct).encode("utf-8")).hexdigest()}
    index = cached_index("trecqa", data_path, recipe, documents, cache=cache, n_process=n_process, log=log)
    rows = _doc_rows(index)
    first = index.doc_first
    docids = _docids(index)
    topics, qrels = [], {}
    for question in questions:
        if not any(label for _, label in question.candidates):
            continue
        ids = np.array(
            [first[rows[f"T{number[s]:0{width}d}"]] for s, _ in question.candidates], dtype=np.int64
        )
        labels = [label for _, label in question.candidates]
        relevant = tuple(sorted(int(s) for s, label in zip(ids, labels) if label))
        topics.append(Topic(question.id, question.id, question.text, relevant, np.sort(ids)))
        qrels[question.id] = {docids[int(s)]: label for s, label in sorted(zip(ids.tolist(), labels))}
    if not topics:
        raise SentretError(f"{data_path}: no question has a positive candidate")
    stats = {
        "questions": len(questions),
        "candidates": sum(len(t.candidates) for t in topics if t.candidates is not None),
    }
    return Benchmark("trecqa", data_path, index, tuple(topics), qrels, "sentences", "binary", {}, stats)


def load_squad_support(
    path: str | os.PathLike[str],
    *,
    distractors: str | None = None,
    min_candidates: int = 1,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """The SQuAD entity-support benchmark (see the module docstring)."""
    if distractors is not None and distractors not in DISTRACTORS:
        raise SentretError(f"unknown distractors {distractors!r}; choose one of {', '.join(DISTRACTORS)}")
    if isinstance(min_candidates, bool) or not isinstance(min_candidates, int) or min_candidates < 1:
        raise SentretError(f"min_candidates must be an integer >= 1 (got {min_candidates!r})")
    data_path = Path(path)
    paragraphs = read_squad(data_path)

    def documents() -> Iterator[Document]:
        for paragraph in paragraphs:
            if paragraph.context.strip():
                yield Document(paragraph.id, paragraph.title, paragraph.context)
        if distractors == "demo":
            from sentret_core.ingest.corpus import read_demo

            for i, doc in enumerate(read_demo()):
                yield Document(f"w{i:05d}", doc.title, doc.text)

    options = {"distractors": distractors}
    index = cached_index(
        "squad-support", data_path, options, documents, cache=cache, n_process=n_process, log=log
    )
    topics, qrels, stats = _squad_topics(index, paragraphs, min_candidates)
    if not topics:
        raise SentretError(f"{data_path}: no (question, answer entity) topic was found")
    return Benchmark(
        "squad-support",
        data_path,
        index,
        tuple(topics),
        qrels,
        "support",
        "graded",
        {"distractors": distractors, "min_candidates": min_candidates},
        stats,
    )


def _normal(text: str) -> str:
    return entity_text(text).casefold()


def _squad_topics(
    index: Index, paragraphs: Sequence[SquadParagraph], min_candidates: int
) -> tuple[list[Topic], Qrels, dict[str, Any]]:
    rows = _doc_rows(index)
    first, count = index.doc_first, index.doc_nsent
    starts, ends = np.asarray(index.sent_start), np.asarray(index.sent_end)
    mentions = index.mentions
    m_entity = mentions["entity"].to_numpy()
    m_start = mentions["char_start"].to_numpy()
    m_end = mentions["char_end"].to_numpy()
    indptr = index.mention_indptr
    entity_norm = [_normal(t) for t in index.entities["text"]]
    entity_sf = index.entities["sf"].to_numpy()
    labels = list(index.entities["label"])
    texts = list(index.entities["text"])
    docids = _docids(index)
    topics: list[Topic] = []
    qrels: Qrels = {}
    n_questions = n_answers = unmatched = rare = 0
    for paragraph in paragraphs:
        d = rows.get(paragraph.id)
        for question in paragraph.questions:
            n_questions += 1
            found: dict[int, set[int]] = {}  # entity -> relevant sentences
            for answer in question.answers:
                n_answers += 1
                if d is None:
                    continue
                lo, hi = int(first[d]), int(first[d] + count[d])
                # the sentence holding answer_start (or the next one when it starts in a gap)
                s = lo + int(np.searchsorted(ends[lo:hi], answer.start, side="right"))
                if s >= hi:
                    continue
                wanted = _normal(answer.text)
                a_lo, a_hi = answer.start, answer.start + len(answer.text)
                best = None
                for m in range(int(indptr[s]), int(indptr[s + 1])):
                    e = int(m_entity[m])
                    if entity_norm[e] != wanted:
                        continue
                    span = (int(starts[s]) + int(m_start[m]), int(starts[s]) + int(m_end[m]))
                    overlaps = span[0] < a_hi and a_lo < span[1]
                    if best is None or (overlaps and not best[1]):
                        best = (e, overlaps)
                if best is not None:
                    found.setdefault(best[0], set()).add(s)
            if not found:
                unmatched += 1
            for entity, sentences in found.items():
                if entity_sf[entity] < min_candidates:
                    rare += 1
                    continue
                tid = topic_id(question.id, f"{texts[entity]}/{labels[entity]}")
                if tid in qrels:
                    continue
                relevant = tuple(sorted(sentences))
                topics.append(Topic(tid, question.id, question.text, relevant, None, entity))
                qrels[tid] = {docids[s]: RELEVANT_GRADE for s in relevant}
    stats = {
        "questions": n_questions,
        "answers": n_answers,
        "questions_without_entity_answer": unmatched,
        "topics_below_min_candidates": rare,
        "questions_with_topics": len({t.question for t in topics}),
    }
    return topics, qrels, stats


def load_benchmark(
    name: str,
    path: str | os.PathLike[str],
    *,
    distractors: str | None = None,
    min_candidates: int = 1,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """Load benchmark ``name`` (one of :data:`BENCHMARKS`) from ``path``."""
    if name not in BENCHMARKS:
        raise SentretError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}")
    if name != "squad-support" and (distractors is not None or min_candidates != 1):
        raise SentretError("--distractors and --min-candidates apply to squad-support only")
    if not Path(path).exists():
        raise SentretError(f"{path}: no such file")
    if name == "wikiqa":
        return load_wikiqa(path, cache=cache, n_process=n_process, log=log)
    if name == "trecqa":
        return load_trecqa(path, cache=cache, n_process=n_process, log=log)
    return load_squad_support(
        path,
        distractors=distractors,
        min_candidates=min_candidates,
        cache=cache,
        n_process=n_process,
        log=log,
    )
