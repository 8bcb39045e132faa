"""NumPy functions added together: ``gcd``, ``lcm``, ``ldexp`` (ops), ``divmod``, ``modf``,
``fix``, ``float_power``, ``sinc``, ``real``/``imag``/``conj``/``angle`` (compositions), the
stacking functions, ``kron``, ``cross``, ``cov``, ``corrcoef``, and the dtype queries
(``result_type``, ``can_cast``, ``iinfo``, ``finfo``, ``asnumpy``): on the numpy backend against
NumPy (values, dtypes, signed zeros, errors), through NumPy's own functions too, and fused where
they are views, broadcasts and elementwise ops. The kernels: ``tests/gpu/test_more_ufuncs_gpu.py``,
``tests/gpu/test_numpy_compositions_gpu.py``; the CUDA of gcd/lcm: ``tests/compiler/test_gcd_lcm_host.py``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from lazycheck import families, same

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 5)).astype(np.float32)
V = RNG.standard_normal(3)
I8 = RNG.integers(-128, 128, (6, 7)).astype(np.int8)
SPECIAL = np.array([-3.5, -3.0, -0.5, -0.0, 0.0, 0.25, 2.5, np.inf, -np.inf, np.nan], np.float32)


def _same_bits(got: sl.LazyArray, want: np.ndarray) -> None:
    """NumPy's dtype, shape, values (NaN where NumPy has NaN) and signs."""
    assert isinstance(got, sl.LazyArray), type(got)
    value = got.get()
    assert value.shape == want.shape and value.dtype == want.dtype, (value.shape, value.dtype, want.shape, want.dtype)
    wide = np.float64 if want.dtype.kind != "c" else want.dtype
    np.testing.assert_array_equal(value.astype(wide), want.astype(wide))  # (bfloat16's NaN compares as float64's)
    np.testing.assert_array_equal(np.signbit(value.astype(wide)), np.signbit(want.astype(wide)))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint32", "int64"])
def test_gcd_and_lcm_take_numpys_loops(dtype: str) -> None:
    x = RNG.integers(0, 100, (5, 6)).astype(dtype)
    y = RNG.integers(0, 100, 6).astype(dtype)
    for name in ("gcd", "lcm"):
        with np.errstate(all="ignore"):
            same(getattr(sl, name)(sl.asarray(x), sl.asarray(y)), getattr(np, name)(x, y))
            same(getattr(np, name)(sl.asarray(x), y), getattr(np, name)(x, y))  # NumPy's ufunc, lazily
    same(sl.gcd(sl.asarray(I8), 12), np.gcd(I8, 12))  # a weak Python int


def test_gcd_of_floats_is_numpys_type_error() -> None:
    with pytest.raises(TypeError, match="gcd"):
        sl.gcd(sl.asarray(A), 2)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16", "int32"])
def test_ldexp_takes_numpys_loops(dtype: str) -> None:
    import ml_dtypes  # noqa: F401  (the "bfloat16" name)

    x = SPECIAL.astype(dtype) if dtype != "int32" else np.arange(-4, 6, dtype=np.int32)
    n = np.array([1, -2, 3, 200, -200, 0, 5, 1, 1, 1], np.int64)
    with np.errstate(all="ignore"):
        want = np.ldexp(x, n)
    _same_bits(sl.ldexp(sl.asarray(x), n), want)
    _same_bits(sl.ldexp(sl.asarray(x), n.astype(np.int32)), np.ldexp(x, n.astype(np.int32)))


def test_ldexp_with_a_float_exponent_is_numpys_type_error() -> None:
    with pytest.raises(TypeError, match="ldexp"):
        sl.ldexp(sl.asarray(A), 2.0)


@pytest.mark.parametrize("x, y", [(np.array([7, -7, 0, 9]), 3), (np.array([7.5, -7.5, 0.0, -0.0], np.float32), -2),
                                  (I8, np.int8(5))])
def test_divmod_is_numpys(x: np.ndarray, y: Any) -> None:
    got, want = sl.divmod(sl.asarray(x), y), np.divmod(x, y)
    assert families(*got) == ["pointwise"]  # quotient and remainder in one kernel
    lazily = np.divmod(sl.asarray(x), y)
    for g, lz, w in zip(got, lazily, want, strict=True):
        _same_bits(g, w)
        _same_bits(lz, w)


