"""The NumPy functions composed of stitchlab's ops (``isclose``, ``nan_to_num``, the nan-reductions,
``count_nonzero``, ``ptp``, ``fabs``, the layout functions) on CuPy inputs, against NumPy on the
host: rows held in registers (warp or block per row), long rows split over blocks, columns and
whole arrays, with NaN, ±inf, -0.0 and all-NaN rows.

Exact where the GPU's results are NumPy's (docs/user-guide.md): elementwise work, max/min
(compared by value: NaN payloads and the sign of a zero maximum or minimum are documented to
differ), counts. Sums, means and variances are compared with tolerances against the float64
result: the GPU adds in another order than NumPy, and float16 reductions accumulate in float32 and
round once, where NumPy rounds partial sums to float16 (and so is the less accurate of the two).

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_numpy_compositions_gpu.py -q``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

FLOATS = ["float16", "float32", "float64"]
SHAPES = [(256, 1000), (64, 4096), (1000, 40), (40, 100_000)]
#: relative tolerance of sums, means and variances, against a scale of the slice's magnitudes
RTOL = {"float16": 4e-3, "float32": 2e-5, "float64": 1e-12}


def _inputs(shape: tuple[int, int], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    x[::5, ::3] = np.nan
    x[1::7, 2::11] = -0.0
    x[2::9, 5] = np.inf
    x[3::9, 6] = -np.inf
    x[4::9, :] = np.nan  # all-NaN rows
    x[:, 7] = np.nan  # a column of NaN only
    return x


def _numpy(name: str, a: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    """NumPy's ``name`` of ``a``; for float16 ``nanmean``/``nanvar``/``nanstd`` without a dtype,
    NumPy's on the float32 values, rounded (stitchlab works in float32 there, as ``var`` does)."""
    low = name in ("nanmean", "nanvar", "nanstd") and a.dtype == np.float16 and kwargs.get("dtype") is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = np.asarray(getattr(np, name)(a.astype(np.float32) if low else a, *args, **kwargs))
    return got.astype(np.float16) if low else got


def _exact(got: Any, want: np.ndarray, what: str) -> None:
    got = got.get()
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want, err_msg=what)


def _scale(name: str, x: np.ndarray, axis: Any) -> np.ndarray:
    """A bound on the magnitudes the reduction adds up, for its tolerance (float64)."""
    x64 = x.astype(np.float64)
    x64[~np.isfinite(x64)] = np.nan
    if name == "nansum":
        return _numpy("nansum", np.abs(x64), axis=axis)
    if name == "nanmean":
        return _numpy("nanmean", np.abs(x64), axis=axis)
    mean_square = _numpy("nanmean", x64 * x64, axis=axis)
    return np.sqrt(mean_square) if name == "nanstd" else mean_square


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_sums_means_and_variances_match_numpy(shape: tuple[int, int], dtype: str) -> None:
    import cupy as cp

    x = _inputs(shape, dtype, seed=shape[0] + shape[1])
    lazy = sl.asarray(cp.asarray(x))
    for axis in (-1, 0, None):
        for name, kwargs in [("nansum", {}), ("nanmean", {}), ("nanvar", {}), ("nanvar", {"ddof": 1}), ("nanstd", {})]:
            what = f"{name}{kwargs} {shape} {dtype} axis={axis}"
            want = _numpy(name, x, axis=axis, **kwargs)
            got = getattr(sl, name)(lazy, axis=axis, **kwargs).get()
            assert got.dtype == want.dtype and got.shape == want.shape, what
            # NaN and infinities where NumPy has them (float16 nansum past 65504 overflows in both),
            # the finite values against the float64 result: NumPy's own float16 sums along axis 0
            # add in float16, one rounding per row, and are off by up to 1.5 % here
            exact = _numpy(name, x.astype(np.float64), axis=axis, **kwargs).astype(want.dtype)
            _close_to_scale(got, want, RTOL[dtype] * np.nan_to_num(_scale(name, x, axis)), what, exact)


