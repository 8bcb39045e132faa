"""Integer min/max of negated values, on the GPU at hand, against NumPy.

ptxas before CUDA 13.4 can merge integer min/max instructions into one three-input VIMNMX3 and
drop a negated operand (``max(-a, -b, -c)`` ran as ``max(-a, b, -c)``): on the H200 with NVRTC
13.0, ``(x * -1).max(axis=1)`` of int32 and int16 rows gave wrong values (the random-program
checker's reductions family found it). Kernels that compare integers of 32 bits or fewer then
compile without ptxas optimization (``stitchlab.runtime.kernels.ptxas_options``). Every reduction
schedule (rows held by a warp or a block, streamed rows, split rows, columns, split columns),
arg reductions, and elementwise maximum/minimum/absolute/where chains.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_integer_minmax_gpu.py -q``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

SHAPES = [((1, 8), 1), ((3, 16), 1), ((1, 128), 1), ((4, 1000), 1), ((300, 4096), 1), ((8, 400_000), 1),
          ((1000, 300), 0), ((200_000, 64), 0), ((513, 517), None)]

#: (lazy or numpy module, array) -> result; the same expression for both
EXPRESSIONS: dict[str, Callable[[Any, Any, int | None], Any]] = {
    "max(x * -1)": lambda m, x, ax: (x * -1).max(axis=ax),
    "min(x * -1)": lambda m, x, ax: (x * -1).min(axis=ax),
    "max(0 - x)": lambda m, x, ax: (0 - x).max(axis=ax),
    "max(x * -2)": lambda m, x, ax: (x * -2).max(axis=ax),
    "ptp(x * -1)": lambda m, x, ax: m.ptp(x * -1, axis=ax),
    "argmax(x * -1)": lambda m, x, ax: (x * -1).argmax(axis=ax),
    "argmin(-x)": lambda m, x, ax: (-x).argmin(axis=ax),
    "max(maximum(-x, -2x))": lambda m, x, ax: m.maximum(-x, x * -2).max(axis=ax),
    "max(abs(x) * -1)": lambda m, x, ax: (abs(x) * -1).max(axis=ax),
    "min(where(x > 0, -x, x))": lambda m, x, ax: m.where(x > 0, -x, x).min(axis=ax),
}


def _data(shape: tuple[int, int], dtype: str) -> np.ndarray:
    rng = np.random.default_rng(shape[0] * 31 + shape[1])
    return rng.integers(-50, 50, shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["int32", "int16", "int8"])
@pytest.mark.parametrize(("shape", "axis"), SHAPES)
def test_integer_min_max_of_negated_values(shape: tuple[int, int], axis: int | None, dtype: str) -> None:
    import cupy as cp

    h = _data(shape, dtype)
    x = sl.asarray(cp.asarray(h))
    names = list(EXPRESSIONS)
    got = sl.compute(*[EXPRESSIONS[n](sl, x, axis) for n in names])
    wrong = []
    for name, g in zip(names, got, strict=True):
        want = EXPRESSIONS[name](np, h, axis)
        g = cp.asnumpy(g)
        if g.dtype != want.dtype or not np.array_equal(g, want):
            wrong.append(f"{name}: {g.dtype} {g.ravel()[:4]} vs NumPy {want.dtype} {np.asarray(want).ravel()[:4]}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("dtype", ["int32", "int16"])
def test_elementwise_chains_of_negated_integers(dtype: str) -> None:
    """maximum/minimum chains of three negated operands (clip-like code, no reduction)."""
    import cupy as cp

    rng = np.random.default_rng(5)
    a, b, c = (rng.integers(-1000, 1000, (257, 1031)).astype(dtype) for _ in range(3))
    la, lb, lc = (sl.asarray(cp.asarray(v)) for v in (a, b, c))
    got = sl.compute(sl.maximum(sl.maximum(-la, -lb), -lc), sl.minimum(sl.minimum(0 - la, lb * -1), -lc),
                     sl.clip(-la, -lb, 0))
    want = [np.maximum(np.maximum(-a, -b), -c), np.minimum(np.minimum(0 - a, b * -1), -c), np.clip(-a, -b, 0)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(cp.asnumpy(g), w)


@pytest.mark.parametrize("n", [1031, 4096 + 7, 1 << 20])
def test_int8_division_shift_and_sign_in_vector_loops(n: int) -> None:
    """int8 ``floor_divide`` by powers of two, ``right_shift`` and ``sign``, each a kernel of its
    own (the 16-element int8 vector loop): NVVM's PTX shifted a neighbouring byte's bit into the
    sign (``floor_divide(x, 2)`` gave 126 for -3, wide fuzz seed 3500191, with ptxas -O0 too);
    each byte of a vector load now reaches the arithmetic through an opaque int (``sl_load``)."""
    import cupy as cp

    h = np.random.default_rng(n).integers(-128, 128, n).astype(np.int8)  # (aligned: the vector loop runs)
    x = sl.asarray(cp.asarray(h))
    cases = {f"floor_divide(x, {c})": (lambda m, v, c=c: m.floor_divide(v, c)) for c in (2, 4, 16, -2, 3)}
    cases |= {f"x >> {c}": (lambda m, v, c=c: v >> c) for c in (1, 3)}
    cases["sign(x)"] = lambda m, v: m.sign(v)
    cases["remainder(x, 4)"] = lambda m, v: m.remainder(v, 4)
    wrong = []
    for name, f in cases.items():
        got, want = f(sl, x).get(), f(np, h)
        if got.dtype != want.dtype or not np.array_equal(got, want):
            bad = np.flatnonzero(got != want)
            wrong.append(f"{name}: {bad.size} of {n} differ, first at {bad[:1]}: {got[bad[:1]]} vs NumPy {want[bad[:1]]}")
    assert not wrong, "\n".join(wrong)
