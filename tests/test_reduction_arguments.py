"""Reductions' less common arguments against NumPy: ``initial=`` that does not fit the dtype,
``out=`` of another dtype, integer ``dtype=`` of mean/var/std, ``axis`` 0 or -1 of 0-d data,
empty slices of the order statistics and their ``out=``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import stitchlab as sl


def _numpy(f: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kwargs)


def _same(expected: Any, got: Any) -> None:
    expected, got = np.asarray(expected), np.asarray(got)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    np.testing.assert_array_equal(got, expected)


U8 = np.array([1, 2, 3], np.uint8)
I16 = np.array([1, 2, 3], np.int16)


@pytest.mark.parametrize("name, data, initial", [
    ("max", U8, 300), ("min", I16, np.inf), ("sum", I16, np.nan), ("prod", U8, -3), ("nanmax", U8, 256),
    ("nansum", I16, 2**70), ("amin", U8, -1),
])
def test_an_initial_that_does_not_fit_raises_numpys_error(name: str, data: np.ndarray, initial: Any) -> None:
    with pytest.raises((OverflowError, ValueError)) as expected:
        getattr(np, name)(data, initial=initial)
    with pytest.raises(expected.type, match="initial="):
        getattr(sl, name)(sl.asarray(data), initial=initial)


@pytest.mark.parametrize("initial", [300, 2.5, True, np.int64(300), np.float32(7.5)])
@pytest.mark.parametrize("name", ["max", "sum", "min"])
def test_an_initial_that_fits_or_is_cast_is_numpys(name: str, initial: Any) -> None:
    _same(getattr(np, name)(I16, initial=initial), getattr(sl, name)(sl.asarray(I16), initial=initial).get())
    _same(getattr(np, name)(I16, initial=initial, where=I16 > 1),
          getattr(sl, name)(sl.asarray(I16), initial=initial, where=I16 > 1).get())


@pytest.mark.parametrize("name, data, out_dtype", [
    ("sum", np.array([1.5, 1.5, 2.25]), np.int64),     # summed in float64, then cast: 5
    ("sum", np.array([100, 100], np.int8), np.int16),  # summed in int16
    ("prod", np.array([100, 3], np.uint8), np.float32),
    ("sum", np.array([1, 2**40 + 1, -2**40], np.int64), np.float32),
    ("cumsum", np.array([1.5, 1.5]), np.int64),
    ("mean", np.array([1.5, 1.5]), np.int64),
    ("var", np.array([1.5, 2.5, 4.0]), np.float16),
    ("nancumsum", np.array([1.5, np.nan, 2.0]), np.int32),
    ("max", np.array([120, -103], np.int8), np.int16),
    ("ptp", np.array([120, -103], np.int8), np.int16),  # 223: max into out, then the difference in int16
])
def test_out_of_another_dtype_is_cast_into_as_numpys(name: str, data: np.ndarray, out_dtype: Any) -> None:
    shape = data.shape if name.startswith(("cum", "nancum")) else ()
    expected = np.zeros(shape, out_dtype)
    _numpy(getattr(np, name), data, out=expected)
    out = sl.zeros(shape, dtype=out_dtype)
    assert getattr(sl, name)(sl.asarray(data), out=out) is out
    _same(expected, out.get())


def test_max_into_an_out_that_cannot_hold_the_input_raises() -> None:
    """NumPy's result there depends on its buffering ([2**63, 1] into int64 gives 1)."""
    with pytest.raises(TypeError, match="cannot hold every uint64 value"):
        sl.max(sl.asarray(np.array([2**63, 1], np.uint64)), out=sl.zeros((), dtype=np.int64))


def test_argmax_into_a_float_out_raises_as_numpys() -> None:
    a = np.array([1.0, 3.0, 2.0])
    with pytest.raises(TypeError):
        np.argmax(a, out=np.zeros((), np.float32))
    with pytest.raises(TypeError, match="'safe'"):
        sl.argmax(sl.asarray(a), out=sl.zeros((), dtype=np.float32))
    out = sl.zeros(2, dtype=np.int64)
    sl.nanargmin(sl.asarray(np.array([[np.nan, 2.0], [1.0, 0.5]])), axis=1, out=out)
    _same(np.array([1, 1]), out.get())


def test_logical_reductions_refuse_a_non_bool_dtype() -> None:
    with pytest.raises(TypeError):
        np.logical_and.reduce(np.array([1, 2]), dtype=np.float64)
    with pytest.raises(TypeError, match="reduces in bool"):
        sl.logical_and.reduce(sl.asarray(np.array([1, 2])), dtype=np.float64)


DATA = [np.array([[1, 2], [3, 9]], np.int16), np.array([100, 100, 100], np.int16),
        np.array([[120, -103, 5], [7, 8, -128]], np.int8), np.array([True, False, True])]


