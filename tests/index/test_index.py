"""The index: round trip, statistics against a straightforward recomputation, the graph, atomic builds."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentret_core import Index, build_index
from sentret_core.errors import IndexFormatError, SentretError
from sentret_core.index.reader import verify
from sentret_core.ingest.corpus import presegmented, read_corpus
from sentret_core.ingest.nlp import entity_text, parse_documents, query_terms
from tests.conftest import SMALL_DOCS, build_from_texts, examples


def test_round_trip_equals_the_parsed_documents(small_index: Index, small_corpus: Path, nlp) -> None:  # type: ignore[no-untyped-def]
    parsed = list(parse_documents(read_corpus(small_corpus), nlp, n_process=1))
    sentences = [s for doc in parsed for s in doc.sentences]
    assert len(sentences) == small_index.N and len(parsed) == small_index.D
    assert list(small_index.texts) == [s.text for s in sentences]
    assert small_index.titles == [doc.title for doc in parsed]
    vocab = small_index.vocab
    for i, sent in enumerate(sentences):
        assert [vocab[t] for t in small_index.sequence(i)] == sent.terms
        lo, hi = small_index.seq_indptr[i], small_index.seq_indptr[i + 1]
        assert list(small_index.seq_tokens[lo:hi]) == sent.term_tokens
        assert (
            list(zip(small_index.seq_char_start[lo:hi], small_index.seq_char_end[lo:hi])) == sent.term_chars
        )
        got = small_index.sentence_mentions(i)
        entities = small_index.entities
        assert [(entities.text[e], entities.label[e]) for e in got["entity"]] == [
            (m.text, m.label) for m in sent.mentions
        ]
        assert list(got["char_start"]) == [m.char_start for m in sent.mentions]
    # offsets point into the document text
    doc_text = SMALL_DOCS[0]["text"]
    for i in range(int(small_index.doc_nsent[0])):
        assert doc_text[small_index.sent_start[i] : small_index.sent_end[i]] == small_index.texts[i]


def test_statistics_equal_a_straightforward_recomputation(small_index: Index, nlp) -> None:  # type: ignore[no-untyped-def]
    # Recompute everything from the sentence texts with the tokenizer alone (the query path).
    bags = [Counter(query_terms(text, nlp)) for text in small_index.texts]
    X = small_index.X
    for i, bag in enumerate(bags):
        row = X.getrow(i)
        assert {small_index.vocab[j]: int(c) for j, c in zip(row.indices, row.data)} == dict(bag)
    docs = np.asarray(small_index.sent_doc)
    for t, term in enumerate(small_index.vocab):
        assert small_index.sf[t] == sum(term in bag for bag in bags)
        assert small_index.cf[t] == sum(bag[term] for bag in bags)
        assert small_index.df[t] == len({int(docs[i]) for i, bag in enumerate(bags) if term in bag})
    lengths = [sum(bag.values()) for bag in bags]
    assert list(small_index.sent_len) == lengths
    assert math.isclose(small_index.avsl, sum(lengths) / len(lengths))
    for d in range(small_index.D):
        own = [n for n, doc in zip(lengths, docs) if doc == d]
        assert math.isclose(small_index.doc_avsl[d], sum(own) / len(own))
    assert (small_index.XT != small_index.X).nnz == 0
    title_terms = Counter(query_terms("Spanish Civil War", nlp))
    row = small_index.title_X.getrow(0)
    assert {small_index.vocab[j]: int(c) for j, c in zip(row.indices, row.data)} == dict(title_terms)


def test_entity_graph_rows_match_hand_checked_sentences(small_index: Index) -> None:
    def entities_of(sentence_text: str) -> set[tuple[str, str]]:
        i = small_index.texts.index(sentence_text)
        row = small_index.G.getrow(i)
        return {(small_index.entities.text[e], small_index.entities.label[e]) for e in row.indices}

    # Checked by reading the sentences (en_core_web_sm 3.8.0's NER).
    assert entities_of("Francisco Franco led the Nationalists against the Republic.") == {
        ("Francisco Franco", "PERSON"),
        ("Nationalists", "NORP"),
    }
    assert entities_of("John Lennon was an English singer and songwriter.") == {
        ("John Lennon", "PERSON"),
        ("English", "NORP"),
    }
    # "The Spanish Civil War" is keyed without its leading "the".
    assert ("Spanish Civil War", "EVENT") in entities_of(
        "The Spanish Civil War was fought from 1936 to 1939."
    )
    G = small_index.G
    assert set(np.unique(G.data)) == {1}
    assert (small_index.GT != G).nnz == 0
    assert list(small_index.entities["sf"]) == list(np.asarray(G.sum(axis=0)).ravel())


def test_entity_key_normalisation() -> None:
    assert entity_text("the  International\nBrigades") == "International Brigades"
    assert entity_text("The") == "The"


def test_neighbours_never_cross_documents(small_index: Index) -> None:
    docs = np.asarray(small_index.sent_doc)
    for i in range(small_index.N):
        for j in (small_index.prev[i], small_index.next[i]):
            assert j == -1 or docs[j] == docs[i]
        assert all(docs[j] == docs[i] for j in small_index.neighbours(i, 2))
    firsts = small_index.doc_first
    assert all(small_index.prev[f] == -1 for f in firsts)
    assert list(small_index.neighbours(int(firsts[1]), 2)) == [firsts[1], firsts[1] + 1, firsts[1] + 2]


def test_per_sentence_columns_are_computed_where_asked(small_index: Index) -> None:
    """prev, next and the document bounds hold nothing of size N: each is computed at the sentences asked for,
    and equals the whole arrays a loop builds."""
    pos, N = np.asarray(small_index.sent_pos), small_index.N
    last = np.asarray(small_index.doc_first) + np.asarray(small_index.doc_nsent) - 1
    prev = np.array([-1 if pos[s] == 0 else s - 1 for s in range(N)])
    nxt = np.array([-1 if s in set(last.tolist()) else s + 1 for s in range(N)])
    assert np.array_equal(np.asarray(small_index.prev), prev) and np.array_equal(np.asarray(small_index.next), nxt)
    picked = np.array([N - 1, 0, 4, 4])
    assert np.array_equal(small_index.prev.take(picked), prev[picked]) and len(small_index.next) == N
    assert small_index.sent_doc_first[-1] == small_index.sent_doc_first[N - 1] == small_index.doc_first[-1]
    for outside in (N, -N - 1):
        with pytest.raises(IndexError):
            small_index.sent_doc_end[outside]


def test_presegmented_documents_keep_their_sentences(tmp_path: Path) -> None:
    from sentret_core.ingest.build import build_from_documents

    docs = [presegmented("d", "T", ["First one. Still the first.", "", "Third."])]
    build_from_documents(docs, tmp_path / "idx", source="test", n_process=1)
    index = Index.load(tmp_path / "idx")
    assert list(index.texts) == ["First one. Still the first.", "", "Third."]


def test_two_processes_build_the_same_index(tmp_path: Path, small_corpus: Path, small_index: Index) -> None:
    build_index(small_corpus, tmp_path / "two", n_process=2, batch_size=1)
    two = Index.load(tmp_path / "two")
    assert list(two.texts) == list(small_index.texts)
    assert (two.X != small_index.X).nnz == 0 and (two.G != small_index.G).nnz == 0
    for name in ("sent_doc", "sent_start", "seq_terms", "seq_tokens"):
        assert np.array_equal(getattr(two, name), getattr(small_index, name))


def test_interrupted_build_leaves_no_index(tmp_path: Path, small_corpus: Path) -> None:
    def interrupt(documents: int, words: int) -> None:
        if documents == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index(small_corpus, tmp_path / "idx", n_process=1, progress=interrupt)
    assert list(tmp_path.iterdir()) == []


def test_failed_rebuild_keeps_the_old_index(tmp_path: Path, small_corpus: Path) -> None:
    build_index(small_corpus, tmp_path / "idx", n_process=1)
    before = json.loads((tmp_path / "idx" / "manifest.json").read_text())

    def fail(documents: int, words: int) -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        build_index(small_corpus, tmp_path / "idx", n_process=1, force=True, progress=fail)
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text()) == before
    assert verify(tmp_path / "idx") == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_output_folder_rules(tmp_path: Path, small_corpus: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    with pytest.raises(SentretError, match="not empty and is not an index"):
        build_index(small_corpus, tmp_path / "notes", n_process=1)
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"
    build_index(small_corpus, tmp_path / "idx", n_process=1)
    with pytest.raises(SentretError, match="pass --force to replace it"):
        build_index(small_corpus, tmp_path / "idx", n_process=1)
    build_index(small_corpus, tmp_path / "idx", n_process=1, force=True)
    (tmp_path / "empty").mkdir()
    build_index(small_corpus, tmp_path / "empty", n_process=1)
    assert len(SMALL_DOCS) == Index.load(tmp_path / "empty").D


def test_force_replaces_an_index_and_nothing_else(
    tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    with pytest.raises(SentretError, match="replaces only an index"):
        build_index(small_corpus, tmp_path / "notes", n_process=1, force=True)
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"
    (tmp_path / "file.txt").write_text("mine")
    with pytest.raises(SentretError, match="not a folder"):
        build_index(small_corpus, tmp_path / "file.txt", n_process=1, force=True)
    assert (tmp_path / "file.txt").read_text() == "mine"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("Picasso painted Guernica in 1937. It shows the bombing of a town.")
    for out in (corpus, corpus / "idx"):  # the documents' own folder, or inside it
        with pytest.raises(SentretError, match="where the documents are"):
            build_index(corpus, out, n_process=1, force=True)
    assert sorted(p.name for p in corpus.iterdir()) == ["a.txt"]
    monkeypatch.chdir(tmp_path / "notes")
    with pytest.raises(SentretError, match="current, home or root folder"):
        build_index(small_corpus, ".", n_process=1, force=True)
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"


def test_verify_catches_a_corrupted_array(tmp_path: Path) -> None:
    index = build_from_texts(tmp_path, SMALL_DOCS)
    assert verify(index.path) == []
    target = index.path / "X.data.npy"
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    assert verify(index.path) == ["X.data.npy: checksum mismatch (the file was altered or corrupted)"]
    (index.path / "sent_len.npy").unlink()
    assert "sent_len.npy: missing" in verify(index.path)


def test_loading_refuses_what_is_not_a_current_index(tmp_path: Path) -> None:
    with pytest.raises(IndexFormatError, match="no such index folder"):
        Index.load(tmp_path / "nothing")
    with pytest.raises(IndexFormatError, match="not a sentret index"):
        Index.load(tmp_path)
    index = build_from_texts(tmp_path, SMALL_DOCS[:1])
    manifest = json.loads((index.path / "manifest.json").read_text())
    manifest["format_version"] = 99
    (index.path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexFormatError, match="format version 99 is not supported"):
        Index.load(index.path)


def test_arrays_are_memory_mapped(small_index: Index) -> None:
    assert isinstance(small_index.sent_len.base, np.memmap) and not small_index.sent_len.flags.writeable
    # scipy wraps the mapped arrays in views: read-only, because they are the file itself
    X = small_index.X
    assert not X.indices.flags.writeable and not X.indptr.flags.writeable and not X.data.flags.writeable


def test_the_manifest_records_sizes_headers_and_its_own_checksum(small_index: Index) -> None:
    from sentret_core.index.validate import canonical_checksum

    manifest = json.loads((small_index.path / "manifest.json").read_text())
    assert manifest["checksum"] == canonical_checksum(manifest)
    files = sorted([*(p.name for p in small_index.path.iterdir() if p.is_file() and p.name != "manifest.json"),
                    "shards/manifest.json"])  # the shards' own manifest records each shard's sha256
    assert sorted(manifest["files"]) == sorted(manifest["sizes"]) == files
    assert all(manifest["sizes"][name] == (small_index.path / name).stat().st_size for name in files)
    for name in (f for f in files if f.endswith(".npy")):
        array = np.load(small_index.path / name)
        assert manifest["arrays"][name] == {"dtype": array.dtype.str, "shape": list(array.shape)}
    assert manifest["counts"]["title_term_occurrences"] == int(small_index.title_X.sum())
    assert small_index.notes == ()


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(sizes=st.lists(st.integers(0, 4), max_size=30), wide=st.booleans())
def test_document_bounds_are_the_first_sentence_of_each_document(sizes: list[int], wide: bool) -> None:
    """The documents' bounds, found from the runs of ``sent_doc``, are a binary search's for each document (its
    first sentence at or after it), empty documents anywhere included."""
    from sentret_core.index.tables import IndexTables

    sent_doc = np.repeat(np.arange(len(sizes)), sizes).astype(np.int64 if wide else np.int32)

    class Tables(IndexTables):
        N, D = len(sent_doc), len(sizes)

        def _array(self, name: str) -> np.ndarray:
            assert name == "sent_doc"
            return sent_doc

    bounds = np.searchsorted(sent_doc, np.arange(len(sizes) + 1))
    tables = Tables()
    assert tables.doc_first.tolist() == bounds[:-1].tolist() and tables.doc_nsent.tolist() == sizes


def test_a_sentences_mention_rows_are_the_indptrs(small_index: Index) -> None:
    """mention_rows (two searches in the sorted sentence column) gives mention_indptr's rows, for ids in any order
    and repeated; the rows hold that sentence's mentions; an id outside 0..N-1 is an IndexError."""
    indptr, N = small_index.mention_indptr, small_index.N
    picked = np.array([N - 1, 0, 5, 5, *range(N)])
    lo, hi = small_index.mention_rows(picked)
    assert lo.tolist() == indptr[picked].tolist() and hi.tolist() == indptr[picked + 1].tolist()
    sentence = small_index.mention_columns["sentence"]
    assert all((sentence[a:b] == s).all() for s, a, b in zip(picked, lo, hi))
    assert sum(hi[4:] - lo[4:]) == len(sentence) > 0
    assert small_index.mention_range(3) == (int(indptr[3]), int(indptr[4]))
    for outside in (N, -1):
        with pytest.raises(IndexError):
            small_index.mention_rows(np.array([0, outside]))
