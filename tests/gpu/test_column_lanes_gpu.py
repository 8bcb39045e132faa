"""Column reductions with several kept indices a thread (``Schedule.vec``: 8-byte accesses, a
warp-shuffle team combine) against NumPy on the GPU, with aligned and misaligned pointers.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu -q``.
"""

from __future__ import annotations

import ml_dtypes  # noqa: F401  (registers the "bfloat16" dtype name with NumPy)
import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

TOL = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 2e-6}


def _lanes(*outs) -> bool:
    """Whether the plan's column kernels (one at least) all take several kept indices a thread."""
    columns = [k for k in sl.explain(*outs).kernels if k.schedule.family == "column"]
    return bool(columns) and all(k.schedule.vec > 1 for k in columns)


def _data(shape, dtype, seed=0, offset=0, scale=1.0):
    """A random array of ``dtype`` on the GPU (times ``scale``), as a view ``offset`` elements
    into its buffer."""
    import cupy as cp

    rng = np.random.default_rng(seed)
    spread = 0.5 + rng.random(shape[-1])
    x = ((rng.standard_normal(shape) * spread + rng.standard_normal(shape[-1]) * 2) * scale).astype(dtype)
    if dtype == "int32":
        x = rng.integers(-1000, 1000, shape, dtype=np.int32)
    flat = cp.empty(x.size + offset, dtype=x.dtype)
    flat[offset:] = cp.asarray(x.ravel())
    return x, flat[offset:].reshape(shape)


def _close(got, want, dtype):
    got = np.asarray(got, dtype=np.float64)
    err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
    assert err <= TOL[dtype], err


@pytest.mark.parametrize("offset", [0, 1], ids=["aligned", "misaligned"])
@pytest.mark.parametrize("shape", [(8192, 4096), (1000, 96), (777, 36), (777, 38), (5, 12)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_column_normalization(dtype: str, shape: tuple[int, int], offset: int) -> None:
    x, g = _data(shape, dtype, offset=offset)
    a = sl.asarray(g)
    m = a.mean(0)
    outs = [(a - m) / a.std(0), m, a.max(0)]
    assert _lanes(*outs), sl.explain(*outs).summary()
    y, mean, mx = sl.compute(*outs)
    x64 = x.astype(np.float64)
    _close(y.get(), (x64 - x64.mean(0)) / x64.std(0), dtype)
    _close(mean.get(), x64.mean(0), dtype)
    np.testing.assert_array_equal(mx.get(), x.max(0))


@pytest.mark.parametrize("offset", [0, 1], ids=["aligned", "misaligned"])
def test_integer_columns(offset: int) -> None:
    x, g = _data((3000, 4352), "int32", offset=offset)  # (enough tiles: no split; columns too long to cache)
    a = sl.asarray(g)
    outs = [a - a.max(0), a.sum(0), a.min(0)]
    assert _lanes(*outs)
    got = [o.get() for o in sl.compute(*outs)]
    np.testing.assert_array_equal(got[0], x - x.max(0))
    np.testing.assert_array_equal(got[1], x.sum(0))
    np.testing.assert_array_equal(got[2], x.min(0))


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_weights_along_the_kept_axes_and_two_reduced_axes(dtype: str) -> None:
    import cupy as cp

    # a reduced extent past what a register cache holds (32 x 32 rows), enough tiles for no split
    x, g = _data((4000, 8, 560), dtype, seed=3)
    w = np.random.default_rng(4).standard_normal((8, 560)).astype(dtype)
    a, wa = sl.asarray(g), sl.asarray(cp.asarray(w))
    m = a.mean(0)
    outs = [(a - m) * wa + a.var(0), m * 2]
    assert _lanes(*outs), sl.explain(*outs).summary()
    got = [o.get() for o in sl.compute(*outs)]
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    _close(got[0], (x64 - x64.mean(0)) * w64 + x64.var(0), dtype)
    _close(got[1], x64.mean(0) * 2, dtype)
    # two reduced axes: (B, H, C) centred over B and H
    x, g = _data((500, 8, 4352), dtype, seed=5)
    a, x64 = sl.asarray(g), x.astype(np.float64)
    outs = [a - a.mean((0, 1), keepdims=True)]
    assert _lanes(*outs), sl.explain(*outs).summary()
    _close(outs[0].get(), x64 - x64.mean((0, 1), keepdims=True), dtype)


def test_no_rows_to_reduce() -> None:
    import cupy as cp

    a = sl.asarray(cp.zeros((0, 64), np.float32))
    assert _lanes(a.sum(0))
    np.testing.assert_array_equal(a.sum(0).get(), np.zeros(64, np.float32))
    np.testing.assert_array_equal(a.mean(0).get(), np.full(64, np.nan, np.float32))


@pytest.mark.parametrize("offset", [0, 1], ids=["aligned", "misaligned"])
@pytest.mark.parametrize(("shape", "dtype"), [
    ((1 << 20, 64), "float32"), ((262_144, 256), "float16"), ((70_001, 34), "float16"), ((70_001, 36), "bfloat16"),
    ((100_000, 48), "int32"),
])
def test_tall_columns_split_over_blocks(shape: tuple[int, int], dtype: str, offset: int) -> None:
    """column_split with lanes: each tile's rows over G blocks, the last block combines the
    partials; three calls in a row (the tiles' counters are reset for the next)."""
    # (float16 sums of 262 144 values of a hundredth's scale stay below 65 504)
    x, g = _data(shape, dtype, seed=7, offset=offset, scale=1.0 if dtype == "int32" else 0.01)
    a = sl.asarray(g)
    outs = [a.sum(0), a.max(0), a.min(0)]
    assert all(k.schedule.family == "column_split" and k.schedule.vec > 1 for k in sl.explain(*outs).kernels)
    x64 = x.astype(np.float64)
    for _ in range(3):
        got = [o.get() for o in sl.compute(a.sum(0), a.max(0), a.min(0))]
        np.testing.assert_array_equal(got[1], x.max(0))
        np.testing.assert_array_equal(got[2], x.min(0))
        if dtype == "int32":
            np.testing.assert_array_equal(got[0], x.sum(0))
        else:
            # float32 accumulation over a thread's few hundred rows, then the rounding to dtype
            bound = 512 * 2.0**-24 * np.abs(x64).sum(0) + np.spacing(np.abs(x64.sum(0)).astype(dtype)).astype(np.float64)
            assert np.all(np.abs(got[0].astype(np.float64) - x64.sum(0)) <= bound)
