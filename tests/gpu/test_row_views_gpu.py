"""Rows of an evaluated array are views of its device buffer (``build._buffer_view``): kernels of
every kind read them at the row's address, aligned or not (rows of 148 and 260 bytes put most
views off a 16-byte boundary, rows of 16 KB keep them on it), with NumPy's values, and a loop over
rows or batches compiles its kernels once.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_row_views_gpu.py -q``.
"""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

SHAPES = [((40, 37), "float32"), ((24, 4096), "float32"), ((33, 130), "float16"), ((12, 5, 7), "float64")]


def _data(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)


def _close(got: sl.LazyArray, want: np.ndarray, dtype: str, terms: int = 1) -> None:
    """Within a few roundings of ``dtype`` of NumPy's float64 result (``terms``: values summed
    into each, whose roundings add up as their square root)."""
    rtol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}[dtype] * np.sqrt(terms)
    np.testing.assert_allclose(got.get().astype(np.float64), want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize(("shape", "dtype"), SHAPES, ids=lambda v: str(v))
def test_kernels_of_every_kind_read_views_at_any_address(shape: tuple[int, ...], dtype: str) -> None:
    import cupy as cp

    a = _data(shape, dtype)
    x = sl.asarray(cp.asarray(a))
    w = a.astype(np.float64)
    for i in (0, 1, 3, shape[0] - 1):
        row, batch = x[i], x[i:i + 5]
        assert row._node.op == batch._node.op == "input"
        assert row._node.value.data.ptr == x._node.value.data.ptr + i * row.nbytes
        _close(sl.exp(row) * 2 + 1, np.exp(w[i]) * 2 + 1, dtype)  # pointwise
        _close(row.sum(), w[i].sum(), dtype)  # a whole reduction
        _close(sl.cumsum(row, axis=-1), np.cumsum(w[i], axis=-1), dtype, shape[-1])  # a scan
        e = sl.exp(batch - batch.max(axis=-1, keepdims=True))
        we = np.exp(w[i:i + 5] - w[i:i + 5].max(axis=-1, keepdims=True))
        _close(e / e.sum(axis=-1, keepdims=True), we / we.sum(axis=-1, keepdims=True), dtype)  # rows stitched
        _close(batch.mean(axis=0), w[i:i + 5].mean(axis=0), dtype)  # columns
        _close(batch - row, w[i:i + 5] - w[i], dtype)  # two views of one buffer
        np.testing.assert_array_equal(batch.argmax(axis=-1).get(), a[i:i + 5].argmax(axis=-1))
        np.testing.assert_array_equal(sl.sort(row, axis=-1).get(), np.sort(a[i], axis=-1))
        np.testing.assert_array_equal(row.get(), a[i])
        elem = x[(i,) + (1,) * (len(shape) - 1)]  # a 0-d view
        _close(row * elem, w[i] * w[(i,) + (1,) * (len(shape) - 1)], dtype)


def test_a_loop_over_rows_compiles_once() -> None:
    import cupy as cp

    a = _data((64, 1000), "float32")
    x = sl.asarray(cp.asarray(a))
    got = [float(sl.exp(x[i] * 0.5).sum()) for i in range(2)]
    before = sl.stats()
    got += [float(sl.exp(x[i] * 0.5).sum()) for i in range(2, 64)]
    after = sl.stats()
    assert after["nvrtc_compiles"] == before["nvrtc_compiles"] and after["plans"] == before["plans"]
    np.testing.assert_allclose(got, np.exp(a.astype(np.float64) * 0.5).sum(axis=1), rtol=1e-5)
