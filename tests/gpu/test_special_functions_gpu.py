"""The SciPy-style functions and the NumPy functions of ``tests/test_special_functions.py`` in
kernels, on CuPy inputs, against NumPy (and float64 formulas) on the host.

Exact where one rounding gives NumPy's bits (``deg2rad`` and its kin are one multiply by
NumPy's constant; selections, views, infinity tests); within tolerances where the GPU's
functions or summation order differ (``erfc``, ``softmax``, ``log_softmax``, ``logit``,
``xlogy``, products, scans, ``trapezoid``).

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_special_functions_gpu.py -q``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from lazycheck import log_softmax_f64

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e30, 65504.0, 180.0, -90.0]
#: relative tolerance against float64 results
RTOL = {"float16": 4e-3, "bfloat16": 2e-2, "float32": 3e-6, "float64": 1e-13}


def _dev(x: np.ndarray) -> sl.LazyArray:
    import cupy as cp

    return sl.asarray(cp.asarray(x))


def _values(dtype: str, seed: int, n: int = 20000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal(n) * 200, rng.standard_normal(n // 4), SPECIAL])
    return x.astype(as_dtype(dtype))


def _close(got: np.ndarray, want: np.ndarray, dtype: str, what: str) -> None:
    assert got.dtype == as_dtype(dtype), (what, got.dtype)
    g = got.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(want), err_msg=f"{what}: NaN positions")
    np.testing.assert_allclose(g, want, rtol=RTOL[dtype], atol=RTOL[dtype] * 1e-3, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "radians", "degrees"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int16"])
def test_angle_conversions_are_numpys_bits(name: str, dtype: str) -> None:
    x = _values(dtype, 1) if dtype != "int16" else np.arange(-300, 300, dtype=np.int16)
    want = getattr(np, name)(x)
    got = getattr(sl, name)(_dev(x)).get()
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    nan = np.isnan(want.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float64)), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_erfc(dtype: str) -> None:
    x = np.concatenate([np.random.default_rng(2).standard_normal(20000) * 3, [0.0, -0.0, 9.0, -9.0, np.inf, -np.inf, np.nan]])
    x = x.astype(dtype)
    want = np.array([math.erfc(v) for v in x.astype(np.float64)])
    got = sl.erfc(_dev(x)).get()
    if dtype == "float16":  # compared where float16 holds the value (not its subnormal tail)
        keep = np.abs(want) > 1e-4
        got, want = got[keep], want[keep]
    _close(got, want, dtype, "erfc")


@pytest.mark.parametrize("shape, axis", [((256, 1000), -1), ((64, 4096), -1), ((1000, 40), -1), ((1000, 40), 0),
                                         ((4, 100_000), -1)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_softmax_and_log_softmax(shape: tuple[int, int], axis: int, dtype: str) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 4).astype(as_dtype(dtype))
    if axis == -1:
        x[1, :7] = -np.inf
    ref = log_softmax_f64(x, axis)
    xs = _dev(x)
    for fn, want in ((sl.softmax, np.exp(ref)), (sl.log_softmax, ref)):
        y = fn(xs, axis=axis)
        if shape[1] < 100_000:  # (few long rows: split over blocks, two kernels per reduction)
            assert len(sl.explain(y).kernels) == 1, fn.__name__
        got = y.get()
        assert got.dtype == x.dtype
        finite = np.isfinite(want)
        np.testing.assert_array_equal(got[~finite], want[~finite].astype(got.dtype), err_msg=fn.__name__)
        scale = np.abs(want[finite]).max()
        np.testing.assert_allclose(got[finite].astype(np.float64), want[finite], rtol=RTOL[dtype],
                                   atol=RTOL[dtype] * scale, err_msg=fn.__name__)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logit_and_xlogy(dtype: str) -> None:
    rng = np.random.default_rng(4)
    p = np.concatenate([rng.random(20000), [0.0, 1.0, 0.3, 0.65, 0.5, -0.5, 1.5, np.nan]]).astype(dtype)
    p64 = p.astype(np.float64)
    s = 2 * (p64 - 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where((p64 >= 0.3) & (p64 <= 0.65), np.log1p(s) - np.log1p(-s), np.log(p64 / (1 - p64)))
    got = sl.logit(_dev(p)).get()
    fin = np.isfinite(want)
    np.testing.assert_array_equal(got[~fin].astype(np.float64), want[~fin])
    np.testing.assert_allclose(got[fin].astype(np.float64), want[fin], rtol=RTOL[dtype] * 4, atol=RTOL[dtype])
    y = np.concatenate([rng.random(20000) * 5, [0.0, 0.0, np.nan, np.inf, 2.0]]).astype(dtype)
    x = np.concatenate([rng.standard_normal(20000), [0.0, 1.0, 0.0, 0.0, 0.0]]).astype(dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where((x == 0) & ~np.isnan(y), 0.0, x.astype(np.float64) * np.log(y.astype(np.float64)))
    got = sl.xlogy(_dev(x), _dev(y)).get()
    fin = np.isfinite(want)
    np.testing.assert_array_equal(got[~fin].astype(np.float64), want[~fin])
    np.testing.assert_allclose(got[fin].astype(np.float64), want[fin], rtol=RTOL[dtype] * 4, atol=RTOL[dtype])
    np.testing.assert_array_equal(got[-5:], np.array([0.0, -np.inf, np.nan, 0.0, 0.0], dtype))


def test_select_infinities_and_views_are_numpys() -> None:
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((300, 500)) * 3).astype(np.float32)
    x[::7, ::5] = np.inf
    x[3::11, ::3] = -np.inf
    x[5::13, 1::4] = np.nan
    xs = _dev(x)
    conds, choices = [x < -1, x > 2, np.isnan(x)], [x * 2, x - 1, np.float32(0)]
    y = sl.select([xs < -1, xs > 2, sl.isnan(xs)], [xs * 2, xs - 1, np.float32(0)], -5.0)
    assert len(sl.explain(y).kernels) == 1
    np.testing.assert_array_equal(y.get(), np.select(conds, choices, -5.0))
    for name in ("isposinf", "isneginf"):
        np.testing.assert_array_equal(getattr(sl, name)(xs).get(), getattr(np, name)(x))
    for k in range(4):
        np.testing.assert_array_equal((sl.rot90(xs, k) * 2).get(), np.rot90(x, k) * 2)
    np.testing.assert_array_equal(sl.append(xs[:3], xs[4:6], axis=0).get(), np.append(x[:3], x[4:6], axis=0))
    i = rng.integers(-1000, 1000, 5000).astype(np.int32)
    np.testing.assert_array_equal(sl.ediff1d(_dev(i), to_begin=[7], to_end=-3).get(), np.ediff1d(i, to_begin=[7], to_end=-3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_products_scans_and_trapezoid(dtype: str) -> None:
    rng = np.random.default_rng(6)
    x = (1 + rng.standard_normal((200, 300)) * 0.01).astype(dtype)
    x[::3, ::7] = np.nan
    x[17, :] = np.nan
    xs = _dev(x)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(sl.nanprod(xs, axis=1).get(), np.nanprod(x64, axis=1), rtol=RTOL[dtype] * 30)
    np.testing.assert_allclose(sl.nanprod(xs, axis=0).get(), np.nanprod(x64, axis=0), rtol=RTOL[dtype] * 30)
    np.testing.assert_allclose(sl.nancumsum(xs, axis=1).get(), np.nancumsum(x64, axis=1), rtol=RTOL[dtype] * 30)
    np.testing.assert_allclose(sl.nancumprod(xs, axis=0).get(), np.nancumprod(x64, axis=0), rtol=RTOL[dtype] * 30)
    y = np.nan_to_num(x)
    t = np.cumsum(np.abs(rng.standard_normal(300)))
    got: Any = sl.trapezoid(_dev(y), x=t, axis=1)
    assert len(sl.explain(got).kernels) == 1
    np.testing.assert_allclose(got.get(), np.trapezoid(y.astype(np.float64), x=t, axis=1), rtol=RTOL[dtype] * 30)
