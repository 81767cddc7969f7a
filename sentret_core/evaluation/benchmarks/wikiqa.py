"""WikiQA (Yang, Yih & Meek 2015): a TSV split as a sentence-retrieval benchmark.

``QuestionID Question DocumentID DocumentTitle SentenceID Sentence Label`` with a header line.
One document per DocumentID (title = DocumentTitle), its sentences in ``SentenceID``
(``D<n>-<i>``) order, deduplicated across the questions that share the document and kept
exactly as given (:func:`~sentret_core.ingest.corpus.presegmented`; a gap in ``i`` becomes an
empty sentence so that positions and neighbours stay true). One index holds every document of
the split, so collection statistics are over the split's sentences. A topic is a question with
at least one correct sentence; its candidates are the question's own rows (its document's
sentences), labels 0/1.
"""

from __future__ import annotations

import os
from pathlib import Path

from sentret_core.evaluation.benchmarks.base import Benchmark, Log
from sentret_core.evaluation.benchmarks.candidates import CandidateQuestion, CandidateSet, candidate_benchmark
from sentret_core.evaluation.benchmarks.registry import BenchmarkSpec
from sentret_core.ingest.qa_files import WikiQAData, read_wikiqa


def load_wikiqa(
    path: str | os.PathLike[str],
    *,
    cache: str | os.PathLike[str] | None = None,
    n_process: int = 1,
    log: Log | None = None,
) -> Benchmark:
    """The WikiQA benchmark of one TSV split: topics are the questions with a correct sentence."""
    data_path = Path(path)
    return candidate_benchmark("wikiqa", data_path, wikiqa_candidates(read_wikiqa(data_path)), {},
                               cache=cache, n_process=n_process, log=log)


def wikiqa_candidates(parsed: WikiQAData) -> CandidateSet:
    """A WikiQA split in the candidates format: one document per DocumentID, in the file's order."""
    questions = [
        CandidateQuestion(q.id, q.text, tuple((q.document, p, label) for p, label in zip(q.positions, q.labels)))
        for q in parsed.questions
    ]
    return CandidateSet(parsed.documents, questions)


BENCHMARK = BenchmarkSpec("wikiqa", load_wikiqa, data="a WikiQA .tsv split", listed=10)
