"""SciPy-style functions (``softmax``, ``log_softmax``, ``logit``, ``xlogy``, ``erfc``, ``expit``)
and more NumPy functions (``deg2rad``/``radians``, ``rad2deg``/``degrees``, ``select``, ``copy``,
``isposinf``/``isneginf``, ``nanprod``, ``nancumsum``/``nancumprod``, ``rot90``, ``append``,
``ediff1d``, ``trapezoid``) on the numpy backend: NumPy's values, dtypes and errors (SciPy's
formulas in float64 where SciPy is the reference), through NumPy's own functions too, and the
kernels they fuse into. The kernels' numerics: ``tests/gpu/test_special_functions_gpu.py``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from lazycheck import families, log_softmax_f64, same

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(11)
A = RNG.standard_normal((6, 7)).astype(np.float32)
SPECIAL = np.array([-3.5, -0.0, 0.0, 0.25, 2.5, 700.0, -700.0, np.inf, -np.inf, np.nan], np.float64)


def _close(got: sl.LazyArray, want: np.ndarray, dtype: Any, rtol: float) -> None:
    value = got.get()
    assert value.dtype == as_dtype(dtype) and value.shape == want.shape, (value.dtype, value.shape, want.shape)
    np.testing.assert_allclose(value.astype(np.float64), want, rtol=rtol, atol=rtol * 10, equal_nan=True)


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "radians", "degrees"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "int64", "bool"])
def test_angle_conversions_are_numpys_bits(name: str, dtype: str) -> None:
    x = (RNG.standard_normal(2000) * 300).astype(as_dtype(dtype)) if dtype != "bool" else RNG.random(50) < 0.5
    if dtype in ("float32", "float64"):
        x = np.concatenate([x, SPECIAL.astype(dtype)])
    want = getattr(np, name)(x)
    for got in (getattr(sl, name)(sl.asarray(x)), getattr(np, name)(sl.asarray(x))):
        value = got.get()
        assert value.dtype == want.dtype, (value.dtype, want.dtype)
        np.testing.assert_array_equal(value.view(np.uint8), want.view(np.uint8))


def test_rad2deg_constant_is_numpys_float_division() -> None:
    # float32's 180/pi rounded from float64 is one ulp from NumPy's 180.0f / (float)pi: x = 1 tells
    x = np.ones(1, np.float32)
    assert sl.rad2deg(sl.asarray(x)).get()[0] == np.float32(180) / np.float32(np.pi) == np.rad2deg(x)[0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erfc_and_expit(dtype: str) -> None:
    x = np.concatenate([RNG.standard_normal(200) * 3, [0.0, -0.0, 30.0, -30.0, np.inf, -np.inf, np.nan]]).astype(dtype)
    want = np.array([math.erfc(v) for v in x.astype(np.float64)])
    _close(sl.erfc(sl.asarray(x)), want, dtype, 1e-6 if dtype == "float32" else 1e-14)
    same(sl.expit(sl.asarray(x)), sl.sigmoid(sl.asarray(x)).get())


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_softmax_and_log_softmax_are_scipys(axis: Any, dtype: str) -> None:
    x = (A * 5).astype(dtype)
    out = np.float64 if dtype == "int32" else dtype
    _close(sl.softmax(sl.asarray(x), axis=axis), np.exp(log_softmax_f64(x, axis)), out, 1e-5)
    _close(sl.log_softmax(sl.asarray(x), axis=axis), log_softmax_f64(x, axis), out, 1e-5)


def test_log_softmax_far_tails_and_infinities() -> None:
    x = np.array([[0.0, 1000.0, -1000.0], [-np.inf, 0.0, 1.0], [np.inf, 1.0, 2.0], [-np.inf, -np.inf, -np.inf]])
    want = log_softmax_f64(x, 1)
    got = sl.log_softmax(sl.asarray(x), axis=1).get()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-15)
    assert got[0, 2] == -2000.0  # where softmax itself is 0 and its log -inf
    assert sl.softmax(sl.asarray(x[:1]), axis=1).get()[0, 2] == 0.0


def test_softmax_over_rows_is_one_kernel() -> None:
    x = sl.asarray(A)
    assert len(families(sl.softmax(x, axis=-1))) == 1
    assert len(families(sl.log_softmax(x, axis=-1))) == 1
    assert len(families(sl.softmax(x, axis=0))) == 1  # column normalization: one column kernel


def test_logit_is_scipys_piecewise_formula() -> None:
    p = np.concatenate([RNG.random(500), [0.0, 1.0, 0.3, 0.65, 0.5, 1e-300, 1 - 1e-16, -0.5, 1.5, np.nan]])
    near = (p >= 0.3) & (p <= 0.65)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = 2 * (p - 0.5)
        want = np.where(near, np.log1p(s) - np.log1p(-s), np.log(p / (1 - p)))
    got = sl.logit(sl.asarray(p)).get()
    np.testing.assert_allclose(got, want, rtol=1e-15, equal_nan=True)
    assert got[500] == -np.inf and got[501] == np.inf and got[504] == 0.0
    assert np.isnan(got[507:]).all()
    assert sl.logit(sl.asarray(np.float32(0.75))).dtype == np.float32
    assert sl.logit(sl.asarray(np.array([0, 1]))).dtype == np.float64
    same(sl.expit(sl.logit(sl.asarray(np.array([0.25, 0.5])))), np.array([0.25, 0.5]))


def test_xlogy_is_zero_where_x_is() -> None:
    x = np.array([0.0, 0.0, 0.0, 2.0, -1.0, 0.0])
    y = np.array([0.0, 5.0, np.nan, np.e, 1.0, np.inf])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))
    same(sl.xlogy(sl.asarray(x), y), want)
    assert sl.xlogy(sl.asarray(np.array([1, 2])), 3).dtype == np.float64
    assert sl.xlogy(sl.asarray(A), np.float32(2)).dtype == np.float32


@pytest.mark.parametrize("default", [0, -1.5, np.float32(7)])
def test_select_is_numpys(default: Any) -> None:
    x = np.arange(12).reshape(3, 4)
    conds = [x < 3, x > 8, np.array([True, False, True, False])]
    choices = [x, x * 10, np.float32(-2)]
    want = np.select(conds, choices, default)
    for got in (sl.select([sl.asarray(c) for c in conds], [sl.asarray(c) for c in choices], default),
                np.select([sl.asarray(c) for c in conds], choices, default)):
        same(got, want)
    same(sl.select([sl.asarray(x) > 5], [sl.asarray(x.astype(np.int8))]), np.select([x > 5], [x.astype(np.int8)]))
    assert len(families(sl.select([sl.asarray(x) < 3, sl.asarray(x) > 8], [sl.asarray(x), sl.asarray(x) * 2], 0))) == 1


def test_select_errors_are_numpys() -> None:
    x = sl.asarray(A)
    with pytest.raises(ValueError, match="same length"):
        sl.select([x > 0], [x, x])
    with pytest.raises(ValueError, match="empty condition list"):
        sl.select([], [])
    with pytest.raises(TypeError, match="invalid entry 0 in condlist: should be boolean"):
        sl.select([x], [x])


def test_copy_is_detached_from_its_input() -> None:
    h = A.copy()
    c = sl.copy(h)
    np_c = np.copy(sl.asarray(h))  # NumPy's copy of a lazy array: lazy
    h[0, 0] = 123.0
    assert c.get()[0, 0] == A[0, 0]
    assert isinstance(np_c, sl.LazyArray)
    same(sl.copy(sl.asarray(A) * 2), A * 2)
    with pytest.raises(ValueError, match="order='F' is not supported"):
        sl.copy(A, order="F")


@pytest.mark.parametrize("x", [SPECIAL, SPECIAL.astype(np.float16), np.array([1, -2, 3]), np.array([True, False])])
def test_isposinf_and_isneginf_are_numpys(x: np.ndarray) -> None:
    for name in ("isposinf", "isneginf"):
        same(getattr(sl, name)(sl.asarray(x)), getattr(np, name)(x))
        same(getattr(np, name)(sl.asarray(x)), getattr(np, name)(x))


@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": 1, "dtype": np.float64}, {"axis": -1, "keepdims": True}])
def test_nanprod_is_numpys(kwargs: dict[str, Any]) -> None:
    x = A.copy()
    x[1, :] = np.nan
    x[2, 3] = np.nan
    same(sl.nanprod(sl.asarray(x), **kwargs), np.nanprod(x, **kwargs))
    same(np.nanprod(sl.asarray(x), **kwargs), np.nanprod(x, **kwargs))
    same(sl.nanprod(sl.asarray(np.arange(1, 7, dtype=np.int16))), np.nanprod(np.arange(1, 7, dtype=np.int16)))


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": 1, "dtype": np.float64}])
def test_nan_scans_are_numpys(name: str, kwargs: dict[str, Any]) -> None:
    x = (A[:3, :4] * 2).astype(np.float64)
    x[0, 1] = x[2, 0] = np.nan
    want = getattr(np, name)(x, **kwargs)
    np.testing.assert_allclose(getattr(sl, name)(sl.asarray(x), **kwargs).get(), want, rtol=1e-12)
    assert getattr(np, name)(sl.asarray(x), **kwargs).dtype == want.dtype
    ints = np.arange(6, dtype=np.int8)
    same(getattr(sl, name)(sl.asarray(ints)), getattr(np, name)(ints))


def test_rot90_is_numpys() -> None:
    x = np.arange(24).reshape(2, 3, 4)
    for k in range(-5, 6):
        for axes in [(0, 1), (1, 0), (1, 2), (2, 0), (-1, 0), (0, -2)]:
            same(sl.rot90(sl.asarray(x), k, axes), np.rot90(x, k, axes))
    same(np.rot90(sl.asarray(x)), np.rot90(x))
    for axes, match in [((0, 0), "Axes must be different"), ((0, 3), "Axes must be different"), ((0, 4), "out of range"), ((0, 1, 2), "len\\(axes\\) must be 2"),
                        ((0, -3), "Axes must be different")]:
        with pytest.raises(ValueError, match=match):
            sl.rot90(sl.asarray(x), 1, axes)
    assert families(sl.rot90(sl.asarray(x)) * 2) == ["pointwise"]  # a view, fused


@pytest.mark.parametrize("args, kwargs", [((A, [1.5, 2.5]), {}), ((A, A[:2]), {"axis": 0}), ((A[0], 3), {}),
                                          ((np.arange(3), [[4.5]]), {}), ((A, A[:, :1]), {"axis": -1})])
def test_append_is_numpys(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    same(sl.append(sl.asarray(args[0]), *args[1:], **kwargs), np.append(*args, **kwargs))
    same(np.append(sl.asarray(args[0]), *args[1:], **kwargs), np.append(*args, **kwargs))


def test_ediff1d_is_numpys() -> None:
    x = np.array([[1, 4], [9, 16]], np.int32)
    for kwargs in ({}, {"to_begin": -1}, {"to_end": [7, 8]}, {"to_begin": np.array([[1], [2]], np.int8), "to_end": 0}):
        same(sl.ediff1d(sl.asarray(x), **kwargs), np.ediff1d(x, **kwargs))
        same(np.ediff1d(sl.asarray(x), **kwargs), np.ediff1d(x, **kwargs))
    same(sl.ediff1d(sl.asarray(A)), np.ediff1d(A))
    with pytest.raises(TypeError, match="`to_begin` must be compatible"):
        sl.ediff1d(sl.asarray(x), to_begin=0.5)
    with pytest.raises(TypeError, match="boolean subtract"):
        sl.ediff1d(sl.asarray(np.array([True, False])))


@pytest.mark.parametrize("kwargs", [{}, {"dx": 0.25}, {"axis": 0}, {"x": np.linspace(0, 1, 7)},
                                    {"x": np.arange(6), "axis": 0}, {"x": np.cumsum(np.abs(A), axis=1) + 0}])
def test_trapezoid_is_numpys(kwargs: dict[str, Any]) -> None:
    want = np.trapezoid(A, **kwargs)
    got = sl.trapezoid(sl.asarray(A), **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert len(families(got)) == 1
    np.testing.assert_allclose(got.get(), want, rtol=1e-6)
    np.testing.assert_allclose(np.trapezoid(sl.asarray(A), **kwargs).get(), want, rtol=1e-6)


# --- NumPy 2's array-API names, vecdot and isin ------------------------------------------------------
def test_array_api_names_are_numpys() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    same(sl.concat([sl.asarray(x), sl.asarray(x)], axis=1), np.concat([x, x], axis=1))
    same(sl.permute_dims(sl.asarray(x), (2, 0, 1)), np.permute_dims(x, (2, 0, 1)))
    for got in (sl.matrix_transpose(sl.asarray(x)), np.matrix_transpose(sl.asarray(x))):
        same(got, np.matrix_transpose(x))
    with pytest.raises(ValueError, match="at least 2-dimensional, but it is 1"):
        sl.matrix_transpose(sl.asarray(x[0, 0]))
    for axis in (0, 1, -1):
        got, want = np.unstack(sl.asarray(x), axis=axis), np.unstack(x, axis=axis)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
    with pytest.raises(ValueError, match="at least 1-d"):
        sl.unstack(sl.asarray(np.float64(1.0)))
    i = np.array([1, 2, 3], np.int16)
    same(sl.bitwise_left_shift(sl.asarray(i), 2), np.bitwise_left_shift(i, 2))
    same(sl.bitwise_right_shift(sl.asarray(i), 1), np.bitwise_right_shift(i, 1))


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("kwargs", [{"axis": 1}, {"axis": 0, "include_initial": True}, {"axis": -1, "dtype": np.float64},
                                    {"axis": 1, "include_initial": True, "dtype": np.int32}])
def test_cumulative_sum_and_prod_are_numpys(name: str, kwargs: dict[str, Any]) -> None:
    x = np.arange(1, 13, dtype=np.int16).reshape(3, 4)
    same(getattr(sl, name)(sl.asarray(x), **kwargs), getattr(np, name)(x, **kwargs))
    same(getattr(np, name)(sl.asarray(x), **kwargs), getattr(np, name)(x, **kwargs))
    v = x[0].astype(np.float32)
    same(getattr(sl, name)(sl.asarray(v), include_initial=True), getattr(np, name)(v, include_initial=True))
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        getattr(sl, name)(sl.asarray(x))


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int32", "bool"])
def test_vecdot_is_numpys(dtype: str) -> None:
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((5, 300)) * 4).astype(dtype) if dtype != "bool" else rng.random((5, 300)) < 0.01
    b = (rng.standard_normal(300) * 4).astype(dtype) if dtype != "bool" else rng.random(300) < 0.01
    def check(got: sl.LazyArray, want: np.ndarray) -> None:
        if dtype == "float32":  # summed in another order
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.get(), want, rtol=1e-5, atol=1e-3)
        else:  # integers wrap in their own dtype, as NumPy's loops do
            same(got, want)

    check(sl.vecdot(sl.asarray(a), b), np.vecdot(a, b))
    check(np.vecdot(sl.asarray(a), b), np.vecdot(a, b))
    check(np.vecdot(sl.asarray(a.T.copy()), b[:, None], axis=0), np.vecdot(a.T, b[:, None], axis=0))
    assert len(families(sl.vecdot(sl.asarray(a), b))) == 1
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
        sl.vecdot(sl.asarray(a), b[:7])


@pytest.mark.parametrize("kwargs", [{}, {"invert": True}, {"kind": "sort"}, {"assume_unique": True}])
def test_isin_is_numpys(kwargs: dict[str, Any]) -> None:
    rng = np.random.default_rng(4)
    e = rng.integers(0, 50, (6, 7))
    t = rng.integers(0, 50, 20)
    for got in (sl.isin(sl.asarray(e), t, **kwargs), np.isin(sl.asarray(e), t, **kwargs)):
        same(got, np.isin(e, t, **kwargs))
    f = np.array([1.5, np.nan, 2.0, -0.0, 7.0])
    same(sl.isin(sl.asarray(f), [0.0, np.nan, 2], **kwargs), np.isin(f, [0.0, np.nan, 2], **kwargs))
    same(sl.isin(sl.asarray(e), np.array([], np.int64), **kwargs), np.isin(e, np.array([], np.int64), **kwargs))
    same(sl.isin(sl.asarray(e), [[3, 4], [5, 49]], **kwargs), np.isin(e, [[3, 4], [5, 49]], **kwargs))


def test_isin_errors_are_numpys() -> None:
    with pytest.raises(ValueError, match="Invalid kind: 'hash'"):
        sl.isin(sl.asarray(np.arange(3)), [1], kind="hash")
    with pytest.raises(ValueError, match="'table' method is only supported for boolean or integer"):
        sl.isin(sl.asarray(np.arange(3.0)), [1.0], kind="table")


# --- gradient, tri, indices, logspace, diagflat ---------------------------------------------------------
COORDS = np.cumsum(np.random.default_rng(5).random(6) + 0.1)


@pytest.mark.parametrize("args, kwargs", [((), {}), ((2.0,), {}), ((0.5, 3), {}), ((COORDS, 2.0), {}),
                                          ((), {"edge_order": 2}), ((COORDS, np.arange(7)), {"edge_order": 2}),
                                          ((), {"axis": 1}), ((np.array([0, 1, 3, 4, 8, 9, 10.0]),), {"axis": -1, "edge_order": 2}),
                                          ((np.arange(0.0, 12.0, 2.0),), {"axis": 0})], ids=str)
def test_gradient_is_numpys(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    f = np.random.default_rng(6).standard_normal((6, 7))
    want = np.gradient(f, *args, **kwargs)
    for got in (sl.gradient(sl.asarray(f), *args, **kwargs), np.gradient(sl.asarray(f), *args, **kwargs)):
        pairs = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
        assert isinstance(got, tuple) == isinstance(want, tuple)
        for g, w in pairs:
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g.get(), w, rtol=1e-12, atol=1e-12)


def test_gradient_dtypes_and_errors_are_numpys() -> None:
    i = np.array([1, 2, 4, 7, 11])
    same(sl.gradient(sl.asarray(i), edge_order=2), np.gradient(i, edge_order=2))
    h = np.random.default_rng(7).standard_normal((4, 5)).astype(np.float16)
    for g, w in zip(sl.gradient(sl.asarray(h)), np.gradient(h), strict=True):
        same(g, w)
    with pytest.raises(ValueError, match="at least \\(edge_order \\+ 1\\) elements"):
        sl.gradient(sl.asarray(np.arange(2.0)), edge_order=2)
    with pytest.raises(ValueError, match="'edge_order' greater than 2"):
        sl.gradient(sl.asarray(np.arange(5.0)), edge_order=3)
    with pytest.raises(ValueError, match="distances must match the length"):
        sl.gradient(sl.asarray(np.arange(5.0)), np.arange(4.0))
    with pytest.raises(TypeError, match="invalid number of arguments"):
        sl.gradient(sl.asarray(np.ones((3, 3))), 1.0, 2.0, 3.0)


def test_tri_indices_logspace_diagflat_are_numpys() -> None:
    for args in [(3,), (2, 4), (4, 3, -1), (3, 3, 5)]:
        same(sl.tri(*args), np.tri(*args))
    same(sl.tri(3, 2, 0, int), np.tri(3, 2, 0, int))
    for dims in [(2, 3), (4,), (2, 1, 3)]:
        same(sl.indices(dims), np.indices(dims))
        for g, w in zip(sl.indices(dims, dtype=np.int32, sparse=True), np.indices(dims, dtype=np.int32, sparse=True), strict=True):
            same(g, w)
    for args, kwargs in [((0, 3, 4), {}), ((0, 2, 3), {"endpoint": False}), ((1, 5, 5), {"base": 2.0, "dtype": np.float32}),
                         ((-1.5, 2, 7), {"base": 3})]:
        got, want = sl.logspace(*args, **kwargs), np.logspace(*args, **kwargs)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.get(), want, rtol=1e-14)
    for v, k in [(np.array([[1, 2], [3, 4]]), 0), (np.array([5.0, 6.0]), -1), (np.array([7]), 2)]:
        same(sl.diagflat(sl.asarray(v), k), np.diagflat(v, k))
        same(np.diagflat(sl.asarray(v), k), np.diagflat(v, k))
    assert len(families(sl.tri(64, 64) * sl.asarray(np.ones((64, 64))))) == 1  # computed where it is used


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows_are_numpys(name: str) -> None:
    for m in (-3, 0, 1, 2, 5, 12, 51, np.int8(7)):
        same(getattr(sl, name)(m), getattr(np, name)(m))
    with pytest.raises(TypeError):
        getattr(sl, name)(5.5)  # (NumPy takes 5.5 and returns 5 points; an integer count is asked for here)


@pytest.mark.parametrize("args", [(1, 1000, 4), (-1, -1000, 5), (1, 256, 9, False), (2.0, 3.5, 7), (1, -8, 4),
                                  (np.float32(1), np.float32(9), 3), (1, 9, 3, True, np.float32), (5, 5, 1), (3, 27, 0),
                                  (1, 16, 5, True, np.int64), (0.001, 1e6, 10, True, None, -1)], ids=str)
def test_geomspace_is_numpys(args: tuple[Any, ...]) -> None:
    with np.errstate(invalid="ignore"):  # (ends of opposite signs: NaN between them)
        want = np.geomspace(*args)
    got = sl.geomspace(*args).get()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # (NaN equal to NaN)


def test_geomspace_refuses_what_numpy_refuses() -> None:
    with pytest.raises(ValueError, match="^Geometric sequence cannot include zero$"):
        sl.geomspace(0, 10)
    with pytest.raises(ValueError, match="^Geometric sequence cannot include zero$"):
        sl.geomspace(np.array([1.0, 0.0]), 10)
    with pytest.raises(TypeError, match="real"):
        sl.geomspace(1j, 10)
    with pytest.raises(np.exceptions.AxisError):
        sl.geomspace(1, 10, axis=2)


ENDS = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1e3]])


@pytest.mark.parametrize("args, kwargs", [
    ((0, 1, 5), {"retstep": True}), ((0, 1, 1), {"retstep": True}), ((2, -1, 4), {"endpoint": False, "retstep": True}),
    ((np.float32(0), 1, 7), {}), ((np.float16(0.5), 3, 6), {"retstep": True}), ((np.int16(1), np.int16(9), 4), {}),
    ((ENDS[0], ENDS[1], 5), {}), ((ENDS[0], 2.0, 4), {"axis": 1, "retstep": True}), ((0.0, ENDS, 3), {"axis": -1}),
    ((ENDS.astype(np.float32), 7, 5), {"axis": 2, "endpoint": False}), ((-3, 10, 7), {"dtype": np.int16}),
    ((ENDS[0], 11, 6), {"dtype": np.int64, "axis": -1}), ((0.0, 5e-324, 4), {"retstep": True}),
    ((1e10, np.float16(-3.0), 4), {})], ids=str)
def test_linspace_takes_numpys_arguments_and_array_ends(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with np.errstate(all="ignore"):
        want = np.linspace(*args, **kwargs)
    got = sl.linspace(*args, **kwargs)
    if kwargs.get("retstep"):
        (got, got_step), (want, want_step) = got, want
        got_step = got_step.get() if isinstance(got_step, sl.LazyArray) else got_step
        assert np.asarray(got_step).dtype == np.asarray(want_step).dtype
        np.testing.assert_array_equal(got_step, want_step)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.get(), want, rtol=1e-15 if want.dtype == np.float64 else 1e-6)


@pytest.mark.parametrize("start, stop", [(0, "bf"), (2.5, "bf"), ("bf", 2.5), (np.int8(1), "bf"), (np.int64(3), "bf"),
                                         (np.float32(1.25), "bf"), ("bf", "bf"), ("bf", np.float16(3))], ids=str)
def test_linspace_of_bfloat16_ends_is_numpys_bit_for_bit(start: Any, stop: Any) -> None:
    """bfloat16 ends take ml_dtypes' promotion, as NumPy's ``linspace`` does (a Python number's
    start with a bfloat16 stop is float32, a NumPy integer's float64, two bfloat16 ends bfloat16)."""
    bf = (ENDS[0] * 7).astype(sl.bfloat16)
    start, stop = (bf if v == "bf" else v for v in (start, stop))
    for num, endpoint, dtype in ((7, False, None), (5, True, None), (4, True, sl.bfloat16), (6, False, np.int16)):
        want = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
        got = sl.linspace(*(sl.asarray(v) if isinstance(v, np.ndarray) else v for v in (start, stop)), num,
                          endpoint=endpoint, dtype=dtype)
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got.get().view(f"u{want.itemsize}"), want.view(f"u{want.itemsize}"))


