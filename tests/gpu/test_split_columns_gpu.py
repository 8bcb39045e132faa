"""Column reductions of tall, narrow arrays split over blocks along the reduced axis
(``column_split``: each tile of 32 columns over ``G`` blocks, the last block of a tile combines
their partial results) against NumPy, on the GPU.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu -q``.
"""

from __future__ import annotations

import ml_dtypes  # noqa: F401  (registers the "bfloat16" dtype name with NumPy)
import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]


def _split(*arrays) -> bool:
    return any(k.schedule.family == "column_split" and k.launch.split > 1 for k in sl.explain(*arrays).kernels)


@pytest.mark.parametrize(("shape", "dtype"), [
    ((1 << 20, 64), "float32"), ((100_003, 7), "float32"), ((262_144, 256), "float64"),
    ((70_001, 33), "float16"), ((50_000, 40), "int32"), ((4_099, 100), "float32"), ((70_001, 33), "bfloat16"),
])
def test_split_column_reductions_match_numpy(shape: tuple[int, int], dtype: str) -> None:
    import cupy as cp

    rng = np.random.default_rng(shape[0])
    if dtype == "int32":
        x = rng.integers(-50, 50, shape, dtype=np.int32)
    else:  # float16 sums of 70 001 values stay far below 65 504
        low = dtype in ("float16", "bfloat16")
        x = (rng.standard_normal(shape) * (0.5 if low else 3) + (0 if low else 1)).astype(dtype)
    a = sl.asarray(cp.asarray(x))
    outs = [a.sum(0), a.max(0), a.min(0), a.mean(0)]
    assert _split(outs[0]), sl.explain(outs[0]).summary()
    x64 = x.astype(np.float64)
    for _ in range(3):  # the tiles' counters are reset for the next launch
        got = [o.get() for o in sl.compute(*[a.sum(0), a.max(0), a.min(0), a.mean(0)])]
        np.testing.assert_array_equal(got[1], x.max(0))
        np.testing.assert_array_equal(got[2], x.min(0))
        if dtype == "int32":
            np.testing.assert_array_equal(got[0], x.sum(0))
        else:
            # accumulation error (float32 for float16 and bfloat16) over the column's absolute
            # sum, plus the rounding of the result to its dtype (bfloat16: NumPy's own sum would
            # round each partial sum to bfloat16, so the bound is taken about the exact sum)
            acc_eps = {"float16": 2.0**-24, "bfloat16": 2.0**-24, "float32": 2.0**-24, "float64": 2.0**-53}[dtype]
            # (recursive summation: at most (n - 1) eps of the absolute sum for a chain of n; a
            # thread's chain here is a few hundred elements)
            bound = 512 * acc_eps * np.abs(x64).sum(0) + np.spacing(np.abs(x64.sum(0)).astype(dtype)).astype(np.float64)
            assert np.all(np.abs(got[0].astype(np.float64) - x64.sum(0)) <= bound)
        tol = {"float16": (2e-3, 1e-3), "bfloat16": (1e-2, 4e-3)}.get(dtype, (1e-5, 1e-6))
        np.testing.assert_allclose(got[3].astype(np.float64), x64.mean(0), rtol=tol[0], atol=tol[1])


def test_bool_any_all_over_a_tall_array() -> None:
    import cupy as cp

    x = np.zeros((300_000, 33), bool)
    x[123_456, 5] = True
    x[:, 7] = True
    a = sl.asarray(cp.asarray(x))
    assert _split(a.any(0))
    np.testing.assert_array_equal(a.any(0).get(), x.any(0))
    np.testing.assert_array_equal(a.all(0).get(), x.all(0))


def test_batchnorm_statistics_and_a_new_batch_compile_nothing() -> None:
    """Mean and variance over the batch of channels-last activations: one split kernel (the
    variance in the mean's pass); a new batch size changes the split (an argument) and compiles
    nothing."""
    import cupy as cp

    @sl.jit
    def stats(x):
        return x.mean(axis=0), x.var(axis=0)

    rng = np.random.default_rng(0)
    for rows in (1 << 18, 3 * (1 << 17) + 5):
        x = (rng.standard_normal((rows, 64)) * 2 + 5).astype(np.float32)
        before = sl.stats()
        mean, var = stats(cp.asarray(x))
        after = sl.stats()
        if rows != 1 << 18:
            assert after["nvrtc_compiles"] == before["nvrtc_compiles"], "a new batch size compiled a kernel"
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(mean.get(), x64.mean(0), rtol=1e-5)
        np.testing.assert_allclose(var.get(), x64.var(0), rtol=1e-4)
    x = cp.asarray(np.ones((1 << 18, 64), np.float32))
    assert [k.schedule.family for k in sl.explain(*stats.fn(sl.asarray(x))).kernels] == ["column_split"]
