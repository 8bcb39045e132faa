"""Shapes that depend on the values (``stitchlab/frontend/selection.py``) on the GPU: masks computed
on the device (``x[x > 0]``, a CuPy mask), ``nonzero``, ``flatnonzero``, ``argwhere``, ``extract``,
``compress`` and ``unique`` give NumPy's results, stay on the device, and raise a clear error
under CUDA-graph capture.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_selection_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

RNG = np.random.default_rng(91)


def _dev(a: np.ndarray) -> Any:
    import cupy as cp

    return sl.asarray(cp.asarray(a))


def _check(got: Any, want: np.ndarray, bits: bool = True) -> None:
    """``got`` is a device array with NumPy's dtype, shape and values: bit for bit (positions and
    moved values), or with ``bits=False`` as values (-0.0 equals 0.0, NaN equals NaN)."""
    import cupy as cp

    assert isinstance(got, sl.LazyArray) and got.device.startswith("cuda"), (type(got), getattr(got, "device", None))
    g = np.ascontiguousarray(cp.asnumpy(cp.asarray(got)))
    w = np.ascontiguousarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    if bits:
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))
    else:
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_device_masks_select_as_numpy(dtype: str) -> None:
    import cupy as cp

    dt = as_dtype(dtype)
    a = (RNG.standard_normal((513, 300)) * 4).astype(dt)
    af = a.astype(np.float32)
    x = _dev(a)
    _check(x[x > 0], a[af > 0])
    _check(x[x[:, 7] < 0], a[af[:, 7] < 0])
    _check(x[cp.asarray(af > 1)], a[af > 1])  # a CuPy mask
    _check(x[x > 1e6], a[af > 1e6])  # nothing selected
    y = x * 2  # a lazy source: computed once, with its mask
    _check(y[y > 0], (a * 2)[af > 0] if dtype != "bfloat16" else (af * 2).astype(dt)[af > 0])


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "bool"])
def test_positions_are_numpys(dtype: str) -> None:
    dt = as_dtype(dtype)
    a = (RNG.standard_normal((40, 33, 9)) > 0.7).astype(dt) if dtype == "bool" else np.where(RNG.random((40, 33, 9)) < 0.8, 0, RNG.standard_normal((40, 33, 9)) * 3 + 1).astype(dt)
    x = _dev(a)
    for g, w in zip(sl.nonzero(x), np.nonzero(a), strict=True):
        _check(g, w)
    _check(sl.flatnonzero(x), np.flatnonzero(a))
    _check(sl.argwhere(x), np.argwhere(a))
    for g, w in zip(np.where(x), np.where(a), strict=True):  # one-argument where: nonzero
        _check(g, w)


def test_extract_and_compress_are_numpys() -> None:
    a = RNG.standard_normal((257, 129)).astype(np.float32)
    x = _dev(a)
    cond = RNG.random(129) > 0.5
    _check(sl.compress(cond, x, axis=1), np.compress(cond, a, axis=1))
    _check(sl.compress(_dev(cond[:50]), x, axis=0), np.compress(cond[:50], a, axis=0))
    _check(sl.extract(x > 0.5, x), np.extract(a > 0.5, a))
    with pytest.raises(IndexError, match="index 129 is out of bounds for axis 1 with size 129"):
        sl.compress(np.r_[cond, True], x, axis=1)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_unique_is_numpys(dtype: str) -> None:
    import cupy as cp

    dt = as_dtype(dtype)
    a = np.round(RNG.standard_normal((300, 40)) * 3).astype(dt)
    got = sl.unique(_dev(a), return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want, strict=True):
        _check(g, w)
    # (+ 0.0: no -0.0, which equals 0.0; which of the two a row keeps differs between NumPy's row
    # sort and CuPy's, found on the H200)
    rows = (np.round(RNG.standard_normal((200, 3))) + 0.0).astype(np.float32)
    for g, w in zip(sl.unique(_dev(rows), return_inverse=True, axis=0), np.unique(rows, return_inverse=True, axis=0), strict=True):
        _check(g, w)
    nans = np.array([np.nan, 1.0, np.nan, 1.0], np.float32)
    _check(sl.unique(_dev(nans), equal_nan=False), np.unique(nans, equal_nan=False))
    # NaNs with the sign bit set: CuPy's radix sort would put them first (nans_sort_last). Their
    # values, not their bits: which NaN NumPy keeps depends on its sort, and stitchlab's are positive
    signed = np.array([-np.nan, 2.0, np.nan, -np.nan, -1.0], np.float32)
    for equal_nan in (True, False):
        got = cp.asnumpy(cp.asarray(sl.unique(_dev(signed), equal_nan=equal_nan)))
        np.testing.assert_array_equal(got, np.unique(signed, equal_nan=equal_nan))
        assert not np.signbit(got[np.isnan(got)]).any()


def test_capture_raises_a_clear_error() -> None:
    import cupy as cp

    x = _dev(RNG.standard_normal((64, 64)).astype(np.float32))
    (x > 0).get()  # anything to compile, outside the capture
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            with pytest.raises(RuntimeError, match="cannot run under a CUDA-graph capture"):
                x[x > 0]
        finally:
            stream.end_capture()


def test_bincount_and_histogram_are_numpys() -> None:
    rng = np.random.default_rng(21)
    x = rng.integers(0, 300, 100_000)
    w = rng.random(100_000)
    got = sl.bincount(_dev(x) * 1)  # the work before it is lazy and evaluated first
    np.testing.assert_array_equal(got.get(), np.bincount(x))
    np.testing.assert_allclose(sl.bincount(_dev(x), weights=_dev(w), minlength=400).get(),
                               np.bincount(x, weights=w, minlength=400), rtol=1e-12)
    with pytest.raises(ValueError, match="negative"):
        sl.bincount(_dev(np.array([-1, 2])))
    a = rng.standard_normal(100_000)
    for kwargs in ({}, {"bins": 37, "range": (-2.0, 3.0)}, {"bins": np.linspace(-4, 4, 9)}, {"bins": 20, "weights": w}):
        h, e = sl.histogram(_dev(a), **kwargs)
        wh, we = np.histogram(a, **kwargs)
        np.testing.assert_allclose(h.get(), wh, rtol=1e-12)
        np.testing.assert_allclose(e.get(), we, rtol=1e-14)


def test_histogram2d_and_histogramdd_are_numpys() -> None:
    rng = np.random.default_rng(22)
    x, y, w = rng.standard_normal(50_000), rng.random(50_000) * 3, rng.random(50_000)
    for bins in (16, [8, 12], np.linspace(-3, 3, 13), [np.linspace(-3, 3, 7), 5]):
        for kwargs in ({}, {"density": True}, {"range": [[-1, 1], [0, 2]]}):
            for g, want in zip(sl.histogram2d(_dev(x), _dev(y), bins=bins, **kwargs), np.histogram2d(x, y, bins=bins, **kwargs), strict=True):
                np.testing.assert_allclose(g.get(), want, rtol=1e-12)
    h, e = sl.histogramdd(_dev(np.stack([x, y, w], 1)), bins=(4, 5, 6), weights=_dev(w))
    wh, we = np.histogramdd(np.stack([x, y, w], 1), bins=(4, 5, 6), weights=w)
    np.testing.assert_allclose(h.get(), wh, rtol=1e-12)
    for g, want in zip(e, we, strict=True):
        np.testing.assert_allclose(g.get(), want, rtol=1e-14)


def test_set_functions_and_matvec_are_numpys() -> None:
    """``intersect1d`` (with indices), ``union1d``, ``setdiff1d``, ``setxor1d``, ``unique_all`` and
    ``matvec``/``vecmat`` on CuPy arrays, with NaN."""
    import cupy as cp

    a = np.round(RNG.standard_normal(3000) * 20).astype(np.float32)
    b = np.round(RNG.standard_normal(2000) * 20).astype(np.float32)
    a[::97], b[::89] = np.nan, np.nan
    x, y = _dev(a), _dev(b)
    # (which of 0.0 and -0.0 a set function keeps is not NumPy's to promise: intersect1d sorts the
    # two uniques together with an unstable sort; the H200 run at 2871bfa kept -0.0 where NumPy
    # kept 0.0; so values are compared as values, the indices exactly)
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        _check(getattr(sl, name)(x, y), getattr(np, name)(a, b), bits=False)
    got, want = sl.intersect1d(x, y, return_indices=True), np.intersect1d(a, b, return_indices=True)
    for g, w, bits in zip(got, want, (False, True, True), strict=True):
        _check(g, w, bits)
    for g, w in zip(sl.unique_all(x), np.unique_all(a), strict=True):
        got = cp.asnumpy(cp.asarray(g))
        np.testing.assert_array_equal(got, w)  # (values compared as values: NaN signs may differ)
    m = RNG.standard_normal((300, 1000)).astype(np.float32)
    v = RNG.standard_normal(1000).astype(np.float32)
    np.testing.assert_allclose(cp.asnumpy(cp.asarray(sl.matvec(_dev(m), _dev(v)))), np.matvec(m, v), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(cp.asnumpy(cp.asarray(sl.vecmat(_dev(v), _dev(m.T.copy())))), np.vecmat(v, m.T), rtol=1e-4, atol=1e-3)
