"""minilm.v1's sentence vectors encoded on a pool of Ray actors: the local encoding's vectors, resumable."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from sentret_core.cli.main import main
from sentret_core.errors import SentretError
from sentret_core.index import artefacts
from sentret_core.models.minilm.encoder import encoder
from sentret_core.models.training import ray_encoding, sentence_vectors
from sentret_core.models.training.sentence_vectors import KIND, RayOptions, train_minilm
from tests.conftest import build_from_texts

pytest.importorskip("ray", reason="Ray is the optional `scale` extra (pip install -e '.[scale]'); CI installs it")

DOCS = [{"id": f"d{i}", "title": "T", "text": f"Sentence number {i} is about topic {i % 3}. It has {i} words more."}
        for i in range(9)]


class Interrupted(Exception):
    """Stands for Ctrl-C or a killed process."""


def test_ray_encodes_the_local_vectors_and_goes_on_from_a_local_run_that_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    index = build_from_texts(tmp_path, DOCS)
    assert index.N == 18
    monkeypatch.setattr(sentence_vectors, "CHUNK", 4)  # 5 chunks, sent to the actors in turn
    local = train_minilm(index, "local").arrays["vectors"]

    def stop_after_two(done: int, total: int) -> None:
        if done >= 8:
            raise Interrupted
    with pytest.raises(Interrupted):
        train_minilm(index, progress=stop_after_two)  # chunks 0 and 4 kept
    seen: list[int] = []
    real = ray_encoding.encode_on_ray

    def counted(jobs, **kw):  # type: ignore[no-untyped-def]
        kept = list(jobs)
        seen.extend(start for start, _ in kept)
        return real(kept, **kw)

    monkeypatch.setattr(ray_encoding, "encode_on_ray", counted)
    made = train_minilm(index, ray=RayOptions(num_workers=2))
    assert seen == [8, 12, 16]  # only the chunks the stopped run had not kept went to Ray
    # An actor's BLAS runs on its one CPU, the driver's on all of them: another summation order may move a
    # float16 by one step, so Ray's vectors (and a whole-batch encoding's) are the local ones within one step.
    assert np.allclose(made.arrays["vectors"], local, rtol=2**-10, atol=2**-14)
    assert np.array_equal(made.arrays["vectors"][:8], local[:8])  # the kept chunks, as the stopped run wrote them
    whole = encoder().encode(list(index.texts)).astype(np.float16)
    assert np.allclose(made.arrays["vectors"], whole, rtol=2**-10, atol=2**-14)
    assert not (Path(index.path) / artefacts.FOLDER / ".minilm.partial").exists()

    monkeypatch.undo()
    shutil.rmtree(Path(index.path) / artefacts.FOLDER / "minilm")
    assert main(["train", "minilm", str(index.path), "--engine", "ray", "--num-workers", "2"]) == 0
    assert "18 sentences" in capsys.readouterr().out
    assert np.allclose(artefacts.read(index, KIND, "minilm").arrays["vectors"], local, rtol=2**-10, atol=2**-14)


def test_ray_options_belong_to_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = build_from_texts(tmp_path, DOCS[:1])
    assert main(["train", "minilm", str(index.path), "--num-workers", "2"]) == 2
    assert "--address and --num-workers are for --engine ray" in capsys.readouterr().err
    assert main(["train", "minilm", str(index.path), "--engine", "ray", "--num-workers", "0"]) == 2
    assert "--num-workers must be at least 1 (got 0)" in capsys.readouterr().err
    with pytest.raises(SentretError, match="other MiniLM weights"):
        ray_encoding.encode_on_ray([(0, ["a"])], weights="0" * 64, batch_size=8, address=None, num_workers=1,
                                   done=lambda start, vectors: None)