@pytest.mark.parametrize("data", DATA, ids=lambda a: f"{a.dtype}{a.shape}")
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.bool_])
@pytest.mark.parametrize("name", ["mean", "var", "std", "nanmean", "nanvar", "nanstd"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_an_integer_dtype_runs_numpys_steps_in_it(data: np.ndarray, dtype: Any, name: str, axis: Any) -> None:
    """The sums wrap in ``dtype`` and the quotients are truncated; the root of an array of
    integer variances raises, as NumPy's ``sqrt(var, out=var)``."""
    try:
        expected = _numpy(getattr(np, name), data, axis=axis, dtype=dtype)
    except TypeError as e:  # (the root of an array, or bool deviations: NumPy has no bool subtract)
        with pytest.raises(TypeError, match="give a float" if "sqrt" in str(e) else "subtract"):
            getattr(sl, name)(sl.asarray(data), axis=axis, dtype=dtype)
        return
    _same(expected, getattr(sl, name)(sl.asarray(data), axis=axis, dtype=dtype).get())


@pytest.mark.parametrize("name", ["std", "nanstd"])
@pytest.mark.parametrize("data, dtype", [(np.array(5, np.int16), np.int16), (np.array(90, np.int8), np.uint8),
                                         (np.array(True), np.int32)])
@pytest.mark.parametrize("where", [True, False])
def test_an_integer_dtype_std_of_0_d_data_with_keepdims_takes_the_scalar_root(name: str, data: np.ndarray, dtype: Any,
                                                                              where: bool) -> None:
    """``keepdims=True`` of 0-d data is still a 0-d result, a NumPy scalar, whose root NumPy takes
    and truncates (it raised as for an array of variances)."""
    expected = _numpy(getattr(np, name), data, dtype=dtype, keepdims=True, where=where)
    _same(expected, getattr(sl, name)(sl.asarray(data), dtype=dtype, keepdims=True, where=where).get())


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("data, kwargs", [
    (np.array(-2159.4963010532174), {"dtype": np.float32}),
    (np.array([1e8 + 1, 1e8 + 2]), {"dtype": np.float32}),  # NumPy 2.5, not 0
    (np.array(-12507.275197487377), {"dtype": np.float16}),
    (np.array(25621, np.uint16), {"dtype": np.float16}),  # 25 (25621 - 25616), not 0
    (np.array(13549, np.int16), {"dtype": np.float16, "ddof": 2}),  # 9 / 0: inf, not NaN
    (np.random.default_rng(0).standard_normal((50, 7)) * 100 + 1e4, {"dtype": np.float32, "axis": 0}),
])
def test_a_narrower_float_dtype_takes_the_deviations_from_the_data(name: str, data: np.ndarray,
                                                                   kwargs: dict[str, Any]) -> None:
    """NumPy's variance with a ``dtype=`` narrower than the data subtracts the mean (in ``dtype``)
    from the data itself, in their promotion (float64 data, float32 mean: float64 deviations);
    stitchlab cast the data to ``dtype`` first, so the deviations of nearby large values vanished."""
    _same(_numpy(getattr(np, name), data, **kwargs), getattr(sl, name)(sl.asarray(data), **kwargs).get())


def test_a_float16_dtype_rounds_other_data_first() -> None:
    a = np.array([70000, 0], np.int32)  # inf in float16
    _same(np.mean(a, dtype=np.float16), sl.mean(sl.asarray(a), dtype=np.float16).get())
    b = np.array([1.00048828125, 1.0], np.float64)  # rounds to 1 in float16
    _same(np.mean(b, dtype=np.float16), sl.mean(sl.asarray(b), dtype=np.float16).get())


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any", "argmax", "argmin", "count_nonzero",
                                  "ptp", "nansum", "nanprod", "nanmax", "nanmin", "nanargmax", "nanargmin", "cumsum",
                                  "cumprod", "nancumsum", "mean", "median"])
@pytest.mark.parametrize("axis", [0, -1, 1, (0,), ()])
def test_axis_0_or_minus_1_of_0_d_data_is_numpys(name: str, axis: Any) -> None:
    """NumPy's reductions, arg-reductions and scans take axis 0 or -1 of a 0-d array; mean and
    median do not."""
    data = np.array(5.0)
    try:
        expected = _numpy(getattr(np, name), data, axis=axis)
    except (np.exceptions.AxisError, TypeError):  # (a tuple where an int is needed: either error, as NumPy's vary)
        with pytest.raises(np.exceptions.AxisError if type(axis) is int else (TypeError, np.exceptions.AxisError)):
            getattr(sl, name)(sl.asarray(data), axis=axis)
        return
    _same(expected, getattr(sl, name)(sl.asarray(data), axis=axis).get())


def test_ufunc_reduce_of_0_d_data_with_its_default_axis() -> None:
    _same(np.add.reduce(np.array(5)), sl.add.reduce(sl.asarray(np.array(5))).get())
    _same(np.maximum.reduce(np.array(2.5)), sl.maximum.reduce(sl.asarray(np.array(2.5))).get())


@pytest.mark.parametrize("shape, axis", [((0, 3), 0), ((0, 3), None), ((2, 0), -1), ((0,), 0)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int16])
@pytest.mark.parametrize("name, args", [("median", ()), ("nanmedian", ()), ("nanquantile", (0.5,)),
                                        ("nanpercentile", (25.0,))])
def test_statistics_of_empty_slices_are_nan(shape: tuple[int, ...], axis: Any, dtype: Any, name: str,
                                            args: tuple[Any, ...]) -> None:
    data = np.zeros(shape, dtype)
    _same(_numpy(getattr(np, name), data, *args, axis=axis),
          getattr(sl, name)(sl.asarray(data), *args, axis=axis).get())


