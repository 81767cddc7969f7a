"""Parsed shards: round trip, an index built from shards equals the build before shards,
shard boundaries change nothing, `sentret add` equals a build from scratch, and an add that fails
or is interrupted leaves the old index as it was."""

from __future__ import annotations

import hashlib
import itertools
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sentret_core import Index
from sentret_core.errors import CorpusError, SentretError
from sentret_core.index.reader import verify
from sentret_core.ingest import assemble
from sentret_core.ingest.build import add_documents, build_from_documents, build_from_shards, parse_source
from sentret_core.ingest.corpus import Document, Skipped, presegmented, read_corpus
from sentret_core.ingest.engine import Engine
from sentret_core.ingest.nlp import parse_documents
from sentret_core.ingest.parse import parse_into
from sentret_core.ingest.shards import ShardWriter, read_shard, read_shards_manifest, to_table

ROOT = Path(__file__).resolve().parents[2]

# sha256 (first 16 hex digits) of every array, and of every table's CSV, of the index that sentret
# 4b45ac1 (the last build without shards: IndexWriter, all postings in memory) made of GOLDEN_DOCS.
BEFORE_SHARDS = {
    "G.indices.npy": "5352dc97bf6209b5", "G.indptr.npy": "f211bbe2658d08b6", "GT.indices.npy": "3556ef547f4a0fbf",
    "GT.indptr.npy": "b42f7cddec5525a2", "X.data.npy": "3e1dd0afb7e22543", "X.indices.npy": "cda251c599e8ab33",
    "X.indptr.npy": "7c083ac4bdd5daf9", "XT.data.npy": "f8c03c751ddb1c31", "XT.indices.npy": "a842d96cc8cdd3a4",
    "XT.indptr.npy": "41865fac52566647", "documents.parquet": "c467fca820d26457",
    "entities.parquet": "8927d50af5cbec39", "mentions.parquet": "f0a4647f71b59360", "sent_doc.npy": "482bcf5927c7ae1b",
    "sent_end.npy": "746521ac40079964", "sent_len.npy": "e5ff9e2d14ee4f3c", "sent_pos.npy": "9e7131c0bff2105b",
    "sent_start.npy": "6a510004b8da6c55", "sentences.parquet": "50d2d21bc8b705fe",
    "seq_char_end.npy": "946859c41b833598", "seq_char_start.npy": "83493e13292a6aff",
    "seq_indptr.npy": "ea7b1df4b0e32626", "seq_terms.npy": "cf0cc6248e614572", "seq_tokens.npy": "75aea12f0b3ce6b2",
    "terms.parquet": "6fdfb7d9c877d08e", "title.data.npy": "e874673002aa84c5", "title.indices.npy": "5892a411ef120a31",
    "title.indptr.npy": "4abb085a6ead2515",
}


def golden_docs() -> list[Document]:
    """The first 60 demo documents and one whose sentences are given."""
    docs = list(itertools.islice(read_corpus("demo", "auto", "utf-8", Skipped()), 60))
    given = ["A first given sentence.", "And a second one about Paris."]
    return [*docs, presegmented("seg", "Given sentences", given)]


def digest(folder: Path) -> dict[str, str]:
    out = {}
    for file in sorted(folder.iterdir()):
        if file.suffix == ".npy":
            out[file.name] = hashlib.sha256(file.read_bytes()).hexdigest()[:16]
        elif file.suffix == ".parquet":
            out[file.name] = hashlib.sha256(pd.read_parquet(file).to_csv().encode()).hexdigest()[:16]
    return out


def write_jsonl(path: Path, docs: list[Document]) -> Path:
    path.write_text("".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}) + "\n" for d in docs))
    return path


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("golden") / "idx"
    build_from_documents(golden_docs(), out, source="golden", n_process=1)
    return out


def test_an_index_built_through_shards_equals_the_build_before_shards(golden: Path) -> None:
    assert digest(golden) == BEFORE_SHARDS
    assert verify(golden) == []


def test_shard_boundaries_change_nothing(golden: Path, tmp_path: Path) -> None:
    writer = ShardWriter(tmp_path / "shards", {}, shard_documents=7)  # 9 shards instead of 1
    parse_into(writer, golden_docs(), Engine(n_process=1))
    manifest = writer.finish(["golden"])
    assert len(manifest["shards"]) == 9
    build_from_shards(tmp_path / "shards", tmp_path / "idx")
    assert digest(tmp_path / "idx") == digest(golden)
    for name in BEFORE_SHARDS:
        if name.endswith(".npy"):
            assert (tmp_path / "idx" / name).read_bytes() == (golden / name).read_bytes(), name