@pytest.mark.parametrize("x", [SPECIAL, SPECIAL.astype(np.float64), np.array([3, -2, 0], np.int32), np.array([True, False])])
def test_modf_and_fix_are_numpys(x: np.ndarray) -> None:
    for g, w in zip(sl.modf(sl.asarray(x)), np.modf(x), strict=True):
        _same_bits(g, w)
    for g, w in zip(np.modf(sl.asarray(x)), np.modf(x), strict=True):
        _same_bits(g, w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2.5 deprecates np.fix for np.trunc
        _same_bits(sl.fix(sl.asarray(x)), np.fix(x))
        _same_bits(np.fix(sl.asarray(x)), np.fix(x))


@pytest.mark.parametrize("x", [SPECIAL, np.array([0, 1, -2, 3]), np.array([0.0, 0.5, -1.5], np.float16)])
def test_sinc_angle_real_imag_conj_are_numpys(x: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        for name in ("sinc", "angle", "real", "imag", "conj", "conjugate"):
            _same_bits(getattr(sl, name)(sl.asarray(x)), getattr(np, name)(x))
            _same_bits(getattr(np, name)(sl.asarray(x)), getattr(np, name)(x))
        _same_bits(sl.angle(sl.asarray(x), deg=True), np.angle(x, deg=True))


def test_imag_of_a_real_array_is_read_only_and_real_writes_through_as_numpys() -> None:
    host = np.arange(3.0)
    x = sl.asarray(host.copy())
    for imag in (x.imag, sl.imag(x), np.imag(x)):
        assert imag.flags.writeable is host.imag.flags.writeable is False
        with pytest.raises(TypeError, match=r"\.imag"):
            imag[0] = 1.0  # (NumPy: ValueError, assignment destination is read-only)
    r = x.real
    r[0] = 5.0
    host.real[0] = 5.0
    same(x, host)


@pytest.mark.parametrize("x, y", [(np.array([2, 3], np.int8), -1), (np.abs(A), np.float32(0.5)), (np.array([2.0], np.float16), 2)])
def test_float_power_is_numpys(x: np.ndarray, y: Any) -> None:
    same(sl.float_power(sl.asarray(x), y), np.float_power(x, y))
    same(np.float_power(sl.asarray(x), y), np.float_power(x, y))


def test_elementwise_compositions_fuse() -> None:
    x = sl.asarray(A)
    frac, whole = sl.modf(x)
    assert families(sl.sinc(x) + frac * whole + sl.fix(x) + sl.angle(x) + sl.imag(x)) == ["pointwise"]
    assert families(sl.ldexp(x, 3) * 2) == ["pointwise"]


@pytest.mark.parametrize("name", ["vstack", "hstack", "dstack", "column_stack"])
@pytest.mark.parametrize("arrays", [[A, A * 2], [A[0], A[1]], [V, V], [np.float32(3), np.float32(4)], [A[:, :3], A[:, 1:4]],
                                    [RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 3, 4))], [V]])
def test_stacking_is_numpys(name: str, arrays: list[Any]) -> None:
    try:
        want = getattr(np, name)(arrays)
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc).split("(")[0][:30]):
            getattr(sl, name)([sl.asarray(a) for a in arrays]).get()
        return
    same(getattr(sl, name)([sl.asarray(a) for a in arrays]), want)
    same(getattr(np, name)([sl.asarray(a) for a in arrays]), want)  # NumPy's function, lazily


def test_stacking_atleast_3d_and_errors() -> None:
    for a in (np.float32(1), V, A, RNG.standard_normal((2, 3, 4))):
        same(sl.atleast_3d(sl.asarray(a)), np.atleast_3d(a))
    assert [x.shape for x in sl.atleast_3d(1.0, V)] == [(1, 1, 1), (1, 3, 1)]
    same(sl.vstack([sl.asarray(I8), I8], dtype=np.float32), np.vstack([I8, I8], dtype=np.float32))
    same(sl.hstack([sl.asarray(A), A], dtype=np.float64, casting="safe"), np.hstack([A, A], dtype=np.float64, casting="safe"))
    with pytest.raises(TypeError, match="cannot cast array data from dtype\\('float32'\\) to dtype\\('int8'\\)"):
        sl.vstack([sl.asarray(A)], dtype=np.int8)
    with pytest.raises(ValueError, match="need at least one array"):
        sl.vstack([])
    with pytest.raises(TypeError, match="sequence"):
        sl.hstack(sl.asarray(A))


@pytest.mark.parametrize("a, b", [(A, V), (V, A), (np.arange(4).reshape(2, 2), np.eye(3)), (np.arange(3), 2),
                                  (RNG.standard_normal((2, 3, 1)), RNG.standard_normal((4, 2))), (I8[:2, :2], I8[:3, :1])])
def test_kron_is_numpys_and_fuses(a: Any, b: Any) -> None:
    same(sl.kron(sl.asarray(a), b), np.kron(a, b))
    same(np.kron(sl.asarray(a), b), np.kron(a, b))
    if np.ndim(a) and np.ndim(b):
        assert families(sl.kron(sl.asarray(a), b) + 1) == ["pointwise"]