@pytest.mark.parametrize("shape, axis", [((0, 3), 0), ((0, 3), 1), ((0, 3), None), ((2, 0, 3), (0, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int16])
@pytest.mark.parametrize("name, q", [("nanquantile", [0.1, 0.9]), ("nanpercentile", np.array([[50.0]])),
                                     ("nanpercentile", np.float64(25.0))])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nan_quantiles_of_an_empty_array_are_numpys_nanmean(shape: tuple[int, ...], axis: Any, dtype: Any, name: str,
                                                            q: Any, keepdims: bool) -> None:
    """NumPy's nanquantile of an empty array returns its ``nanmean``: no axes of ``q``'s, the
    input's float dtype (float64 for integers), whatever ``q``'s dtype; ``q`` is still checked."""
    data = np.zeros(shape, dtype)
    _same(_numpy(getattr(np, name), data, q, axis=axis, keepdims=keepdims),
          getattr(sl, name)(sl.asarray(data), q, axis=axis, keepdims=keepdims).get())
    with pytest.raises(ValueError, match="range"):
        getattr(sl, name)(sl.asarray(data), 150.0, axis=axis)


@pytest.mark.parametrize("name, args", [("median", ()), ("nanmedian", ()), ("quantile", (0.25,)),
                                        ("percentile", (75.0,)), ("nanquantile", (0.5,))])
def test_order_statistics_take_out(name: str, args: tuple[Any, ...]) -> None:
    data = np.random.default_rng(0).standard_normal((3, 5))
    expected = getattr(np, name)(data, *args, axis=0)
    out = sl.zeros(5)
    assert getattr(sl, name)(sl.asarray(data), *args, axis=0, out=out) is out
    np.testing.assert_allclose(out.get(), expected, rtol=1e-15)
    into = np.zeros(5)  # through NumPy's function, into a NumPy array
    getattr(np, name)(sl.asarray(data), *args, axis=0, out=into)
    np.testing.assert_allclose(into, expected, rtol=1e-15)


@pytest.mark.parametrize("out_dtype", [np.uint8, np.int8, np.float16, np.float32, np.int64])
@pytest.mark.parametrize("name", ["mean", "var", "std"])
def test_mean_and_variance_into_another_dtype_follow_numpys_steps(name: str, out_dtype: Any) -> None:
    """NumPy sums into ``out`` and divides there: int16 [100, 200, 300] into uint8 has the mean 29;
    ``std`` into an integer ``out`` raises (its ``sqrt(var, out=var)``)."""
    data = np.array([100, 200, 300], np.int16) if name != "std" else np.array([100, 200, 300], np.float32)
    expected = np.zeros((), out_dtype)
    try:
        _numpy(getattr(np, name), data, out=expected)
    except TypeError:
        with pytest.raises(TypeError, match="give a float out="):
            getattr(sl, name)(sl.asarray(data), out=sl.zeros((), dtype=out_dtype))
        return
    out = sl.zeros((), dtype=out_dtype)
    getattr(sl, name)(sl.asarray(data), out=out)
    _same(expected, out.get())


_F16 = np.array([0.6, np.nan, 1.7] * 1000, np.float16)


@pytest.mark.parametrize("out_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, data, dtype", [
    *((n, _F16, np.float16) for n in ("mean", "var", "std", "nanmean", "nanvar", "nanstd", "nansum")),
    *((n, _F16.astype(np.float32), np.float16) for n in ("mean", "nanmean", "nanvar", "nanstd", "nansum")),
    *((n, _F16, None) for n in ("nanmean", "nansum")), ("nanprod", _F16[:30], None)])
def test_float16_sums_into_another_float_out_are_rounded_as_numpys(name: str, data: np.ndarray, dtype: Any,
                                                                   out_dtype: Any) -> None:
    """With ``dtype=float16`` NumPy's sum is a float16 reduction: rounded to float16 before it goes
    into ``out`` and is divided there (it kept its float32 value); without one, float16 data into a
    float32 ``out`` is summed in float32 (nansum and nanmean rounded it to float16). (The mean and
    variance of float16 without ``dtype=`` work in float32 by design, and var's of other data with
    ``dtype=float16`` round the data first: not compared here.)"""
    if not name.startswith("nan"):
        data = np.nan_to_num(data, nan=1.25)
    expected = np.zeros((), out_dtype)
    _numpy(getattr(np, name), data, dtype=dtype, out=expected)
    out = sl.zeros((), dtype=out_dtype)
    assert getattr(sl, name)(sl.asarray(data), dtype=dtype, out=out) is out
    _same(expected, out.get())


@pytest.mark.parametrize("name, data, out_dtype", [
    ("var", np.array([11662.37890625, -59525.90625, -37325.828125, 35697.875, -9460.9990234375], np.float32), np.int64),
    ("var", np.array([27178.958984375, 1140.1239013671875, 2720.057861328125, 1611.8724365234375], np.float32), np.uint32),
    ("mean", np.array([-40800.0, -36288.0, -39232.0, 32928.0], np.float16), np.float16),  # -75520 into float16: -inf
    ("median", np.array([-40800.0, -36288.0, -39232.0, 32928.0], np.float16), np.float16),
    ("mean", (np.random.default_rng(0).random(300) * 3).astype(np.float16), np.float16),
])
def test_sums_into_out_run_in_numpys_loop(name: str, data: np.ndarray, out_dtype: Any) -> None:
    """NumPy's sums of mean/var/median into ``out`` run in the promotion of the data's and
    ``out``'s dtypes (float32 squares into an int64 ``out``: float64, where stitchlab added in
    float32), and a float16 mean (summed in float32) into a float16 ``out`` is rounded there before
    the division, as NumPy's ``umr_sum(..., out=out)``."""
    expected = np.zeros((), out_dtype)
    _numpy(getattr(np, name), data, out=expected)
    out = sl.zeros((), dtype=out_dtype)
    getattr(sl, name)(sl.asarray(data), out=out)
    _same(expected, out.get())


def test_outs_that_numpy_refuses_are_refused() -> None:
    f = np.array([7.0, 8.0, -3.0], np.float32)
    for call in (lambda m, o: m.nanvar(f if m is np else sl.asarray(f), out=o),
                 lambda m, o: m.ptp(f if m is np else sl.asarray(f), out=o),
                 lambda m, o: m.quantile(f if m is np else sl.asarray(f), 1.0, out=o)):
        with pytest.raises(TypeError):
            call(np, np.zeros((), np.uint8))
        with pytest.raises(TypeError):
            call(sl, sl.zeros((), dtype=np.uint8))


@pytest.mark.parametrize("out_dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("data", [np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32) * 1e4,
                                  np.random.default_rng(1).integers(-30000, 30000, (5, 4), dtype=np.int16),
                                  np.random.default_rng(2).integers(0, 2**64 - 1, (5, 4), dtype=np.uint64),
                                  np.random.default_rng(3).standard_normal((5, 4)) * 1e3],
                         ids=["float32", "int16", "uint64", "float64"])
@pytest.mark.parametrize("method", ["linear", "midpoint", "hazen"])
@pytest.mark.parametrize("q", [0.3, [0.25, 0.75], np.float32(0.6)], ids=["float", "list", "float32"])
def test_interpolated_quantiles_into_another_float_out_subtract_in_outs_dtype(q: Any, method: str, data: np.ndarray,
                                                                              out_dtype: Any) -> None:
    """NumPy's ``_lerp`` into ``out``: ``a + diff * t`` cast into it, then ``b - diff * (1 - t)``
    where ``t >= 0.5`` subtracted in ``out``'s dtype (``dtype=`` of its ``subtract``): int16 values
    into float16 round both operands first, huge uint64 values into float16 give ``inf - inf``, NaN."""
    expected = np.zeros(np.shape(q) + (4,), out_dtype)
    _numpy(np.quantile, data, q, axis=0, method=method, out=expected)
    out = sl.zeros(np.shape(q) + (4,), dtype=out_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert sl.quantile(sl.asarray(data), q, axis=0, method=method, out=out) is out
        _same(expected, out.get())


@pytest.mark.parametrize("out_dtype", [np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("data", [np.array([[1.5, 2.5, 300.7, -4.2], [7.0, 0.5, -1.0, 2.0]]),
                                  np.array([[1.5, np.nan, 300.7, -4.2], [7.0, 0.5, -1.0, 2.0]]),
                                  np.array([[1, 2, 300, -4], [7, 0, -1, 2]], np.int16),
                                  np.array([[1.5, 2.5, 30.7, -4.2], [7.0, 0.5, -1.0, 2.0]], np.float16)],
                         ids=["float64", "float64-nan", "int16", "float16"])
@pytest.mark.parametrize("method", ["lower", "higher", "nearest", "inverted_cdf", "closest_observation"])
@pytest.mark.parametrize("name, q", [("quantile", 0.6), ("percentile", [60.0, 95.0])])
def test_picked_quantiles_into_out_take_numpys_casts(name: str, q: Any, method: str, data: np.ndarray,
                                                     out_dtype: Any) -> None:
    """NumPy's picking methods ``take`` the values into ``out``, used as a buffer of the input's
    dtype: its dtype must cast safely to the input's (an int32 ``out`` for int16 data raises), the
    values go in unsafely (float64 300.7 into int8 is 44), and a NaN into an integer ``out`` raises."""
    shape = np.shape(q) + (2,)
    expected = np.zeros(shape, out_dtype)
    try:
        _numpy(getattr(np, name), data, q, axis=1, method=method, out=expected)
    except TypeError:
        with pytest.raises(TypeError, match="'safe'|'same_kind'"):
            getattr(sl, name)(sl.asarray(data), q, axis=1, method=method, out=sl.zeros(shape, dtype=out_dtype))
        return
    out = sl.zeros(shape, dtype=out_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NaN into an int8 cast)
        assert getattr(sl, name)(sl.asarray(data), q, axis=1, method=method, out=out) is out
        _same(expected, out.get())


@pytest.mark.parametrize("out_dtype", [np.int32, np.uint8, np.bool_, np.float64, np.uint64])
def test_argmax_out_is_checked_as_numpys(out_dtype: Any) -> None:
    """NumPy takes an ``out`` whose dtype casts safely to int64, and casts into it."""
    data = np.array([1.0, 3.0, 2.0], np.float32)
    expected = np.zeros((), out_dtype)
    try:
        np.argmax(data, out=expected)
    except TypeError:
        with pytest.raises(TypeError, match="'safe'"):
            sl.argmax(sl.asarray(data), out=sl.zeros((), dtype=out_dtype))
        return
    out = sl.zeros((), dtype=out_dtype)
    sl.argmax(sl.asarray(data), out=out)
    _same(expected, out.get())


@pytest.mark.parametrize("name, data, kwargs, out_dtype", [
    ("nansum", np.array([[-5], [1]], np.int32), {"initial": -1}, np.uint16),
    ("sum", np.array([1, 2], np.uint8), {"initial": 300}, np.int8),
    ("prod", np.array([148.9, -17.3], np.float32), {"initial": -1}, np.uint16),
    ("prod", np.array([-40, 17, 27, 99], np.int8), {"initial": -1, "dtype": np.int64}, np.uint64),
    ("nanprod", np.array([3.0, np.nan]), {"initial": -2}, np.uint8),
    ("prod", np.array([158, 21], np.uint16), {"initial": 2.5, "dtype": np.float32}, np.uint16),  # 2 * 158 * 21
    ("nanprod", np.array([158, 21], np.uint16), {"initial": 2.5, "dtype": np.float32}, np.uint16),
    ("nansum", np.zeros(0, np.int8), {"initial": -1}, np.uint64),  # 2**64 - 1, no float64 loop's value
    ("prod", np.zeros((0, 3), np.int32), {"initial": -1, "axis": 0}, np.uint64),
    ("sum", np.zeros((2, 0), np.int64), {"initial": 2**62 + 1, "axis": 1, "keepdims": True}, np.uint64),
])
def test_initial_fits_the_loops_dtype_then_goes_into_out_unsafely(name: str, data: np.ndarray, kwargs: dict[str, Any],
                                                                   out_dtype: Any) -> None:
    """NumPy checks ``initial`` against the reduction's loop dtype (the promotion of the data's and
    ``out``'s, or ``dtype=``), then casts it into ``out``: -1 over int32 data into a uint16 ``out``
    is 65535 (stitchlab checked it against ``out``'s dtype and raised ``OverflowError``), 2.5 with
    ``dtype=float32`` into a uint16 ``out`` is 2 (stitchlab kept 2.5 where the data's dtype was
    ``out``'s); with no element to reduce ``out`` keeps that value (-1 into uint64: 2**64 - 1,
    where stitchlab's float64 loop gave 0)."""
    shape = np.shape(getattr(np, name)(data, **{k: v for k, v in kwargs.items() if k != "initial"}))
    expected = np.zeros(shape, out_dtype)
    _numpy(getattr(np, name), data, out=expected, **kwargs)
    out = sl.zeros(shape, dtype=out_dtype)
    getattr(sl, name)(sl.asarray(data), out=out, **kwargs)
    _same(expected, out.get())


def test_initial_is_cast_into_out_first() -> None:
    f = np.array([7.0, 8.0, -3.0], np.float32)
    expected = np.zeros((), np.int64)
    np.prod(f, initial=2.5, out=expected)  # -336: out starts from int64(2.5)
    out = sl.zeros((), dtype=np.int64)
    sl.prod(sl.asarray(f), initial=2.5, out=out)
    _same(expected, out.get())
    with pytest.raises(ValueError, match="initial="):
        sl.max(sl.asarray(np.zeros((3, 0), np.uint64)), axis=-1, initial=np.nan)


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin"])
@pytest.mark.parametrize("out_dtype, initial", [(np.float64, 100.5), (np.float32, -100.5), (np.int16, 200), (np.uint8, 1)])
def test_extremes_of_integers_reduce_in_outs_dtype(name: str, out_dtype: Any, initial: Any) -> None:
    """NumPy's max/min (and nanmax/nanmin, its fmax/fmin) into ``out=`` run in ``out``'s dtype: an
    ``initial`` of 2.5 over integers into a float ``out`` stays 2.5; nanmax of int8 into uint8 is
    refused as max's is (it reduced in int8 and cast: 94 where NumPy gives 160)."""
    a = np.array([-96, 5, 94], np.int8)
    if not np.can_cast(a.dtype, out_dtype):
        with pytest.raises(TypeError, match="cannot hold every int8 value"):
            getattr(sl, name)(sl.asarray(a), out=sl.zeros((), dtype=out_dtype), initial=initial)
        return
    expected = np.zeros((), out_dtype)
    getattr(np, name)(a, out=expected, initial=initial)
    out = sl.zeros((), dtype=out_dtype)
    assert getattr(sl, name)(sl.asarray(a), out=out, initial=initial) is out
    _same(expected, out.get())


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin"])
@pytest.mark.parametrize("out_dtype", [np.float64, np.float32, np.int16, np.uint32, np.bool_])
def test_extremes_of_floats_into_an_out_that_cannot_hold_them_are_refused(name: str, out_dtype: Any) -> None:
    """NumPy's nanmax of float data into an integer ``out`` casts each value first (-86.9 into
    uint32 is 4294967210, which is then the maximum); stitchlab's nanmax took the maximum and cast
    it (10). Refused as ``max``'s is; a float ``out`` that holds every value is NumPy's."""
    a = np.array([[-86.875, 10.34375, np.nan], [1.5, -2.0, 3.0]], np.float16)
    if not np.can_cast(a.dtype, out_dtype):
        with pytest.raises(TypeError, match="cannot hold every float16 value"):
            getattr(sl, name)(sl.asarray(a), axis=1, out=sl.zeros(2, dtype=out_dtype))
        return
    expected = np.zeros(2, out_dtype)
    _numpy(getattr(np, name), a, axis=1, out=expected)
    out = sl.zeros(2, dtype=out_dtype)
    assert getattr(sl, name)(sl.asarray(a), axis=1, out=out) is out
    _same(expected, out.get())


# --- median and the nan-statistics into out=, initial=0 products, keepdims, scans into out= -----
@pytest.mark.parametrize("data, out_dtype", [
    (np.array([100, 140, 0, 200], np.int16), np.int8),  # 100 + 140 wraps in int8 to -16, then -8 (not 120)
    (np.array([918.0, 318.2, 84.25, -491.8, -284.5, -674.0], np.float16), np.uint8),
    (np.array([70972990, -942369710, -1622631898, 188265738], np.int32), np.int8),
    (np.array([1.5, 2.5, 4.0]), np.int64),  # no NaN: NumPy casts into the integer out
    (np.array([3, 1, 2, 10], np.int64), np.float32),
])
def test_median_into_another_dtype_is_numpys_mean_into_out(data: np.ndarray, out_dtype: Any) -> None:
    """NumPy's median is ``mean(middle values, out=out)``: summed into ``out``'s dtype, divided
    there."""
    expected = np.zeros((), out_dtype)
    _numpy(np.median, data, out=expected)
    out = np.zeros((), out_dtype)
    sl.median(sl.asarray(data), out=out)
    _same(expected, out)
    into = np.zeros((), out_dtype)  # (np.median on a stitchlab array: the same function)
    _numpy(np.median, sl.asarray(data), out=into)
    _same(expected, into)


def test_median_of_a_nan_into_an_integer_out_raises_as_numpys() -> None:
    data = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0]])
    with pytest.raises(TypeError, match="same_kind"):
        np.median(data, axis=1, out=np.zeros(2, np.int64))
    with pytest.raises(TypeError, match="same_kind"):
        sl.median(sl.asarray(data), axis=1, out=np.zeros(2, np.int64))
    empty = np.zeros((0, 3), np.float32)  # (NumPy checks no NaN of an empty array: cast, INT_MIN)
    _same(_numpy(np.median, empty, axis=0, out=np.zeros(3, np.int64)),
          sl.median(sl.asarray(empty), axis=0, out=sl.zeros(3, dtype=np.int64)).get())


@pytest.mark.parametrize("out_dtype", [np.int8, np.int64, np.uint8, np.bool_, np.float32])
@pytest.mark.parametrize("data", [np.array([[1.0, np.nan, 3.0, 4.0], [7.5, -2.0, np.nan, np.nan]]),
                                  np.array([[1.0, 5.0, 3.0, 4.0], [7.0, -2.0, 0.0, 9.0]], np.float16),
                                  np.array([[100, 140, 3, 4], [-7, 5, 9, 2]], np.int16)],
                         ids=lambda a: str(a.dtype))
@pytest.mark.parametrize("name, args", [("nanmedian", ()), ("nanquantile", (0.3,)), ("nanpercentile", (75.0,))])
def test_nan_statistics_take_an_integer_out_as_numpy(name: str, args: tuple[Any, ...], data: np.ndarray,
                                                      out_dtype: Any) -> None:
    """NumPy writes the result into ``out`` (``out[...] = result``: an unsafe cast); only the
    empty array, NumPy's ``nanmean``, refuses an integer ``out`` for float data."""
    expected = np.zeros(2, out_dtype)
    _numpy(getattr(np, name), data, *args, axis=1, out=expected)
    out = sl.zeros(2, dtype=out_dtype)
    assert getattr(sl, name)(sl.asarray(data), *args, axis=1, out=out) is out
    _same(expected, out.get())


@pytest.mark.parametrize("out_dtype", [np.int8, np.uint8, np.int32, np.uint64, np.bool_, np.float16])
@pytest.mark.parametrize("data", [np.array([[1e10, np.nan], [3.0, 2.5]]), np.array([[np.nan, np.nan], [np.nan, np.nan]]),
                                  np.array([[-1.5, np.inf], [np.nan, np.inf]], np.float32),
                                  np.array([[300, 302], [-7, 500]], np.int16), np.array([[2.5, 7.0], [1.0, np.nan]]),
                                  np.zeros((0, 2), np.int16)],
                         ids=["big", "all-nan", "inf", "int16", "fits", "empty-int16"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), ((0, 1), False), (None, True), (-1, False)])
