"""Gathers, scans, sorts and products (``stitchlab/frontend/library.py``) as CuPy steps of a plan on
the GPU, and the functions built from lazy views, compares and broadcasts
(``stitchlab/frontend/manipulation.py``) as kernels: NumPy's values, one kernel where the CPU plan
says one, CuPy's ``take`` (which wraps positions around) never reached with a position out of
bounds, and a gather whose positions are computed on the device refused under CUDA-graph capture
with a clear error.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_library_steps_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

RNG = np.random.default_rng(77)


def _dev(a: np.ndarray) -> Any:
    import cupy as cp

    return sl.asarray(cp.asarray(a))


def _host(y: Any) -> np.ndarray:
    import cupy as cp

    return cp.asnumpy(cp.asarray(y))


def _families(y: Any) -> list[str]:
    return [k.schedule.family for k in sl.explain(y).kernels]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_gathers_are_numpys(dtype: str) -> None:
    dt = as_dtype(dtype)
    a = (RNG.standard_normal((300, 257)) * 10).astype(dt)
    x = _dev(a)
    idx = RNG.integers(-300, 300, 500)
    for got, want in [
        (x[idx], a[idx]), (x[:, [0, 256, -1, 3]], a[:, [0, 256, -1, 3]]), (sl.take(x, idx.reshape(20, 25), 0), np.take(a, idx.reshape(20, 25), 0)),
        (x[a[:, 0].astype(np.float32) > 0], a[a[:, 0].astype(np.float32) > 0]), (sl.take(x, [5000, -7000], mode="wrap"), np.take(a, [5000, -7000], mode="wrap")),
    ]:
        g, w = np.ascontiguousarray(_host(got)), np.ascontiguousarray(want)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))  # moved, not computed: the bits


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_take_along_axis_picks_the_targets(dtype: str) -> None:
    import cupy as cp

    dt = as_dtype(dtype)
    logits = RNG.standard_normal((512, 1000)).astype(dt)
    t = RNG.integers(0, 1000, 512)
    want = np.take_along_axis(logits, t[:, None], axis=1)
    for idx in (t[:, None], sl.asarray(cp.asarray(t))[:, None] * 1):  # host positions; device ones
        got = _host(sl.take_along_axis(_dev(logits), idx, axis=1))
        np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
    bad = sl.asarray(cp.asarray(np.where(t == t[0], 1000, t)))[:, None] * 1
    with pytest.raises(IndexError, match="index 1000 is out of bounds for axis 1 with size 1000"):
        _host(sl.take_along_axis(_dev(logits), bad, axis=1))


def test_device_positions_are_checked_before_cupy_wraps_them() -> None:
    import cupy as cp

    a = RNG.standard_normal((64, 32)).astype(np.float32)
    x = _dev(a)
    pos = sl.asarray(cp.asarray(np.array([3, -1, 63], np.int64))) * 1
    np.testing.assert_array_equal(_host(x[pos]), a[[3, -1, 63]])
    bad = sl.asarray(cp.asarray(np.array([3, 64], np.int64))) * 1  # cupy.take would give row 0
    with pytest.raises(IndexError, match="index 64 is out of bounds for axis 0 with size 64"):
        _host(x[bad])
    with pytest.raises(IndexError, match="index 64 is out of bounds"):
        _host(sl.take(x, sl.asarray(cp.asarray(np.array([64]))), 0))


@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "bfloat16"])
def test_scans_are_numpys(fn: str, dtype: str) -> None:
    dt = as_dtype(dtype)
    if fn == "cumprod":
        a = (1 + RNG.standard_normal((96, 200)) * 0.01) if dt.kind == "f" or dtype == "bfloat16" else RNG.integers(-1, 2, (96, 200))
    else:
        a = RNG.standard_normal((96, 200)) * 4 if dtype != "int32" else RNG.integers(-1000, 1000, (96, 200))
    a = a.astype(dt)
    for axis in (1, 0, None):
        got = _host(getattr(sl, fn)(_dev(a), axis=axis))
        if dtype in ("bfloat16", "float16"):  # in float32, rounded once per output
            want = getattr(np, fn)(a.astype(np.float32), axis=axis).astype(dt)
            assert got.dtype == dt
            step = 2.0 ** (-7 if dtype == "bfloat16" else -10)  # CuPy adds in another order: one step apart at most
            np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=step, atol=step)
            continue
        want = getattr(np, fn)(a, axis=axis)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        if dt.kind in "iu":
            np.testing.assert_array_equal(got, want)
        else:  # CuPy's scan adds in another order: compare with the float64 result
            ref = getattr(np, fn)(a.astype(np.float64), axis=axis)
            tol = 1e-5 if dtype == "float32" else 1e-12
            scale = np.abs(getattr(np, fn)(np.abs(a.astype(np.float64)), axis=axis)) if fn == "cumsum" else np.abs(ref)
            assert float(np.max(np.abs(got - ref) / (scale + 1e-30))) < tol


def test_float16_scans_that_leave_float16s_range_are_numpys() -> None:
    """Float16 scans accumulate in float32 on the GPU too, but from the first result outside
    float16's range they stay inf (or a signed zero, for a product), NaN from inf times 0 or inf
    minus inf, as NumPy's float16 ``cumprod`` and ``cumsum`` (tests/test_numpy_compositions.py
    has the cases one by one)."""
    rows = np.array([[300, 300, 0, 5, 1, 1], [-300, 300, 0.0, 1, 1, 1], [60000, 2, 0.5, 3, 1, 1],
                     [300, -300, 300, 0.5, -1, np.inf], [1e-3, 1e-3, 1e-3, 1e4, 1e4, 7],
                     [-1e-3, 1e-3, 1e-3, 1e4, np.inf, 1], [np.inf, 0, 2, 3, 1, 1]], np.float16)
    with np.errstate(all="ignore"):
        for axis in (1, 0):
            want = np.cumprod(rows, axis=axis)
            got = _host(sl.cumprod(_dev(rows), axis=axis))
            assert got.dtype == np.float16
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
    sums = np.array([[40000, 40000, -50000, 1], [-60000, -10000, 30000, 5], [60000, 10000, -np.inf, 1],
                     [60000, 10000, np.inf, -5], [65504, 16, -16, 0]], np.float16)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_host(sl.cumsum(_dev(sums), axis=1)), np.cumsum(sums, axis=1))


def test_the_float16_scans_range_flag_is_the_hosts() -> None:
    """The one-flag test that spares a float16 scan its fix-up on the GPU (a CuPy reduction
    kernel) says what the host's test says, at each edge of float16's range: a sum or product
    that rounds to inf (65520 and up, not float32's own inf), a product that rounds to zero."""
    import cupy as cp

    from stitchlab.runtime.interpreter import _may_leave_half

    edges = [65519.0, 65520.0, -65520.0, np.inf, -np.inf, np.nan, 2.0**-25, -(2.0**-25), 2.0**-24, 0.0, -0.0, 1e-30]
    for op in ("cumsum", "cumprod"):
        plain = RNG.standard_normal((64, 300)).astype(np.float32)
        assert not _may_leave_half(op, cp.asarray(plain), cp)
        for v in edges:
            y = plain.copy()
            y[17, 123] = v
            assert _may_leave_half(op, cp.asarray(y), cp) == _may_leave_half(op, y, np), (op, v)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "float64"])