def test_shards_round_trip(nlp: object, tmp_path: Path) -> None:
    docs = golden_docs()[:12]
    parsed = list(parse_documents(docs, nlp, n_process=1))
    writer = ShardWriter(tmp_path, {})
    writer.write(to_table(parsed, 0))
    manifest = writer.finish(["test"])
    rows = read_shard(tmp_path, manifest["shards"][0]).to_pylist()
    assert [r["ordinal"] for r in rows] == list(range(12))
    for doc, row in zip(parsed, rows):
        assert (row["id"], row["title"], row["title_terms"], row["n_words"]) == (
            doc.id, doc.title, doc.title_terms, doc.n_words
        )
        for sent, got in zip(doc.sentences, row["sentences"], strict=True):
            assert got["text"] == sent.text and (got["start"], got["end"]) == (sent.start, sent.end)
            assert got["terms"] == sent.terms and got["term_tokens"] == sent.term_tokens
            assert list(zip(got["term_char_start"], got["term_char_end"])) == sent.term_chars
            assert [tuple(m.values()) for m in got["mentions"]] == [tuple(m) for m in sent.mentions]
    counts = manifest["counts"]
    assert counts["sentences"] == sum(len(d.sentences) for d in parsed)
    assert counts["term_occurrences"] == sum(len(s.terms) for d in parsed for s in d.sentences)
    assert counts["mentions"] == sum(len(s.mentions) for d in parsed for s in d.sentences)