@pytest.mark.parametrize("name, args", [("nanmedian", ()), ("nanquantile", (0.75,)), ("nanpercentile", (np.float32(50.0),)),
                                        ("nanquantile", ([0.75],))])
def test_nan_statistics_of_one_slice_into_an_integer_out_raise_as_numpys(name: str, args: tuple[Any, ...],
                                                                         axis: Any, keepdims: bool, data: np.ndarray,
                                                                         out_dtype: Any) -> None:
    """NumPy's nan-statistic of one slice (``axis=None`` or every axis) with a scalar ``q`` is a
    NumPy scalar, set into ``out`` by ``out[...] = value``: ``OverflowError`` where a signed integer
    cannot hold it (1e10 or 300 into int8, inf), ``ValueError`` for NaN; unsigned and bool outs take
    NumPy's assignment's value. Several slices, or a 1-d ``q``, are an unsafe cast."""
    shape = np.shape(_numpy(getattr(np, name), data, *args, axis=axis, keepdims=keepdims))
    expected = np.zeros(shape, out_dtype)
    try:
        _numpy(getattr(np, name), data, *args, axis=axis, keepdims=keepdims, out=expected)
    except (OverflowError, ValueError) as err:
        with pytest.raises(type(err), match="give a float out="):
            getattr(sl, name)(sl.asarray(data), *args, axis=axis, keepdims=keepdims, out=sl.zeros(shape, dtype=out_dtype))
        return
    out = sl.zeros(shape, dtype=out_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NaN or inf cast into an integer, as NumPy's)
        assert getattr(sl, name)(sl.asarray(data), *args, axis=axis, keepdims=keepdims, out=out) is out
        _same(expected, out.get())


@pytest.mark.parametrize("out_dtype", [np.int8, np.int32, np.uint8])
@pytest.mark.parametrize("axis", [None, (0, 1), 1])
@pytest.mark.parametrize("name, args, kwargs", [("nanmedian", (), {}), ("nanquantile", (0.75,), {}),
                                                ("nanpercentile", (np.float32(50.0),), {}), ("median", (), {}),
                                                ("quantile", (0.5,), {"method": "lower"})])
def test_statistics_into_an_integer_out_trace_in_jit(name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                                      axis: Any, out_dtype: Any) -> None:
    """Inside ``sl.jit`` the values are not known: a statistic into an integer ``out`` traces
    (NumPy's checks that read the values, of one slice's scalar assignment or of a median's NaN,
    are not made) and writes NumPy's value wherever NumPy writes one, else the unsafe cast of
    NumPy's result (NaN, 1e10 into int8); each call replays the one trace with its own values
    (one slice of 1 x 4 data, or a 1-slice axis)."""
    data = [np.array([[2.5, 7.0, np.nan, 1.0]]), np.array([[300.0, 299.0, 302.0, np.nan]]),
            np.array([[np.nan] * 4]), np.array([[1e10, 2e10, -5.0, 3.0]]), np.array([[-1.5, -2.5, 8.0, 9.0]])]
    shape = np.shape(np.median(data[0], axis=axis))

    @sl.jit
    def into_int(x: Any) -> Any:
        o = sl.zeros(shape, dtype=out_dtype)
        getattr(sl, name)(x, *args, axis=axis, out=o, **kwargs)
        return o

    sl.reset_stats()
    for d in data:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # (NaN or inf cast into an integer)
            expected = np.zeros(shape, out_dtype)
            try:
                getattr(np, name)(d, *args, axis=axis, out=expected, **kwargs)
            except (OverflowError, ValueError, TypeError):
                expected = np.asarray(getattr(np, name)(d, *args, axis=axis, **kwargs)).astype(out_dtype)
            _same(expected, into_int(sl.asarray(d)).get())
    assert sl.stats()["traces"] == 1


def test_nan_statistics_of_an_empty_float_array_refuse_an_integer_out() -> None:
    empty = np.zeros((0, 3))
    with pytest.raises(TypeError):
        np.nanmedian(empty, axis=0, out=np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="out must be inexact"):
        sl.nanmedian(sl.asarray(empty), axis=0, out=np.zeros(3, np.int64))


@pytest.mark.parametrize("data, kwargs", [
    (np.array([300, 300, 300, 0.5], np.float16), {}),     # the elements' product overflows float16
    (np.array([300, -300, 300, 0.5], np.float16), {}),    # -0.0
    (np.array([1e200, 1e200, -1.0]), {}),
    (np.array([1e200, np.inf]), {}),                      # 0 * inf: NaN
    (np.array([[1e200, 1e200], [2.0, 3.0]]), {"axis": 1, "where": np.array([True, False])}),
    (np.array([-3, 4], np.int32), {"dtype": np.float64}),  # -0.0 in the float loop
    (np.array([70000, 4], np.int32), {"dtype": np.float16}),  # 70000 is inf in float16
])
@pytest.mark.parametrize("initial", [0, -0.0])
def test_a_product_from_initial_zero_is_numpys(data: np.ndarray, kwargs: dict[str, Any], initial: Any) -> None:
    """NumPy multiplies from ``initial`` on: a signed zero, or NaN once an element is inf or NaN,
    never 0 * inf of an overflowed product."""
    expected = _numpy(np.prod, data, initial=initial, **kwargs)
    got = sl.prod(sl.asarray(data), initial=initial, **kwargs).get()
    _same(expected, got)
    assert (np.signbit(expected) == np.signbit(got)).all()


def test_a_float16_sum_or_product_takes_initial_in_float32() -> None:
    """NumPy's float16 loop accumulates in float32 from ``initial`` on and rounds once."""
    a = np.array([65504, 65504], np.float16)
    _same(_numpy(np.sum, a, initial=-65504.0), sl.sum(sl.asarray(a), initial=-65504.0).get())  # 65504, not inf
    b = np.array([300, 300], np.float16)
    _same(_numpy(np.prod, b, initial=0.5), sl.prod(sl.asarray(b), initial=0.5).get())  # 45000, not inf


def test_a_bool_sum_into_a_bool_out_runs_numpys_bool_loop() -> None:
    a = np.array([True, False, True, True])
    expected = np.zeros((), bool)
    np.sum(a, initial=-3, out=expected)  # or-ed from True: True (the int64 sum, 0, was False)
    out = sl.zeros((), dtype=bool)
    sl.sum(sl.asarray(a), initial=-3, out=out)
    _same(expected, out.get())


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "any", "all", "var", "std", "ptp", "nansum",
                                  "nanmax", "nanmean", "nanvar", "count_nonzero", "average"])