@pytest.mark.parametrize("shapes, kwargs", [
    (((5, 3), (5, 3)), {}), (((3,), (5, 3)), {}), (((5, 2), (5, 3)), {}), (((5, 3), (5, 2)), {}), (((5, 2), (5, 2)), {}),
    (((3, 5), (3, 5)), {"axis": 0}), (((5, 3), (3, 5)), {"axisb": 0, "axisc": 0}), (((2, 3, 4), (4, 3)), {"axisa": 1}),
])
def test_cross_is_numpys(shapes: tuple[tuple[int, ...], ...], kwargs: dict[str, Any]) -> None:
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want = np.cross(a, b, **kwargs)
        got = sl.cross(sl.asarray(a), b, **kwargs).get()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    if shapes[0][-1] == 2 == shapes[1][-1] and not kwargs:
        with pytest.warns(DeprecationWarning, match="2-dimensional vectors"):
            sl.cross(sl.asarray(a), b)


def test_cross_errors_are_numpys() -> None:
    with pytest.raises(ValueError, match="incompatible dimensions for cross product"):
        sl.cross(sl.asarray(A), A)
    with pytest.raises(np.exceptions.AxisError):
        sl.cross(sl.asarray(V), V, axisa=2)


M = RNG.standard_normal((3, 6))
FW = np.array([1, 2, 1, 3, 1, 1])
AW = RNG.random(6)


@pytest.mark.parametrize("args, kwargs", [
    ((M,), {}), ((M,), {"bias": True}), ((M,), {"ddof": 0}), ((M.T,), {"rowvar": False}), ((M[0],), {}),
    ((M[0], M[1]), {}), ((M, M[:2]), {}), ((M.T, M[:2].T), {"rowvar": False}), ((M,), {"fweights": FW}),
    ((M,), {"aweights": AW}), ((M,), {"fweights": FW, "aweights": AW, "ddof": 2}),
    ((M.astype(np.float32),), {"dtype": np.float32}), ((M.astype(np.float32),), {}),
    ((M.astype(np.float32),), {"aweights": AW, "dtype": np.float32}), ((np.arange(6).reshape(2, 3),), {}),
])
def test_cov_and_corrcoef_are_numpys(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    want = np.cov(*args, **kwargs)
    got = sl.cov(*(sl.asarray(a) for a in args), **kwargs).get()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-6 if want.dtype == np.float32 else 1e-13, atol=1e-7)
    lazily = np.cov(sl.asarray(args[0]), *args[1:], **kwargs)
    assert isinstance(lazily, sl.LazyArray)
    keep = {k: v for k, v in kwargs.items() if k in ("rowvar", "dtype")}
    want = np.corrcoef(*args, **keep)
    got = sl.corrcoef(*(sl.asarray(a) for a in args), **keep).get()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-6 if want.dtype == np.float32 else 1e-13, atol=1e-7)
    assert np.all(np.abs(got[np.isfinite(got)]) <= 1)


def test_cov_edge_cases_and_errors_are_numpys() -> None:
    same(sl.cov(sl.zeros((0, 3))), np.cov(np.zeros((0, 3))))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0"):
        got = sl.cov(sl.asarray(np.array([1.0, 2.0, 3.0])), ddof=3)
    assert np.isinf(got.get())
    with pytest.raises(ValueError, match="m has more than 2 dimensions"):
        sl.cov(sl.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="ddof must be integer"):
        sl.cov(sl.asarray(M), ddof=1.5)
    with pytest.raises(TypeError, match="fweights must be integer"):
        sl.cov(sl.asarray(M), fweights=FW + 0.5)
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        sl.cov(sl.asarray(M), aweights=-AW)
    with pytest.raises(RuntimeError, match="incompatible numbers of samples and fweights"):
        sl.cov(sl.asarray(M), fweights=FW[:3])
    with pytest.raises(TypeError, match="pass a float dtype"):
        sl.cov(sl.asarray(M), dtype=np.int64)
    zeros = np.zeros(M.shape[1])
    for weights in ({"fweights": zeros.astype(int)}, {"aweights": zeros}, {"fweights": FW, "aweights": zeros},
                    {"fweights": zeros.astype(int), "aweights": AW, "ddof": 0}):
        with pytest.raises(ZeroDivisionError, match="Weights sum to zero, can't be normalized"):
            np.cov(M, **weights)
        with pytest.raises(ZeroDivisionError, match="Weights sum to zero, can't be normalized"):
            sl.cov(sl.asarray(M), **weights)
    same(sl.corrcoef(sl.asarray(M[0])), np.corrcoef(M[0]))  # one variable: 1 (NaN where constant)
    with np.errstate(all="ignore"):
        same(sl.corrcoef(sl.asarray(np.ones(4))), np.corrcoef(np.ones(4)))


