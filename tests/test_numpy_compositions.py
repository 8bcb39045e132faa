"""NumPy functions written as compositions of stitchlab's ops (``stitchlab/frontend/api.py``):
``isclose``/``allclose``, ``nan_to_num``, the nan-reductions, ``count_nonzero``, ``ptp``, ``fabs``,
``swapaxes``/``moveaxis``, ``atleast_1d``/``atleast_2d`` and ``broadcast_arrays``.

Each is checked against NumPy itself on the numpy backend: values, dtype and shape exactly (the
graphs do NumPy's arithmetic in NumPy's dtypes, so the bits agree), with NaN, ±inf, -0.0,
all-NaN slices and empty reductions; and the fused plans are checked to be one kernel.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

FLOATS = ["float16", "float32", "float64"]
INTEGERS = ["int8", "uint8", "int32", "int64", "bool"]
AXES = [None, 0, 1, -1, (0, 2), (-1, 0)]
NAN_REDUCTIONS = ["nansum", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]


def _data(dtype: str, shape: tuple[int, ...] = (4, 6, 5), seed: int = 0) -> np.ndarray:
    """Values of ``dtype``; floats with NaN, ±inf and -0.0 scattered and, for three rows or more,
    an all-NaN row (a[1]) and a row of finite values only (a[2])."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.4
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    flat = x.reshape(-1)
    flat[::7] = np.nan
    flat[3::17] = np.inf
    flat[5::19] = -np.inf
    flat[2::11] = -0.0
    if shape[0] > 2:
        x[1] = np.nan
        x[2] = np.abs(x[2])  # no NaN, no inf after the next line
        x[2][~np.isfinite(x[2])] = 1.5
    return x


def _same(got: Any, want: Any, signs: bool = True) -> None:
    """``got`` (lazy) is NumPy's ``want``: dtype, shape and values (NaN where NumPy has NaN) and,
    with ``signs``, the sign of every zero."""
    got = got.get() if isinstance(got, sl.LazyArray) else np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    if signs and want.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]), err_msg="sign of zero")


