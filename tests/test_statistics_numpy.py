"""Statistics and histograms checked against NumPy on the numpy backend: cases a differential
fuzzer found where stitchlab's result (value, dtype, shape or error) was not NumPy's."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")


def _same(got: Any, want: Any) -> None:
    """``got`` (lazy) is NumPy's ``want``: dtype, shape and values (NaN where NumPy has NaN)."""
    got = got.get() if isinstance(got, sl.LazyArray) else np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def _numpy(name: str, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, name)(*args, **kwargs)


# --- quantiles ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["quantile", "percentile", "nanquantile", "nanpercentile"])
@pytest.mark.parametrize("method", ["linear", "midpoint"])
@pytest.mark.parametrize("data", [
    np.array([[14, -73, -64, -13, 13], [578858074, -2034791698, 5, 7, 9]], np.int32),
    np.array([[62, 16, 8, 200, 3]], np.uint8),
    np.array([[0.5, 2.25, -1.0, 7.0, 3.0]], np.float16),
])
@pytest.mark.parametrize("qtype", [np.float32, np.float16])
def test_a_numpy_q_of_a_narrower_float_sets_the_interpolation_dtype(name: str, method: str, data: np.ndarray,
                                                                     qtype: Any) -> None:
    # NumPy interpolates with weights in q's dtype (a percentile divides q by 100 in it), so
    # int16 data with a float32 q gives float32, int32 data float64 with float32 weights
    q = np.array([4.319257736206055, 87.20930480957031, 41.1875], qtype)
    if not name.endswith("percentile"):
        q = (q / 100).astype(qtype)
    want = _numpy(name, data, q, axis=1, method=method)
    _same(getattr(sl, name)(sl.asarray(data), q, axis=1, method=method), want)


ALL_METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
               "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
               "normal_unbiased"]


@pytest.mark.parametrize("name", ["quantile", "percentile", "nanquantile", "nanpercentile"])
@pytest.mark.parametrize("method", ALL_METHODS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "uint8"])
def test_every_numpy_method_gives_numpys_quantiles(name: str, method: str, dtype: str) -> None:
    data = np.array([[3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8], [5, 3, 5, 8, 9, 7, 9, 3]], dtype)
    if dtype.startswith("float"):
        data[2, [1, 4, 6]] = np.nan  # (the nan-functions skip them, the others give NaN)
    q = np.linspace(0, 1, 11)
    q = q * 100 if name.endswith("percentile") else q
    x = sl.asarray(data)
    _same(getattr(sl, name)(x, q, axis=1, method=method), _numpy(name, data, q, axis=1, method=method))
    _same(getattr(sl, name)(x, float(q[3]), axis=None, method=method), _numpy(name, data, float(q[3]), method=method))


def test_an_unknown_method_and_a_3_d_q_raise_numpys_value_error() -> None:
    x = sl.asarray(np.arange(5.0))
    with pytest.raises(ValueError, match="'bogus' is not a valid method"):
        sl.quantile(x, 0.5, method="bogus")
    for name in ("quantile", "nanpercentile"):
        with pytest.raises(ValueError, match="q must be a scalar or 1d"):
            getattr(sl, name)(x, np.full((1, 1, 1), 0.5))


def test_no_quantile_of_empty_integer_slices_is_an_empty_result() -> None:
    data = np.zeros((3, 0), np.int32)
    _same(sl.quantile(sl.asarray(data), [], axis=1), np.quantile(data, [], axis=1))
    _same(sl.percentile(sl.asarray(data), [], axis=1, method="lower"), np.percentile(data, [], axis=1, method="lower"))