def test_dtype_queries_and_asnumpy() -> None:
    x = sl.asarray(A)
    assert sl.result_type(x, 1.0, np.int8) == np.result_type(A, 1.0, np.int8) == np.float32
    assert np.result_type(x, np.float64) == np.float64  # NumPy's function, no evaluation needed
    assert sl.result_type(sl.asarray(I8), np.uint8) == np.int16
    assert sl.can_cast(x, np.float64) and not sl.can_cast(x, np.float16) and sl.can_cast(x, np.float16, "same_kind")
    assert np.can_cast(x, np.float64)
    assert sl.iinfo(sl.asarray(I8)).min == -128 and sl.iinfo(np.uint16).max == 65535
    assert sl.finfo(x).eps == np.finfo(np.float32).eps and sl.finfo("bfloat16").bits == 16
    got = sl.asnumpy(x * 2)
    assert type(got) is np.ndarray and np.array_equal(got, A * 2)
    assert np.array_equal(sl.asnumpy([1, 2]), [1, 2])


XP = np.sort(RNG.standard_normal(20))
XP[5] = XP[6]  # a repeated point
FP = RNG.standard_normal(20)
FP[10] = np.inf
XS = np.concatenate([RNG.standard_normal(500) * 2, XP, [np.nan, np.inf, -np.inf]])


@pytest.mark.parametrize("kwargs", [{}, {"left": -5.0, "right": 7.0}, {"period": 2.5}, {"period": -1.0}])
def test_interp_is_numpys_bits(kwargs: dict[str, Any]) -> None:
    """NumPy's formula, its fallbacks (a NaN from inf slopes, a repeated point), its ends and
    periodic wrapping: the same bits on the numpy backend."""
    # with a period, tied points (after wrapping) follow NumPy's unstable sort there, a stable one here
    xp = XP if "period" not in kwargs else np.unique(XP)
    fp = FP[: xp.size]
    with np.errstate(all="ignore"):
        want = np.interp(XS, xp, fp, **kwargs)
        _same_bits(sl.interp(sl.asarray(XS), xp, fp, **kwargs), want)
        _same_bits(np.interp(sl.asarray(XS), xp, fp, **kwargs), want)  # NumPy's function, lazily
        _same_bits(sl.interp(sl.asarray(XS.astype(np.float32)), sl.asarray(xp), fp.astype(np.float16), **kwargs),
                   np.interp(XS.astype(np.float32), xp, fp.astype(np.float16), **kwargs))


def test_interp_small_tables_and_errors() -> None:
    for xp, fp in ([1.0], [3.0]), ([0, 1], [1, 1]), (np.arange(5), np.arange(5) ** 2):
        _same_bits(sl.interp(sl.asarray(XS), xp, fp), np.interp(XS, xp, fp))
    assert sl.interp(2.5, [1, 2, 3], [3, 2, 0]).get() == np.interp(2.5, [1, 2, 3], [3, 2, 0])
    with pytest.raises(ValueError, match="fp and xp are not of the same length"):
        sl.interp(sl.asarray(XS), [1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="array of sample points is empty"):
        sl.interp(sl.asarray(XS), [], [])
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        sl.interp(sl.asarray(XS), XP, FP, period=0)
    with pytest.raises(ValueError, match="1-D"):
        sl.interp(sl.asarray(XS), XP.reshape(4, 5), FP.reshape(4, 5))


POWER_BASES = np.array([-np.inf, -4.0, -0.0, 0.0, 0.25, 3.0, np.inf, np.nan])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("exponent", [0.5, 2, 2.0, 1, 1.0, -1.0, -1, 0.0, 3.0, np.float64(0.5), np.float32(0.5), -0.5,
                                      np.array(0.5), np.array(2, np.int8), True])
def test_power_takes_numpys_fast_paths_and_float_power_none(dtype: str, exponent: Any) -> None:
    """``np.power(x, 0.5)`` of float32/float64 is ``sqrt`` (NaN for -inf, -0.0 for -0.0) and
    ``np.float_power`` is ``pow`` (inf, 0.0); ``x ** 0.5`` takes ``ndarray.__pow__``'s fast paths
    (float16 too, not bfloat16): each compared bit for bit, NaN signs aside."""
    x = POWER_BASES.astype(as_dtype(dtype))
    lx = sl.asarray(x)
    with np.errstate(all="ignore"):
        cases = [(sl.power(lx, exponent), np.power(x, exponent)), (sl.float_power(lx, exponent), np.float_power(x, exponent))]
        if type(exponent) in (int, float):
            cases.append((lx ** exponent, x ** exponent))
    for got, want in cases:
        g = got.get()
        assert g.dtype == want.dtype
        nan = np.isnan(want.astype(np.float64))
        assert np.array_equal(np.isnan(g.astype(np.float64)), nan)
        assert np.array_equal(g[~nan].view(np.uint8), want[~nan].view(np.uint8)), (g, want)
