"""``sl.frexp`` against NumPy's ``frexp`` on the CPU (the numpy backend): every float16 and
bfloat16 value, float32 and float64 special and random values, integer and bool inputs (NumPy's
loops), both results from one kernel, and ``np.frexp`` on a stitchlab array. The kernels' bits:
``tests/compiler/test_frexp_host.py`` (host C++) and ``tests/gpu/test_more_ufuncs_gpu.py``."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import stitchlab as sl


def _values(dtype: str) -> np.ndarray:
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    if dt.itemsize == 2:
        return np.arange(1 << 16, dtype=np.uint16).view(dt)
    info = np.finfo(dt)
    rng = np.random.default_rng(2)
    special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, info.tiny, info.max, -info.max, info.smallest_subnormal]
    return np.concatenate([np.array(special, dt), (rng.standard_normal(2000) * 10.0 ** rng.integers(-40, 40, 2000)).astype(dt)])


def _same(got: sl.LazyArray, want: np.ndarray) -> None:
    g = got.get()
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_array_equal(np.isnan(g.astype(np.float64)), np.isnan(want.astype(np.float64)))
    keep = ~np.isnan(want.astype(np.float64))
    np.testing.assert_array_equal(g[keep].view(np.uint8), want[keep].view(np.uint8))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_frexp_is_numpys(dtype: str) -> None:
    x = _values(dtype)
    mantissa, exponent = sl.frexp(sl.asarray(x))
    want_m, want_e = np.frexp(x)
    _same(mantissa, want_m)
    np.testing.assert_array_equal(exponent.get(), want_e)
    assert exponent.dtype == np.int32


def test_integer_inputs_and_numpy_dispatch() -> None:
    for a in (np.array([0, 1, -7, 2**31 - 1], np.int32), np.array([0, 255], np.uint8), np.array([True, False])):
        for got, want in zip(sl.frexp(sl.asarray(a)), np.frexp(a), strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.get(), want)
    m, e = np.frexp(sl.asarray(np.array([12.0, -0.1])))
    assert isinstance(m, sl.LazyArray) and isinstance(e, sl.LazyArray)
    np.testing.assert_array_equal(m.get(), [0.75, -0.8])
    np.testing.assert_array_equal(e.get(), [4, -3])
    m, e = sl.frexp(sl.asarray(np.ones((3, 4), np.float32)) * 5)
    assert len(sl.explain(m, e).kernels) == 1
