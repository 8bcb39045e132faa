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
