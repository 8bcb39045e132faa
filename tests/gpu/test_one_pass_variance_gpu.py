"""Column variances computed in the mean's pass (Welford per thread, Chan's merge across threads)
against float64 NumPy, on data where the naive sum-of-squares formula fails.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu -q``.
"""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def cupy_backend():
    before = sl.get_backend()
    sl.set_backend("cupy")
    yield
    sl.set_backend(before)


def _data(shape: tuple[int, int], offset: float, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 0.5 + offset
    if shape[0]:
        x[0] += 40.0  # the first row an outlier: no pivot taken from it would do
    return x.astype(dtype)


@pytest.mark.parametrize("shape", [(8192, 256), (3000, 300), (33, 7), (1, 5), (4099, 24)])
@pytest.mark.parametrize("offset", [0.0, 1e4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_column_var_and_std_match_float64_numpy(shape: tuple[int, int], offset: float, dtype: str) -> None:
    import cupy as cp

    x = _data(shape, offset, dtype, seed=shape[0] + shape[1])
    a = sl.asarray(cp.asarray(x))
    plan = sl.explain(a.var(0))
    assert any(k.info is not None and k.info.one_pass_variances() for k in plan.kernels), plan.summary()
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        for ddof in (0, 1):
            got_var = a.var(0, ddof=ddof).get()
            got_norm = ((a - a.mean(0)) / a.std(0, ddof=ddof)).get()
            want_var = x64.var(0, ddof=ddof)
            want_norm = (x64 - x64.mean(0)) / x64.std(0, ddof=ddof)
            # relative to the variance itself: the mean (1e4) is far larger than the spread (0.5)
            tol = 2e-5 if dtype == "float32" else 1e-11
            if shape[0] - ddof > 0:
                np.testing.assert_allclose(got_var, want_var, rtol=tol * 10, atol=0)
                ok = np.isfinite(want_norm)
                np.testing.assert_allclose(got_norm[ok], want_norm[ok], rtol=tol * 50, atol=tol * 50)
            else:
                assert np.all(~np.isfinite(got_var)) or np.all(got_var == want_var)


def test_float16_column_norm_matches_float64_numpy() -> None:
    import cupy as cp

    x = _data((4096, 512), 100.0, "float16", seed=3)
    a = sl.asarray(cp.asarray(x))
    got = ((a - a.mean(0)) / a.std(0)).get().astype(np.float64)
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(0)) / x64.std(0)
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 5e-3