def test_sort_and_stable_argsort_are_numpys(dtype: str) -> None:
    dt = as_dtype(dtype)
    a = np.round(RNG.standard_normal((64, 300)) * 8).astype(dt)  # many ties
    if dt.kind == "f":
        a[3, ::7] = np.nan
        a[5, ::11] = np.inf
        a[5, 1::11] = -np.inf
        a[7, ::13] = -np.nan  # sign bit set: CuPy's radix sort of a 1-d array put these first
    x = _dev(a)
    for axis in (-1, 0, None):
        got = _host(sl.sort(x, axis))
        want = np.sort(a, axis)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
        np.testing.assert_array_equal(_host(sl.argsort(x, axis)), np.argsort(a, axis, kind="stable"))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_searchsorted_and_digitize_are_numpys(dtype: str) -> None:
    dt = as_dtype(dtype)
    a = np.sort(np.round(RNG.standard_normal(1000) * 20).astype(dt).astype(np.float64)).astype(dt)  # ties
    v = np.round(RNG.standard_normal((64, 33)) * 25).astype(dt)
    if dt.kind == "f":
        a[-3:] = np.nan
        v[0, :4] = np.nan
    for side in ("left", "right"):
        got = _host(sl.searchsorted(_dev(a), _dev(v), side=side))
        np.testing.assert_array_equal(got, np.searchsorted(a.astype(np.float64), v.astype(np.float64), side=side))
    bins = np.unique(a.astype(np.float64)[:-3])[::7]
    np.testing.assert_array_equal(_host(sl.digitize(_dev(v), bins)), np.digitize(v.astype(np.float64), bins))
    for device_bins in (bins, bins[::-1].copy()):  # bins on the device: direction taken there
        for right in (False, True):
            got = _host(sl.digitize(_dev(v), _dev(device_bins), right))
            np.testing.assert_array_equal(got, np.digitize(v.astype(np.float64), device_bins, right))


