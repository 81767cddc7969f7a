"""The compiled extensions: BM25's exhaustive sum and top k in one call (docs/performance.md, "BM25 in one
compiled call"), and passes over sorted arrays: searchsorted for ascending targets, BM25F's fields.
Everything else about the package is in pyproject.toml.

Plain C against Python's headers (no numpy headers at build time). Optional: where one cannot be compiled, the
install goes on without it and the numpy path runs. No fused multiply-add (-ffp-contract=off), so its scores
are numpy's bit for bit.
"""

import sys

from setuptools import Extension, setup

FLAGS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]  # MSVC does not contract by default

setup(
    ext_modules=[
        Extension(
            "sentret_core.models.bm25._saturated",
            ["sentret_core/models/bm25/_saturated.c"],
            depends=["sentret_core/models/bm25/_saturated.h"],
            extra_compile_args=FLAGS,
            optional=True,
        ),
        Extension(  # searchsorted for ascending targets (vectors.find_sorted), a term's BM25F fields (postings)
            "sentret_core.models.arrays._sorted",
            ["sentret_core/models/arrays/_sorted.c"],
            extra_compile_args=FLAGS,
            optional=True,
        ),
    ]
)
