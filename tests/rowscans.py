"""Programs around a scan along the rows (``cumsum``/``cumprod`` stitched into row kernels), for
the host tests (``tests/compiler/test_row_scans_host.py``) and the GPU tests
(``tests/gpu/test_row_scans_gpu.py``): each takes NumPy's or stitchlab's module as ``o``; and the
data and bit comparison of running maxima and minima (there and in the scan kernels' tests)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def softmax(o: Any, x: Any) -> Any:
    e = o.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


#: name -> program of one 2-d array, its outputs
PROGRAMS: dict[str, Callable[[Any, Any], list[Any]]] = {
    "cumsum of softmax": lambda o, x: [o.cumsum(softmax(o, x), axis=1)],
    "cumsum(2x) + x": lambda o, x: [o.cumsum(x * 2, axis=1) + x],
    "sum of a cumsum": lambda o, x: [o.cumsum(x, axis=1).sum(axis=1), o.cumsum(x, axis=1) * 1],
    "cumprod": lambda o, x: [o.cumprod(1 + x * 1e-3, axis=1) - x],
    "two scans": lambda o, x: [o.cumsum(x, axis=1) * o.cumprod(1 + x * 1e-3, axis=1)],
    "cumsum of a cumsum": lambda o, x: [o.cumsum(o.cumsum(x, axis=1) * 0.5, axis=1) + x],
    "int32 cumsum": lambda o, x: [o.cumsum((x * 10).astype(np.int32), axis=1) * 3],
    "3-d": lambda o, x: [o.cumsum(x.reshape(x.shape[0], -1, 8) * 2, axis=2) + 1],
}


def scanning(kernels: Any) -> list[Any]:
    """The kernels (of a plan or ``sl.explain``) that scan: the preamble, which every source has,
    left out."""
    return [k for k in kernels if getattr(k, "source", None) and "sl_row_scan<" in k.source[k.source.find('extern "C"'):]]


def with_special_rows(a: np.ndarray) -> np.ndarray:
    """``a`` (8 rows or more of floats) with rows 1-7 made of special values, in place: the
    maximum rising along the row, and falling; +inf at three places; -inf over the first 46 % and
    the last 45 % (finite between, so tiles or chunks of -inf come first either way); all -inf; one
    NaN; +inf beside -inf. For the online sums of exps (``_group_maxima``)."""
    n = a.shape[1]
    a[1] = np.linspace(-30, 30, n)
    a[2] = np.linspace(30, -30, n)
    a[3, [10, n // 2, n - 1]] = np.inf
    a[4, : int(n * 0.46)] = a[4, int(n * 0.55):] = -np.inf
    a[5] = -np.inf
    a[6, n // 3] = np.nan
    a[7, 100], a[7, 200] = np.inf, -np.inf
    return a


#: dtypes of the running maxima and minima in row kernels' tests: every width and kind, float16's
#: tie rule (the earlier of equal values) and bool
EXTREMA_DTYPES = ["float32", "float64", "bfloat16", "float16", "int64", "int32", "int8", "uint16", "bool"]


def extremes_data(shape: tuple[int, ...], dtype: np.dtype, op: str, rng: np.random.Generator) -> np.ndarray:
    """Values of the worst cases of ``op``, a running maximum (``"cummax"``) or minimum: few
    distinct ones (ties everywhere), and for floats -0.0 beside +0.0, infinities and a few NaNs.
    A maximum runs over values of at most 0 (a minimum at least 0, for signed dtypes), so -0.0
    against +0.0 decides many of its results."""
    a = rng.integers(0, 4, shape) * (-1 if op == "cummax" and np.dtype(dtype).kind not in "ub" else 1)
    a = a.astype(np.float64)
    if np.dtype(dtype).kind in "iub":
        return a.astype(dtype)
    zeros = a == 0
    a[zeros] = np.where(rng.random(int(zeros.sum())) < 0.5, -0.0, 0.0)
    a[rng.random(shape) < 0.01] = -np.inf if op == "cummax" else np.inf
    a[rng.random(shape) < 0.002] = np.inf if op == "cummax" else -np.inf
    a[rng.random(shape) < 0.0005] = np.nan
    return a.astype(dtype)


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """The same dtype and shape, NaNs in the same places and every other value's bits (signed
    zeros)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
        return
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
    bits = f"u{want.itemsize}"
    np.testing.assert_array_equal(got.view(bits)[~nan], want.view(bits)[~nan])