def test_products_built_on_matmul_are_numpys() -> None:
    a, b = RNG.standard_normal((4, 30, 50)).astype(np.float32), RNG.standard_normal((3, 50, 20)).astype(np.float32)
    ref = np.dot(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(_host(sl.dot(_dev(a), _dev(b))), ref, rtol=1e-4, atol=1e-4)
    c = RNG.standard_normal((50, 30, 6)).astype(np.float32)
    ref = np.tensordot(a.astype(np.float64), c.astype(np.float64), ([1, 2], [1, 0]))
    np.testing.assert_allclose(_host(sl.tensordot(_dev(a), _dev(c), ([1, 2], [1, 0]))), ref, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32"])
def test_einsum_is_numpys(dtype: str) -> None:
    dt = np.dtype(dtype)
    ops = [(RNG.standard_normal(s) * (3 if dt.kind in "iu" else 1)).astype(dt) for s in [(4, 30, 50), (4, 50, 20), (20,)]]
    for spec, args in [("bij,bjk->bik", ops[:2]), ("bij,bjk,k->bi", ops), ("bii->bi", [ops[0][:, :30, :30]]), ("...j,j", [ops[1], ops[2]])]:
        want = np.einsum(spec, *[a.astype(np.float64) for a in args])
        got = _host(sl.einsum(spec, *[_dev(a) for a in args]))
        assert got.dtype == np.einsum(spec, *args).dtype and got.shape == want.shape
        tol = {"float32": 1e-4, "float16": 2e-2, "float64": 1e-12, "int32": 0}[dtype]
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_median_and_quantiles_are_numpys(dtype: str) -> None:
    dt = np.dtype(dtype)
    a = (RNG.standard_normal((64, 301)) * 50).astype(dt)
    if dt.kind == "f":
        a[7, 100] = np.nan
    x = _dev(a)
    for axis in (1, 0, None):
        got, want = _host(sl.median(x, axis=axis)), np.median(a, axis=axis)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)  # the mean of one or two values: no multiply-add
        for q, method in [(0.3, "linear"), ([0.1, 0.9], "linear"), (0.5, "midpoint"), ([0.25, 1.0], "nearest"), (0.7, "lower"),
                          ([0.0, 0.5, 0.97], "inverted_cdf"), ([0.2, 0.5], "averaged_inverted_cdf"),
                          ([0.1, 0.5], "closest_observation"), (0.3, "hazen"), ([0.01, 0.99], "weibull"),
                          (0.6, "median_unbiased"), (0.4, "normal_unbiased"), (0.35, "interpolated_inverted_cdf")]:
            if axis is None and dt.kind == "f" and method != "nearest":
                continue  # NumPy's dtype for a NaN-holding scalar result depends on the values
            got, want = _host(sl.quantile(x, q, axis=axis, method=method)), np.asarray(np.quantile(a, q, axis=axis, method=method))
            assert got.dtype == want.dtype and got.shape == want.shape
            # within one rounding of NumPy's lerp (the bound from before --fmad=false, when the
            # kernels contracted lo + (hi - lo) * t into an fma; kept, not re-derived)
            tol = {"float32": 2e-7, "float16": 1e-3, "int32": 1e-15}[dtype] * 4
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_nan_skipping_median_and_quantiles_are_numpys(dtype: str) -> None:
    import warnings

    a = (RNG.standard_normal((96, 301)) * 50).astype(dtype)
    a[RNG.random(a.shape) < 0.25] = np.nan
    a[5] = np.nan  # an all-NaN row
    x = _dev(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in (1, 0):
            np.testing.assert_array_equal(_host(sl.nanmedian(x, axis=axis)), np.nanmedian(a, axis=axis))
            for q, method in [(0.3, "linear"), ([0.1, 0.9], "linear"), (0.5, "midpoint"), ([0.25, 1.0], "nearest"),
                              ([0.0, 0.5, 0.97], "inverted_cdf"), ([0.2, 0.5], "averaged_inverted_cdf"),
                              ([0.1, 0.5], "closest_observation"), (0.3, "hazen"), ([0.01, 0.99], "weibull")]:
                got = _host(sl.nanquantile(x, q, axis=axis, method=method))
                want = np.asarray(np.nanquantile(a, q, axis=axis, method=method))
                assert got.dtype == want.dtype and got.shape == want.shape
                tol = (2e-7 if dtype == "float32" else 1e-3) * 4  # within one rounding (as above)
                np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_norms_are_numpys_and_fuse(dtype: str) -> None:
    import math

    a = RNG.standard_normal((257, 1031)).astype(dtype)
    x = _dev(a)
    ref = a.astype(np.float64)
    tol = 1e-5 if dtype == "float32" else 4e-3
    for ord, axis in [(None, -1), (1, 0), (math.inf, 1), (0, 1), (3, -1), ("fro", None), (1, (0, 1)), (-math.inf, (1, 0))]:  # noqa: A001
        got = _host(sl.linalg.norm(x, ord, axis))
        assert got.dtype == np.dtype(dtype)
        with np.errstate(over="ignore"):
            if dtype == "float16" and ord == "fro":  # the sum of squares overflows float16: inf, in NumPy too
                want = np.linalg.norm(a, ord, axis).astype(np.float64)
            else:  # the exact norm in the result's dtype (NumPy's float16 sums along axis 0 drift)
                want = np.linalg.norm(ref, ord, axis).astype(dtype).astype(np.float64)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol)
    y = x / sl.linalg.norm(x, axis=-1, keepdims=True)
    assert len(_families(y)) == 1
    np.testing.assert_allclose(_host(y).astype(np.float64), ref / np.linalg.norm(ref, axis=-1, keepdims=True), rtol=tol, atol=tol * 0.1)


def test_numpy2_linalg_names_on_the_device() -> None:
    """NumPy 2's ``linalg`` names on CuPy arrays: a vector norm fused into its use, ``multi_dot``'s
    products by cuBLAS, ``cond`` through cuSOLVER (a singular matrix of a stack: ``inf``),
    ``tensorsolve``; values as NumPy's in float64."""
    a = RNG.standard_normal((257, 1031))
    x = _dev(a)
    y = x / sl.linalg.vector_norm(x, axis=-1, keepdims=True)
    assert len(_families(y)) == 1
    np.testing.assert_allclose(_host(y), a / np.linalg.vector_norm(a, axis=-1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(_host(sl.linalg.matrix_norm(x, ord=1)), np.linalg.matrix_norm(a, ord=1), rtol=1e-12)
    ms = [RNG.standard_normal(s) for s in [(257,), (257, 64), (64, 3), (3, 500), (500, 9)]]
    np.testing.assert_allclose(_host(sl.linalg.multi_dot([_dev(m) for m in ms])), np.linalg.multi_dot(ms), rtol=1e-10)
    stack = RNG.standard_normal((4, 6, 6))
    stack[2] = 0.0
    for p in (None, 1, "fro"):
        np.testing.assert_allclose(_host(sl.linalg.cond(_dev(stack), p)), np.linalg.cond(stack, p), rtol=1e-9)
    t, b = RNG.standard_normal((6, 4, 2, 3, 4)), RNG.standard_normal((6, 4))
    np.testing.assert_allclose(_host(sl.linalg.tensorsolve(_dev(t), _dev(b))), np.linalg.tensorsolve(t, b), rtol=1e-9)


def test_polynomials_on_the_device() -> None:
    """polyadd/polysub/polymul/polyder/polyint of device coefficients (lazy: kernels and the
    convolution), polydiv (host NumPy, results on the device) and polyfit through cuSOLVER's
    least squares: NumPy's values."""
    p, q = RNG.standard_normal(7), RNG.standard_normal(4)
    dp, dq = _dev(p), _dev(q)
    for name in ("polyadd", "polysub", "polymul"):
        np.testing.assert_allclose(_host(getattr(sl, name)(dp, dq)), getattr(np, name)(p, q), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_host(sl.polyder(dp, 2)), np.polyder(p, 2), rtol=1e-14)
    np.testing.assert_allclose(_host(sl.polyint(dp, 2, [1.0, -1.0])), np.polyint(p, 2, [1.0, -1.0]), rtol=1e-14)
    quotient, remainder = sl.polydiv(dp, dq)
    np.testing.assert_allclose(_host(quotient), np.polydiv(p, q)[0], rtol=1e-12)
    np.testing.assert_allclose(_host(remainder), np.polydiv(p, q)[1], rtol=1e-12, atol=1e-14)
    x = np.linspace(-1, 2, 1000)
    y = np.polyval(p[:4], x) + RNG.standard_normal(1000) * 0.01
    np.testing.assert_allclose(_host(sl.polyfit(_dev(x), _dev(y), 3)), np.polyfit(x, y, 3), rtol=1e-9, atol=1e-12)


def test_composites_run_as_the_kernels_the_plan_shows() -> None:
    a = RNG.standard_normal((513, 1031)).astype(np.float32)
    x = _dev(a)
    cases = [
        (sl.tril(x * 2, -3) + sl.eye(513, 1031, dtype=np.float32), np.tril(a * 2, -3) + np.eye(513, 1031, dtype=np.float32), ["pointwise"]),
        (sl.tile(x[:7], (2, 3)) * 2, np.tile(a[:7], (2, 3)) * 2, ["pointwise"]),
        (sl.repeat(sl.flip(x, 1), 3, axis=0), np.repeat(a[:, ::-1], 3, axis=0), ["pointwise"]),
        (sl.diff(x, 2, axis=0), np.diff(a, 2, axis=0), ["pointwise"]),
        (sl.outer(x[0], x[:, 1]) * 2, np.outer(a[0], a[:, 1]) * 2, ["pointwise"]),  # NumPy's bits
    ]
    for y, want, families in cases:
        assert _families(y) == families
        np.testing.assert_array_equal(_host(y), want)
    t = sl.trace(sl.exp(x[:, :513]))
    np.testing.assert_allclose(_host(t), np.trace(np.exp(a[:, :513].astype(np.float64))), rtol=1e-5)
    for mode in ("constant", "edge", "wrap", "reflect", "symmetric"):
        np.testing.assert_array_equal(_host(sl.pad(x, ((2, 3), (1, 0)), mode)), np.pad(a, ((2, 3), (1, 0)), mode))
    np.testing.assert_array_equal(_host(sl.roll(x, (5, -9), (0, 1))), np.roll(a, (5, -9), (0, 1)))


@sl.jit
def _gather_computed(x: Any) -> Any:
    return x[sl.argmax(x, axis=0) % 8] * 2  # positions computed on the device: checked when run


@sl.jit
def _einsum_step(x: Any) -> Any:
    return sl.einsum("ij,kj->ik", x * 2, x)


@pytest.mark.parametrize("fn, match, want", [
    (_gather_computed, r"a gather with positions computed on the device .* cannot be captured",
     lambda a: a[a.argmax(0) % 8] * 2),
    (_einsum_step, r"an einsum .* cannot be captured into a CUDA graph", lambda a: (a * 2) @ a.T),
], ids=["device-positions-gather", "einsum"])
def test_steps_that_cannot_be_captured_raise_a_clear_error(fn: Any, match: str, want: Any) -> None:
    import cupy as cp

    a = RNG.standard_normal((16, 8)).astype(np.float32)
    x = cp.asarray(a)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        fn(x)
        stream.synchronize()
        stream.begin_capture()
        try:
            with pytest.raises(RuntimeError, match=match):
                fn(x)
        finally:
            stream.end_capture()
        stream.synchronize()
        got = _host(fn(x))  # and the stream works on
    np.testing.assert_allclose(got, want(a), rtol=1e-5, atol=1e-5)


@sl.jit
def _capturable_steps(x: Any) -> Any:
    s = sl.sort(x * 2, axis=1)
    return sl.cumsum(s, axis=1) + 1, x[[5, 0, -1]], sl.nanquantile(x, 0.25, axis=0), x[[0, 63, -2], [7, 0, 299]]


def test_scans_sorts_and_host_gathers_are_captured_and_replayed() -> None:
    import cupy as cp

    a = RNG.standard_normal((64, 300)).astype(np.float32)
    x = cp.asarray(a)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        _capturable_steps(x)
        stream.synchronize()
        stream.begin_capture()
        try:
            outs = _capturable_steps(x)
        finally:
            graph = stream.end_capture()
        b = RNG.standard_normal((64, 300)).astype(np.float32)
        x[...] = cp.asarray(b)  # the replay reads x's current contents
        graph.launch(stream=stream)
        stream.synchronize()
        got = [_host(o) for o in outs]
    scan = np.cumsum(np.sort(b.astype(np.float64) * 2, axis=1), axis=1) + 1
    np.testing.assert_allclose(got[0], scan, rtol=1e-5, atol=1e-5 * np.abs(b * 2).sum(1).max())  # another order of adds
    np.testing.assert_array_equal(got[1], b[[5, 0, -1]])
    np.testing.assert_allclose(got[2], np.nanquantile(b, 0.25, axis=0), rtol=1e-6)
    np.testing.assert_array_equal(got[3], b[[0, 63, -2], [7, 0, 299]])


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64"])
def test_several_index_arrays_are_numpys(dtype: str) -> None:
    import cupy as cp

    dt = as_dtype(dtype)
    a = (RNG.standard_normal((40, 50, 60)) * 10).astype(dt)
    x = _dev(a)
    i, j = RNG.integers(-40, 40, (7, 1)), RNG.integers(-60, 60, 9)
    for got, want in [
        (x[i, :, j], a[i, :, j]), (x[:, i, j], a[:, i, j]), (x[3, :, j], a[3, :, j]), (x[2:30:3, i[:, 0] % 50, j[:7]], a[2:30:3, i[:, 0] % 50, j[:7]]),
        (x[cp.asarray(i), cp.asarray(i % 50), j], a[i, i % 50, j]),  # device positions beside host ones
    ]:
        g, w = np.ascontiguousarray(_host(got)), np.ascontiguousarray(want)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))
    with pytest.raises(IndexError, match=r"^index 40 is out of bounds for axis 0 with size 40$"):
        _host(x[cp.asarray(np.array([0, 40])), cp.asarray(np.array([1, 1]))])


@pytest.mark.parametrize("shape", [(64, 3), (64, 4096)])  # (long rows: the row-wise scatter)
def test_device_positions_beside_new_axes_name_numpys_axis(shape: tuple[int, ...]) -> None:
    """A CuPy index array with a position out of bounds beside ``None``: the gather's and the
    scatter's checks (assignment, ``ufunc.at``) raise NumPy's ``IndexError``, which names the
    axis of the array indexed, not counting the new axes."""
    import cupy as cp

    a = np.zeros(shape, np.float32)
    for key in [(None, [3, 64]), (None, slice(None), [0, shape[1]]), (None, [3, -65], slice(None), None)]:
        dev = tuple(cp.asarray(k) if isinstance(k, list) else k for k in key)
        for f, g in [(lambda x, k: x[k], lambda x, k: x[k]), (lambda x, k: x.__setitem__(k, 1.0), lambda x, k: x.__setitem__(k, 1.0)),
                     (lambda x, k: np.add.at(x, k, 1.0), lambda x, k: sl.add.at(x, k, 1.0))]:
            with pytest.raises(IndexError) as want:
                f(a.copy(), key)
            x = _dev(a)
            with pytest.raises(IndexError) as got:
                y = g(x, dev)
                _host(x if y is None else y)
            assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linalg_solvers_run_on_the_device_and_are_numpys(dtype: str) -> None:
    """``sl.linalg``'s solvers and decompositions through ``cupy.linalg``: NumPy's values and
    dtypes, results on the GPU, and NumPy's ``LinAlgError`` for a singular matrix (CuPy's own
    check, switched on for the call)."""
    a = RNG.standard_normal((3, 5, 5)).astype(dtype)
    spd = (a @ np.swapaxes(a, -1, -2) + 5 * np.eye(5)).astype(dtype)
    b = RNG.standard_normal((3, 5, 2)).astype(dtype)
    tall = RNG.standard_normal((7, 4)).astype(dtype)
    rtol = 2e-3 if dtype == "float32" else 1e-9
    L = sl.linalg
    cases = [(L.solve(_dev(a), _dev(b)), np.linalg.solve(a, b)), (L.inv(_dev(a)), np.linalg.inv(a)),
             (L.det(_dev(a)), np.linalg.det(a)), (L.slogdet(_dev(a)).logabsdet, np.linalg.slogdet(a).logabsdet),
             (L.cholesky(_dev(spd)), np.linalg.cholesky(spd)), (L.svdvals(_dev(tall)), np.linalg.svdvals(tall)),
             (L.eigvalsh(_dev(spd)), np.linalg.eigvalsh(spd)), (L.pinv(_dev(tall)), np.linalg.pinv(tall)),
             (L.lstsq(_dev(tall), _dev(tall[:, 0] + 1))[0], np.linalg.lstsq(tall, tall[:, 0] + 1)[0]),
             (L.norm(_dev(a), 2, (1, 2)), np.linalg.norm(a, 2, (1, 2))), (L.matrix_power(_dev(a), 3), np.linalg.matrix_power(a, 3))]
    for got, want in cases:
        assert str(got.device).startswith("cuda")
        v = _host(got)
        assert v.dtype == want.dtype and v.shape == want.shape
        np.testing.assert_allclose(v, want, rtol=rtol, atol=rtol)
    q, r = L.qr(_dev(tall))
    np.testing.assert_allclose(_host(q) @ _host(r), tall, rtol=rtol, atol=rtol)
    w, v = L.eigh(_dev(spd))
    np.testing.assert_allclose(_host(v) @ (_host(w)[..., None] * np.swapaxes(_host(v), -1, -2)), spd, rtol=rtol, atol=10 * rtol)
    with pytest.raises(np.linalg.LinAlgError):
        L.inv(_dev(np.zeros((4, 4), dtype)))
    with pytest.raises(np.linalg.LinAlgError):
        L.cholesky(_dev(-np.eye(3, dtype=dtype)))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "bool", "int64"])
