"""The spaCy pass reads token attributes as arrays; this checks it against spaCy's own Token and Span
API (the way the pass read them before: ``doc.sents``, ``sent.ents``, ``token.lower_``) on real texts."""

from __future__ import annotations

import itertools

from sentret_core.ingest.corpus import Document, Skipped, read_corpus
from sentret_core.ingest.nlp import Mention, ParsedSentence, TermRules, entity_text, parse_documents

TRICKY = [
    "Picasso painted Guernica in Paris.\n\nThe Spanish Civil War\n\nended in 1939 when Franco won.",
    "  Leading spaces. Then John Lennon   met Yoko Ono in London.\n\n\n  \n\nTrailing blank lines.\n\n",
    "One sentence that runs on past a break\n\nwithout a full stop and names the United Nations in New York",
    "§ + — ! ? ... 1937 !!! The the THE a an of.",
    "\n\n\n",
]


def reference(doc, offset: int, rules: TermRules) -> list[ParsedSentence]:  # type: ignore[no-untyped-def]
    """The pass as written with spaCy's objects (sentret 4b45ac1's ingest/nlp.py)."""
    out = []
    for sent in doc.sents:
        start = sent.start
        pieces = []
        for token in sent:
            if token.is_space and token.text.count("\n") >= 2 and token.i + 1 < sent.end:
                pieces.append(doc[start : token.i + 1])
                start = token.i + 1
        pieces.append(doc[start : sent.end])
        for piece in pieces:
            raw = doc.text[piece.start_char : piece.end_char]
            text = raw.strip()
            base = piece.start_char + len(raw) - len(raw.lstrip())
            kept = [(i, t) for i, t in enumerate(piece) if not (t.is_space or t.is_punct) and rules(t.lower_)]
            mentions = [
                Mention(entity_text(e.text), e.label_, e.start - piece.start, min(e.end, piece.end) - piece.start,
                        e.start_char - base, min(e.end_char, piece.end_char) - base)
                for e in piece.ents if entity_text(e.text)
            ]
            if text:
                out.append(ParsedSentence(
                    text, offset + base, offset + base + len(text), [str(rules(t.lower_)) for _, t in kept],
                    [i for i, _ in kept], [(t.idx - base, t.idx - base + len(t)) for _, t in kept], mentions,
                ))
    return out


def test_the_pass_equals_spacys_own_api(nlp) -> None:  # type: ignore[no-untyped-def]
    demo = list(itertools.islice(read_corpus("demo", "auto", "utf-8", Skipped()), 150))
    docs = [*demo, *(Document(f"t{i}", "T", text) for i, text in enumerate(TRICKY))]
    rules = TermRules(nlp)
    parsed = list(parse_documents(docs, nlp, n_process=1))
    assert [p.id for p in parsed] == [d.id for d in docs]
    for doc, got in zip(docs, parsed):
        assert got.sentences == reference(nlp(doc.text), 0, rules), doc.id
    assert sum(len(p.sentences) for p in parsed) > 500
    assert any(m for p in parsed[-len(TRICKY):] for s in p.sentences for m in s.mentions)