# --- ptp -----------------------------------------------------------------------------------------
def test_ptp_of_bool_data_checks_axis_and_empty_slices_first_as_numpy() -> None:
    empty = sl.asarray(np.zeros((0, 3), bool))
    with pytest.raises(np.exceptions.AxisError):
        sl.ptp(empty, axis=2)
    with pytest.raises(ValueError, match="zero-size array"):
        sl.ptp(empty, axis=0)
    with pytest.raises(TypeError, match="boolean"):
        sl.ptp(sl.asarray(np.array([True, False])))
    out = np.empty((), np.int64)  # (NumPy's maximum into an int64 out, then a subtract it has)
    sl.ptp(sl.asarray(np.array([True, False])), out=out)
    assert out == np.ptp(np.array([True, False]), out=np.empty((), np.int64))


# --- mean and variance into out= -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["mean", "var", "std"])
@pytest.mark.parametrize("out_dtype", [np.float32, np.float64, np.uint8, np.int64])
def test_an_integer_dtype_into_another_out_sums_into_out_then_divides_there(name: str, out_dtype: Any) -> None:
    # NumPy's steps: the sum in dtype= cast into out, divided there (40.75 into a float out)
    data = np.array([[55, 3], [25, 80]], np.uint16)
    if name == "std" and np.dtype(out_dtype).kind in "iu":
        return  # (NumPy's sqrt(var, out=var) refuses an integer out: tests/test_reduction_arguments.py)
    want = _numpy(name, data, axis=None, dtype=np.int32, out=np.zeros((), out_dtype))
    _same(getattr(sl, name)(sl.asarray(data), axis=None, dtype=np.int32, out=np.zeros((), out_dtype)), want)


@pytest.mark.parametrize("name", ["mean", "var", "std"])
def test_float32_data_into_a_float64_out_is_summed_in_float64(name: str) -> None:
    data = (np.random.default_rng(1).standard_normal((10, 100)) * 1000).astype(np.float32)
    want = _numpy(name, data, axis=1, out=np.zeros(10, np.float64))
    _same(getattr(sl, name)(sl.asarray(data), axis=1, out=np.zeros(10, np.float64)), want)


@pytest.mark.parametrize("out_dtype", [np.uint8, np.float32])
def test_nanstd_and_nanvar_of_integers_are_numpys_std_and_var_with_out(out_dtype: Any) -> None:
    data = np.array([[5, -3, 7], [1, 2, 90]], np.int8)
    for name in ("nanvar", "nanstd"):
        try:
            want = _numpy(name, data, axis=None, ddof=1, keepdims=True, out=np.zeros((1, 1), out_dtype))
        except TypeError:  # (NumPy's sqrt(var, out=var) into an integer out)
            with pytest.raises(TypeError):
                getattr(sl, name)(sl.asarray(data), axis=None, ddof=1, keepdims=True, out=np.zeros((1, 1), out_dtype))
            continue
        _same(getattr(sl, name)(sl.asarray(data), axis=None, ddof=1, keepdims=True, out=np.zeros((1, 1), out_dtype)), want)


@pytest.mark.parametrize("dtype, big", [(np.float16, 40000.0), (np.float32, 3e38), (np.float64, 1e308)])
@pytest.mark.parametrize("shape, axis", [((3, 5), 1), ((3, 5), 0), ((2, 3, 4), (0, 2)), ((3, 5), None),
                                         ((15,), 0), ((3, 5), (0, 1)), ((2, 700), 1)])
def test_nanmedian_of_large_values_overflows_where_numpys_does(dtype: Any, big: float, shape: tuple[int, ...],
                                                               axis: Any) -> None:
    """NumPy's nanmedian of several slices shorter than 600 is its masked-array median: the
    middle pair (the middle value twice for an odd count) summed in the input's dtype, then
    halved, so a median above half the dtype's maximum is inf (float16 above 32752); one slice
    (and longer ones) is ``np.median``'s mean, which for float16 sums in float32."""
    rng = np.random.default_rng(1)
    data = (big * rng.uniform(0.75, 1.0, shape)).astype(dtype)
    data[rng.random(shape) < 0.2] = np.nan
    _same(sl.nanmedian(sl.asarray(data), axis=axis), _numpy("nanmedian", data, axis=axis))