def test_fused_pads_rolls_and_stencils_are_numpys(dtype: str) -> None:
    """``sl.pad`` (every mode, widths past the extent, both axes) and ``sl.roll`` are index maps
    fused into the kernels that read them (``stitchlab.codegen.elemental``): bit for bit NumPy's,
    in the vector loops too (rows of 1,000 and 33), and a padded 5-point stencil is one kernel."""
    for shape in ((300, 1000), (7, 33)):
        a = (RNG.standard_normal(shape) * 20).astype(as_dtype(dtype))
        x = _dev(a)
        for mode in ("constant", "edge", "wrap", "reflect", "symmetric"):
            for widths in (((2, 3), (1, 0)), ((0, 0), (40, 41)), 9):
                kw = {"constant_values": ((1, 2), (3, 4))} if mode == "constant" else {}
                got = sl.pad(x, widths, mode, **kw)
                assert [k.schedule.family for k in sl.explain(got).kernels] == ["pointwise"]
                np.testing.assert_array_equal(_host(got), np.pad(a, widths, mode, **kw), err_msg=f"{mode} {widths}")
        for shift, axis in ((3, 1), (-5, 0), ((5, -9), (0, 1)), (1001, None)):
            np.testing.assert_array_equal(_host(sl.roll(x, shift, axis)), np.roll(a, shift, axis))
    if dtype in ("float32", "int8", "bool"):  # statistics of the edge regions, joined on
        a = (RNG.standard_normal((300, 1000)) * 20).astype(dtype)
        for mode in ("maximum", "minimum", "mean", "median"):
            for kw in ({}, {"stat_length": ((3, 1), (7, 2000))}):
                want = np.pad(a, ((2, 3), (5, 1)), mode, **kw)
                got = _host(sl.pad(_dev(a), ((2, 3), (5, 1)), mode, **kw))
                if mode in ("mean", "median") and dtype == "float32":  # (sums in another order)
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
                else:
                    np.testing.assert_array_equal(got, want)
    for mode in ("reflect", "wrap", "constant"):  # (a pad along the batch axis: a kernel per extent)
        f = sl.jit(lambda x, mode=mode: sl.pad(x, ((2, 3), (1, 1)), mode) * 2)
        for rows in (300, 7, 300):
            a = (RNG.standard_normal((rows, 50)) * 20).astype(as_dtype(dtype))
            np.testing.assert_array_equal(_host(f(_dev(a))), np.pad(a, ((2, 3), (1, 1)), mode) * 2)
    if dtype in ("float32", "int64"):
        a = (RNG.standard_normal((512, 640)) * 20).astype(dtype)
        x = _dev(a)
        p = sl.pad(x, 1, "reflect")
        lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * x
        assert len(sl.explain(lap).kernels) == 1
        q = np.pad(a, 1, "reflect")
        np.testing.assert_array_equal(_host(lap), q[:-2, 1:-1] + q[2:, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] - 4 * a)
        ring = sl.roll(x, 1, 0) + sl.roll(x, -1, 1) - 2 * x
        assert len(sl.explain(ring).kernels) == 1
        np.testing.assert_array_equal(_host(ring), np.roll(a, 1, 0) + np.roll(a, -1, 1) - 2 * a)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_steps_of_padded_stencils_joins_and_slice_assignments_are_numpys(dtype: str) -> None:
    """Time steps fused through constant pads, joins and slice assignments, whose edge pads read
    their input unclamped (``build.pad``'s ``masked``; the loads there clamp their addresses) and
    whose cut parts put the shared masks in a kernel of their own (``search._shared_masks``):
    NumPy's values at the edges too, on shapes whose rows are and are not a multiple of the
    vector width, and the steps split into several kernels where they are many."""
    def padded(xp: Any, u: Any, steps: int) -> Any:
        for _ in range(steps):
            lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
            u = u + xp.pad(lap // 8 if dtype == "int32" else lap * 0.125, 1).astype(u.dtype)
        return u

    def joined(xp: Any, u: Any, steps: int) -> Any:  # a periodic step along the rows as a join
        for _ in range(steps):
            d = xp.concatenate([u[-1:], u[:-1]], 0) - u
            u = u + (d // 2 if dtype == "int32" else d * 0.5)
        return u

    def assigned(u: Any, steps: int) -> Any:  # the NumPy idiom: the interior updated in place
        for _ in range(steps):
            v = u.copy()
            lap = v[2:, 1:-1] + v[:-2, 1:-1] + v[1:-1, 2:] + v[1:-1, :-2] - 4 * v[1:-1, 1:-1]
            u[1:-1, 1:-1] = v[1:-1, 1:-1] + (lap // 8 if dtype == "int32" else (lap * 0.125).astype(u.dtype))
        return u

    tol = {"float32": 1e-5, "float16": 2e-2, "int32": 0}[dtype]
    for shape in ((96, 256), (37, 101), (600, 1000)):
        a = (RNG.standard_normal(shape) * 20).astype(dtype)
        for steps in (1, 3, 8):
            for name, fn in (("pad", padded), ("join", joined)):
                got = fn(sl, _dev(a), steps)
                want = fn(np, a, steps)
                np.testing.assert_allclose(_host(got).astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol * 20, err_msg=f"{name} {shape} {steps}")
            u = _dev(a.copy())
            got = assigned(u, steps)
            want = assigned(a.copy(), steps)
            np.testing.assert_allclose(_host(got).astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol * 20, err_msg=f"assigned {shape} {steps}")
    many = padded(sl, _dev((RNG.standard_normal((600, 1000)) * 20).astype(dtype)), 8)
    assert len(sl.explain(many).kernels) > 2, "eight steps are cut"


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "bool", "int64"])
def test_shifted_reads_through_lane_vectors_are_numpys(dtype: str) -> None:
    """Reads of one buffer at neighbouring positions in a vector chunk (slices shifted along the
    last axis, rows, rolls, a trailing unit axis, 1-d taps) come from the chunk's aligned vectors
    (``Writer._lane_vector``), pads too in the chunks away from their edges: NumPy's bits for
    inputs aligned and one element off (the chunk's branch then takes scalar loads), shifts from
    0 to 16, pads of every mode, rows whose extent is and is not a multiple of the width, and the
    last chunks of 1-d arrays."""
    import cupy as cp

    def views(a: np.ndarray) -> Any:
        flat = np.concatenate([a.ravel(), a.ravel()[:1]])
        for off in (0, 1):  # off 1: the data pointer is one element past an aligned one
            part = cp.asarray(flat)[off:off + a.size].reshape(a.shape)
            assert (part.data.ptr % 16 == 0) == (off == 0)
            yield sl.asarray(part), flat[off:off + a.size].reshape(a.shape)

    def rand(shape: tuple[int, ...]) -> np.ndarray:
        return (RNG.standard_normal(shape) * 20).astype(as_dtype(dtype))

    for shape in ((40, 256), (9, 264), (5, 1000)):
        for x, a in views(rand(shape)):
            for ks in ((0, 1), (1, 3, 16), (4, 5, 8), (15, 2, 7)):
                n = shape[1] - 16
                got = sum((x[:, k:k + n] for k in ks[1:]), x[:, ks[0]:ks[0] + n])
                want = sum((a[:, k:k + n] for k in ks[1:]), a[:, ks[0]:ks[0] + n])
                np.testing.assert_array_equal(_host(got), want, err_msg=f"{shape} {ks}")
            np.testing.assert_array_equal(_host(x[1:] + x[:-1] + x[1:]), a[1:] + a[:-1] + a[1:])
            np.testing.assert_array_equal(_host(sl.roll(x, 1, 0) + sl.roll(x, -1, 0)), np.roll(a, 1, 0) + np.roll(a, -1, 0))
            np.testing.assert_array_equal(_host(sl.roll(x, 1, 1) + sl.roll(x, -3, 1)), np.roll(a, 1, 1) + np.roll(a, -3, 1))
            # an interior update: rows of n - 2 lanes, chunks that cross a row take the other branch
            np.testing.assert_array_equal(_host(x[1:-1, 2:] + x[1:-1, :-2] + x[:-2, 1:-1] + x[2:, 1:-1]),
                                          a[1:-1, 2:] + a[1:-1, :-2] + a[:-2, 1:-1] + a[2:, 1:-1])
            for mode in ("constant", "edge", "wrap", "reflect", "symmetric"):  # (lane vectors away from the edges)
                p, q = sl.pad(x, 2, mode), np.pad(a, 2, mode)
                np.testing.assert_array_equal(_host(p[2:-2, :-4] + p[1:-3, 1:-3] + p[2:-2, 4:]), q[2:-2, :-4] + q[1:-3, 1:-3] + q[2:-2, 4:])
    for x, a in views(rand((17, 40, 1))):  # the lanes run along the last axis but one
        np.testing.assert_array_equal(_host(x[:, 3:35] + x[:, 0:32] + x[:, 8:40]), a[:, 3:35] + a[:, 0:32] + a[:, 8:40])
    for n in (1000, 1001, 1024):
        for x, a in views(rand((n,))):
            np.testing.assert_array_equal(_host(x[:-9] + x[3:-6] + x[9:] + x[4:-5]), a[:-9] + a[3:-6] + a[9:] + a[4:-5])
            p, q = sl.pad(x, (3, 5), "reflect"), np.pad(a, (3, 5), "reflect")
            np.testing.assert_array_equal(_host(p[:n] + p[3:n + 3] + p[8:]), q[:n] + q[3:n + 3] + q[8:])


def test_block_resize_and_rollaxis_on_the_device() -> None:
    """``sl.block`` (nested joins, fused), ``sl.resize`` (a broadcast, a slice, a reshape) and
    ``sl.rollaxis`` (a view) in the kernels that read them: NumPy's values."""
    a, b, c = (RNG.standard_normal(s).astype(np.float32) for s in ((3, 4), (3, 2), (2, 6)))
    got = sl.block([[_dev(a), _dev(b)], [_dev(c)]]) * 2
    assert _families(got) == ["pointwise"]
    np.testing.assert_array_equal(_host(got), np.block([[a, b], [c]]) * 2)
    np.testing.assert_array_equal(_host(sl.resize(_dev(a), (5, 7)) + 1), np.resize(a, (5, 7)) + 1)
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(_host(sl.rollaxis(_dev(x), 3, 1) * 3), np.rollaxis(x, 3, 1) * 3)


def test_unravel_and_ravel_multi_index_on_the_device() -> None:
    """Device positions checked on the device (NumPy's ValueError), the argmax idiom fused and
    under ``sl.jit``, every mode of ``ravel_multi_index``: NumPy's values."""
    a = RNG.standard_normal((37, 41)).astype(np.float32)
    x = _dev(a)
    got = sl.unravel_index(sl.argmax(x), x.shape)
    assert [int(_host(c)) for c in got] == [int(v) for v in np.unravel_index(np.argmax(a), a.shape)]
    f = sl.jit(lambda x: sl.unravel_index(sl.argmin(x), x.shape))
    assert [int(_host(c)) for c in f(x)] == [int(v) for v in np.unravel_index(np.argmin(a), a.shape)]
    idx = RNG.integers(0, 60, (5, 6))
    for order in ("C", "F"):
        for g, w in zip(sl.unravel_index(_dev(idx), (3, 4, 5), order=order), np.unravel_index(idx, (3, 4, 5), order=order), strict=True):
            np.testing.assert_array_equal(_host(g), w)
    with pytest.raises(ValueError, match="index 60 is out of bounds for array with size 60"):
        sl.unravel_index(_dev(np.array([3, 60])), (3, 4, 5))
    coords = RNG.integers(-9, 9, (3, 50))
    for mode in ("wrap", "clip", ("clip", "wrap", "clip")):
        np.testing.assert_array_equal(_host(sl.ravel_multi_index(tuple(_dev(c) for c in coords), (3, 4, 5), mode=mode)),
                                      np.ravel_multi_index(tuple(coords), (3, 4, 5), mode=mode))
    with pytest.raises(ValueError, match="invalid entry"):
        sl.ravel_multi_index(tuple(_dev(c) for c in coords), (3, 4, 5))


def test_lexsort_on_the_device() -> None:
    """Stable sorts on the device, key by key: many ties, NaNs, every axis of 2-d keys."""
    ints = [RNG.integers(0, 4, (300, 257)) for _ in range(3)]
    floats = [np.where(RNG.random((300, 257)) < 0.1, np.nan, RNG.integers(0, 4, (300, 257)).astype(np.float32)) for _ in range(2)]
    for keys in (ints, floats, [floats[0], ints[0].astype(np.int8)]):
        for axis in (0, 1, -1):
            np.testing.assert_array_equal(_host(sl.lexsort([_dev(k) for k in keys], axis=axis)), np.lexsort(keys, axis=axis))
    flat = RNG.integers(0, 3, (2, 5000))
    np.testing.assert_array_equal(_host(sl.lexsort(_dev(flat))), np.lexsort(flat))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_convolve_and_correlate_are_numpys(dtype: str) -> None:
    """Short filters as fused shifted views, a long one through ``cupy.convolve``."""
    a = (RNG.standard_normal(5000) * 50).astype(dtype)
    for m in (1, 7, 32, 40):
        v = (RNG.standard_normal(m) * 50).astype(dtype)
        for mode in ("full", "same", "valid"):
            for fn in ("convolve", "correlate"):
                got = _host(getattr(sl, fn)(_dev(a), _dev(v), mode))
                want = getattr(np, fn)(a, v, mode)
                assert got.dtype == want.dtype and got.shape == want.shape
                if dtype == "int32":
                    np.testing.assert_array_equal(got, want)
                else:
                    scale = np.convolve(np.abs(a), np.abs(v), "full").max()
                    assert np.max(np.abs(got - want)) <= 1e-5 * scale, (fn, m, mode)


def test_polyval_vander_unwrap_and_partition_on_the_device() -> None:
    """Horner's rule in one kernel (NumPy's bits: the same multiplies and adds), ``vander`` and
    ``unwrap`` through the device's scans (products and sums in another order: close), and
    ``partition``/``argpartition`` as a sort."""
    import cupy as cp

    rng = np.random.default_rng(17)
    x = rng.standard_normal((300, 500)).astype(np.float32)
    lx = sl.asarray(cp.asarray(x))
    got = sl.polyval(np.array([0.5, -1.0, 2.0, 0.1], np.float32), lx).get()
    np.testing.assert_array_equal(got, np.polyval(np.array([0.5, -1.0, 2.0, 0.1], np.float32), x))
    v = (rng.random(200) + 0.5).astype(np.float64)
    np.testing.assert_allclose(sl.vander(sl.asarray(cp.asarray(v)), 12).get(), np.vander(v, 12), rtol=1e-13)
    ph = np.cumsum(rng.standard_normal((8, 4000)), axis=1) % (2 * np.pi)
    np.testing.assert_allclose(sl.unwrap(sl.asarray(cp.asarray(ph))).get(), np.unwrap(ph), rtol=1e-10, atol=1e-9)
    a = rng.integers(0, 50, (64, 300)).astype(np.int32)
    part = sl.partition(sl.asarray(cp.asarray(a)), [5, 100], axis=1).get()
    np.testing.assert_array_equal(part[:, [5, 100]], np.partition(a, [5, 100], axis=1)[:, [5, 100]])
    pos = sl.argpartition(sl.asarray(cp.asarray(a)), 7, axis=0).get()
    np.testing.assert_array_equal(np.take_along_axis(a, pos, 0), np.sort(a, axis=0))


def test_insert_geomspace_and_windows_on_the_device() -> None:
    """``insert`` gathers NumPy's bits (positions and values moved, nothing rounded); ``geomspace``
    and the windows are powers and cosines in kernels (close to NumPy's: CUDA's ``pow`` and
    ``cos`` are not the host's), with NumPy's exact ends."""
    import cupy as cp

    rng = np.random.default_rng(23)
    a = rng.standard_normal((40, 3000)).astype(np.float32)
    x = sl.asarray(cp.asarray(a))
    for obj, values, axis in [(7, rng.standard_normal(40), 1), ([0, 2999, 5], 1.5, 1), (slice(0, 40, 3), -2.0, 0),
                              (sl.asarray(cp.asarray(np.array([3, 1]))), sl.asarray(cp.asarray(a[:2])), 0)]:
        got = sl.insert(x, obj, values, axis)
        host = obj.get() if isinstance(obj, sl.LazyArray) else obj
        want = np.insert(a, host, values.get() if isinstance(values, sl.LazyArray) else values, axis)
        assert got.device.startswith("cuda")
        np.testing.assert_array_equal(got.get(), want)
    for args in [(1, 1e6, 1000), (-2.0, -5e-3, 777, False), (3, 3e9, 4097)]:
        got, want = sl.geomspace(*args).get(), np.geomspace(*args)
        np.testing.assert_allclose(got, want, rtol=4e-15)
        assert got[0] == want[0] and (got[-1] == want[-1] or args[3:] == (False,))
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        for m in (2, 64, 1001):
            np.testing.assert_allclose(getattr(sl, name)(m).get(), getattr(np, name)(m), rtol=1e-14, atol=1e-15)
    window = sl.hanning(3000).astype(np.float32)
    assert len(sl.explain(x * window).kernels) == 1  # (the window is computed where it is used)


def test_i0_kaiser_piecewise_choose_and_bits_on_the_device() -> None:
    """``i0`` and ``kaiser`` are NumPy's series in one kernel (close: CUDA's ``exp`` is not the
    host's); ``piecewise``, ``choose``, ``packbits``, ``unpackbits`` and ``fromfunction`` are
    selects, shifts and sums with NumPy's bits; ``choose(mode="raise")`` checks device entries
    there; ``trim_zeros`` and ``histogram_bin_edges`` read back what they need."""

    rng = np.random.default_rng(41)
    x = np.concatenate([rng.uniform(-30, 30, 20000), [0.0, -0.0, 8.0, 7.999, 8.001, np.inf, -np.inf, np.nan]])
    for dtype, rtol in (("float64", 1e-14), ("float32", 2e-6), ("float16", 2e-3)):
        a = x.astype(dtype)
        with np.errstate(all="ignore"):
            want = np.i0(a)
        got = sl.i0(_dev(a))
        assert len(sl.explain(got).kernels) == 1
        value = got.get()
        assert value.dtype == want.dtype
        np.testing.assert_allclose(value.astype(np.float64), want.astype(np.float64), rtol=rtol, equal_nan=True)
    np.testing.assert_allclose(sl.kaiser(1001, 8.6).get(), np.kaiser(1001, 8.6), rtol=1e-13, atol=1e-300)

    b = rng.standard_normal((300, 257)).astype(np.float32)
    xb = _dev(b)
    got = sl.piecewise(xb, [xb < -1, xb > 1], [lambda v: v * 2, 0.5, lambda v: sl.exp(v)])
    np.testing.assert_allclose(got.get(), np.piecewise(b, [b < -1, b > 1], [lambda v: v * 2, 0.5, np.exp]), rtol=1e-6)

    index = rng.integers(0, 3, (300, 257))
    choices = [b, b[:1] * 3, np.float32(-1.5)]
    for mode in ("raise", "wrap", "clip"):
        shift = 0 if mode == "raise" else -2
        got = sl.choose(_dev(index + shift), [_dev(choices[0]), _dev(choices[1]), choices[2]], mode=mode)
        np.testing.assert_array_equal(got.get(), np.choose(index + shift, choices, mode=mode))
    bad = index.copy()
    bad[123, 45] = 3
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        sl.choose(_dev(bad), choices)

    bits = rng.integers(-1, 2, (70, 1001))
    for axis, order in ((1, "big"), (0, "little"), (None, "big")):
        packed = sl.packbits(_dev(bits), axis=axis, bitorder=order)
        want = np.packbits(bits, axis=axis, bitorder=order)
        np.testing.assert_array_equal(packed.get(), want)
        np.testing.assert_array_equal(sl.unpackbits(_dev(want), axis=axis, count=-5, bitorder=order).get(),
                                      np.unpackbits(want, axis=axis, count=-5, bitorder=order))
    np.testing.assert_array_equal(sl.fromfunction(lambda i, j: (i * 7 + j) % 5, (64, 300), dtype=np.int32).get(),
                                  np.fromfunction(lambda i, j: (i * 7 + j) % 5, (64, 300), dtype=np.int32))

    z = np.zeros((40, 50, 60), np.float32)
    z[3:17, 20, 8:9] = 1.0
    z[30, 41, 50] = -2.0
    for axis in (None, 1, (0, 2)):
        got = sl.trim_zeros(_dev(z), axis=axis)
        assert got.device.startswith("cuda")
        np.testing.assert_array_equal(got.get(), np.trim_zeros(z, axis=axis))
    h = rng.standard_normal(10000)
    for bins in (10, "auto", "fd"):
        np.testing.assert_allclose(sl.histogram_bin_edges(_dev(h), bins).get(), np.histogram_bin_edges(h, bins), rtol=1e-14)


def test_from_dlpack_shares_cuda_memory() -> None:
    """A torch CUDA tensor (float32 and bfloat16) becomes a stitchlab array over the same memory."""
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    x = sl.from_dlpack(t)
    assert x.device.startswith("cuda")
    t[1, 2] = -5.0
    torch.cuda.synchronize()
    np.testing.assert_array_equal(x.get(), t.cpu().numpy())
    b = torch.linspace(-3, 3, 1000, device="cuda").to(torch.bfloat16)
    y = sl.from_dlpack(b) * 2
    assert y.dtype == as_dtype("bfloat16")
    np.testing.assert_array_equal(y.get().astype(np.float32), (b.float() * 2).cpu().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
@pytest.mark.parametrize("bounds", ["default", "zero"])
def test_tested_vector_chunks_are_numpys(monkeypatch: pytest.MonkeyPatch, dtype: str, bounds: str) -> None:
    """Vector chunks the branch tests (rows of another extent than a multiple of the width, narrow
    pads read in the chunks away from their edges) at sizes where the kernels are vectorized, with
    the code generator's row bounds and with every row tested (``bounds="zero"``; rows of other
    extents, so no plan is shared: the batch extent is not part of a plan's key): NumPy's bits for
    inputs aligned and one element off."""
    import cupy as cp

    from stitchlab.codegen import elemental

    extra = 0
    if bounds == "zero":
        for name in ("SHIFTED_ROW_WARPS", "PLAIN_ROW_WARPS", "PAD_ROW_WARPS"):
            monkeypatch.setattr(elemental, name, 0)
        extra = 8
    rng = np.random.default_rng(12)
    for rows, cols in ((600, 1031 + extra), (2100, 259 + extra), (600, 1024 + extra)):
        a0 = rng.integers(-50, 50, rows * cols + 1).astype(as_dtype(dtype))
        for off in (0, 1):
            part = cp.asarray(a0)[off:off + rows * cols].reshape(rows, cols)
            x, a = sl.asarray(part), a0[off:off + rows * cols].reshape(rows, cols)
            b, bh = sl.asarray(cp.asarray(a[0])), a[0]
            cases = [
                (x[1:-1, 2:] + x[1:-1, :-2] + x[:-2, 1:-1] + x[2:, 1:-1], a[1:-1, 2:] + a[1:-1, :-2] + a[:-2, 1:-1] + a[2:, 1:-1]),
                (x[:, 1:] - x[:, :-1], a[:, 1:] - a[:, :-1]),
                (x * 2 + b, a * 2 + bh),
            ]
            for mode in ("constant", "reflect"):
                p, q = sl.pad(x, 1, mode), np.pad(a, 1, mode)
                cases.append((p[1:-1, :-2] + p[1:-1, 2:] + p[1:-1, 1:-1], q[1:-1, :-2] + q[1:-1, 2:] + q[1:-1, 1:-1]))
            for got, want in cases:
                assert sl.explain(got).kernels[0].schedule.vec > 1
                np.testing.assert_array_equal(_host(got), want, err_msg=f"{rows}x{cols} off {off}")