def test_parse_then_build_equals_index(golden: Path, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "docs.jsonl", golden_docs()[:60])
    whole = tmp_path / "whole"
    build_from_documents(read_corpus(source), whole, source=str(source), n_process=1)
    run = [sys.executable, "-m", "sentret_core"]
    parsed = subprocess.run([*run, "parse", str(source), "--out", str(tmp_path / "shards"), "--n-process", "1"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert parsed.returncode == 0, parsed.stderr
    assert "parsed 60 documents" in parsed.stdout
    built = subprocess.run([*run, "build", str(tmp_path / "shards"), "--out", str(tmp_path / "idx")],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    assert digest(tmp_path / "idx") == digest(whole)
    again = subprocess.run([*run, "parse", str(source), "--out", str(tmp_path / "shards")],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "a shards folder is already there; pass --force" in again.stderr


def test_add_equals_a_build_from_scratch(tmp_path: Path) -> None:
    docs = golden_docs()[:60]
    first, more = write_jsonl(tmp_path / "a.jsonl", docs[:35]), write_jsonl(tmp_path / "b.jsonl", docs[35:])
    parse_source(first, tmp_path / "shards", engine=Engine(n_process=1))
    build_from_shards(tmp_path / "shards", tmp_path / "idx")
    summary = add_documents(tmp_path / "idx", more, engine=Engine(model="", n_process=1))
    assert (summary.documents, summary.path) == (60, tmp_path / "idx")
    scratch = tmp_path / "scratch"
    build_from_documents(read_corpus(write_jsonl(tmp_path / "all.jsonl", docs)), scratch, source="all", n_process=1)
    assert digest(tmp_path / "idx") == digest(scratch)
    for name in BEFORE_SHARDS:
        if name.endswith(".npy"):
            assert (tmp_path / "idx" / name).read_bytes() == (scratch / name).read_bytes(), name
    assert verify(tmp_path / "idx") == []
    shards = read_shards_manifest(tmp_path / "idx" / "shards")
    assert [s["documents"] for s in shards["shards"]] == [35, 25]
    assert shards["sources"] == [str(first), str(more)]
    assert (tmp_path / "shards" / "part-00000.parquet").is_file()  # the parsed shards were not moved


def test_add_refuses_known_ids_and_keeps_the_index(tmp_path: Path) -> None:
    docs = golden_docs()[:20]
    build_from_documents(docs[:10], tmp_path / "idx", source="a", n_process=1)
    before = digest(tmp_path / "idx")
    manifest = (tmp_path / "idx" / "manifest.json").read_bytes()
    with pytest.raises(CorpusError, match=f"document id {docs[9].id!r} is already in"):
        add_documents(tmp_path / "idx", write_jsonl(tmp_path / "b.jsonl", docs[9:]), engine=Engine(n_process=1))
    assert (tmp_path / "idx" / "manifest.json").read_bytes() == manifest and digest(tmp_path / "idx") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.jsonl", "idx"]  # no staging folder left
    command = [sys.executable, "-m", "sentret_core", "add", str(tmp_path / "idx"), str(tmp_path / "b.jsonl")]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and run.stderr.strip().endswith(
        f"sentret: error: document id {docs[9].id!r} is already in {tmp_path / 'idx'}; nothing was added "
        "(give new documents new ids)"
    )
    assert digest(tmp_path / "idx") == before


@pytest.mark.parametrize("where", ["parsing", "assembling"])
def test_an_interrupted_add_leaves_the_old_index(tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = golden_docs()[:20]
    build_from_documents(docs[:10], tmp_path / "idx", source="a", n_process=1)
    before = digest(tmp_path / "idx")
    more = write_jsonl(tmp_path / "b.jsonl", docs[10:])

    def interrupt(*args: object) -> None:
        raise KeyboardInterrupt

    if where == "assembling":
        monkeypatch.setattr(assemble, "save_table", interrupt)
    with pytest.raises(KeyboardInterrupt):
        add_documents(tmp_path / "idx", more, engine=Engine(n_process=1), progress=interrupt)
    assert digest(tmp_path / "idx") == before and verify(tmp_path / "idx") == []
    assert Index.load(tmp_path / "idx").D == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.jsonl", "idx"]


def test_add_needs_the_index_shards(tmp_path: Path) -> None:
    build_from_documents(golden_docs()[:5], tmp_path / "idx", source="a", n_process=1)
    for file in (tmp_path / "idx" / "shards").iterdir():
        file.unlink()
    (tmp_path / "idx" / "shards").rmdir()
    with pytest.raises(SentretError, match="has no parsed shards"):
        add_documents(tmp_path / "idx", write_jsonl(tmp_path / "b.jsonl", golden_docs()[5:8]))


def test_verify_names_a_damaged_shard(tmp_path: Path) -> None:
    build_from_documents(golden_docs()[:5], tmp_path / "idx", source="a", n_process=1)
    shard = tmp_path / "idx" / "shards" / "part-00000.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    damaged = "shards/part-00000.parquet: checksum mismatch (the file was altered or corrupted)"
    assert verify(tmp_path / "idx") == [damaged]
    with pytest.raises(SentretError, match="does not match its checksum"):
        add_documents(tmp_path / "idx", write_jsonl(tmp_path / "b.jsonl", golden_docs()[5:8]))


def test_add_says_trained_artefacts_were_not_kept(tmp_path: Path) -> None:
    from sentret_core.models.training.triggers import train_triggers

    build_from_documents(golden_docs()[:10], tmp_path / "idx", source="a", n_process=1)
    train_triggers(Index.load(tmp_path / "idx"))
    summary = add_documents(tmp_path / "idx", write_jsonl(tmp_path / "b.jsonl", golden_docs()[10:12]))
    assert any("trained artefacts (triggers)" in note for note in summary.notes)
    assert not (tmp_path / "idx" / "artefacts").exists() and verify(tmp_path / "idx") == []


def test_build_refuses_what_is_not_shards(tmp_path: Path) -> None:
    (tmp_path / "nothing").mkdir()
    with pytest.raises(SentretError, match="not a shards folder"):
        build_from_shards(tmp_path / "nothing", tmp_path / "idx")
    parse_source(write_jsonl(tmp_path / "a.jsonl", golden_docs()[:3]), tmp_path / "shards", engine=Engine(n_process=1))
    manifest = json.loads((tmp_path / "shards" / "manifest.json").read_text())
    manifest["counts"]["sentences"] += 1
    (tmp_path / "shards" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SentretError, match="does not match its checksum"):
        build_from_shards(tmp_path / "shards", tmp_path / "idx")


def test_documents_without_sentences_are_counted_but_not_indexed(nlp: object, tmp_path: Path) -> None:
    from sentret_core.ingest.nlp import ParsedDocument

    parsed = list(parse_documents(golden_docs()[:6], nlp, n_process=1))
    empty = ParsedDocument("empty", "Nothing here", ["nothing"], [], 4)
    for name, docs in (("with", [*parsed[:3], empty, *parsed[3:]]), ("without", parsed)):
        writer = ShardWriter(tmp_path / f"{name}-shards", {"model": "m", "model_version": "", "pipeline": [],
                                                             "spacy_version": "", "normalisation": {}})
        writer.write(to_table(docs, 0))
        writer.finish([name])
        build_from_shards(tmp_path / f"{name}-shards", tmp_path / name)
    assert digest(tmp_path / "with") == digest(tmp_path / "without")
    counts = [Index.load(tmp_path / name).manifest["counts"] for name in ("with", "without")]
    assert counts[0]["words"] == counts[1]["words"] + 4 and counts[0]["documents"] == counts[1]["documents"] == 6
