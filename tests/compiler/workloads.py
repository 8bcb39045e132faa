"""The workloads the compiler promises kernel counts for, shared by the CPU and GPU tests.

Each builder takes concrete arrays (NumPy or CuPy) and returns the lazy results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import stitchlab as sl


def softmax(x: Any) -> list[Any]:
    x = sl.asarray(x)
    e = sl.exp(x - x.max(axis=-1, keepdims=True))
    return [e / e.sum(axis=-1, keepdims=True)]


def _ln(h: Any, w: Any, b: Any, eps: float = 1e-5) -> Any:
    m = h.mean(axis=-1, keepdims=True)
    v = h.var(axis=-1, keepdims=True)
    return (h - m) / sl.sqrt(v + eps) * w + b


def layernorm(x: Any, w: Any, b: Any) -> list[Any]:
    return [_ln(sl.asarray(x), sl.asarray(w), sl.asarray(b))]


def rmsnorm(x: Any, w: Any) -> list[Any]:
    x = sl.asarray(x)
    return [x * sl.rsqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * sl.asarray(w)]


def bias_gelu(x: Any, b: Any) -> list[Any]:
    y = sl.asarray(x) + sl.asarray(b)
    return [0.5 * y * (1 + sl.tanh(0.7978845608028654 * (y + 0.044715 * y * y * y)))]


def add_layernorm(x: Any, r: Any, w: Any, b: Any) -> list[Any]:
    h = sl.asarray(x) + sl.asarray(r)
    return [h, _ln(h, sl.asarray(w), sl.asarray(b))]


def logsumexp_rows(x: Any) -> list[Any]:
    return [sl.logsumexp(sl.asarray(x), axis=1)]


def adam(p: Any, g: Any, m: Any, v: Any, lr: float = 1e-3, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8, t: int = 3) -> list[Any]:
    p, g, m, v = (sl.asarray(a) for a in (p, g, m, v))
    m2 = b1 * m + (1 - b1) * g
    v2 = b2 * v + (1 - b2) * g * g
    mhat = m2 / (1 - b1**t)
    vhat = v2 / (1 - b2**t)
    return [p - lr * mhat / (sl.sqrt(vhat) + eps), m2, v2]


def column_norm(x: Any) -> list[Any]:
    x = sl.asarray(x)
    return [(x - x.mean(0)) / x.std(0)]


def groupnorm(x: Any, w: Any, b: Any, eps: float = 1e-5) -> list[Any]:
    """GroupNorm of channels-last activations: x (rows, C) is (B, HW, C) with HW = 256 positions
    where the rows allow (the benchmark's geometry, ``benchmarks/workloads.groupnorm_shape``);
    statistics over (HW, C/G) of (B, HW, G, C/G); per-channel affine."""
    x = sl.asarray(x)
    rows, cols = x.shape
    spatial = 256 if rows >= 512 else 32
    while rows % spatial:
        spatial //= 2
    batch = rows // spatial if rows else 1
    groups = 32 if cols % 32 == 0 and cols >= 1024 else (4 if cols % 4 == 0 else 1)
    x4 = x.reshape(batch, rows // batch, groups, cols // groups)
    d = x4 - x4.mean(axis=(1, 3), keepdims=True)
    y = d * sl.rsqrt((d * d).mean(axis=(1, 3), keepdims=True) + eps)
    return [y.reshape(rows, cols) * sl.asarray(w) + sl.asarray(b)]


def elementwise_chain(x: Any, y: Any) -> list[Any]:
    x, y = sl.asarray(x), sl.asarray(y)
    return [sl.maximum(sl.sin(x) * 2.0 + y, sl.cos(y) - 0.5) / (1 + sl.exp(-x))]


#: name -> (builder, kernel count promised (at most), argument kinds: "m" matrix, "v" row vector)
WORKLOADS: dict[str, tuple[Callable[..., list[Any]], int, str]] = {
    "softmax": (softmax, 1, "m"),
    "layernorm": (layernorm, 1, "mvv"),
    "rmsnorm": (rmsnorm, 1, "mv"),
    "bias_gelu": (bias_gelu, 1, "mv"),
    "add_layernorm": (add_layernorm, 1, "mmvv"),
    "logsumexp": (logsumexp_rows, 1, "m"),
    "adam": (adam, 1, "mmmm"),
    "column_norm": (column_norm, 2, "m"),
    "groupnorm": (groupnorm, 1, "mvv"),
    "elementwise_chain": (elementwise_chain, 1, "mm"),
}


def make_args(kinds: str, rows: int, cols: int, dtype: Any = np.float32, seed: int = 0, xp: Any = np) -> list[Any]:
    """Random arguments for a workload (positive where a workload takes a square root)."""
    if str(dtype) == "bfloat16":
        import ml_dtypes  # noqa: F401  (NumPy's "bfloat16", whatever the tests run before)
    rng = np.random.default_rng(seed)
    out = []
    for k in kinds:
        shape = (rows, cols) if k == "m" else (cols,)
        a = (rng.standard_normal(shape) * 2).astype(dtype)
        out.append(xp.asarray(a))
    return out
