"""Variances computed in the mean's pass (Welford's running sums per thread, corrected to the
group's mean before the team's sum: ``GroupInfo.one_pass_variances``) against float64 NumPy, on
data where a sum-of-squares formula would fail: a mean far larger than the spread, and an outlier
in the first row (the first element each thread of column 0 sees).

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu -q``.
"""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]


def _data(shape: tuple[int, int], offset: float, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 0.5 + offset
    if shape[0]:
        x[0] += 40.0
    return x.astype(dtype)


def _one_pass(*arrays) -> bool:
    plan = sl.explain(*arrays)
    return any(k.info is not None and k.info.one_pass_variances() and "wn" in (k.source or "") for k in plan.kernels)


# (2048, 4096), (3001, 2500): column kernels; (8192, 256), (4099, 24): few columns, split over
# blocks (float32: one kernel, the variance in the mean's pass; float64: a kernel per phase);
# (33, 7), (1, 5): tiny
@pytest.mark.parametrize("shape", [(2048, 4096), (3001, 2500), (33, 7), (1, 5), (8192, 256), (4099, 24)])
@pytest.mark.parametrize("offset", [0.0, 1e4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_column_var_and_std_match_float64_numpy(shape: tuple[int, int], offset: float, dtype: str) -> None:
    import cupy as cp

    x = _data(shape, offset, dtype, seed=shape[0] + shape[1])
    a = sl.asarray(cp.asarray(x))
    if shape[1] >= 2048:  # a column kernel (float64 keeps its pass: the reciprocal is float32)
        assert _one_pass(a.var(0)) == (dtype == "float32")
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
                # x - mean carries the mean's rounding (1e4 in float32: steps of 1e-3, against a
                # spread of 0.5): allow what NumPy's own result in this dtype is off by, and more
                if ok.any():  # one row with ddof 0: every deviation is 0 / 0
                    own = np.abs((x - x.mean(0)) / x.std(0, ddof=ddof) - want_norm)[ok].max()
                    np.testing.assert_allclose(got_norm[ok], want_norm[ok], rtol=0, atol=max(tol * 50, 4 * own))
            else:
                assert np.all(~np.isfinite(got_var)) or np.all(got_var == want_var)


@pytest.mark.parametrize("shape", [(64, 300_000), (65, 131_075), (6, 524_291)])
@pytest.mark.parametrize("offset", [0.0, 1e3])
def test_streamed_row_variance_matches_float64_numpy(shape: tuple[int, int], offset: float) -> None:
    """Rows too long to stay on chip (row_block, no cache) take the variance in the mean's pass;
    few rows (6) are split over blocks instead: statistics in one split kernel, then the
    normalization."""
    import cupy as cp

    x = _data(shape, offset, "float32", seed=shape[1])
    x[:, 0] += 40.0  # the first element of lane 0 of every row
    a = sl.asarray(cp.asarray(x))
    y = (a - a.mean(1, keepdims=True)) / a.std(1, keepdims=True)
    if shape[0] > 8:
        assert _one_pass(y)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(a.var(1).get(), x64.var(1), rtol=2e-4, atol=0)
    want = (x64 - x64.mean(1, keepdims=True)) / x64.std(1, keepdims=True)
    np.testing.assert_allclose(y.get(), want, rtol=2e-3, atol=2e-3)


# whole arrays and few long rows (row_split), tall, narrow columns (column_split): one kernel whose
# blocks each take their chunk's sum and squared deviations about the chunk's mean in one pass, the
# last block combining them exactly (Chan); the chunks end inside the data (odd extents)
SPLIT_CASES = [((1 << 22,), None, "row_split"), ((3, 1 << 20), None, "row_split"), ((6, 524_291), 1, "row_split"),
               ((8192, 256), 0, "column_split"), ((4099, 24), 0, "column_split"), ((100_003, 7), 0, "column_split")]


@pytest.mark.parametrize(("shape", "axis", "family"), SPLIT_CASES)
@pytest.mark.parametrize(("dtype", "offset"), [("float32", 0.0), ("float32", 1e4), ("float16", 0.0)])
def test_split_statistics_take_one_pass_and_match_float64(shape, axis, family: str, dtype: str, offset: float) -> None:
    import cupy as cp

    x = _data(shape, offset, dtype, seed=sum(shape))
    a = sl.asarray(cp.asarray(x))
    plan = sl.explain(a.mean(axis), a.var(axis), a.std(axis, ddof=1))
    assert [k.schedule.family for k in plan.kernels] == [family]
    assert _one_pass(a.var(axis))
    x64 = x.astype(np.float64)
    # float32: relative to the variance (the mean 1e4 is far larger than the spread 0.5);
    # float16: the result's rounding (2**-11) and the float16 mean's
    tol = 2e-4 if dtype == "float32" else 4e-3
    for ddof in (0, 1):
        np.testing.assert_allclose(a.var(axis, ddof=ddof).get(), x64.var(axis, ddof=ddof), rtol=tol, atol=0)
        np.testing.assert_allclose(a.std(axis, ddof=ddof).get(), x64.std(axis, ddof=ddof), rtol=tol, atol=0)
    np.testing.assert_allclose(a.mean(axis).get(), x64.mean(axis), rtol=tol, atol=tol * 1e-2)


@pytest.mark.parametrize(("shape", "axis", "family"), SPLIT_CASES[::2])
def test_split_statistics_keep_nan_and_inf_where_numpy_does(shape, axis, family: str) -> None:
    import cupy as cp

    x = _data(shape, 0.0, "float32", seed=1)
    flat = x.reshape(-1, shape[-1]) if len(shape) > 1 else x.reshape(1, -1)
    flat[-1, 5] = np.nan  # in the last chunk
    flat[0, 3] = np.inf
    a = sl.asarray(cp.asarray(x))
    assert [k.schedule.family for k in sl.explain(a.var(axis)).kernels] == [family]
    with np.errstate(all="ignore"):
        want = x.astype(np.float64).var(axis)
    got = a.var(axis).get()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = np.isfinite(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=2e-4, atol=0)


def _column_norm(x):
    return [(x - x.mean(0)) / x.std(0)]


def _row_norm(x):
    return [(x - x.mean(1, keepdims=True)) / x.std(1, keepdims=True)]


@pytest.mark.parametrize(("build", "shape"), [(_column_norm, (2048, 4096)), (_row_norm, (64, 300_000))])
def test_float16_norms_match_op_by_op_and_float64(build, shape: tuple[int, int]) -> None:
    """float16 statistics from float sums: within float16 rounding of the same program run op by
    op (CuPy, each op rounded to float16 as NumPy does) and about as close to float64."""
    import cupy as cp

    from stitchlab import runtime
    from stitchlab.ir.graph import build_graph

    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 2 + 100.0).astype(np.float16)  # mean 100, spread 2
    outs = build(sl.asarray(cp.asarray(x)))
    assert _one_pass(*outs)
    graph, sources = build_graph([o._node for o in outs])
    bufs = [v.value for v in sources]
    backend = runtime._instance("cupy")
    got = backend.plan(graph)(bufs)[0].get().astype(np.float64)
    op_by_op = backend.plan_unfused(graph)(bufs)[0].get().astype(np.float64)
    want = build(x.astype(np.float64))[0]
    err, err_ops = (float(np.linalg.norm(v - want) / np.linalg.norm(want)) for v in (got, op_by_op))
    assert err < max(2 * err_ops, 1e-3), (err, err_ops)
    # one rounding of the statistics, carried through: four float16 steps at the largest magnitude
    assert np.max(np.abs(got - op_by_op)) <= 2.0**-8 * max(4.0, float(np.max(np.abs(op_by_op)))), (err, err_ops)
