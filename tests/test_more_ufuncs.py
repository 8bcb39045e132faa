"""``arcsinh``, ``arccosh``, ``arctanh``, ``cbrt``, ``rint``, ``signbit``, ``hypot``,
``copysign``, ``logaddexp``, ``logaddexp2``, NumPy 2's array-API aliases (``acos``, ``atan2``,
``bitwise_not``...) and ``round``/``around``, on the numpy backend against NumPy: dtypes and
bits. (The kernels: tests/gpu/test_more_ufuncs_gpu.py; NVRTC: tests/compiler/test_nvrtc_compiles.py.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype, cast

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(11)
UNARY = ["arcsinh", "arccosh", "arctanh", "cbrt", "rint", "signbit"]
BINARY = ["hypot", "copysign", "logaddexp", "logaddexp2", "fmod", "heaviside"]
ALIASES = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "atan2": "arctan2", "asinh": "arcsinh",
           "acosh": "arccosh", "atanh": "arctanh", "bitwise_not": "invert", "bitwise_invert": "invert"}


def _bits(got: sl.LazyArray, want: np.ndarray) -> None:
    value = got.get()
    assert value.dtype == want.dtype and value.shape == want.shape
    np.testing.assert_array_equal(value.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "bool"])
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_new_ufuncs_take_numpys_loops(name: str, dtype: str) -> None:
    args = [(RNG.standard_normal(50) * 3).astype(dtype) for _ in range(1 if name in UNARY else 2)]
    with np.errstate(all="ignore"):
        want = getattr(np, name)(*args)
        _bits(getattr(sl, name)(*(sl.asarray(a) for a in args)), want)
        _bits(getattr(np, name)(*(sl.asarray(a) for a in args)), want)  # NumPy's ufunc on stitchlab arrays


@pytest.mark.parametrize("alias, name", ALIASES.items())
def test_array_api_aliases(alias: str, name: str) -> None:
    assert getattr(np, alias) is getattr(np, name)  # NumPy 2: one ufunc, two names
    x = np.array([5, -3, 0], np.int32) if name == "invert" else np.array([0.25, -0.5, 0.75])
    args = (x, x[::-1].copy()) if name == "arctan2" else (x,)
    with np.errstate(invalid="ignore"):  # arccosh below 1: NaN
        _bits(getattr(sl, alias)(*(sl.asarray(a) for a in args)), getattr(np, name)(*args))
    assert alias in sl.__all__


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint16"])
@pytest.mark.parametrize("decimals", [-3, -1, 0, 1, 2, 5, 12, 30])
def test_round_is_numpys_bits(dtype: str, decimals: int) -> None:
    if np.dtype(as_dtype(dtype)).kind in "iu":
        info = np.iinfo(dtype)
        x = RNG.integers(max(info.min, -10**6), min(info.max, 10**6), 3000).astype(dtype)
    else:
        x = (RNG.standard_normal(3000) * np.array([1, 10, 1000, 0.01])[RNG.integers(0, 4, 3000)]).astype(as_dtype(dtype))
        x[:5] = [np.nan, np.inf, -0.0, 2.5, -0.5]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.round(x, decimals)
        if dtype == "bfloat16":  # in float64, rounded once (ml_dtypes' own loops differ by version)
            want = cast(np.round(x.astype(np.float64), decimals), x.dtype)
        for got in (sl.round(sl.asarray(x), decimals), sl.around(sl.asarray(x), decimals),
                    sl.asarray(x).round(decimals), np.round(sl.asarray(x), decimals), np.around(sl.asarray(x), decimals)):
            _bits(got, want)


def test_round_errors_are_numpys() -> None:
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        sl.round(sl.asarray(np.ones(3)), 1.5)
    with pytest.raises(TypeError, match="dtype\\('bool'\\)"):
        sl.round(sl.asarray(np.array([True, False])), 1)
    with pytest.raises(TypeError):
        np.round(np.array([True, False]), 1)
    _bits(sl.round(sl.asarray(np.array([True, False]))), np.round(np.array([True, False])))  # float16


def test_new_ops_fuse() -> None:
    x = sl.asarray(RNG.standard_normal((64, 512)).astype(np.float32))
    assert len(sl.explain(sl.logaddexp(x, x * 0.5).sum(axis=-1)).kernels) == 1
    assert len(sl.explain(sl.round(sl.hypot(x, 1.0) - sl.cbrt(x), 2)).kernels) == 1


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "bool"])
@pytest.mark.parametrize("name", ["left_shift", "right_shift", "fmod"])
def test_integer_shifts_and_fmod_take_numpys_loops(name: str, dtype: str) -> None:
    x = RNG.integers(-100, 100, 60).astype(dtype)
    y = RNG.integers(-2, 70, 60).astype(dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x, y)
        _bits(getattr(sl, name)(sl.asarray(x), sl.asarray(y)), want)
        _bits(getattr(np, name)(sl.asarray(x), sl.asarray(y)), want)


@pytest.mark.parametrize("name", ["left_shift", "right_shift"])
def test_shifts_of_floats_raise_numpys_type_error(name: str) -> None:
    with pytest.raises(TypeError, match=name):
        getattr(sl, name)(sl.asarray(np.ones(3, np.float32)), 1)


def test_shift_operators() -> None:
    x = np.arange(-8, 8, dtype=np.int16)
    a = sl.asarray(x)
    _bits(a << 3, x << 3)
    _bits(a >> np.int16(2), x >> np.int16(2))
    _bits(2 << sl.asarray(np.arange(4, dtype=np.int8)), 2 << np.arange(4, dtype=np.int8))
    b = sl.asarray(x)
    b >>= 1
    _bits(b, x >> 1)