@pytest.mark.parametrize("keepdims", [None, "a", 0.0, np.True_])
def test_keepdims_that_is_no_integer_is_refused_as_numpys(name: str, keepdims: Any) -> None:
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError):
        getattr(np, name)(x, axis=0, keepdims=keepdims)
    with pytest.raises(TypeError, match="keepdims"):
        getattr(sl, name)(sl.asarray(x), axis=0, keepdims=keepdims)


@pytest.mark.parametrize("name, args", [("sum", ()), ("argmax", ()), ("median", ()), ("quantile", (0.5,)),
                                        ("nanargmin", ()), ("nanquantile", (0.5,))])
@pytest.mark.parametrize("keepdims", [None, 2, np.True_])
def test_keepdims_numpy_takes_is_taken(name: str, args: tuple[Any, ...], keepdims: Any) -> None:
    x = np.arange(6.0).reshape(2, 3)
    try:
        expected = getattr(np, name)(x, *args, axis=0, keepdims=keepdims)
    except TypeError:
        return  # (refused: the test above)
    _same(expected, getattr(sl, name)(sl.asarray(x), *args, axis=0, keepdims=keepdims).get())


@pytest.mark.parametrize("name, data, out_dtype", [
    ("cumprod", np.array([603, -32336, 16374, -24330, -9752], np.int16), np.float64),  # float64, not a wrapped int64
    ("cumsum", np.array([-8.2e18, 7.0e18, -5.0e18], np.float64).astype(np.int64), np.float32),
    ("cumsum", np.array([-591.4756, 709.43964, 675.1374, 70.58599], np.float32), np.float64),
    ("cumsum", np.array([7.7, -23.7, 6.098, -7.668], np.float16), np.float32),
    ("nancumsum", np.array([10.54, 1.467, np.nan, 9.02], np.float16), np.float32),
    ("nancumprod", np.array([2000, np.nan, 3000, 4000], np.float16), np.float64),
])
def test_scans_into_out_run_in_the_promoted_dtype(name: str, data: np.ndarray, out_dtype: Any) -> None:
    """NumPy's accumulate into ``out`` runs in the promotion of the input's dtype and ``out``'s."""
    expected = np.zeros(data.shape, out_dtype)
    _numpy(getattr(np, name), data, out=expected)
    out = np.zeros(data.shape, out_dtype)
    getattr(sl, name)(sl.asarray(data), out=out)
    np.testing.assert_array_equal(out, expected)
    if name in ("cumsum", "cumprod"):  # (the ufunc method, and NumPy's function on a stitchlab array)
        ufunc = sl.add if name == "cumsum" else sl.multiply
        out = np.zeros(data.shape, out_dtype)
        ufunc.accumulate(sl.asarray(data), out=out)
        np.testing.assert_array_equal(out, expected)
        out = np.zeros(data.shape, out_dtype)
        _numpy(getattr(np, name), sl.asarray(data), out=out)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("data, out_dtype", [(np.array([108, -89, 67, -59, -138], np.int64), np.int8),
                                             (np.array([-8498.6, 77452.4, -61572.6], np.float32), np.float16)])
def test_ptp_into_an_out_that_cannot_hold_the_input_raises(data: np.ndarray, out_dtype: Any) -> None:
    """NumPy's ptp takes the maximum into ``out`` (as max's, refused): it gave -10 for the int64
    data into int8, where stitchlab gave the difference cast, 246 wrapped to -10 only by chance of
    the values."""
    with pytest.raises(TypeError, match="cannot hold every"):
        sl.ptp(sl.asarray(data), out=np.zeros((), out_dtype))


def test_python_ints_beyond_int64_are_named_with_the_dtype() -> None:
    x = sl.asarray(np.arange(3))
    for call in (lambda: sl.where(x > 0, x, 2**70), lambda: sl.where(x > 0, -2**70, 2**70),
                 lambda: sl.select([x > 0], [x], 2**70), lambda: sl.add(x, 2**70), lambda: np.add(x, -2**70)):
        with pytest.raises(OverflowError, match=r"Python integer -?1180591620717411303424 out of bounds for int64"):
            call()
    _same(np.where(np.arange(3) > 0, 1.0, 2**70), sl.where(x > 0, 1.0, 2**70).get())  # (a float loop holds it)
