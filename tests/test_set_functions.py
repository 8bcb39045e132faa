"""NumPy's set functions (``intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d``), NumPy 2's
``unique_all``/``unique_counts``/``unique_inverse``/``unique_values`` and the ``matvec``/``vecmat``
ufuncs, against NumPy on the numpy backend: values, dtypes, shapes, NaN, empty arrays, errors, and
``np.<name>`` on stitchlab arrays."""

from __future__ import annotations

import re

import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(7)
DTYPES = ["int32", "int8", "uint8", "bool", "float32", "float64"]


def _same(got: object, want: np.ndarray) -> None:
    assert isinstance(got, sl.LazyArray), type(got)
    g = got.get()
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(g, want)


def _pairs(dtype: str) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for k in range(25):
        a = RNG.integers(-4, 5, int(RNG.integers(0, 12))).astype(dtype)
        b = RNG.integers(-4, 5, int(RNG.integers(0, 9))).astype(dtype)
        if a.dtype.kind == "f" and k % 3 == 0:  # NaN differs from NaN: NumPy keeps every one
            a[::3], b[1::4] = np.nan, np.nan
        out.append((a, b))
    out.append((np.zeros(0, dtype), np.zeros(0, dtype)))
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("assume_unique", [False, True])
def test_set_functions_are_numpys(dtype: str, assume_unique: bool) -> None:
    for a, b in _pairs(dtype):
        if assume_unique:
            a, b = np.unique(a), np.unique(b)
        x = sl.asarray(a)
        for name in ("intersect1d", "setdiff1d", "setxor1d"):
            _same(getattr(sl, name)(x, b, assume_unique=assume_unique), getattr(np, name)(a, b, assume_unique=assume_unique))
        got = sl.intersect1d(x, b, assume_unique=assume_unique, return_indices=True)
        for g, w in zip(got, np.intersect1d(a, b, assume_unique=assume_unique, return_indices=True), strict=True):
            _same(g, w)
        _same(sl.union1d(x, b), np.union1d(a, b))


def test_set_functions_flatten_and_promote() -> None:
    a = np.array([[3, 1], [2, 7]], np.int8)
    b = np.array([1.5, 2.0, 7.0])
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        _same(getattr(sl, name)(sl.asarray(a), b), getattr(np, name)(a, b))
        _same(getattr(np, name)(sl.asarray(a), b), getattr(np, name)(a, b))  # NumPy's function on a stitchlab array


def test_unique_all_counts_inverse_values_are_numpy_2s() -> None:
    x = np.array([[3.0, np.nan, 1.0], [np.nan, 3.0, 2.0]], np.float32)
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        got, want = getattr(sl, name)(sl.asarray(x)), getattr(np, name)(x)
        assert type(got).__name__ == type(want).__name__ and got._fields == want._fields
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        assert type(getattr(np, name)(sl.asarray(x))).__name__ == type(want).__name__
    _same(sl.unique_values(sl.asarray(x)), np.unique_values(x))  # every NaN its own value
    ints = np.array([5, -3, 5, 0, -3], np.int8)  # NumPy's own order is unspecified (hashed): stitchlab's is sorted
    _same(sl.unique_values(sl.asarray(ints)), np.sort(np.unique_values(ints)))


def test_set_functions_refuse_tracing() -> None:
    f = sl.jit(lambda a, b: sl.intersect1d(a, b))
    with pytest.raises(RuntimeError, match="cannot be traced by sl.jit"):
        f(np.arange(4), np.arange(2, 6))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "bool", "float16"])
def test_matvec_and_vecmat_are_numpys(dtype: str) -> None:
    for sa, sb in (((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (5, 1, 4)), ((1, 4), (2, 4))):
        m = (RNG.standard_normal(sa) * 3).astype(dtype)
        v = (RNG.standard_normal(sb) * 3).astype(dtype)
        for got, want in ((sl.matvec(sl.asarray(m), v), np.matvec(m, v)),
                          (sl.vecmat(v, sl.asarray(np.swapaxes(m, -1, -2))), np.vecmat(v, np.swapaxes(m, -1, -2))),
                          (np.matvec(sl.asarray(m), v), np.matvec(m, v))):
            assert isinstance(got, sl.LazyArray)
            g = got.get()
            assert g.dtype == want.dtype and g.shape == want.shape
            if dtype.startswith("float"):  # summed in another order
                tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
                np.testing.assert_allclose(g.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
            else:
                np.testing.assert_array_equal(g, want)


def test_matvec_and_vecmat_raise_numpys_errors() -> None:
    for name, args in (("matvec", (np.ones(3), np.ones(3))), ("matvec", (np.ones((2, 3)), np.ones(4))),
                       ("vecmat", (np.ones(3), np.ones((4, 2)))), ("vecmat", (np.ones(()), np.ones((1, 2))))):
        with pytest.raises(ValueError) as want:
            getattr(np, name)(*args)
        with pytest.raises(ValueError, match="^" + re.escape(str(want.value)) + "$"):
            getattr(sl, name)(*(sl.asarray(a) for a in args))


def test_matvec_fuses_into_one_row_kernel() -> None:
    x = sl.asarray(RNG.standard_normal((64, 128)).astype(np.float32))
    plan = sl.explain(sl.tanh(sl.matvec(x, np.ones(128, np.float32))) + 1, device="H200")
    assert len(plan.kernels) == 1 and plan.kernels[0].schedule.family.startswith("row")
