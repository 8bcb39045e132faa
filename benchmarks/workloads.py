"""The benchmark workloads: memory-bound patterns from real models, written once.

Each workload body is written once against a small "ops" adapter (:mod:`benchmarks.ops`), so
stitchlab, NumPy, CuPy (eager and ``cupy.fuse``) and torch (eager and ``torch.compile``) all run
the same expression; the float64 NumPy reference is the same body over float64 copies of the
inputs. ``make_case`` draws random inputs (never zeros) for one shape and dtype.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Named problem sizes (rows, columns). "tiny" is for the CPU dry run only.
SIZES: dict[str, tuple[int, int]] = {
    "large": (8192, 4096),
    "small": (64, 512),
    "tiny": (16, 64),
}


GELU_C = math.sqrt(2.0 / math.pi)


@dataclass
class Case:
    """One workload at one shape and dtype: host inputs, static parameters, output count."""

    workload: str
    shape: tuple[int, int]
    dtype: np.dtype
    inputs: list[np.ndarray]
    names: list[str]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def input_bytes(self) -> int:
        return sum(a.nbytes for a in self.inputs)


@dataclass(frozen=True)
class Workload:
    """A benchmark workload: inputs, the body, and a short description for the tables."""

    name: str
    description: str
    make: Callable[[np.random.Generator, tuple[int, int], np.dtype], Case]
    body: Callable[..., tuple[Any, ...]]
    n_outputs: int

    def run(self, ops: Any, case: Case, arrays: list[Any]) -> tuple[Any, ...]:
        return self.body(ops, *arrays, **case.params)

    def reference(self, case: Case) -> list[np.ndarray]:
        """The float64 NumPy reference (integer inputs stay integers)."""
        from .ops import NUMPY

        up = [a.astype(np.float64) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else a for a in case.inputs]
        return [np.asarray(o, dtype=np.float64) for o in self.body(NUMPY, *up, **case.params)]


# --- input helpers ---------------------------------------------------------------------------------
def _normal(rng: np.random.Generator, shape: Any, dtype: np.dtype, scale: float = 1.0, loc: float = 0.0) -> np.ndarray:
    out = rng.standard_normal(shape, dtype=np.float32)
    if scale != 1.0:
        out *= scale
    if loc != 0.0:
        out += loc
    return out.astype(dtype, copy=False)


def _case(name: str, shape: tuple[int, int], dtype: np.dtype, **arrays: np.ndarray) -> Case:
    return Case(name, shape, np.dtype(dtype), list(arrays.values()), list(arrays))


# --- bodies ------------------------------------------------------------------------------------------
def softmax(o: Any, x: Any) -> tuple[Any]:
    e = o.exp(x - o.max(x, -1, True))
    return (e / o.sum(e, -1, True),)


def _layernorm(o: Any, x: Any, g: Any, b: Any, eps: float = 1e-5) -> Any:
    mu = o.mean(x, -1, True)
    d = x - mu
    return d * o.rsqrt(o.mean(d * d, -1, True) + eps) * g + b


def layernorm(o: Any, x: Any, g: Any, b: Any) -> tuple[Any]:
    return (_layernorm(o, x, g, b),)


def rmsnorm(o: Any, x: Any, g: Any) -> tuple[Any]:
    return (x * o.rsqrt(o.mean(x * x, -1, True) + 1e-6) * g,)


def bias_gelu(o: Any, x: Any, b: Any) -> tuple[Any]:
    y = x + b
    return (0.5 * y * (1.0 + o.tanh(GELU_C * (y + 0.044715 * (y * y * y)))),)


def add_layernorm(o: Any, x: Any, r: Any, g: Any, b: Any) -> tuple[Any, Any]:
    h = x + r
    return h, _layernorm(o, h, g, b)


def colnorm(o: Any, x: Any) -> tuple[Any]:
    return ((x - o.mean(x, 0, False)) / o.std(x, 0, False),)


def adam(o: Any, p: Any, g: Any, m: Any, v: Any, lr: float, b1: float, b2: float, eps: float, step: int) -> tuple[Any, Any, Any]:
    m2 = b1 * m + (1.0 - b1) * g
    v2 = b2 * v + (1.0 - b2) * (g * g)
    c1 = 1.0 / (1.0 - b1 ** step)
    c2 = 1.0 / (1.0 - b2 ** step)
    return p - lr * (m2 * c1) / (o.sqrt(v2 * c2) + eps), m2, v2


def logsumexp(o: Any, x: Any) -> tuple[Any]:
    m = o.max(x, -1, True)
    return (o.log(o.sum(o.exp(x - m), -1, True)) + m,)


def cross_entropy(o: Any, x: Any, t: Any) -> tuple[Any]:
    """Per-row loss ``logsumexp(x) - x[i, t_i]``; the pick is a one-hot mask, one body for every
    library compared (stitchlab reads the masked sum as the one element it picks)."""
    rows, cols = x.shape
    m = o.max(x, -1, True)
    lse = o.log(o.sum(o.exp(x - m), -1, True)) + m
    onehot = o.reshape(t, (rows, 1)) == o.arange(cols, t)
    return (lse - o.sum(o.where(onehot, x, 0.0), -1, True),)


def silu_gate(o: Any, a: Any, b: Any) -> tuple[Any]:
    return (a * o.sigmoid(a) * b,)


def groupnorm(o: Any, x: Any, g: Any, b: Any, groups: int) -> tuple[Any]:
    """GroupNorm over channels-last activations (B, H*W, C): reduce over axes (1, 3) of (B, HW, G, C/G)."""
    batch, spatial, channels = x.shape
    x4 = o.reshape(x, (batch, spatial, groups, channels // groups))
    d = x4 - o.mean(x4, (1, 3), True)
    y = d * o.rsqrt(o.mean(d * d, (1, 3), True) + 1e-5)
    return (o.reshape(y, (batch, spatial, channels)) * g + b,)


def l2norm(o: Any, x: Any) -> tuple[Any]:
    return (x / o.maximum(o.sqrt(o.sum(x * x, -1, True)), 1e-12),)


# --- inputs --------------------------------------------------------------------------------------
def _rows(name: str) -> Callable[[np.random.Generator, tuple[int, int], np.dtype], Case]:
    def make(rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype) -> Case:
        return _case(name, shape, dtype, x=_normal(rng, shape, dtype, 2.0))

    return make


def _make_affine(name: str, residual: bool = False) -> Callable[..., Case]:
    def make(rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype) -> Case:
        cols = shape[1]
        arrays = {"x": _normal(rng, shape, dtype, 1.5, 0.3)}
        if residual:
            arrays["r"] = _normal(rng, shape, dtype)
        arrays["g"] = _normal(rng, (cols,), dtype, 0.1, 1.0)
        arrays["b"] = _normal(rng, (cols,), dtype, 0.1)
        return _case(name, shape, dtype, **arrays)

    return make


def _make_rmsnorm(rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype) -> Case:
    return _case("rmsnorm", shape, dtype, x=_normal(rng, shape, dtype), g=_normal(rng, (shape[1],), dtype, 0.1, 1.0))


def _make_bias_gelu(rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype) -> Case:
    return _case("bias_gelu", shape, dtype, x=_normal(rng, shape, dtype, 1.5), b=_normal(rng, (shape[1],), dtype, 0.2))


def _make_colnorm(rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype) -> Case:
    cols = shape[1]
    scale = (0.5 + rng.random(cols)).astype(np.float32)
    loc = rng.standard_normal(cols).astype(np.float32)
    x = rng.standard_normal(shape, dtype=np.float32) * scale + loc
    return _case("colnorm", shape, dtype, x=x.astype(dtype, copy=False))


def _make_adam(rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype) -> Case:
    n = shape[0] * shape[1]  # 8192*4096 = 33.5M parameters at the large size
    case = _case(
        "adam", shape, dtype,
        p=_normal(rng, n, dtype),
        g=_normal(rng, n, dtype, 0.1),
        m=_normal(rng, n, dtype, 0.01),
        v=(1e-3 + 1e-2 * rng.random(n, dtype=np.float32)).astype(dtype),
    )
    case.params = {"lr": 1e-3, "b1": 0.9, "b2": 0.999, "eps": 1e-8, "step": 10}
    return case


def _make_cross_entropy(rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype) -> Case:
    t = rng.integers(0, shape[1], size=shape[0], dtype=np.int32)
    return _case("cross_entropy", shape, dtype, x=_normal(rng, shape, dtype, 2.0), t=t)


def _make_silu(rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype) -> Case:
    return _case("silu_gate", shape, dtype, a=_normal(rng, shape, dtype, 2.0), b=_normal(rng, shape, dtype))


def groupnorm_shape(shape: tuple[int, int]) -> tuple[int, int, int, int]:
    """(batch, spatial, channels, groups) with batch*spatial == rows, channels == columns.

    The spatial extent depends only on the size class (256 positions from 512 rows on, else 32),
    so doubling the rows doubles the batch, as a new batch size does in a real model."""
    rows, cols = shape
    spatial = 256 if rows >= 512 else 32
    while rows % spatial:
        spatial //= 2
    groups = 32 if cols >= 1024 else max(2, cols // 32)
    return rows // spatial, spatial, cols, groups


def _make_groupnorm(rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype) -> Case:
    batch, spatial, channels, groups = groupnorm_shape(shape)
    case = _case(
        "groupnorm", shape, dtype,
        x=_normal(rng, (batch, spatial, channels), dtype, 1.5, 0.5),
        g=_normal(rng, (channels,), dtype, 0.1, 1.0),
        b=_normal(rng, (channels,), dtype, 0.1),
    )
    case.params = {"groups": groups}
    return case


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload("softmax", "softmax over rows", _rows("softmax"), softmax, 1),
        Workload("layernorm", "layernorm with affine (gamma, beta)", _make_affine("layernorm"), layernorm, 1),
        Workload("rmsnorm", "rmsnorm with gain", _make_rmsnorm, rmsnorm, 1),
        Workload("bias_gelu", "bias + tanh-GELU", _make_bias_gelu, bias_gelu, 1),
        Workload("add_layernorm", "residual add + layernorm, two outputs (sum, normed)",
                 _make_affine("add_layernorm", residual=True), add_layernorm, 2),
        Workload("colnorm", "column normalization (x - x.mean(0)) / x.std(0)", _make_colnorm, colnorm, 1),
        Workload("adam", "Adam step, rows*cols parameters (4 inputs, 3 outputs)", _make_adam, adam, 3),
        Workload("logsumexp", "logsumexp over rows", _rows("logsumexp"), logsumexp, 1),
        Workload("cross_entropy", "cross-entropy per row from logits + int32 targets (one-hot mask)",
                 _make_cross_entropy, cross_entropy, 1),
        Workload("silu_gate", "SiLU-gated product a * sigmoid(a) * b", _make_silu, silu_gate, 1),
        Workload("groupnorm", "GroupNorm, channels-last (B, HW, C), reduce over axes (1, 3) of (B, HW, G, C/G)",
                 _make_groupnorm, groupnorm, 1),
        Workload("l2norm", "L2 normalization of rows", _rows("l2norm"), l2norm, 1),
    ]
}


def output_bytes(case: Case, workload: Workload, ref: list[np.ndarray]) -> int:
    """Bytes the outputs occupy at the case's dtype (every output is floating here)."""
    return sum(r.size * case.dtype.itemsize for r in ref)


def min_bytes(case: Case, workload: Workload, ref: list[np.ndarray]) -> int:
    """Fewest bytes any implementation must move: each input read once, each output written once."""
    return case.input_bytes + output_bytes(case, workload, ref)
