"""Static word embeddings from the WordLlama wheel (Miller 2024, MIT): its ``l2_supercat`` 256-dimensional
token embeddings and tokenizer ship inside the wheel, so nothing is ever fetched from a model hub.

WordLlama's own loader looks for the tokenizer in a cache folder and downloads what it does not find
there; it is pointed at the package's own folder with downloads disabled, so a missing file is an error,
never a network request.
"""

from __future__ import annotations

import importlib.util
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from sentret_core.errors import SentretError

PACKAGE = "wordllama"
CONFIG = "l2_supercat"
DIM = 256
NEEDS = "embed.v1 needs WordLlama: pip install wordllama==0.4.0.post1"
_LOCK = threading.Lock()


class Encoder:
    """Word vectors: a word's vector is the sum of its tokens' embeddings (its own tokenisation)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._table = np.asarray(model.embedding, dtype=np.float32)

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    def word_vectors(self, words: list[str]) -> np.ndarray:
        """``(len(words), dim)`` float32: row i is the sum of the embeddings of ``words[i]``'s tokens."""
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        if not words:
            return out
        with _LOCK:  # the tokenizer is shared between threads of an app server
            encoded = self._model.tokenizer.encode_batch(list(words), is_pretokenized=False, add_special_tokens=False)
        # the batch is padded: only the tokens its attention mask keeps are the word's own
        kept = [[i for i, m in zip(e.ids, e.attention_mask) if m] for e in encoded]
        lengths = np.fromiter((len(k) for k in kept), dtype=np.int64, count=len(kept))
        ids = np.fromiter((i for k in kept for i in k), dtype=np.int64, count=int(lengths.sum()))
        rows = np.repeat(np.arange(len(words)), lengths)
        np.add.at(out, rows, self._table[ids])
        return out


@lru_cache(maxsize=1)
def encoder() -> Encoder:
    """The WordLlama encoder, loaded once per process from the installed wheel's own files."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SentretError(NEEDS)
    root = Path(next(iter(spec.submodule_search_locations)))
    from wordllama import WordLlama

    try:
        model = WordLlama.load(config=CONFIG, dim=DIM, cache_dir=root, disable_download=True)
    except (OSError, ValueError) as err:
        raise SentretError(f"embed.v1: WordLlama's files are missing from {root} ({err}); reinstall it") from None
    return Encoder(model)