@pytest.mark.parametrize("args, kwargs", [
    ((ENDS[0], ENDS[1], 4), {}), ((0, ENDS[0], 5), {"axis": 1, "base": 2}), ((np.float32(0), np.float32(2), 3), {}),
    ((0, 2, 3), {"base": np.array([2.0, 3.0]), "axis": -1}), ((1, 2, 4), {"base": np.float32(3)})], ids=str)
def test_logspace_takes_array_ends_bases_and_axis(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    got, want = sl.logspace(*args, **kwargs), np.logspace(*args, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.get(), want, rtol=1e-13 if want.dtype == np.float64 else 1e-6)


@pytest.mark.parametrize("args, kwargs", [
    ((ENDS[0], ENDS[1], 5), {}), ((ENDS, 8.0, 4), {"axis": -1, "endpoint": False}),
    ((1e10, 1, 5), {"endpoint": False, "dtype": np.float16}), ((np.float32(1), ENDS[1], 3), {"dtype": np.float32})], ids=str)
def test_geomspace_takes_array_ends(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with np.errstate(all="ignore"):
        want = np.geomspace(*args, **kwargs)
    got = sl.geomspace(*args, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.get(), want, rtol=1e-13 if want.dtype == np.float64 else 1e-6)


def test_edge_cases_are_numpys() -> None:
    import ml_dtypes

    b = np.array([0.5, -1.0, 2.0], ml_dtypes.bfloat16)
    assert sl.vecdot(sl.asarray(b), sl.asarray(b)).dtype == np.vecdot(b, b).dtype == np.float32  # no bfloat16 loop
    assert float(sl.vecdot(sl.asarray(b), sl.asarray(b))) == float(np.vecdot(b, b))
    g = sl.gradient(sl.asarray(b))
    assert g.dtype == np.gradient(b).dtype == np.float64  # bfloat16 is not one of NumPy's inexact types
    np.testing.assert_allclose(g.get(), np.gradient(b), rtol=1e-2)
    for name in ("cumulative_sum", "cumulative_prod"):  # a 0-d array scans as one element
        for kwargs in ({}, {"include_initial": True}):
            same(getattr(sl, name)(sl.asarray(np.float64(2.5)), **kwargs), getattr(np, name)(np.float64(2.5), **kwargs))
    for x in (np.zeros(0, np.float32), np.zeros((3, 0))):
        same(sl.nanprod(sl.asarray(x), axis=-1), np.nanprod(x, axis=-1))
        same(sl.rot90(sl.asarray(x.reshape(1, -1))), np.rot90(x.reshape(1, -1)))
        same(sl.isin(sl.asarray(x), [1.0]), np.isin(x, [1.0]))