def _numpy(name: str, a: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    """NumPy's ``name`` of ``a``; for float16 ``nansum``/``nanmean``/``nanvar``/``nanstd`` without a
    dtype, NumPy's on the float32 values, rounded to float16 (stitchlab works in float32 there;
    NumPy's own float16 sum along an outer axis rounds every partial sum to float16)."""
    low = name in ("nansum", "nanmean", "nanvar", "nanstd") and a.dtype == np.float16 and kwargs.get("dtype") is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices, float16 overflow: as intended
        got = getattr(np, name)(a.astype(np.float32) if low else a, *args, **kwargs)
    return np.asarray(got).astype(np.float16) if low else got


# --- nan-reductions ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + INTEGERS)
@pytest.mark.parametrize("name", NAN_REDUCTIONS)
def test_nan_reductions_match_numpy_over_axes_and_keepdims(name: str, dtype: str) -> None:
    a = _data(dtype)
    x = sl.asarray(a)
    for axis in AXES:
        for keepdims in (False, True):
            want = _numpy(name, a, axis=axis, keepdims=keepdims)
            # the sign of a zero maximum or minimum follows sl.max/sl.min, not NumPy's fmax (see
            # test_nanmax_zero_sign_follows_max); nansum, nanmean and nanvar keep NumPy's signs
            _same(getattr(sl, name)(x, axis=axis, keepdims=keepdims), want, signs=name not in ("nanmax", "nanmin"))


@pytest.mark.parametrize("dtype", FLOATS + ["int16", "int64"])
@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
def test_nanvar_and_nanstd_take_ddof_as_numpy(name: str, dtype: str) -> None:
    a = _data(dtype, (3, 7, 4))
    x = sl.asarray(a)
    for ddof in (0, 1, 2, 6, -1, 0.5):  # a row of 3 to 7 values: ddof 6 leaves some dof <= 0 (NaN)
        for axis in (None, 1, -1, (0, 1)):
            _same(getattr(sl, name)(x, axis=axis, ddof=ddof), _numpy(name, a, axis=axis, ddof=ddof))
    _same(getattr(sl, name)(x, axis=1, ddof=1, keepdims=True), _numpy(name, a, axis=1, ddof=1, keepdims=True))


@pytest.mark.parametrize(
    ("dtype", "accumulate"),
    [("float16", "float32"), ("float16", "float64"), ("float32", "float64"), ("float64", "float32"),
     ("int32", "float64"), ("int8", "float64"), ("bool", "float64")],
)
@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanvar", "nanstd"])
def test_nan_reductions_with_a_dtype_compute_where_numpy_does(name: str, dtype: str, accumulate: str) -> None:
    a = _data(dtype)
    x = sl.asarray(a)
    for axis in (None, 0, -1):
        want = _numpy(name, a, axis=axis, dtype=accumulate)
        _same(getattr(sl, name)(x, axis=axis, dtype=accumulate), want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_float_nan_reductions_work_in_float32(dtype: str) -> None:
    """Found by the GPU fuzz (wide family, seed 3200415): 16384 float16 values of variance 5.4
    square-sum past 65504, so NumPy's float16 steps give inf (its sequential float16 sum stalls
    instead and gives 2.0). Without a dtype the low floats work in float32, as var does."""
    rng = np.random.default_rng(5)
    a = rng.uniform(-4, 4, (128, 128, 3)).astype(sl.bfloat16 if dtype == "bfloat16" else dtype)
    a[0, 0] = np.nan
    truth = np.nanvar(a.astype(np.float64), axis=(0, 1))
    x = sl.asarray(a)
    got = sl.nanvar(x, axis=(0, 1)).get()
    assert got.dtype == a.dtype and np.all(np.isfinite(got.astype(np.float32)))
    np.testing.assert_allclose(got.astype(np.float64), truth, rtol=2 ** -7)
    for name in ("nanmean", "nanvar", "nanstd"):
        want = getattr(np, name)(a.astype(np.float32), axis=(0, 1)).astype(a.dtype)
        np.testing.assert_array_equal(getattr(sl, name)(x, axis=(0, 1)).get(), want)
    b = a[1:]  # no NaN: nanvar is var
    np.testing.assert_array_equal(sl.nanvar(sl.asarray(b), axis=(0, 1)).get(), sl.var(sl.asarray(b), axis=(0, 1)).get())


def test_nan_reductions_divide_by_the_count_in_float64() -> None:
    """As NumPy's ``_divide_by_count``: a float16 count of 2997 would round to 2996."""
    a = np.full((2, 3001), 0.5, np.float16)
    a[0, ::1000] = np.nan
    a[1] = np.random.default_rng(3).standard_normal(3001)
    a[1, ::7] = np.nan
    x = sl.asarray(a)
    for name in ["nanmean", "nanvar", "nanstd"]:
        _same(getattr(sl, name)(x, axis=1), _numpy(name, a, axis=1))
        _same(getattr(sl, name)(x), _numpy(name, a))


def test_nansum_of_integers_follows_sum_dtypes() -> None:
    for dtype, acc in [("int8", None), ("uint8", None), ("bool", None), ("int16", "int8"), ("float32", "int64")]:
        a = _data(dtype)
        if dtype == "float32":
            a = np.nan_to_num(a, posinf=7, neginf=-7)
        _same(sl.nansum(sl.asarray(a), axis=1, dtype=acc), np.nansum(a, axis=1, dtype=acc))


@pytest.mark.parametrize("dtype", FLOATS)
def test_all_nan_slices_give_numpys_values(dtype: str) -> None:
    a = np.full((3, 4), np.nan, dtype)
    a[0, 1] = 2
    x = sl.asarray(a)
    for axis in (None, 0, 1):
        assert sl.nansum(x, axis=1).get().tolist() == [2, 0, 0]
        for name in NAN_REDUCTIONS:
            _same(getattr(sl, name)(x, axis=axis), _numpy(name, a, axis=axis))
    full_nan = sl.asarray(np.full(5, np.nan, dtype))
    assert sl.nansum(full_nan).get() == 0
    for name in ["nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]:
        assert np.isnan(getattr(sl, name)(full_nan).get()), name


def test_nanmax_skips_nan_next_to_infinities() -> None:
    a = np.array([[-np.inf, np.nan], [np.nan, np.inf], [np.nan, -np.inf], [np.inf, np.inf]])
    x = sl.asarray(a)
    _same(sl.nanmax(x, axis=1), [-np.inf, np.inf, -np.inf, np.inf])
    _same(sl.nanmin(x, axis=1), [-np.inf, np.inf, -np.inf, np.inf])
    _same(sl.nanmean(x, axis=1), _numpy("nanmean", a, axis=1))  # inf - inf in the last row: NaN
    _same(sl.nanvar(x, axis=1), _numpy("nanvar", a, axis=1))


def test_nanmax_zero_sign_follows_max() -> None:
    """NumPy's nanmax reduces with fmax, which keeps the first of -0.0 and +0.0; stitchlab's
    reduces with max (docs/user-guide.md): the value is zero either way."""
    a = np.array([-0.0, np.nan, 0.0])
    got = sl.nanmax(sl.asarray(a)).get()
    assert got == 0 and got == np.nanmax(a)
    assert np.signbit(got) == np.signbit(sl.max(sl.asarray(np.array([-0.0, 0.0]))).get())


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_empty_reductions_are_numpys(dtype: str) -> None:
    a = np.zeros((0, 3), dtype)
    x = sl.asarray(a)
    for axis in (None, 0, 1):
        for name in ["nansum", "nanmean", "nanvar", "nanstd", "count_nonzero"]:
            _same(getattr(sl, name)(x, axis=axis), _numpy(name, a, axis=axis))
    for name in ["nanmax", "nanmin"]:
        _same(getattr(sl, name)(x, axis=1), getattr(np, name)(a, axis=1))
        for axis in (None, 0):
            with pytest.raises(ValueError, match=f"zero-size array to reduction operation f{name[3:]} which has no identity"):
                getattr(sl, name)(x, axis=axis)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        sl.ptp(x, axis=0)
    _same(sl.ptp(x, axis=1), np.ptp(a, axis=1))


@pytest.mark.parametrize("dtype", FLOATS + ["int16", "bool"])
@pytest.mark.parametrize("name", NAN_REDUCTIONS + ["nanprod"])
def test_nan_reductions_take_where_and_initial_as_numpy(name: str, dtype: str) -> None:
    """NumPy's ``where=`` (all of them; ``nanmax``/``nanmin`` only with ``initial``) and
    ``initial=`` (``nansum``, ``nanprod``, ``nanmax``, ``nanmin``): masks that leave slices empty,
    a NaN ``initial``, empty arrays; ``np.<name>`` on a stitchlab array takes the same path."""
    a = _data(dtype, (4, 6, 5))
    if name == "nanprod":
        a = np.where(np.abs(a) > 3, 1, a).astype(a.dtype)  # (no overflow to compare)
    x = sl.asarray(a)
    rng = np.random.default_rng(3)
    masks = [rng.random(a.shape) < 0.5, rng.random(a.shape[-1]) < 0.5, np.zeros(a.shape[1:], bool)]
    extreme = name in ("nanmax", "nanmin")
    initials = [np._NoValue] if name not in ("nansum", "nanprod", "nanmax", "nanmin") else [0.5, -2, np.nan] if extreme else [np._NoValue, 3]
    if dtype in ("int16", "bool"):
        initials = [i for i in initials if not isinstance(i, float)] or initials[:1]
    for axis in (None, 0, -1, (0, 2)):
        for m in masks:
            for initial in initials:
                kw = {"axis": axis, "where": m} | ({} if initial is np._NoValue else {"initial": initial})
                if dtype == "bool" and name in ("nanvar", "nanstd"):
                    continue  # (NumPy: no subtract loop for bool)
                want = _numpy(name, a, **kw)
                for got in (getattr(sl, name)(x, **kw), getattr(np, name)(x, **kw)):
                    if extreme or want.dtype.kind != "f":
                        _same(got, want, signs=not extreme)
                    else:  # (NumPy's masked sums add in another order: the last place may differ)
                        got = got.get()
                        assert got.dtype == want.dtype and got.shape == want.shape
                        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(want.dtype).eps, atol=0)
    if extreme:
        with pytest.raises(ValueError, match=f"reduction operation 'f{name[3:]}' does not have an identity"):
            getattr(sl, name)(x, where=masks[0])
        _same(getattr(sl, name)(sl.asarray(a[:0]), axis=0, initial=1), _numpy(name, a[:0], axis=0, initial=1))


@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_variances_take_a_given_mean_as_numpy(name: str, dtype: str) -> None:
    """NumPy 2's ``mean=``: the mean of ``keepdims=True``'s shape (in the data's dtype, in float64,
    a Python number), with ``ddof``, ``keepdims`` and ``where=``; deviations in NumPy's promotion
    (float32 data with a float64 mean: a float64 result); ``np.<name>`` and the methods take it too."""
    a = _data(dtype, (4, 6, 5))
    if name in ("var", "std") and dtype != "int32":
        a = np.nan_to_num(a, posinf=7, neginf=-7)
    x = sl.asarray(a)
    mask = np.random.default_rng(5).random(a.shape[-1]) < 0.7
    for axis in (None, 0, -1, (0, 2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            centre = np.nanmean(a.astype(np.float64), axis=axis, keepdims=True)
        for mean in (centre.astype(a.dtype if dtype != "int32" else np.float32), centre, 0.5):
            for kw in ({}, {"ddof": 1, "keepdims": True}, {"where": mask}):
                low = a.dtype == np.float16 and (name.startswith("nan") or np.asarray(mean).dtype != np.float64)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices, no degrees of freedom
                    want = np.asarray(getattr(np, name)(a.astype(np.float32) if low else a, axis=axis, mean=mean, **kw))
                want = want.astype(np.float16) if low else want
                calls = [getattr(sl, name)(x, axis=axis, mean=mean, **kw), getattr(np, name)(x, axis=axis, mean=mean, **kw)]
                if name in ("var", "std"):
                    calls.append(getattr(x, name)(axis=axis, mean=mean, **kw))
                for got in calls:
                    got = got.get()
                    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
                    np.testing.assert_allclose(got, want, rtol=2e-3 if low else 8 * np.finfo(want.dtype).eps, atol=0)
    with pytest.raises(ValueError, match=rf"{name}: mean= of shape \(4, 6, 5, 1\) does not broadcast to the array's "
                                         r"shape \(4, 6, 5\); give the mean as mean\(..., keepdims=True\) computes it"):
        getattr(sl, name)(x, axis=-1, mean=np.zeros((4, 6, 5, 1)))
    with pytest.raises(ValueError, match=f"{name}: mean= of shape .6,. does not broadcast"):
        getattr(np, name)(x, axis=-1, mean=np.zeros(6))


def test_nan_reductions_report_bad_arguments() -> None:
    x = sl.asarray(_data("float32"))
    with pytest.raises(np.exceptions.AxisError, match="axis 3 is out of bounds for array of dimension 3"):
        sl.nanmax(x, axis=3)
    with pytest.raises(np.exceptions.AxisError, match="axis -4 is out of bounds"):
        sl.nanmean(x, axis=(0, -4))
    for name in ["nanmean", "nanvar", "nanstd"]:
        with pytest.raises(TypeError, match=f"{name}: dtype must be a float dtype for float input.*int32"):
            getattr(sl, name)(x, dtype=np.int32)
    with pytest.raises(TypeError, match="ddof must be a number .*, got 'one'"):
        sl.nanstd(x, ddof="one")
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        sl.nansum(x, axis=(1, -2))


def test_nan_reductions_are_one_fused_row_kernel() -> None:
    x = sl.asarray(np.empty((8192, 4096), np.float32))
    for name in NAN_REDUCTIONS:
        kernels = sl.explain(getattr(sl, name)(x, axis=-1)).kernels
        assert len(kernels) == 1, (name, [k.name for k in kernels])
        assert kernels[0].schedule.family.startswith("row"), (name, kernels[0].schedule)
    (k,) = sl.explain(sl.nansum(x, axis=-1)).kernels
    assert k.schedule.family.startswith("row")


# --- count_nonzero, ptp --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + INTEGERS)
def test_count_nonzero_is_numpys(dtype: str) -> None:
    a = _data(dtype)
    x = sl.asarray(a)
    for axis in AXES:
        for keepdims in (False, True):
            _same(sl.count_nonzero(x, axis=axis, keepdims=keepdims), np.count_nonzero(a, axis=axis, keepdims=keepdims))
    total = sl.count_nonzero(sl.asarray(np.array([0.0, -0.0, np.nan, np.inf, 1e-30])))
    assert total.dtype == np.int64 and total.shape == () and int(total) == 3


@pytest.mark.parametrize("dtype", FLOATS + ["int8", "uint8", "int32", "int64"])
def test_ptp_is_numpys(dtype: str) -> None:
    a = _data(dtype)
    x = sl.asarray(a)
    for axis in AXES:
        for keepdims in (False, True):
            _same(sl.ptp(x, axis=axis, keepdims=keepdims), _numpy("ptp", a, axis=axis, keepdims=keepdims))


def test_ptp_wraps_integers_and_refuses_bool_as_numpy() -> None:
    a = np.array([[-128, 127], [5, 5]], np.int8)
    _same(sl.ptp(sl.asarray(a), axis=1), np.ptp(a, axis=1))  # -1: int8 wraps around
    with pytest.raises(TypeError, match="ptp: boolean input is not supported.*astype"):
        sl.ptp(sl.asarray(np.array([True, False])))


# --- isclose, allclose ---------------------------------------------------------------------------
def _pair(dtype: str, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and a ``b`` near it: equal, within and just outside the default tolerances."""
    a = _data(dtype, (6, 5), seed)
    if np.dtype(dtype).kind != "f":
        return a, _data(dtype, (6, 5), seed + 1)
    rng = np.random.default_rng(seed)
    step = rng.choice([0, 1e-9, 1e-6, 1e-5, 2e-5, 1e-3], a.shape)
    b = (a * (1 + step) + rng.choice([0, 5e-9, 2e-8], a.shape)).astype(dtype)
    b[0] = a[0]  # NaN against NaN, inf against inf
    b[3, :2] = [np.inf, -np.inf]
    return a, b


@pytest.mark.parametrize("dtype", FLOATS + INTEGERS)
def test_isclose_is_numpys(dtype: str) -> None:
    a, b = _pair(dtype)
    for kwargs in [{}, {"equal_nan": True}, {"rtol": 1e-3}, {"atol": 0.5}, {"rtol": 0, "atol": 0}]:
        for x, y in [(a, b), (b, a), (a, a), (a, 1), (a, 1.5), (2, a), (a, True), (a[2], a)]:
            want = np.isclose(x, y, **kwargs)
            got = sl.isclose(sl.asarray(x) if isinstance(x, np.ndarray) else x, y, **kwargs)
            _same(got, want)


def test_isclose_treats_infinities_and_nan_as_numpy() -> None:
    a = np.array([np.inf, np.inf, -np.inf, np.inf, 1e308, np.nan, np.nan, 0.0, -0.0])
    b = np.array([np.inf, -np.inf, -np.inf, 1e308, np.inf, np.nan, 1.0, -0.0, 1e-9])
    for equal_nan in (False, True):
        want = np.isclose(a, b, equal_nan=equal_nan)
        _same(sl.isclose(sl.asarray(a), b, equal_nan=equal_nan), want)
        _same(sl.isclose(sl.asarray(a), sl.asarray(b), equal_nan=equal_nan), want)
    assert sl.isclose(sl.asarray(a), b).get().tolist() == [True, False, True, False, False, False, False, True, True]


def test_isclose_computes_float16_tolerances_in_float16() -> None:
    """NumPy 2: a Python-scalar rtol is weak, so rtol * |b| is a float16 product and atol=1e-8
    rounds to 0; a float64 tolerance array promotes the comparison to float64."""
    a = np.array([1.0, 1.0, 2048, 1e-7], np.float16)
    b = np.array([1.0009765625, 1.0, 2050, 0.0], np.float16)
    for kwargs in [{}, {"rtol": 1e-3}, {"rtol": 1e-3, "atol": 1e-8}, {"atol": np.float64(1e-7)},
                   {"rtol": np.array([1e-3, 0, 1e-3, 0])}, {"atol": np.array(1e-6, np.float64)}]:
        want = np.isclose(a, b, **kwargs)
        _same(sl.isclose(sl.asarray(a), sl.asarray(b), **kwargs), want)
        _same(sl.isclose(sl.asarray(a), sl.asarray(b), **{k: sl.asarray(v) if isinstance(v, np.ndarray) else v
                                                           for k, v in kwargs.items()}), want)
    _same(sl.isclose(sl.asarray(a), b.astype(np.float32)), np.isclose(a, b.astype(np.float32)))
    # float16(1e-4) is a little above 1e-4: close with a weak atol, not with a float64 one
    zero, tiny = sl.asarray(np.zeros(1, np.float16)), sl.asarray(np.array([1e-4], np.float16))
    assert sl.isclose(zero, tiny, rtol=0, atol=1e-4).get().tolist() == [True]
    assert sl.isclose(zero, tiny, rtol=np.float64(0), atol=1e-4).get().tolist() == [False]
    _same(sl.isclose(sl.asarray(a.astype(np.int8)), b), np.isclose(a.astype(np.int8), b))


def test_isclose_broadcasts_a_against_b_and_the_tolerances() -> None:
    a, b = _pair("float32")
    a3, b2 = a.reshape(6, 1, 5), b[:4]
    rtol = np.array([1e-5, 1e-3, 0, 1e-2, 1e-6], np.float32)
    _same(sl.isclose(sl.asarray(a3), sl.asarray(b2)), np.isclose(a3, b2))
    _same(sl.isclose(sl.asarray(a3), sl.asarray(b2), rtol=rtol), np.isclose(a3, b2, rtol=rtol))
    _same(sl.isclose(1.0, sl.asarray(b2)), np.isclose(1.0, b2))
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(6,1,5\) \(3,\)"):
        sl.isclose(sl.asarray(a3), sl.asarray(b[0, :3]))


def test_isclose_of_python_scalars_is_a_0d_bool() -> None:
    for x, y in [(1.0, 1.0 + 1e-9), (3, 3), (1, 2), (float("inf"), float("inf")), (float("nan"), float("nan"))]:
        _same(sl.isclose(x, y), np.isclose(x, y))
    _same(sl.isclose(float("nan"), float("nan"), equal_nan=True), np.isclose(np.nan, np.nan, equal_nan=True))


def test_isclose_reports_non_finite_tolerances_as_numpy() -> None:
    x = sl.asarray(np.ones(3))
    with pytest.warns(RuntimeWarning, match="One of rtol or atol is not valid, atol: inf, rtol: 1e-05"):
        sl.isclose(x, 1, atol=np.inf)
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError, match="rtol: nan"):
        sl.isclose(x, 1, rtol=np.nan)


def test_isclose_is_one_pointwise_kernel() -> None:
    a = sl.asarray(np.empty((8192, 4096), np.float32))
    b = sl.asarray(np.empty((8192, 4096), np.float32))
    for out in [sl.isclose(a, b), sl.isclose(a, b, equal_nan=True), sl.isclose(a.astype(np.float16), 1.0)]:
        (k,) = sl.explain(out).kernels
        assert k.schedule.family == "pointwise"


def test_allclose_is_a_python_bool_as_numpys() -> None:
    a, b = _pair("float32")
    finite = np.isfinite(a) & np.isfinite(b)
    cases = [(a, a), (a, b), (a[finite], b[finite]), (a[finite], a[finite] * (1 + 1e-6)), (np.zeros(0), np.ones(0))]
    for x, y in cases:
        for equal_nan in (False, True):
            got = sl.allclose(sl.asarray(x), sl.asarray(y), equal_nan=equal_nan)
            assert type(got) is bool and got == np.allclose(x, y, equal_nan=equal_nan)
    assert sl.allclose(sl.asarray(np.array([1e10, 1e-8])), np.array([1.00001e10, 1e-9])) is True
    assert sl.allclose(sl.asarray(np.array([1e10, 1e-7])), np.array([1.00001e10, 1e-8])) is False


# --- nan_to_num, fabs ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_to_num_is_numpys(dtype: str) -> None:
    a = _data(dtype)
    x = sl.asarray(a)
    _same(sl.nan_to_num(x), _numpy("nan_to_num", a))
    for kwargs in [{"nan": -0.0}, {"nan": 7, "posinf": 1e6, "neginf": -1e6}, {"posinf": np.float64(2.5)},
                   {"neginf": np.int8(-3)}, {"nan": np.nan, "posinf": np.inf}]:
        _same(sl.nan_to_num(x, **kwargs), _numpy("nan_to_num", a.copy(), **kwargs))
    _same(x, _data(dtype))  # the input is not changed
    assert sl.nan_to_num(x, copy=False, nan=1.5) is x  # NumPy's replacement in place: x stands for the result
    _same(x, _numpy("nan_to_num", a.copy(), nan=1.5))
    np.testing.assert_array_equal(a, _data(dtype))  # (the wrapped data is not written)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_nan_to_num_returns_integers_and_bools_unchanged(dtype: str) -> None:
    a = _data(dtype)
    _same(sl.nan_to_num(sl.asarray(a), nan=5, posinf=1), np.nan_to_num(a, nan=5, posinf=1))
    _same(sl.nan_to_num(3), np.nan_to_num(3))
    _same(sl.nan_to_num(float("inf")), np.nan_to_num(float("inf")))


@pytest.mark.parametrize("kwargs", [{"nan": np.array([5, 6])}, {"posinf": np.array([[7.0], [8.0]])},
                                    {"neginf": [1e10, 2.0], "posinf": np.array([[1], [2]])}, {"nan": np.ones((1, 1, 2))},
                                    {"nan": np.array(4.5)}, {"nan": np.array([1, 2, 3])}, {"nan": np.ones((2, 1, 2))}], ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_nan_to_num_takes_arrays_of_values_that_broadcast_to_x(kwargs: dict[str, Any], dtype: str) -> None:
    """NumPy's copyto puts array values in (broadcast to x; ValueError where they do not)."""
    a = np.array([[np.nan, 1.0], [np.inf, -np.inf]], dtype)
    try:
        want = np.nan_to_num(a, **kwargs)
    except ValueError:
        with pytest.raises(ValueError, match="could not broadcast"):
            sl.nan_to_num(sl.asarray(a), **kwargs)
        return
    _same(sl.nan_to_num(sl.asarray(a), **kwargs), want)


def test_nan_to_num_refuses_values_that_are_not_real_numbers() -> None:
    x = sl.asarray(np.array([np.nan], np.float32))
    with pytest.raises(TypeError, match=r"nan_to_num: nan must be a real number, got 1j"):
        sl.nan_to_num(x, nan=1j)
    with pytest.raises(TypeError, match="nan_to_num: posinf must be a real number, got 'big'"):
        sl.nan_to_num(x, posinf="big")


@pytest.mark.parametrize("dtype", FLOATS + INTEGERS + ["int16", "uint64"])
def test_fabs_is_numpys(dtype: str) -> None:
    a = _data(dtype)
    _same(sl.fabs(sl.asarray(a)), np.fabs(a))
    _same(sl.fabs(-2), np.fabs(-2))
    _same(sl.fabs(-2.5), np.fabs(-2.5))
    if dtype in FLOATS:  # the sign bit is cleared, NaN's too
        got = sl.fabs(sl.asarray(np.array([-0.0, -np.nan, -np.inf], dtype))).get()
        assert not np.signbit(got).any()


# --- layout ---------------------------------------------------------------------------------------
def test_swapaxes_and_moveaxis_are_numpys_transposes() -> None:
    a = _data("float32", (2, 3, 4, 5))
    x = sl.asarray(a)
    for i, j in [(0, 1), (0, -1), (2, 2), (-2, 1)]:
        _same(sl.swapaxes(x, i, j), np.swapaxes(a, i, j))
        _same(x.swapaxes(i, j), a.swapaxes(i, j))
    for src, dst in [(0, -1), (-1, 0), ([0, 1], [-1, -2]), ([0, 1], [2, 0]), ((3, 0), (0, 3)), ([], []), (1, 1)]:
        _same(sl.moveaxis(x, src, dst), np.moveaxis(a, src, dst))
    assert sl.moveaxis(x, 0, -1)._node.op == "transpose"


def test_swapaxes_and_moveaxis_report_bad_axes_as_numpy() -> None:
    x = sl.asarray(np.zeros((2, 3)))
    with pytest.raises(np.exceptions.AxisError, match="axis2: axis 2 is out of bounds for array of dimension 2"):
        sl.swapaxes(x, 0, 2)
    with pytest.raises(np.exceptions.AxisError, match="axis1: axis -3 is out of bounds"):
        x.swapaxes(-3, 0)
    with pytest.raises(TypeError):
        sl.swapaxes(x, 0.0, 1)
    with pytest.raises(np.exceptions.AxisError, match="source: axis 5 is out of bounds for array of dimension 2"):
        sl.moveaxis(x, 5, 0)
    with pytest.raises(np.exceptions.AxisError, match="destination: axis -3 is out of bounds"):
        sl.moveaxis(x, 0, -3)
    with pytest.raises(ValueError, match="repeated axis in `source` argument"):
        sl.moveaxis(x, [0, 0], [0, 1])
    with pytest.raises(ValueError, match="`source` and `destination` arguments must have the same number of elements"):
        sl.moveaxis(x, [0, 1], [0])


def test_atleast_1d_and_2d_are_numpys() -> None:
    inputs = [2.5, np.array(3, np.int8), np.arange(4.0), np.ones((2, 3), np.float16), np.zeros((2, 1, 3))]
    for fn in ("atleast_1d", "atleast_2d"):
        for a in inputs:
            _same(getattr(sl, fn)(a), getattr(np, fn)(a))
            _same(getattr(sl, fn)(sl.asarray(a)), getattr(np, fn)(a))
        got, want = getattr(sl, fn)(*inputs), getattr(np, fn)(*inputs)
        assert type(got) is type(want) is tuple and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        assert getattr(sl, fn)() == getattr(np, fn)() == ()


def test_broadcast_arrays_are_lazy_broadcasts_of_numpys_shape() -> None:
    args = [np.arange(3.0).reshape(3, 1), np.arange(4, dtype=np.int8), 5, np.ones((2, 1, 1), np.float16)]
    got = sl.broadcast_arrays(*(sl.asarray(a) if isinstance(a, np.ndarray) else a for a in args))
    want = np.broadcast_arrays(*args)
    assert type(got) is type(want) is tuple
    for g, w in zip(got, want, strict=True):
        _same(g, w)
    assert sl.broadcast_arrays() == ()
    (same,) = sl.broadcast_arrays(sl.asarray(args[0]))
    _same(same, args[0])
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(3,\) \(4,\)"):
        sl.broadcast_arrays(sl.zeros(3), sl.zeros(4))


@pytest.mark.parametrize("dtype", FLOATS + ["int32", "int8", "bool"])
@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
def test_nanargmax_and_nanargmin_are_numpys(name: str, dtype: str) -> None:
    """NumPy's positions, NaN ignored (a slice of NaN and -inf gives its first NaN, as NumPy's
    -inf replacement does); an all-NaN slice gives -1 (CuPy's answer) where NumPy raises."""
    a = (np.random.default_rng(3).standard_normal((6, 7)) * 3).astype(dtype)
    if a.dtype.kind == "f":
        a[::2, ::3] = np.nan
        a[1, :3] = -np.inf
        a[1, 0] = np.nan
        a[3] = np.inf
    x = sl.asarray(a)
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            _same(getattr(sl, name)(x, axis=axis, keepdims=keepdims), _numpy(name, a, axis=axis, keepdims=keepdims))
    _same(getattr(np, name)(x, axis=1), _numpy(name, a, axis=1))
    if a.dtype.kind == "f":
        b = a.copy()
        b[2] = np.nan
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            getattr(np, name)(b, axis=1)
        want = _numpy(name, np.where(np.isnan(b).all(1, keepdims=True), 0, b), axis=1)
        want[2] = -1
        _same(getattr(sl, name)(sl.asarray(b), axis=1), want)


def test_nanargmax_is_one_row_kernel() -> None:
    x = sl.asarray(np.ones((64, 512), np.float32))
    assert len(sl.explain(sl.nanargmax(x, axis=1), device="H200").kernels) == 1


def test_float16_sums_accumulate_in_float32_along_any_axis() -> None:
    """A float16 sum is accumulated in float32 and rounded once, along an outer axis too, as the
    kernels do (NumPy's own float16 sum there rounds every partial sum to float16: 4096 values
    near 1 stall where float16's spacing reaches 2; random-program seed 7415358)."""
    a = (1 + np.random.default_rng(3).random((4096, 3)) / 8).astype(np.float16)
    exact = a.astype(np.float64).sum(axis=0)
    for got in (sl.sum(sl.asarray(a), axis=0), sl.asarray(a).T.sum(axis=-1), sl.nansum(sl.asarray(a), axis=0)):
        g = got.get()
        assert g.dtype == np.float16
        np.testing.assert_allclose(g.astype(np.float64), exact, rtol=1e-3)  # (one float16 rounding)
    assert np.abs(a.sum(axis=0).astype(np.float64) - exact).max() > 100  # (NumPy's own, stalled)


def test_float16_scans_accumulate_in_float32_and_round_each_result_once() -> None:
    """The documented choice for float16 scans (user guide, "Gathers, scans, sorts"): every entry
    point (cumsum, nancumsum, add.accumulate, the method, NumPy's function, jit, out=) gives the
    float32 scan with each result rounded to float16 once, the bits the GPU path gives, not NumPy's
    float16 scan, which rounds every partial sum (2000 values in [0, 2): 21 off the exact sums,
    where this is within one float16 step)."""
    x = (np.random.default_rng(0).random((3, 2000)) * 2).astype(np.float16)
    want = np.cumsum(x.astype(np.float32), axis=1).astype(np.float16)
    into = sl.zeros(x.shape, dtype=np.float16)
    sl.cumsum(sl.asarray(x), axis=1, out=into)
    for got in (sl.cumsum(sl.asarray(x), axis=1), sl.nancumsum(sl.asarray(x), axis=1),
                sl.add.accumulate(sl.asarray(x), axis=1), sl.asarray(x).cumsum(axis=1),
                np.cumsum(sl.asarray(x), axis=1), sl.jit(lambda a: sl.cumsum(a, axis=1))(sl.asarray(x)), into):
        _same(got, want)
    exact = np.cumsum(x.astype(np.float64), axis=1)
    assert np.abs(want.astype(np.float64) - exact).max() <= 1.0  # (float16's spacing near 2000 is 1)
    assert np.abs(np.cumsum(x, axis=1).astype(np.float64) - exact).max() > 10  # (NumPy's own)
    p = (np.random.default_rng(1).random(60) + 0.5).astype(np.float16)
    want = np.cumprod(p.astype(np.float32)).astype(np.float16)
    for got in (sl.cumprod(sl.asarray(p)), sl.multiply.accumulate(sl.asarray(p)), sl.nancumprod(sl.asarray(p))):
        _same(got, want)


@pytest.mark.parametrize("row", [
    [300, 300, 0, 5],                     # inf (90000 in float32) times 0: NaN, where float32's 0
    [-300, 300, 0.0, 1],                  # -inf times 0
    [60000, 2, 0.5, 3],                   # inf stays inf, where float32's came back to 60000
    [300, -300, 300, 0.5, -1, np.inf],    # the sign of inf follows the factors'
    [65504, 2, np.nan, 1],                # NaN after inf
    [1e-3, 1e-3, 1e-3, 1e4, 1e4, 7],      # underflow: 0 stays 0 (float32's came back to 0.1)
    [-1e-3, 1e-3, 1e-3, 1e4, np.inf, 1],  # -0 times inf: NaN
    [np.inf, 0, 2, 3],                    # an inf factor: float32's own NaN
], ids=lambda r: str(r))
def test_float16_products_stay_inf_or_zero_once_they_leave_float16s_range(row: list[float]) -> None:
    """A float16 product accumulates in float32 (above), but once it leaves float16's range it
    stays where NumPy's float16 product stays: inf or a signed zero, NaN from a factor that makes
    NaN of that (0 times inf), along any axis and through every entry point."""
    a = np.array(row, np.float16)
    with np.errstate(all="ignore"):
        want = np.cumprod(a)
    two = np.stack([a, a[::-1]], axis=1)  # (along axis 0 of a 2-d array, the second column reversed)
    with np.errstate(all="ignore"):
        want_two = np.cumprod(two, axis=0)
    for got in (sl.cumprod(sl.asarray(a)), sl.multiply.accumulate(sl.asarray(a)), sl.asarray(a).cumprod(),
                sl.jit(sl.cumprod)(sl.asarray(a))):
        _same(got, want)
    _same(sl.cumprod(sl.asarray(two), axis=0), want_two)
    with np.errstate(all="ignore"):
        _same(sl.nancumprod(sl.asarray(a)), np.nancumprod(a))


@pytest.mark.parametrize("row", [
    [40000, 40000, -50000, 1],    # inf stays inf, where float32's came back to 30000
    [-60000, -10000, 30000, 5],   # -inf
    [60000, 10000, -np.inf, 1],   # inf plus -inf: NaN
    [60000, 10000, np.inf, -5],   # inf plus inf: inf
    [60000, 10000, np.nan, 1],    # NaN after inf
    [65504, 16, -16, 0],          # 65520 rounds to inf
], ids=lambda r: str(r))
def test_float16_sums_stay_inf_once_they_overflow(row: list[float]) -> None:
    """A float16 running sum accumulates in float32, but once it rounds to inf it stays inf, as
    NumPy's float16 sum does (NaN from an inf of the other sign, or a NaN)."""
    a = np.array(row, np.float16)
    two = np.stack([a, a[::-1]], axis=1)
    with np.errstate(all="ignore"):
        want, want_two = np.cumsum(a), np.cumsum(two, axis=0)
    for got in (sl.cumsum(sl.asarray(a)), sl.add.accumulate(sl.asarray(a)), sl.jit(sl.cumsum)(sl.asarray(a))):
        _same(got, want)
    _same(sl.cumsum(sl.asarray(two), axis=0), want_two)
