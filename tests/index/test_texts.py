"""``index.texts`` reads sentences.parquet a row group at a time and keeps the groups used last (index.texts)."""

from __future__ import annotations

import threading

import pyarrow.parquet as pq
import pytest

from sentret_core import Index
from sentret_core.index import texts as texts_module
from sentret_core.ingest import assemble
from sentret_core.ingest.build import build_from_documents
from sentret_core.support.engine import support
from tests.ingest.test_shards import golden_docs


@pytest.fixture(scope="module")
def grouped(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """An index whose sentences.parquet has row groups of 16 sentences."""
    out = tmp_path_factory.mktemp("texts") / "idx"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(assemble, "TEXT_ROW_GROUP", 16)
        build_from_documents(golden_docs(), out, source="golden", n_process=1)
    return Index.load(out)


def every_text(index: Index) -> list[str]:
    return pq.read_table(index.path / "sentences.parquet").column("text").to_pylist()


def test_the_build_writes_row_groups_of_the_text_row_group(grouped: Index) -> None:
    meta = pq.ParquetFile(grouped.path / "sentences.parquet").metadata
    sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    assert sizes[:-1] == [16] * (len(sizes) - 1) and 0 < sizes[-1] <= 16 and sum(sizes) == grouped.N > 100


def test_texts_read_by_sentence_equal_the_whole_column(grouped: Index, small_index: Index) -> None:
    for index in (grouped, small_index):
        want = every_text(index)
        texts = index.texts
        assert len(texts) == index.N == len(want)
        assert [texts[s] for s in range(index.N)] == want
        assert list(texts) == want and texts[-1] == want[-1] and texts[3:9:2] == want[3:9:2]
        assert texts.index(want[7]) == want.index(want[7]) and want[5] in texts
        for outside in (index.N, -index.N - 1):
            with pytest.raises(IndexError):
                texts[outside]


def test_the_groups_kept_are_bounded_and_the_answers_unchanged(grouped: Index,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    texts = texts_module.SentenceTexts(grouped.path / "sentences.parquet", "hint")
    one_group = texts._read(0).nbytes
    monkeypatch.setattr(texts_module, "KEPT_BYTES", 3 * one_group)
    want = every_text(grouped)
    for s in [*range(0, grouped.N, 7), *range(grouped.N - 1, -1, -5)]:
        assert texts[s] == want[s]
        assert len(texts._kept) <= 4 and texts._kept_bytes == sum(g.nbytes for g in texts._kept.values())


def test_threads_read_texts_at_once(grouped: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = texts_module.SentenceTexts(grouped.path / "sentences.parquet", "hint")
    monkeypatch.setattr(texts_module, "KEPT_BYTES", 1)  # every read evicts: the most contention
    want = every_text(grouped)
    wrong: list[int] = []

    def read(offset: int) -> None:
        wrong.extend(s for s in range(offset, grouped.N, 3) if texts[s] != want[s])

    workers = [threading.Thread(target=read, args=(k,)) for k in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert wrong == []


def test_a_support_request_reads_only_the_groups_it_shows(grouped: Index) -> None:
    fresh = Index.load(grouped.path)
    found = support(fresh, "painting war", k=20, top_entities=5, per_entity=2)
    shown = {s.sentence for e in found.entities for sentences in e.sentences.values() for s in sentences}
    kept = set(fresh.texts._kept)
    assert shown
    assert kept and len(kept) < fresh.texts._starts.size - 1  # not every group
    assert {int(s) // 16 for s in shown} <= kept


def counting_reads(texts: texts_module.ColumnRows) -> list[int]:
    """The row groups ``texts`` reads from now on, in order (a list that grows)."""
    read: list[int] = []
    original = texts._read

    def counted(group: int, reader: object = None) -> object:
        read.append(group)
        return original(group, reader)

    texts._read = counted  # type: ignore[method-assign]
    return read


def test_read_ahead_keeps_the_groups_of_its_rows_and_the_answers_unchanged(grouped: Index) -> None:
    texts = texts_module.SentenceTexts(grouped.path / "sentences.parquet", "hint")
    want = every_text(grouped)
    rows = [3, 40, 41, 90, grouped.N - 1, grouped.N + 5, -1]  # rows outside are skipped, as no row of them is shown
    texts.read_ahead(rows)
    assert set(texts._kept) == {0, 2, 5, (grouped.N - 1) // 16}
    assert texts._kept_bytes == sum(g.nbytes for g in texts._kept.values())
    read = counting_reads(texts)
    assert [texts[s] for s in rows[:5]] == [want[s] for s in rows[:5]] and read == []  # all kept: none read again
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(texts_module, "READ_AHEAD_MOST", 3)
        texts.read_ahead(range(grouped.N))  # the first 3 groups not kept
    assert read == [1, 3, 4]
    read.clear()
    texts.read_ahead(range(grouped.N))  # every group, on several threads, each reader of its own
    kept_before = {0, 1, 2, 3, 4, 5, (grouped.N - 1) // 16}
    assert read and sorted(read) == sorted(set(range(texts._starts.size - 1)) - kept_before)
    assert [texts[s] for s in range(grouped.N)] == want


def test_a_support_request_reads_its_groups_ahead(grouped: Index) -> None:
    fresh = Index.load(grouped.path)
    read = counting_reads(fresh.texts)
    ahead = fresh.texts.read_ahead
    spans: list[tuple[int, int]] = []

    def read_ahead(rows: object) -> None:
        start = len(read)
        ahead(rows)  # type: ignore[arg-type]
        spans.append((start, len(read)))

    fresh.texts.read_ahead = read_ahead  # type: ignore[method-assign]
    found = support(fresh, "painting war", k=20, top_entities=5, per_entity=2)
    shown = {int(s.sentence) // 16 for e in found.entities for sentences in e.sentences.values() for s in sentences}
    assert shown and len(spans) == 1
    start, end = spans[0]
    assert shown <= set(read[start:end]) and not shown & set(read[end:])  # read ahead, and not again
