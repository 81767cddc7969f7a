"""The elementwise steps of the MiniLM forward pass (:mod:`.encoder`), in place and a cache-sized block at
a time: the residual LayerNorm, the exact GELU, and the mean pooling."""

from __future__ import annotations

import numpy as np

MASKED = np.float32(np.finfo(np.float32).min)  # a padded key's score: exp() of it minus the row max is 0
_SQRT_HALF = np.float32(np.sqrt(0.5))

CHUNK = 32_768  # float32 elements per block (128 KiB): a block and its temporaries stay in a core's L2 cache


def add_norm(
    y: np.ndarray, bias: np.ndarray | None, residual: np.ndarray | None, norm: tuple[np.ndarray, np.ndarray], eps: float
) -> np.ndarray:
    """LayerNorm(y + bias + residual) over the last axis of a 2-d ``y``, in place (biased variance, as torch)."""
    width = y.shape[1]
    rows = max(1, CHUNK // width)
    for a in range(0, y.shape[0], rows):
        block = y[a : a + rows]
        if bias is not None:
            block += bias
        if residual is not None:
            block += residual[a : a + rows]
        block -= block.mean(axis=1, keepdims=True)
        var = np.einsum("ij,ij->i", block, block)
        var /= np.float32(width)
        var += np.float32(eps)
        np.sqrt(var, out=var)
        block /= var[:, None]
        block *= norm[0]
        block += norm[1]
    return y


# ½·erfc(z) ≈ t·exp(−z² + c₀ − ln 2 + t(c₁ + t(c₂ + … + t·c₉))), t = 1/(1 + z/2), z ≥ 0: the Chebyshev fit
# of Press, Teukolsky, Vetterling & Flannery, Numerical Recipes in C (2nd ed., CUP 1992), §6.2 ``erfcc``,
# fractional error below 1.2e-7 everywhere; c₀ carries the ½. In float32 it is closer to the exact GELU than
# x·½(1 + erf(x/√2)) is (that sum cancels for negative x), and four times faster than scipy's erf
# (tests/models/test_minilm_encoder.py measures both against the float64 erf)
_ERFC = tuple(
    np.float32(c)
    for c in (
        -1.26551223 - np.log(2.0), 1.00002368, 0.37409196, 0.09678418, -0.18628806,
        0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
    )
)  # fmt: skip


def gelu(x: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """The exact GELU of ``x + bias``, x·Φ(x) = x·½·erfc(−x/√2), for a 2-d ``x``, in place. With
    q = ½·erfc(|x|/√2), x·Φ(x) is x·q for x ≤ 0 and x − x·q for x > 0: max(x, 0) − |x·q| (a masked
    step would cost ten times an arithmetic pass)."""
    rows = max(1, CHUNK // x.shape[1])
    z, t, q = (np.empty((rows, x.shape[1]), dtype=np.float32) for _ in range(3))
    for a in range(0, x.shape[0], rows):
        block = x[a : a + rows]
        zb, tb, qb = z[: len(block)], t[: len(block)], q[: len(block)]
        if bias is not None:
            block += bias
        np.multiply(block, _SQRT_HALF, out=zb)
        np.abs(zb, out=zb)
        np.add(zb, np.float32(2.0), out=tb)
        np.divide(np.float32(2.0), tb, out=tb)  # t = 1/(1 + z/2)
        np.multiply(tb, _ERFC[9], out=qb)
        for c in _ERFC[8:0:-1]:
            qb += c
            qb *= tb
        qb += _ERFC[0]
        np.multiply(zb, zb, out=zb)
        qb -= zb
        np.exp(qb, out=qb)
        qb *= tb  # q = ½·erfc(|x|/√2)
        qb *= block
        np.abs(qb, out=qb)  # |x·q|
        np.maximum(block, np.float32(0.0), out=block)
        block -= qb
    return x


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The mean over the mask of each row's token states, L2-normalised (eps as torch's ``F.normalize``)."""
    weights = mask.astype(np.float32)
    pooled = np.einsum("bl,bld->bd", weights, hidden)
    pooled /= np.maximum(weights.sum(axis=1, keepdims=True), np.float32(1e-9))
    pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
    return pooled