def _close_to_scale(got: np.ndarray, want: np.ndarray, tol: np.ndarray, what: str, exact: np.ndarray | None = None) -> None:
    """NaN and infinities where NumPy has them; finite values within ``tol`` of NumPy's (of
    ``exact``'s where given)."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(w)), f"{what}: NaN positions differ"
    finite = np.isfinite(w)
    assert np.array_equal(g[~finite], w[~finite], equal_nan=True), f"{what}: infinities differ"
    if exact is not None:
        w = exact.astype(np.float64)
    err = np.abs(g[finite] - w[finite])
    bound = np.broadcast_to(tol, w.shape)[finite]
    assert (err <= bound).all(), f"{what}: {np.count_nonzero(err > bound)} differ, worst {err.max()}"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS + ["int32", "uint8"])
def test_nan_extremes_counts_and_ranges_are_numpys(shape: tuple[int, int], dtype: str) -> None:
    import cupy as cp

    if dtype in FLOATS:
        x = _inputs(shape, dtype, seed=shape[0] * 3 + shape[1])
    else:
        x = np.random.default_rng(shape[0]).integers(0, 100, shape).astype(dtype)
    lazy = sl.asarray(cp.asarray(x))
    for axis in (-1, 0, None):
        for name in ["nanmax", "nanmin", "count_nonzero", "ptp"]:
            _exact(getattr(sl, name)(lazy, axis=axis), _numpy(name, x, axis=axis), f"{name} {shape} {dtype} axis={axis}")
    if dtype not in FLOATS:  # integer nan-functions are the plain ones: exact sums too
        for axis in (-1, 0, None):
            _exact(sl.nansum(lazy, axis=axis), _numpy("nansum", x, axis=axis), f"nansum {dtype} axis={axis}")


@pytest.mark.parametrize("dtype", FLOATS + ["int64", "bool"])
def test_isclose_nan_to_num_and_fabs_are_numpys_bits(dtype: str) -> None:
    import cupy as cp

    rng = np.random.default_rng(7)
    if dtype == "bool":
        a, b = rng.random((300, 257)) < 0.5, rng.random((257,)) < 0.5
    elif dtype == "int64":
        a, b = rng.integers(-5, 5, (300, 257)), rng.integers(-5, 5, (257,))
    else:
        a = _inputs((300, 257), dtype, seed=11)
        step = rng.choice([0, 1e-9, 1e-6, 1e-4, 1e-2], a.shape)
        b = (a * (1 + step)).astype(dtype)[0]  # broadcast along rows
        a[0] = b
    la, lb = sl.asarray(cp.asarray(a)), sl.asarray(cp.asarray(b))
    for kwargs in [{}, {"equal_nan": True}, {"rtol": 1e-3, "atol": 1e-3}]:
        _exact(sl.isclose(la, lb, **kwargs), np.isclose(a, b, **kwargs), f"isclose {dtype} {kwargs}")
        _exact(sl.isclose(lb, la, **kwargs), np.isclose(b, a, **kwargs), f"isclose reversed {dtype} {kwargs}")
        _exact(sl.isclose(la, 1.0, **kwargs), np.isclose(a, 1.0, **kwargs), f"isclose scalar {dtype} {kwargs}")
    assert sl.allclose(la, la, equal_nan=True) is True
    assert sl.allclose(la, la) is bool(np.allclose(a, a))
    _exact(sl.nan_to_num(la), _numpy("nan_to_num", a), f"nan_to_num {dtype}")
    _exact(sl.nan_to_num(la, nan=-0.0, posinf=1e30, neginf=-7), _numpy("nan_to_num", a, nan=-0.0, posinf=1e30, neginf=-7),
           f"nan_to_num values {dtype}")
    got, want = sl.fabs(la).get(), np.fabs(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got).any(), "fabs leaves a sign bit set"


def test_layout_functions_are_numpys_on_the_gpu() -> None:
    import cupy as cp

    a = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    x = sl.asarray(cp.asarray(a))
    _exact(sl.swapaxes(x, 0, -1), np.swapaxes(a, 0, -1), "swapaxes")
    _exact(x.swapaxes(1, 2) + 1, a.swapaxes(1, 2) + 1, "swapaxes method")
    _exact(sl.moveaxis(x, [0, 1], [2, 0]), np.moveaxis(a, [0, 1], [2, 0]), "moveaxis")
    for g, w in zip(sl.broadcast_arrays(x[0, :, :1, :], sl.asarray(cp.asarray(a[1, 0])), 2.0),
                    np.broadcast_arrays(a[0, :, :1, :], a[1, 0], 2.0), strict=True):
        _exact(g, np.asarray(w), "broadcast_arrays")
    _exact(sl.atleast_2d(x[0, 0, 0]), np.atleast_2d(a[0, 0, 0]), "atleast_2d")
    _exact(sl.atleast_1d(x[0, 0, 0, 0]), np.atleast_1d(a[0, 0, 0, 0]), "atleast_1d")


def test_compositions_run_as_one_kernel_on_the_gpu() -> None:
    import cupy as cp

    x = sl.asarray(cp.asarray(_inputs((1024, 4096), "float32", seed=5)))
    y = sl.asarray(cp.asarray(_inputs((1024, 4096), "float32", seed=6)))
    for out in [sl.nansum(x, axis=-1), sl.nanmean(x, axis=-1), sl.nanvar(x, axis=-1), sl.nanmax(x, axis=-1),
                sl.isclose(x, y), sl.nan_to_num(x)]:
        assert len(sl.explain(out).kernels) == 1


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint32", "bool"])
@pytest.mark.parametrize("requested", ["float32", None])
def test_var_and_std_of_integers_on_the_gpu(dtype: str, requested: str | None) -> None:
    """var/std of integers (float64 deviations for int32 and wider, summed in the requested dtype,
    as NumPy does): NumPy's dtype, and its values within the requested dtype's tolerance, for rows
    in registers, columns and whole arrays."""
    import cupy as cp

    rng = np.random.default_rng(7)
    for shape in [(300, 1000), (1000, 40)]:
        if dtype == "bool":
            x = rng.integers(0, 2, shape).astype(bool)
        else:
            info = np.iinfo(dtype)
            x = rng.integers(max(info.min, -(2**30)), min(info.max, 2**30), shape).astype(dtype)
        lazy = sl.asarray(cp.asarray(x))
        rtol = 5e-5 if requested == "float32" else 1e-12
        for axis in (-1, 0, None):
            for ddof in (0, 1):
                what = f"var {dtype} {shape} dtype={requested} axis={axis} ddof={ddof}"
                want = np.var(x, axis=axis, dtype=requested, ddof=ddof)
                got = sl.var(lazy, axis=axis, dtype=requested, ddof=ddof).get()
                assert got.dtype == want.dtype and got.shape == np.shape(want), what
                np.testing.assert_allclose(got, want, rtol=rtol, err_msg=what)
                got = sl.std(lazy, axis=axis, dtype=requested, ddof=ddof).get()
                np.testing.assert_allclose(got, np.std(x, axis=axis, dtype=requested, ddof=ddof), rtol=rtol, err_msg=what)


def test_stacking_products_and_statistics_are_numpys_on_the_gpu() -> None:
    """vstack/hstack/dstack/column_stack, kron, cross, cov and corrcoef of device arrays."""
    import cupy as cp

    rng = np.random.default_rng(11)
    a = rng.standard_normal((64, 3)).astype(np.float32)
    b = rng.standard_normal((64, 3)).astype(np.float32)
    x, y = sl.asarray(cp.asarray(a)), sl.asarray(cp.asarray(b))
    for name in ("vstack", "hstack", "dstack", "column_stack"):
        _exact(getattr(sl, name)([x, y * 2]), getattr(np, name)([a, b * 2]), name)
        _exact(getattr(sl, name)([x[:, 0], y[:, 1]]), getattr(np, name)([a[:, 0], b[:, 1]]), f"{name} 1-d")
    _exact(sl.kron(x[:4], y[:2, :2]), np.kron(a[:4], b[:2, :2]), "kron")
    np.testing.assert_allclose(sl.cross(x, y).get(), np.cross(a, b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sl.cross(x.T, y, axisa=0).get(), np.cross(a.T, b, axisa=0), rtol=1e-5, atol=1e-6)
    m = rng.standard_normal((5, 300))
    xm = sl.asarray(cp.asarray(m))
    w = rng.random(300)
    for kwargs in ({}, {"bias": True}, {"aweights": w}, {"fweights": np.arange(300) % 4}):
        got = sl.cov(xm, **kwargs).get()
        assert got.dtype == np.float64 and got.shape == (5, 5)
        np.testing.assert_allclose(got, np.cov(m, **kwargs), rtol=1e-12, atol=1e-14, err_msg=str(kwargs))
    np.testing.assert_allclose(sl.corrcoef(xm, rowvar=False).get(), np.corrcoef(m, rowvar=False), rtol=1e-11, atol=1e-12)
    c32 = sl.cov(sl.asarray(cp.asarray(m.astype(np.float32))), dtype=np.float32).get()
    assert c32.dtype == np.float32
    np.testing.assert_allclose(c32, np.cov(m.astype(np.float32), dtype=np.float32), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_elementwise_compositions_are_numpys_on_the_gpu(dtype: str) -> None:
    """divmod, modf, fix, sinc, angle, float_power: NumPy's dtypes, values and signed zeros (sinc
    within a few units: CUDA's and the host's sin differ in the last bit)."""
    import cupy as cp

    rng = np.random.default_rng(12)
    v = (rng.standard_normal(5000) * 20).astype(dtype)
    if dtype != "int32":
        v[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 2.5, -2.5, -3.0]
    d = (rng.integers(1, 9, 5000) * np.where(rng.random(5000) < 0.5, -1, 1)).astype(dtype)
    x, y = sl.asarray(cp.asarray(v)), sl.asarray(cp.asarray(d))
    with np.errstate(all="ignore"):
        for got, want, what in [(sl.divmod(x, y), np.divmod(v, d), "divmod"), (sl.modf(x), np.modf(v), "modf")]:
            for g, w in zip(got, want, strict=True):
                g = g.get()
                assert g.dtype == w.dtype, (what, g.dtype, w.dtype)
                np.testing.assert_array_equal(g, w, err_msg=what)
                number = ~np.isnan(w.astype(np.float64))  # a NaN's sign aside: CUDA's canonical NaN
                np.testing.assert_array_equal(np.signbit(g[number]), np.signbit(w[number]), err_msg=f"{what}: signs")
        _exact(sl.fix(x), np.trunc(v) if v.dtype.kind == "f" else v, "fix")  # (NumPy 2.5 deprecates np.fix)
        _exact(sl.angle(x), np.angle(v), "angle")
        got, want = sl.sinc(x).get(), np.sinc(v)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=4 * float(np.finfo(want.dtype).eps), atol=4 * float(np.finfo(want.dtype).eps))
        got, want = sl.float_power(x, y).get(), np.float_power(v, d)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("kwargs", [{}, {"left": -5.0, "right": 7.0}, {"period": 2.5}])
def test_interp_is_numpys_on_the_gpu(kwargs: dict[str, Any]) -> None:
    """Within two units in the last place of NumPy's (the multiply and add may be one rounding on
    the GPU); NumPy's ends, NaN, inf slopes and repeated points exactly."""
    import cupy as cp

    rng = np.random.default_rng(13)
    xp = np.sort(rng.standard_normal(300))
    if "period" not in kwargs:  # (with a period, tied points follow NumPy's unstable sort)
        xp[50] = xp[51]
    fp = rng.standard_normal(300)
    fp[100] = np.inf
    x = np.concatenate([rng.standard_normal(100_000) * 2, xp, [np.nan, np.inf, -np.inf]])
    with np.errstate(all="ignore"):
        want = np.interp(x, xp, fp, **kwargs)
    got = sl.interp(sl.asarray(cp.asarray(x)), cp.asarray(xp), fp, **kwargs).get()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=4.5e-16, atol=4.5e-16 * np.abs(fp[np.isfinite(fp)]).max())


@pytest.mark.parametrize("dtype", FLOATS)
def test_nanargmax_and_nanargmin_are_numpys(dtype: str) -> None:
    """NumPy's positions over rows (warp and block rows) and columns; -1 for all-NaN slices,
    where NumPy raises."""
    import cupy as cp

    x = _inputs((1000, 300), dtype, seed=9)
    x[:, 7] = 1.0  # (no all-NaN column; rows 4::9 stay all NaN)
    lazy = sl.asarray(cp.asarray(x))
    for name in ("nanargmax", "nanargmin"):
        got = getattr(sl, name)(lazy, axis=1).get()
        rows = ~np.isnan(x).all(1)
        np.testing.assert_array_equal(got[rows], _numpy(name, x[rows], axis=1))
        assert (got[~rows] == -1).all()
        np.testing.assert_array_equal(getattr(sl, name)(lazy, axis=0).get(), _numpy(name, x, axis=0))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_power_fast_paths_and_float_power_are_numpys_on_the_device(dtype: str) -> None:
    """``sl.power(x, 0.5)`` of float32/float64 is ``sqrt`` as NumPy's loop (NaN for -inf, -0.0 for
    -0.0; CUDA's ``pow`` gives inf and 0.0), 2 a product, -1 a division; ``sl.float_power`` is
    ``pow`` (wide fuzz seed 7216894 on the numpy backend); ``x ** 0.5`` as ``ndarray.__pow__``.
    bfloat16 as ml_dtypes 0.7's loops (0.6 has none for ``power`` of a Python float: float32)."""
    import cupy as cp

    from stitchlab.ir.dtypes import as_dtype

    v = np.concatenate([[-np.inf, -4.0, -0.0, 0.0, np.inf, np.nan],
                        np.random.default_rng(5).random(4090) * 100]).astype(as_dtype(dtype))
    x = sl.asarray(cp.asarray(v))
    with np.errstate(all="ignore"):
        for e in (0.5, 2.0, -1.0, 1.0, 3.0, np.float64(0.5)):
            for fast, got, want in ((True, sl.power(x, e), np.power(v, e)), (False, sl.float_power(x, e), np.float_power(v, e))):
                g = got.get()
                assert g.dtype == want.dtype, (e, g.dtype, want.dtype)
                g64, w64 = g.astype(np.float64), want.astype(np.float64)
                assert np.array_equal(np.isnan(g64), np.isnan(w64)), e
                fin = ~np.isnan(w64)
                assert np.array_equal(np.signbit(g64[fin]), np.signbit(w64[fin])), e
                if fast and e in (0.5, 2.0, -1.0, 1.0) and want.dtype in (np.float32, np.float64):  # (its bits)
                    assert np.array_equal(g[fin], want[fin]), e
                else:
                    np.testing.assert_allclose(g64[fin], w64[fin], rtol=4 * float(np.finfo(np.float16 if g.dtype.itemsize == 2 else g.dtype).eps))
        g, want = (x ** 0.5).get(), v ** 0.5
        assert np.array_equal(np.isnan(g.astype(np.float64)), np.isnan(want.astype(np.float64)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_reductions_with_where_and_initial(dtype: str) -> None:
    """``where=`` and ``initial=`` of the nan-reductions on CuPy data: masks that empty some rows
    and columns; max/min exact, the rest within the sum tolerance against NumPy (float64)."""
    import cupy as cp

    a = _inputs((256, 1000), dtype, 7)
    rng = np.random.default_rng(8)
    m = rng.random(a.shape) < 0.6
    m[10] = False
    x = sl.asarray(cp.asarray(a))
    dm = cp.asarray(m)
    for axis in (0, 1, None):
        for name, kw in [("nanmax", {"initial": -1.0}), ("nanmin", {"initial": 0.25}), ("nanmax", {"initial": np.nan}),
                         ("nansum", {"initial": 2.0}), ("nanprod", {}), ("nanmean", {}), ("nanvar", {"ddof": 1}),
                         ("nanstd", {})]:
            src = np.where(np.abs(a) > 2, 1, a).astype(a.dtype) if name == "nanprod" else a
            xs = sl.asarray(cp.asarray(src)) if name == "nanprod" else x
            want = _numpy(name, src, axis=axis, where=m, **kw)
            got = getattr(np, name)(xs, axis=axis, where=dm, **kw).get()
            assert got.dtype == want.dtype and got.shape == want.shape, (name, axis)
            if name in ("nanmax", "nanmin"):
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {axis}")
            else:
                np.testing.assert_allclose(got, want, rtol=RTOL[dtype] * 10, atol=RTOL[dtype], equal_nan=True,
                                           err_msg=f"{name} {axis}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_variances_take_a_given_mean_on_the_gpu(dtype: str) -> None:
    """NumPy 2's ``mean=`` of var/std/nanvar/nanstd on device arrays: rows, columns and the whole
    array, the mean in the data's dtype and in float64, within the dtype's tolerance."""
    import cupy as cp

    a = _inputs((300, 1000), dtype, 21)
    a[~np.isfinite(a)] = np.nan
    finite = np.nan_to_num(a)
    for name, data in (("var", finite), ("std", finite), ("nanvar", a), ("nanstd", a)):
        lazy = sl.asarray(cp.asarray(data))
        for axis in (-1, 0, None):
            centre = _numpy("nanmean", data.astype(np.float64), axis=axis, keepdims=True)
            for mean in (centre.astype(dtype), centre):
                want = _numpy(name, data, axis=axis, mean=mean, ddof=1)
                got = getattr(sl, name)(lazy, axis=axis, mean=cp.asarray(mean), ddof=1).get()
                what = f"{name} axis={axis} mean {mean.dtype}"
                assert got.dtype == want.dtype and got.shape == want.shape, what
                np.testing.assert_allclose(got, want, rtol=RTOL[dtype] * 10, err_msg=what)
